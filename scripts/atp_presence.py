#!/usr/bin/env python3
"""Derives data/atp-presence.csv from AllThePlaces' spider list.

    python3 scripts/atp_presence.py ../shared/reference/footprints/atp_spiders_brand_country.csv [--check]
        [--names REFERENCE/brands.jsonl]

A brand is listed when some spider names its wikidata id. Its countries are those of the
country-specific spiders (`target_us` → US) naming it; `complete` says every spider naming it
is country-specific, so those countries are all AllThePlaces harvests of it.

Some spiders name shops they do not harvest: the Starbucks spiders list the supermarkets their
kiosks stand in (Target, Kroger, Hy-Vee ...), and the ATM networks the shops their machines
stand in. AllThePlaces' rows from them carry the spider's own brand, with the host only as the
place it stands in, so a host is not harvested in the spider's country: `HOST_LISTING` names
those spiders and the ids that are their own; every other id they list is a host. A host stays
listed (the list is how this table learns that AllThePlaces knows the Kroger banners at all: its
`kroger_us` spider is listed under one banner's id only), but its countries and `complete` come
from its own spiders alone. Without this, Target was harvested in Peru and Kroger in Canada.

A few ids are attached to other companies' spiders wholesale: Ipiranga's id to Ford's, Toyota's,
Volkswagen's and Westpac's, the Lucky supermarkets' to thirty-odd (Amplifon, Carrefour Brasil,
Kroger ...), Qstar's to Hilton's and Best Western's. `MISATTRIBUTED` names each such id with the
spiders that really harvest it; from every other spider it is treated like a host. Without
this, Ipiranga, a Brazilian fuel network, traded in the US, Canada, Spain and Poland.

About 700 of the list's country spiders carry no id: the pattern finds none where a spider sets
it in code (per store, or from a parent class). Where such a spider's family (the spiders of
the same name before the country suffixes: kfc_ca beside kfc_at, kfc_jp ...) names an id, two
of them or more and more than half of them, the spider takes that id (`family_ids`): 159
country spiders do (Costco in Japan, Korea, Taiwan and six more countries, KFC in Canada,
Thailand and South Africa, Domino's in 38 markets), and four of several countries named as
their family (`foot_locker` beside foot_locker_ae and _sa, so Foot Locker is not harvested in
Arabia alone). The world harvests a chain whose spiders are each one country's in those
countries only; without this, KFC's Canadian stores had no AllThePlaces rows, and Foot
Locker's American ones none. A family of one is not enough: migros_ch is Switzerland's Migros,
migros_tr Turkey's. And a spider of a few countries names them all in its name, where the list
files it under the last: `sephora_us_ca` is Sephora's in the US and Canada, `costco_ca_gb_us`
Costco's in three countries, `burger_king_es_pt` Spain's and Portugal's (143 spiders,
`name_countries`).

The list is AllThePlaces at 0e866a2 (2026-08-22), parsed by pattern. `READ_AGAIN` adds the
spiders read in their own source since: one merged after that commit and before the world's
as-of (seven_eleven_jp, whose 21,833 stores end the main reason Japan's 7-Eleven was served
below Thailand's), and one whose ids the pattern missed (ministop_jp sets them per store).

The file's `brand` column is a display name for people reading the table; nothing reads it.
`--names` sets it from the name-suggestion-index (`brands.jsonl` of the extracted reference data:
the name of the id's entry with the most storefronts), else from a spider that names that id
alone, else leaves it empty: the spider list's own `brand` column names one brand per spider, and
a spider naming several ids (the British government's fuel-price feed names thirteen) gave all
of them its first one, so Valero, Texaco and Esso were listed as "Asda". Without `--names` the
column and the row order are kept as committed; `--check` exits 1 when the committed file
differs from the derivation.
"""

import csv
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

# Spider → the wikidata ids that are its own brand; the rest of its ids are hosts.
HOST_LISTING = {
    "starbucks_ca": set(),
    "starbucks_pe": set(),
    "starbucks_us": set(),
    "allpoint": set(),
    "banregio_mx": {"Q4853573"},
    "geldmaat_nl": {"Q74051230"},
    "cash_services_fr": {"Q140008260"},
    "kasikorn_bank_th": {"Q276557"},
    "bangkok_bank_th": {"Q806483"},
}

# Wikidata id → the spiders that are really its own; other spiders list it by mistake.
MISATTRIBUTED = {
    "Q2081136": {"ipiranga_br", "sim_br"},  # Ipiranga
    "Q6698032": {"albertsons", "save_mart_us"},  # Lucky (Albertsons', and Save Mart's California)
    "Q10647961": {"qstar_se"},  # Qstar
}

# Spider → (its country, the ids it sets), read in the spider's source where the list is
# silent: alltheplaces/alltheplaces, locations/spiders/<spider>.py.
READ_AGAIN = {
    # Pull request #18610 ("Add spider (21833 locations)"), opened 2026-09-09 and merged; read at 241b972.
    "seven_eleven_jp": ("JP", ["Q259340"]),
    # Listed with no id: its Ministop stores get Q1038929 in post_process_item; read at 171217c.
    # (Its MINISOF and cisca shops are not in the catalog's scope.)
    "ministop_jp": ("JP", ["Q1038929"]),
}

OUT = Path(__file__).resolve().parent.parent / "data" / "atp-presence.csv"


# Spider names whose last words before the country read as country codes: Toys"R"Us, Beds R Us,
# Japan's Can★Do.
WORDS_NOT_COUNTRIES = {"toys_r_us", "beds_r_us", "can_do"}


def name_countries(row, codes):
    """The spider's name before its country suffixes, and the countries they name, in order
    (`costco` and CA GB US of `costco_ca_gb_us`, which the list files under US alone); a
    suffix counts as a country where some spider of the list is filed under it (`mazda_ad_fr`
    is Mazda's, in France: no spider is Andorra's). (None, []) for a spider of no one country."""
    country, name = row["country_from_spider_name"], row["spider"]
    if not country or not name.endswith("_" + country.lower()):
        return None, []
    stem, found = name[: -len(country) - 1], [country]
    while stem not in WORDS_NOT_COUNTRIES and (m := re.fullmatch(r"(.+)_([a-z]{2})", stem)):
        stem = m.group(1)
        if m.group(2).upper() in codes:
            found.insert(0, m.group(2).upper())
    return stem, found


def family_ids(spiders, codes):
    """Spider → the ids its family names, for the spiders the list has no id for: a country's
    (`kfc_ca`), or the family's own spider of several countries, named as the family
    (`foot_locker` beside foot_locker_ae and _sa)."""
    family = defaultdict(list)
    for row in spiders:
        stem = name_countries(row, codes)[0]
        if stem and row["brand_wikidata"]:
            family[stem].append({q for q in row["brand_wikidata"].split(";") if q})
    found = {}
    for row in spiders:
        stem = name_countries(row, codes)[0] or (row["spider"] if not row["country_from_spider_name"] else "")
        members = family.get(stem, [])
        if row["brand_wikidata"] or len(members) < 2:
            continue
        named = defaultdict(int)
        for ids in members:
            for q in ids:
                named[q] += 1
        ids = sorted(q for q, n in named.items() if n >= 2 and 2 * n > len(members))
        if ids:
            found[row["spider"]] = ids
    return found


def derive(spiders_csv):
    countries = {}
    multi_country = defaultdict(bool)
    with open(spiders_csv, newline="", encoding="utf-8") as f:
        spiders = [r for r in csv.DictReader(f) if r["spider"] not in READ_AGAIN]
    spiders += [{"spider": k, "country_from_spider_name": c, "brand_wikidata": ";".join(ids)} for k, (c, ids) in READ_AGAIN.items()]
    codes = {r["country_from_spider_name"] for r in spiders if r["country_from_spider_name"]}
    inherited = family_ids(spiders, codes)
    spiders = [{**r, "brand_wikidata": ";".join(inherited[r["spider"]])} if r["spider"] in inherited else r for r in spiders]
    for row in spiders:
        ids = [q for q in row["brand_wikidata"].split(";") if q]
        own = HOST_LISTING.get(row["spider"])
        named = name_countries(row, codes)[1] or [row["country_from_spider_name"]]
        for q in ids:
            mine = countries.setdefault(q, set())  # listed even when no spider of it is country-specific
            if own is not None and q not in own:
                continue  # a host: known to AllThePlaces, listed, but harvested by its own spiders
            if q in MISATTRIBUTED and row["spider"] not in MISATTRIBUTED[q]:
                continue  # another company's spider, listing the id by mistake
            if named[0]:
                mine.update(named)
            else:
                multi_country[q] = True
    return {q: (" ".join(sorted(cs)), "false" if multi_country[q] else "true") for q, cs in countries.items()}


def display_names(spiders_csv, brands_jsonl):
    """Wikidata id → a display name: the name-suggestion-index's (its entry with the most
    storefronts), else the most common `brand` of the spiders that name that id alone."""
    best = {}
    with open(brands_jsonl, encoding="utf-8") as f:
        for line in f:
            b = json.loads(line)
            q = b.get("wikidata")
            if q and (q not in best or b["osm_count"] > best[q][1]):
                best[q] = (b["name"], b["osm_count"])
    alone = defaultdict(Counter)
    with open(spiders_csv, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            ids = [q for q in r["brand_wikidata"].split(";") if q]
            if len(ids) == 1 and r["brand"]:
                alone[ids[0]][r["brand"]] += 1
    names = {q: alone[q].most_common(1)[0][0] for q in alone}
    names.update({q: n for q, (n, _) in best.items()})
    return names


def main():
    argv = sys.argv[1:]
    names_at = None
    if "--names" in argv:
        i = argv.index("--names")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        names_at = argv[i + 1]
        del argv[i : i + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    derived = derive(args[0])
    names = display_names(args[0], names_at) if names_at else None
    with open(OUT, newline="", encoding="utf-8") as f:
        committed = list(csv.DictReader(f))
    rows = []
    for r in committed:
        if r["brand_wikidata"] in derived:
            cs, complete = derived.pop(r["brand_wikidata"])
            rows.append({**r, "countries": cs, "complete": complete})
    for q, (cs, complete) in sorted(derived.items(), key=lambda kv: (len(kv[0]), kv[0])):
        rows.append({"brand_wikidata": q, "brand": "", "countries": cs, "complete": complete})
    if names is not None:
        rows = [{**r, "brand": names.get(r["brand_wikidata"], "")} for r in rows]
    if "--check" in argv:
        if rows != committed:
            sys.exit(f"{OUT} differs from the derivation: run scripts/atp_presence.py without --check")
        return
    with open(OUT, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["brand_wikidata", "brand", "countries", "complete"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
