//! `storemap data report`: the figures of a synthetic build, and the dedup metric itself on a
//! snapshot whose exact scores are known.

use std::collections::BTreeMap;
use std::path::Path;

use storemap_core::{BrandRecord, RowBuilder, Snapshot, SnapshotBuilder, SnapshotMeta, SourceMask, SourceType};
use storemap_ingest::report::{dedup_scores, Dedup};

use crate::common::{shared_build, tables_dir, TempDir, AS_OF_ISO};

#[test]
fn report_on_a_synthetic_build() {
    let b = shared_build();
    let r = &b.report;
    assert_eq!(r.pool_points, b.snapshot_rows as u64, "pool_points == rows of the snapshot");
    assert_eq!(r.pool_points, b.summary.rows, "pool_points == rows the build wrote");
    assert!(r.verified_rows > 0, "no verified rows");
    assert!(r.verified_rows <= r.pool_points, "verified {} > pool {}", r.verified_rows, r.pool_points);
    // The build's own count of the rows the data formats serve is the written snapshot's.
    assert_eq!(b.summary.servable_rows, r.verified_rows, "servable rows the build counted == verified rows of the snapshot");

    let tickers_csv = tables_dir().join("tickers.csv");
    let ticker_rows =
        csv::Reader::from_path(&tickers_csv).expect("data/tickers.csv").records().collect::<Result<Vec<_>, _>>().expect("tickers.csv records").len();
    assert!(ticker_rows > 0);
    assert_eq!(r.tickers, ticker_rows as u64, "every row of data/tickers.csv maps to a brand");

    assert!(r.countries >= 100, "countries {}", r.countries);
    assert!(r.brands > 0);
    assert!(
        r.brands_with_verified_rows > 0 && r.brands_with_verified_rows <= r.brands,
        "brands_with_verified_rows {} of {}",
        r.brands_with_verified_rows,
        r.brands
    );
    assert!(r.synthetic);
    assert_eq!(r.as_of, AS_OF_ISO);
    assert_eq!(r.snapshot_version, b.summary.snapshot_version);

    let d = r.dedup.as_ref().expect("dedup scores: the synthetic build writes sources/truth.csv");
    assert!(d.true_pairs > 0 && d.predicted_pairs > 0, "{d:?}");
    assert!(d.precision >= 0.995, "dedup precision {} < 0.995 ({d:?})", d.precision);
    assert!(d.recall >= 0.99, "dedup recall {} < 0.99 ({d:?})", d.recall);
    assert!(b.truth_rows as u64 >= r.pool_points, "truth.csv lists every source row");

    // Every row on land, or a pin's width off it (the bar: at most 0.5 % beyond 2 km,
    // none beyond 10), and in a country.
    let land = r.land.as_ref().expect("land score");
    assert_eq!(land.rows, r.pool_points);
    assert!(land.share_beyond_2_km <= 0.005 && land.beyond_10_km == 0, "{land:?}");
    assert_eq!(b.xx_rows, 0, "rows placed in no country");
}

/// The tickers' published top three, read here from the table as the generator reads it (a
/// later row for a chain and country replaces an earlier one).
#[test]
fn the_report_sets_each_tickers_served_countries_beside_its_published_ones() {
    #[derive(serde::Deserialize)]
    struct Ticker {
        ticker: String,
        wikidata: String,
    }
    let r = &shared_build().report;
    let read = |f: &str| csv::Reader::from_path(tables_dir().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let mut table: std::collections::HashMap<String, std::collections::BTreeMap<String, u64>> = Default::default();
    for ((q, country), (_, n)) in crate::common::published_table().by_country {
        table.entry(q).or_default().insert(country, u64::from(n));
    }
    let tickers: Vec<Ticker> = read("tickers.csv").deserialize().map(|t| t.expect("ticker row")).collect();
    assert_eq!(r.ticker_countries.len(), tickers.len());
    for t in &tickers {
        let line = r.ticker_countries.iter().find(|l| l.ticker == t.ticker).unwrap_or_else(|| panic!("{} missing", t.ticker));
        let mut want: Vec<(String, u64)> =
            table.get(&t.wikidata).map_or(Vec::new(), |m| m.iter().filter(|(_, &n)| n > 0).map(|(c, &n)| (c.clone(), n)).collect());
        want.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        want.truncate(3);
        assert_eq!(line.published, want, "{}", t.ticker);
        assert!(line.served.len() <= 3 && line.served.windows(2).all(|w| w[0].1 >= w[1].1), "{line:?}");
        assert_eq!(line.top_matches, want.first().map(|(c, _)| line.served.first().is_some_and(|(s, _)| s == c)));
    }
    // The biggest chains' home markets lead at scale 0.01 too.
    let mcd = r.ticker_countries.iter().find(|l| l.ticker == "MCD").expect("MCD");
    assert_eq!(mcd.served.first().map(|(c, _)| c.as_str()), Some("US"), "{mcd:?}");
}

/// Issue 31: at scale 0.1 each ticker chain's served top country is its published top country,
/// wherever `data/footprints.csv` has its rows, except the chains `data/served-top-exceptions.csv`
/// names with the reason. The list is held both ways: a chain that starts to match must leave it,
/// and a chain listed because the table lacks a market must still lack it.
#[test]
fn at_scale_a_tenth_each_ticker_chains_served_top_country_is_its_published_one_but_the_named_exceptions() {
    #[derive(serde::Deserialize)]
    struct Exception {
        ticker: String,
        table_lacks: String,
    }
    #[derive(serde::Deserialize)]
    struct Ticker {
        ticker: String,
        wikidata: String,
    }
    #[derive(serde::Deserialize)]
    struct Footprint {
        brand_wikidata: String,
        country: String,
    }
    let dir = TempDir::new("tenth");
    crate::common::build_synthetic(dir.path(), 0.1, crate::common::SEED);
    let snap = Snapshot::load(&dir.path().join(storemap_ingest::pipeline::SNAPSHOT_FILE)).expect("the scale-0.1 snapshot");
    let rows = storemap_ingest::reference::read_csv(&tables_dir().join("footprints.csv")).expect("data/footprints.csv");
    let lines = storemap_ingest::report::ticker_countries(&snap, &storemap_ingest::footprint::Footprints::new(&rows, &[], &[]));

    let read = |f: &str| csv::Reader::from_path(tables_dir().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let exceptions: Vec<Exception> = read("served-top-exceptions.csv").deserialize().map(|e| e.expect("exception row")).collect();
    let wikidata: std::collections::HashMap<String, String> =
        read("tickers.csv").deserialize::<Ticker>().map(|t| t.expect("ticker row")).map(|t| (t.ticker, t.wikidata)).collect();
    let listed: std::collections::HashSet<(String, String)> =
        read("footprints.csv").deserialize::<Footprint>().map(|f| f.expect("footprint row")).map(|f| (f.brand_wikidata, f.country)).collect();

    let with_rows: Vec<_> = lines.iter().filter(|l| l.top_matches.is_some()).collect();
    assert!(with_rows.len() >= 120, "{} tickers with published rows", with_rows.len());
    let mismatched: std::collections::BTreeSet<&str> = with_rows.iter().filter(|l| l.top_matches == Some(false)).map(|l| l.ticker.as_str()).collect();
    let named: std::collections::BTreeSet<&str> = exceptions.iter().map(|e| e.ticker.as_str()).collect();
    let explain =
        |t: &str| lines.iter().find(|l| l.ticker == t).map(|l| format!("{t}: served {:?}, published {:?}", l.served, l.published)).unwrap_or_default();
    let unexplained: Vec<String> = mismatched.difference(&named).map(|t| explain(t)).collect();
    assert!(unexplained.is_empty(), "served top country is not the published one, and no exception names it:\n{}", unexplained.join("\n"));
    let stale: Vec<&&str> = named.difference(&mismatched).collect();
    assert!(stale.is_empty(), "listed as exceptions but now matching (take them off data/served-top-exceptions.csv): {stale:?}");
    for e in exceptions.iter().filter(|e| !e.table_lacks.is_empty()) {
        let q = wikidata.get(&e.ticker).unwrap_or_else(|| panic!("{} is not in tickers.csv", e.ticker));
        assert!(
            !listed.contains(&(q.clone(), e.table_lacks.clone())),
            "{}: footprints.csv has a {} row now; the exception's reason is gone",
            e.ticker,
            e.table_lacks
        );
    }
    home_markets_at_a_tenth(&snap);
    addresses_at_a_tenth(&snap);
    // On the same scale-0.1 world, built once for both.
    crate::footprints::crowded_countries_at_a_tenth(&dir.path().join("sources"));
}

/// The served addresses on the scale-0.1 world, whichever source gave them: a German row's line
/// puts the number after the street, an American row's before it, however the source split them
/// (OpenStreetMap and AllThePlaces give the two apart), and no row holds the separator the
/// importers join them with.
fn addresses_at_a_tenth(snap: &Snapshot) {
    let (mut de, mut us, mut us_first) = (0, 0, 0);
    // GeoNames' names of cities' districts, which an address never gives as its town: Marseille's
    // arrondissements, Budapest's kerületek, Zürich's Kreise and its canton's quarters
    // ("Kloten / Holberg"), Bucharest's sectors.
    // (Elsewhere " / " joins a town's two names: Gasteiz / Vitoria.)
    let district = |c: &str, country: &str| {
        let numbered = |prefix: &str| c.strip_prefix(prefix).is_some_and(|n| n.parse::<u32>().is_ok());
        c.contains("kerület") || c.contains("(Kreis ") || (country == "CH" && c.contains(" / ")) || numbered("Marseille ") || numbered("Sector ")
    };
    // ... nor GeoNames' filing of a name (Gifu-shi, Amphoe Sikhiu, City of Isabela, Kalibo
    // (poblacion)); a bracket stays where the official name has one (Halle (Saale)).
    let decorated = |c: &str, country: &str| {
        (country == "JP" && c.ends_with("-shi"))
            || (country == "TH" && (c.starts_with("Amphoe ") || c.ends_with(" District")))
            || (country != "GB" && c.starts_with("City of "))
            || (!matches!(country, "DE" | "AT" | "CH" | "FR" | "CZ") && c.ends_with([')', ']']))
            // A transliteration's scholarly marks (Sūrat, Ta’if, Kramators’k, Sōka, Pátra).
            || (matches!(country, "IN" | "PK" | "BD" | "SA" | "AE" | "EG" | "IQ" | "IR" | "JP" | "KR" | "GR" | "RU" | "UA")
                && c.contains(['ā', 'ī', 'ū', 'ē', 'ō', 'ŏ', 'ŭ', 'ḩ', 'ţ', 'ş', 'ṭ', 'ḍ', 'ṇ', 'ë', 'á', 'é', 'í', 'ó', 'ú', '‘', '’']))
    };
    // Rows in the city-states, by the town they give: Berlin's and Vienna's districts are
    // places of their own in GeoNames (Neukölln, Favoriten).
    let mut city_states: BTreeMap<(String, String), BTreeMap<String, u64>> = BTreeMap::new();
    // The names the reference gives only to sections of a city (Eixample, Vomero, Koreatown),
    // by country: a place of its own that shares one (a village called Salamanca) is left out.
    let cities = &crate::common::reference().cities;
    let own: std::collections::HashSet<(&str, &str)> = cities.iter().filter(|c| c.town.is_empty()).map(|c| (c.country.as_str(), c.name.as_str())).collect();
    let sections: std::collections::HashSet<(&str, &str)> = cities
        .iter()
        .filter(|c| !c.town.is_empty() && !own.contains(&(c.country.as_str(), c.name.as_str())))
        .map(|c| (c.country.as_str(), c.name.as_str()))
        .collect();
    assert!(sections.len() > 1000, "{} section names", sections.len());
    // An American address names a city its ZIP's post office accepts (the USPS city-state data
    // the `zipcodes` crate carries): Brooklyn, not East Flatbush; Las Vegas, not Paradise.
    let usps_key = |name: &str| -> String {
        storemap_core::normalize_name(name)
            .split(' ')
            .map(|w| match w {
                "st" => "saint",
                "ste" => "sainte",
                "ft" => "fort",
                "mt" => "mount",
                w => w,
            })
            .collect()
    };
    // (A Mexican row by the border that a source files under the US, "Juárez, CHH 33041", has
    // a Mexican postcode: only rows whose ZIP is their state's are American addresses.)
    let accepted: std::collections::HashMap<(&str, &str), Vec<String>> = zipcodes::database()
        .iter()
        .map(|z| ((z.zip_code.as_str(), z.state.as_str()), std::iter::once(&z.city).chain(&z.acceptable_cities).map(|c| usps_key(c)).collect()))
        .collect();
    // ... spelt as the place spells itself, not as the Postal Service files it without accents,
    // apostrophes or hyphens: St. Louis, Winston-Salem, McAllen, Bayamón, not "Saint Louis",
    // "Winston Salem", "Mcallen", "Bayamon" (a filed name no place of the state writes that way
    // while one folds alike).
    let mut spelt: std::collections::HashMap<(&str, String), Vec<&str>> = std::collections::HashMap::new();
    for c in cities.iter().filter(|c| matches!(c.country.as_str(), "US" | "PR")) {
        let state = if c.country == "PR" { "PR" } else { c.admin1.as_str() };
        spelt.entry((state, usps_key(&c.name))).or_default().push(&c.name);
    }
    let filed_spelling: std::collections::HashSet<(&str, &str)> = zipcodes::database()
        .iter()
        .filter(|z| spelt.get(&(z.state.as_str(), usps_key(&z.city))).is_some_and(|names| !names.contains(&z.city.as_str())))
        .map(|z| (z.state.as_str(), z.city.as_str()))
        .collect();
    assert!(filed_spelling.contains(&("MO", "Saint Louis")) && filed_spelling.contains(&("NC", "Winston Salem")), "{} filed spellings", filed_spelling.len());
    let mut us_filed_spelling = Vec::new();
    let (mut us_zips, mut us_not_accepted) = (0, Vec::new());
    for r in 0..snap.row_count() {
        let row = snap.row(r);
        assert!(!row.address.contains(storemap_ingest::house_number::SEP), "row {r}: {:?}", row.address);
        assert!(!district(&row.city, &row.country), "row {r}: a district for a town, {:?} ({})", row.city, row.country);
        assert!(!decorated(&row.city, &row.country), "row {r}: a town as GeoNames files it, {:?} ({})", row.city, row.country);
        // (An American one its ZIP's post office accepts is a town there: North Hollywood, Flushing.)
        let usps_town =
            row.country == "US" && accepted.get(&(row.postcode.as_str(), row.state.as_str())).is_some_and(|names| names.contains(&usps_key(&row.city)));
        assert!(
            usps_town || !sections.contains(&(row.country.as_str(), row.city.as_str())),
            "row {r}: a city's section for a town, {:?} ({})",
            row.city,
            row.country
        );
        let state = if row.country == "PR" { "PR" } else { row.state.as_str() };
        if matches!(row.country.as_str(), "US" | "PR") && filed_spelling.contains(&(state, row.city.as_str())) {
            us_filed_spelling.push(format!("{}, {} {}", row.city, row.state, row.postcode));
        }
        if matches!((row.country.as_str(), row.state.as_str()), ("DE", "BE" | "HH") | ("AT", "9") | ("HU", "BU") | ("MX", "CMX")) && !row.city.is_empty() {
            *city_states.entry((row.country.clone(), row.state.clone())).or_default().entry(row.city.clone()).or_default() += 1;
        }
        let starts_with_number = row.address.starts_with(|c: char| c.is_ascii_digit());
        match row.country.as_str() {
            "DE" if !row.address.is_empty() => {
                de += 1;
                assert!(!starts_with_number, "a German address with its number first: {:?}", row.address);
            }
            "US" if !row.address.is_empty() => {
                us += 1;
                us_first += usize::from(starts_with_number);
                if let (false, Some(names)) = (row.city.is_empty(), accepted.get(&(row.postcode.as_str(), row.state.as_str()))) {
                    us_zips += 1;
                    if !names.contains(&usps_key(&row.city)) {
                        us_not_accepted.push(format!("{}, {} {}", row.city, row.state, row.postcode));
                    }
                }
            }
            _ => {}
        }
    }
    assert!(de >= 1000 && us >= 1000, "{de} German and {us} American addresses");
    assert_eq!(us_first, us, "every American address starts with its number");
    assert!(us_zips >= 1000, "{us_zips} American rows with a town and a ZIP");
    assert!(
        us_filed_spelling.is_empty(),
        "{} towns as the Postal Service spells them: {:?}",
        us_filed_spelling.len(),
        &us_filed_spelling[..us_filed_spelling.len().min(20)]
    );
    assert!(us_not_accepted.is_empty(), "{} towns their ZIP does not accept: {:?}", us_not_accepted.len(), &us_not_accepted[..us_not_accepted.len().min(20)]);
    for (region, town) in
        [(("DE", "BE"), "Berlin"), (("DE", "HH"), "Hamburg"), (("AT", "9"), "Wien"), (("HU", "BU"), "Budapest"), (("MX", "CMX"), "Ciudad de México")]
    {
        let towns = city_states.get(&(region.0.to_string(), region.1.to_string()));
        let rows: u64 = towns.map_or(0, |t| t.values().sum());
        assert!(rows >= 20, "{region:?}: {rows} rows with a town");
        assert_eq!(towns.map(|t| t.keys().collect::<Vec<_>>()), Some(vec![&town.to_string()]), "{region:?}");
    }
}

/// `data report`'s home markets on the scale-0.1 world, recounted here from the snapshot and
/// the tables: the brands without a row whose home a table names (home city, company, home
/// market, then the ticker's exchange), with 20 verified rows or more. Home leads for nearly
/// all of them, and the US holds a small share of the rows of those based elsewhere (15 % when
/// the world placed them by population alone).
fn home_markets_at_a_tenth(snap: &Snapshot) {
    #[derive(serde::Deserialize)]
    struct Home {
        brand_wikidata: String,
        #[serde(alias = "home")]
        country: String,
    }
    #[derive(serde::Deserialize)]
    struct Row {
        brand_wikidata: String,
    }
    let mut report = storemap_ingest::report::report(snap, None).expect("report");
    storemap_ingest::report::with_tables(&mut report, snap, &tables_dir()).expect("the tables");
    let got = report.home_markets.expect("home markets with the tables");

    let read = |f: &str| csv::Reader::from_path(tables_dir().join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let with_rows: std::collections::HashSet<String> = read("footprints.csv").deserialize::<Row>().map(|r| r.expect("row").brand_wikidata).collect();
    let mut home: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for table in ["home-cities.csv", "world-totals.csv", "brand-homes.csv"] {
        for h in read(table).deserialize::<Home>().map(|h| h.expect("home row")).filter(|h| !h.brand_wikidata.is_empty() && !h.country.is_empty()) {
            home.entry(h.brand_wikidata).or_insert(h.country);
        }
    }
    for t in read("tickers.csv").deserialize::<storemap_ingest::reference::Ticker>().map(|t| t.expect("ticker row")) {
        if let Some(c) = t.listing_country() {
            home.entry(t.wikidata.clone()).or_insert_with(|| c.to_string());
        }
    }
    let (mut brands, mut first, mut abroad, mut us) = (0u64, 0u64, 0u64, 0u64);
    for b in snap.brands().iter().filter(|b| b.verified_count >= 20) {
        let Some(q) = b.wikidata.as_deref().filter(|q| !with_rows.contains(*q)) else { continue };
        let Some(h) = home.get(q) else { continue };
        let mut by: std::collections::BTreeMap<&str, u64> = Default::default();
        for r in (b.row_start as usize..b.row_end as usize).filter(|&r| snap.row_is_verified(r)) {
            *by.entry(snap.row_country(r)).or_default() += 1;
        }
        let top = by.iter().max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c))).map(|(c, _)| *c);
        brands += 1;
        first += u64::from(top == Some(h.as_str()));
        if h != "US" {
            abroad += by.values().sum::<u64>();
            us += by.get("US").copied().unwrap_or(0);
        }
    }
    assert_eq!((got.min_rows, got.brands, got.home_first, got.rows_of_brands_based_abroad), (20, brands, first, abroad));
    assert!(brands >= 300, "only {brands} brands without counts and with a named home");
    assert!(first as f64 >= 0.95 * brands as f64, "home leads for {first} of {brands}: {:?}", got.home_not_first);
    assert!((us as f64) < 0.05 * abroad as f64, "the US holds {us} of {abroad} rows of brands based elsewhere");
    assert!(got.home_not_first.len() <= 10 && got.home_not_first.iter().all(|(_, h, top)| top.first().is_none_or(|(c, _)| c != h)));
}

fn row(brand: u32, lat: f64, aliases: &[(SourceType, &str)]) -> RowBuilder {
    let mut sources = SourceMask::default();
    for (s, _) in aliases {
        sources.insert(*s);
    }
    RowBuilder {
        brand,
        lat,
        lng: -87.63,
        id: (lat * 1e6) as u64,
        name: "Test".into(),
        country: "US".into(),
        confidence: 0.9,
        provenance: true,
        sources,
        aliases: aliases.iter().map(|(s, id)| (*s, id.to_string())).collect(),
        ..RowBuilder::default()
    }
}

fn write_snapshot(path: &Path, rows: &[RowBuilder]) -> Snapshot {
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), vec![BrandRecord::new("Test Brand")], Vec::new(), Vec::new());
    for r in rows {
        b.push(r);
    }
    b.write(path).expect("snapshot written");
    Snapshot::load(path).expect("snapshot loads")
}

#[test]
fn dedup_scores_on_a_hand_made_snapshot() {
    let dir = TempDir::new("dedup");
    // Truth: store A was seen by atp:a1, osm:a2, fsq:a3 and by atp:gone (a source row that
    // never reached the snapshot, e.g. closed); store B by osm:b1. The `atp:b1` twin id of
    // another source is a trap: ids are per source.
    let truth = dir.path().join("truth.csv");
    std::fs::write(
        &truth,
        "source,source_id,store,closed\n\
         atp,a1,A,false\n\
         osm,a2,A,false\n\
         fsq,a3,A,false\n\
         atp,gone,A,true\n\
         osm,b1,B,false\n",
    )
    .unwrap();

    // Rows: {a1, a2} (right), {a3, b1} (wrong), {overture:x} (not in the truth: not scored).
    let snap = write_snapshot(
        &dir.path().join("snapshot.smap"),
        &[
            row(0, 41.1, &[(SourceType::Atp, "a1"), (SourceType::Osm, "a2")]),
            row(0, 41.2, &[(SourceType::Fsq, "a3"), (SourceType::Osm, "b1")]),
            row(0, 41.3, &[(SourceType::Overture, "x"), (SourceType::Atp, "b1")]),
        ],
    );
    assert_eq!(snap.row_count(), 3);
    // Predicted pairs: (a1,a2), (a3,b1) = 2; correct: (a1,a2) = 1; true pairs among rows that
    // reached the snapshot: A has a1, a2, a3 -> 3 pairs, B has b1 -> 0.
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!(d, Dedup { precision: 0.5, recall: 1.0 / 3.0, predicted_pairs: 2, true_pairs: 3, correct_pairs: 1 });

    // The same source rows grouped as the truth says: perfect scores.
    let snap = write_snapshot(
        &dir.path().join("perfect.smap"),
        &[row(0, 41.1, &[(SourceType::Atp, "a1"), (SourceType::Osm, "a2"), (SourceType::Fsq, "a3")]), row(0, 41.2, &[(SourceType::Osm, "b1")])],
    );
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!((d.precision, d.recall, d.predicted_pairs, d.true_pairs, d.correct_pairs), (1.0, 1.0, 3, 3, 3));

    // Every source row alone: nothing predicted (precision vacuously 1), nothing found.
    let snap = write_snapshot(
        &dir.path().join("split.smap"),
        &[
            row(0, 41.1, &[(SourceType::Atp, "a1")]),
            row(0, 41.2, &[(SourceType::Osm, "a2")]),
            row(0, 41.3, &[(SourceType::Fsq, "a3")]),
            row(0, 41.4, &[(SourceType::Osm, "b1")]),
        ],
    );
    let d = dedup_scores(&snap, &truth).expect("dedup_scores");
    assert_eq!((d.recall, d.correct_pairs, d.true_pairs), (0.0, 0, 3));
}

/// After `data rollback` to a build of another seed, the folder's truth files describe the
/// other world: the report scores nothing against them and says why. Rolled forward again, the
/// snapshot is the world's own and is scored.
#[test]
fn a_rolled_back_snapshot_of_another_world_is_not_scored_against_the_folders_truth() {
    let dir = TempDir::new("rollback-truth");
    let (scale, first, second) = (0.002, 3, 4);
    crate::common::build_synthetic(dir.path(), scale, first);
    crate::common::build_synthetic(dir.path(), scale, second);
    let load = || Snapshot::load(&dir.path().join(storemap_ingest::pipeline::SNAPSHOT_FILE)).expect("snapshot");

    // The second build's own snapshot: its world is the folder's.
    let (truth, why) = storemap_ingest::report::truth_for(dir.path(), &load());
    assert_eq!(truth, Some(dir.path().join("sources").join("truth.csv")));
    assert_eq!(why, None);

    storemap_ingest::pipeline::rollback(dir.path()).expect("rollback");
    let snap = load();
    assert_eq!(snap.meta().seed, Some(first), "the rollback served the first build");
    let (truth, why) = storemap_ingest::report::truth_for(dir.path(), &snap);
    assert_eq!(truth, None, "the folder's truth is seed {second}'s");
    let why = why.expect("a reason");
    assert!(why.contains(&format!("seed {first}")) && why.contains(&format!("seed {second}")), "{why}");
    // And what `data report` does with that: no score from the wrong world.
    let r = storemap_ingest::report::report(&snap, truth.as_deref()).expect("report");
    assert!(r.dedup.is_none() && r.coverage.is_none() && r.realism.is_empty());

    storemap_ingest::pipeline::rollback(dir.path()).expect("rollback again");
    let (truth, why) = storemap_ingest::report::truth_for(dir.path(), &load());
    assert!(truth.is_some() && why.is_none(), "rolled forward, the snapshot is the folder's world again: {why:?}");
}
