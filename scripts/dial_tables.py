"""Writes crates/ingest/src/world/dial_tables.rs, two tables for the world's phone numbers from
the numbering data of Google's libphonenumber (the `phonenumbers` package, PyPI):

- North America's area codes at their towns (the 555-01xx numbers kept for fiction, behind the
  area code the store's town really dials);
- China's three-digit area codes whose numbers have eight digits after the code (the others
  have seven; the two-digit codes all have eight).

Where North America's towns come from: the geocoding data of Google's libphonenumber, as the `phonenumbers`
package (PyPI) ships it, which names the town of each NPA-NXX block ("1206325" is "Seattle,
WA"). A town is listed under the area code that holds most of its blocks (so an overlay code
does not take a town from the code it overlays), and only where the gazetteer
(data/generated/reference/cities.csv, built by `npm run build`) has a place of that name in
that state or province: the world looks towns up by name there.

Run: pip install phonenumbers==9.0.43 && python3 scripts/dial_tables.py [--check]
(--check writes nothing and fails when the committed file differs: npm test runs it.)
"""

import collections
import csv
import pathlib
import unicodedata

import derived_rust
import phonenumbers
from phonenumbers.geodata import GEOCODE_DATA

ROOT = pathlib.Path(__file__).resolve().parent.parent
CITIES = ROOT / "data/generated/reference/cities.csv"
OUT = ROOT / "crates/ingest/src/world/dial_tables.rs"
# Overlay codes that the data names after one city as a whole ("1263" is "Montreal, QC"): the
# city's blocks stay under the code it had first (NANPA's overlay plans).
OVERLAYS = {"263", "332", "437", "445", "726", "728", "872", "934", "942"}
# The data's names of places the gazetteer names otherwise.
ALIASES = {("NY", "New York"): "New York City", ("NY", "Bronx"): "The Bronx"}
# Places the data does not name that dial a code of their own: Manhattan is New York's 212 (the
# data names the code after the whole city, which the gazetteer places in lower Manhattan).
EXTRA = [("US", "212", "Manhattan", "NY")]
CANADA = {"AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT"}


def fold(name: str) -> str:
    """A name without its accents, in lower case, with "St." and "Saint" alike."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    plain = plain.replace("saint ", "st. ").replace("st ", "st. ").replace("-", " ")
    return " ".join(plain.split())


def gazetteer():
    """(country, region, folded name) -> the gazetteer's own name of the most populous place."""
    best = {}
    with open(CITIES, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["country"] not in ("US", "CA"):
                continue
            for name in [row["name"], *filter(None, row["also"].split("|"))]:
                key = (row["country"], row["admin1"], fold(name))
                pop = int(row["population"] or 0)
                if key not in best or pop > best[key][1]:
                    best[key] = (row["name"], pop)
    return {k: v[0] for k, v in best.items()}


def chinese_eight_digit_areas():
    """The three-digit area codes under which libphonenumber holds an eight-digit number valid
    (some, Shantou's 754 among them, take seven or eight)."""
    found = []
    for area in range(300, 1000):
        for first in "2345678":
            if phonenumbers.is_valid_number(phonenumbers.parse(f"+86{area}{first}2345678")):
                found.append(str(area))
                break
    return found


def main():
    places = gazetteer()
    # Town -> blocks under each area code.
    blocks = collections.defaultdict(collections.Counter)
    for prefix, names in GEOCODE_DATA.items():
        text = names.get("en")
        if not prefix.startswith("1") or len(prefix) < 5 or not text or ", " not in text:
            continue
        town, region = text.rsplit(", ", 1)
        country = "CA" if region in CANADA else "US"
        blocks[(country, region, town)][prefix[1:4]] += 1
    # A code the data names after one city as a whole, and that is not an overlay, is that
    # city's own code (212 New York, 312 Chicago): its blocks are not listed one by one, so the
    # blocks under later codes would otherwise win. The lowest such code.
    whole = {}
    for prefix, names in GEOCODE_DATA.items():
        text = names.get("en") or ""
        if prefix.startswith("1") and len(prefix) == 4 and ", " in text and prefix[1:] not in OVERLAYS:
            town, region = text.rsplit(", ", 1)
            key = ("CA" if region in CANADA else "US", region, town)
            whole[key] = min(whole.get(key, prefix[1:]), prefix[1:])
    for key in whole:
        blocks.setdefault(key, collections.Counter())
    rows = set()
    unmatched = 0
    for (country, region, town), codes in blocks.items():
        name = places.get((country, region, fold(ALIASES.get((region, town), town))))
        if name is None:
            unmatched += 1
            continue
        code = whole.get((country, region, town)) or max(codes.items(), key=lambda kv: (kv[1], -int(kv[0])))[0]
        rows.add((country, code, name, region))
    rows.update(EXTRA)
    lines = [
        "//! Dialling tables from libphonenumber's data (the `phonenumbers` package,",
        f"//! {phonenumbers.__version__}). Written by scripts/dial_tables.py; do not edit.",
        "",
        "use super::area_towns::Table;",
        "",
        "/// China's three-digit area codes whose numbers have eight digits after the code.",
        "pub const CN_EIGHT_DIGITS: &[&str] = &[",
        *[f'    "{a}",' for a in chinese_eight_digit_areas()],
        "];",
        "",
    ]
    for country in ("US", "CA"):
        mine = sorted(r for r in rows if r[0] == country)
        lines.append(f"/// {'The United States' if country == 'US' else 'Canada'}' area codes at their towns: \"name, region\", as the same name stands in")
        lines.append("/// many regions.")
        lines.append(f"pub const {country}: Table = &[")
        for _, code, name, region in mine:
            lines.append(f'    ("{code}", "{name}, {region}"),')
        lines.append("];")
        lines.append("")
    if not derived_rust.write(lines, OUT, "dial_tables.py"):
        return
    print(f"{len(rows)} towns, {len({r[1] for r in rows})} area codes; {unmatched} of the data's towns not in the gazetteer")


main()
