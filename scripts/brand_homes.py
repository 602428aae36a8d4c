#!/usr/bin/env python3
"""Derives the home markets in data/brand-homes.csv from the name-suggestion-index's copy of
Wikidata.

    python3 scripts/brand_homes.py [--check]

Run from the repository root after `npm install` and the reference build (it reads
`node_modules/name-suggestion-index/dist/wikidata/wikidata.json` and
`data/generated/reference/brands.jsonl`).

The table is for the brands whose NSI location sets name two countries or more: such a set
says nothing about which of them a chain trades most in, and without a home the world places it
by population, the biggest first (Lada dealers and Petrolimex stations in Ohio from a worldwide
set, Boston Pizza's restaurants in the US rather than Canada, Galp's stations in Spain rather
than Portugal). A home the brand's set does not name changes nothing, so a description's
cuisine ("Italian quick service restaurant chain" for a chain in the US alone) cannot move a
one-country chain abroad. A brand's home is the country its Wikidata
description names, when it names exactly one: "Russian automobile brand", "Petroleum industry
group in Vietnam", "international cafe chain based in the United Kingdom". A description that
names two ("British origin-Chinese car company", "Swiss underwear company founded in 1886 in
Heubach, Germany") or none ("clothing design and manufacturing company") gives no home.

Rows whose source does not start with `DERIVED` are curated: a home read somewhere else, for a
brand whose description names none, or whose biggest market is not its country of origin
(Mister Donut, "American" by its description, trades almost only in Japan). The script keeps
them as they are and derives no row for their brands. `--check` exits 1 when the committed
file differs from the derivation.
"""

import csv
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "data" / "brand-homes.csv"
WIKIDATA = ROOT / "node_modules" / "name-suggestion-index" / "dist" / "wikidata" / "wikidata.json"
BRANDS = ROOT / "data" / "generated" / "reference" / "brands.jsonl"
# A set naming one country leaves no choice to make.
MIN_SET = 2
DERIVED = "DERIVED"

# The nationality adjectives and country names Wikidata's English descriptions use, to ISO
# 3166-1 codes. Longer names come first in the pattern, so "South Korean" is not "Korean".
NAMES = {
    "American": "US", "United States": "US", "US": "US", "U.S.": "US", "USA": "US",
    "British": "GB", "English": "GB", "Scottish": "GB", "Welsh": "GB", "United Kingdom": "GB", "UK": "GB",
    "Northern Ireland": "GB", "Northern Irish": "GB",
    "Canadian": "CA", "Canada": "CA", "Mexican": "MX", "Mexico": "MX",
    "Brazilian": "BR", "Brazil": "BR", "Argentine": "AR", "Argentinian": "AR", "Argentina": "AR",
    "Chilean": "CL", "Chile": "CL", "Colombian": "CO", "Colombia": "CO", "Peruvian": "PE", "Peru": "PE",
    "Venezuelan": "VE", "Uruguayan": "UY", "Ecuadorian": "EC", "Guatemalan": "GT", "Costa Rican": "CR",
    "Panamanian": "PA", "Dominican": "DO", "Puerto Rican": "PR",
    "French": "FR", "France": "FR", "German": "DE", "Germany": "DE", "Italian": "IT", "Italy": "IT",
    "Spanish": "ES", "Spain": "ES", "Catalan": "ES", "Portuguese": "PT", "Portugal": "PT",
    "Dutch": "NL", "Netherlands": "NL", "Belgian": "BE", "Belgium": "BE",
    "Luxembourgish": "LU", "Luxembourg": "LU", "Swiss": "CH", "Switzerland": "CH",
    "Austrian": "AT", "Austria": "AT", "Irish": "IE", "Ireland": "IE",
    "Danish": "DK", "Denmark": "DK", "Swedish": "SE", "Sweden": "SE", "Norwegian": "NO", "Norway": "NO",
    "Finnish": "FI", "Finland": "FI", "Icelandic": "IS", "Iceland": "IS",
    "Polish": "PL", "Poland": "PL", "Czech": "CZ", "Czechia": "CZ", "Czech Republic": "CZ",
    "Slovak": "SK", "Slovakia": "SK", "Hungarian": "HU", "Hungary": "HU",
    "Romanian": "RO", "Romania": "RO", "Bulgarian": "BG", "Bulgaria": "BG",
    "Croatian": "HR", "Croatia": "HR", "Slovenian": "SI", "Slovene": "SI", "Slovenia": "SI",
    "Serbian": "RS", "Serbia": "RS", "Bosnian": "BA", "Macedonian": "MK", "Albanian": "AL", "Montenegrin": "ME",
    "Greek": "GR", "Greece": "GR", "Cypriot": "CY", "Cyprus": "CY", "Maltese": "MT", "Malta": "MT",
    "Estonian": "EE", "Estonia": "EE", "Latvian": "LV", "Latvia": "LV", "Lithuanian": "LT", "Lithuania": "LT",
    "Russian": "RU", "Russia": "RU", "Ukrainian": "UA", "Ukraine": "UA", "Belarusian": "BY", "Belarus": "BY",
    "Moldovan": "MD", "Georgian": "GE", "Armenian": "AM", "Azerbaijani": "AZ",
    "Kazakh": "KZ", "Kazakhstani": "KZ", "Kazakhstan": "KZ", "Uzbek": "UZ",
    "Turkish": "TR", "Turkey": "TR", "Israeli": "IL", "Israel": "IL",
    "Lebanese": "LB", "Jordanian": "JO", "Saudi": "SA", "Saudi Arabia": "SA", "Saudi Arabian": "SA",
    "Emirati": "AE", "United Arab Emirates": "AE", "UAE": "AE", "Qatari": "QA", "Qatar": "QA",
    "Kuwaiti": "KW", "Kuwait": "KW", "Bahraini": "BH", "Omani": "OM", "Iranian": "IR", "Iran": "IR",
    "Iraqi": "IQ", "Egyptian": "EG", "Egypt": "EG", "Moroccan": "MA", "Morocco": "MA",
    "Tunisian": "TN", "Algerian": "DZ", "Nigerian": "NG", "Nigeria": "NG", "Kenyan": "KE", "Kenya": "KE",
    "Ghanaian": "GH", "South African": "ZA", "South Africa": "ZA", "Ethiopian": "ET",
    "Indian": "IN", "India": "IN", "Pakistani": "PK", "Pakistan": "PK", "Bangladeshi": "BD", "Bangladesh": "BD",
    "Sri Lankan": "LK", "Sri Lanka": "LK", "Nepali": "NP", "Nepalese": "NP",
    "Chinese": "CN", "China": "CN", "People's Republic of China": "CN",
    "Hong Kong": "HK", "Taiwanese": "TW", "Taiwan": "TW", "Macanese": "MO",
    "Japanese": "JP", "Japan": "JP", "South Korean": "KR", "South Korea": "KR", "Korean": "KR",
    "Vietnamese": "VN", "Vietnam": "VN", "Thai": "TH", "Thailand": "TH",
    "Malaysian": "MY", "Malaysia": "MY", "Singaporean": "SG", "Singapore": "SG",
    "Indonesian": "ID", "Indonesia": "ID", "Filipino": "PH", "Philippine": "PH", "Philippines": "PH",
    "Cambodian": "KH", "Burmese": "MM", "Mongolian": "MN",
    "Australian": "AU", "Australia": "AU", "New Zealand": "NZ",
}
PATTERN = re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(NAMES, key=len, reverse=True)) + r")(?!\w)")
# Adjectives Wikidata sometimes writes in lower case ("brand and romanian car manufacturer");
# not the ones that are also common words ("china", "turkey", "indian" ink).
LOWER = {n.lower(): c for n, c in NAMES.items() if re.search(r"(an|ish|ese|ch)$", n) and n not in ("Indian", "Georgian", "Dominican")}
LOWER_PATTERN = re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in sorted(LOWER, key=len, reverse=True)) + r")(?!\w)")
# Nationalities that are not the company's: a language taught ("English language
# instruction"), a continent's part ("Central American fast food restaurant chain"), and a
# cuisine ("Italian-style restaurant chain", "Korean cuisine chain", "chain of Mexican
# restaurants", and whatever follows "serving": "quick service restaurant chain serving
# Mexican food" is Australian), and a parent company's nationality ("Subsidiary of the
# American apparel and home goods company TJX" is TK Maxx, which has no store in the US;
# "owned by U.S. investment fund Regent" is Petit Bateau, French); where the parent's country
# is the brand's too, a curated row says so.
# A place named like a country is not one ("Texas, New Mexico, and Oklahoma"; a "Dutch
# Caribbean bank" is Curaçao's).
NOT_A_HOME = re.compile(
    r"\b(English|French|Spanish|German|Chinese|Japanese)[ -]language\b"
    r"|\b(Central|Latin|South|North|Pan)[ -]American\b"
    r"|\bNew Mexico\b|\bDutch Caribbean\b"
    r"|\b[\w-]+[ -]style\b|\b\w+ cuisine\b"
    r"|\bof \w+ (restaurants|food|dishes)\b"
    r"|\b(serving|selling|specializing in|specialising in|offering|inspired by)\b.*$"
    r"|\b(owned by|subsidiary of|division of|part of|operated by)( the| a| an)?( U\.S\.| [A-Z][a-z]+(-based)?)",
    re.IGNORECASE,
)


def countries_named(description: str) -> set[str]:
    """The countries a description names. Case matters for names ("US", not "us"); an adjective
    may be lower case in Wikidata ("spanish footwear company"). A hyphen separates two
    ("British-Italian multinational hearing aid retail chain" names both)."""
    text = NOT_A_HOME.sub("", description)
    return {NAMES[m] for m in PATTERN.findall(text)} | {LOWER[m] for m in LOWER_PATTERN.findall(text)}


def multi_country_brands() -> dict[str, str]:
    """Brands (wikidata id → an NSI display name, where Wikidata has no label) whose location
    sets together name two countries or more."""
    countries: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    with BRANDS.open() as f:
        for line in f:
            b = json.loads(line)
            q = b.get("wikidata")
            if not q:
                continue
            countries.setdefault(q, set()).update(b["countries"])
            names.setdefault(q, b["name"])
    return {q: names[q] for q, c in countries.items() if len(c) >= MIN_SET}


def derive(committed: list[dict[str, str]]) -> str:
    wikidata = json.loads(WIKIDATA.read_text())["wikidata"]
    curated = [r for r in committed if not r["source"].startswith(DERIVED)]
    curated_ids = {r["brand_wikidata"] for r in curated}
    rows = list(curated)
    for q, name in multi_country_brands().items():
        if q in curated_ids:
            continue
        description = (wikidata.get(q) or {}).get("description", "")
        found = countries_named(description)
        if len(found) == 1:
            label = (wikidata.get(q) or {}).get("label") or name
            rows.append({"brand_wikidata": q, "brand": label, "country": found.pop(), "source": f'{DERIVED} from its Wikidata description "{description}"'})
    rows.sort(key=lambda r: r["brand_wikidata"])
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=["brand_wikidata", "brand", "country", "source"], lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue()


def main() -> int:
    check = "--check" in sys.argv[1:]
    committed = list(csv.DictReader(TABLE.open())) if TABLE.exists() else []
    text = derive(committed)
    if check:
        if TABLE.read_text() != text:
            print(f"{TABLE.relative_to(ROOT)} differs from its derivation: run python3 scripts/brand_homes.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
