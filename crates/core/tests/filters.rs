//! Every filter of `Snapshot::query`, on a small snapshot written and loaded through the real
//! file format. Each expected answer is a brute-force pass over the rows this file writes (with
//! its own case folding, postcode keys, gazetteer pick and haversine), and the key cases also
//! name their rows by hand.

mod common;

use storemap_core::{
    BrandRecord, CityRecord, CoreError, Filters, QueryResult, RowBuilder, Sightings, Snapshot, SnapshotBuilder, SnapshotMeta, SourceMask, SourceType,
    StorefrontType, TextColumn, CONFIDENCE_FLOOR,
};

use SourceType::{Atp, Fsq, Osm, Overture};
use StorefrontType::{FullRetail, Pickup, SmallFormat, Studio};

const ALPHA: u32 = 0;
const BETA: u32 = 1;

/// One row; `name` is unique and is how results are compared.
struct Row {
    brand: u32,
    name: &'static str,
    lat: f64,
    lng: f64,
    country: &'static str,
    state: &'static str,
    city: &'static str,
    postcode: &'static str,
    storefront: Option<StorefrontType>,
    confidence: f32,
    community_only: bool,
    source: SourceType,
}

#[allow(clippy::too_many_arguments)]
const fn row(
    brand: u32,
    name: &'static str,
    (lat, lng): (f64, f64),
    country: &'static str,
    state: &'static str,
    city: &'static str,
    postcode: &'static str,
    storefront: Option<StorefrontType>,
    confidence: f32,
    community_only: bool,
    source: SourceType,
) -> Row {
    Row { brand, name, lat, lng, country, state, city, postcode, storefront, confidence, community_only, source }
}

/// Alpha around Chicago (one "CHICAGO" row 100 km out, a community-only row, one below the
/// floor, one exactly at it), in both Springfields, in London with one postcode written three
/// ways, in Zürich in two cases, in Toronto and in Aurora (not in the gazetteer). Beta sits in
/// Chicago, and alone in Denver and in an Aurora 1,400 km away: it must never show in Alpha's
/// answers, nor move Alpha's Aurora centre.
const ROWS: &[Row] = &[
    row(ALPHA, "a01", (41.8800, -87.6300), "US", "IL", "Chicago", "60601", Some(FullRetail), 0.9, false, Atp),
    row(ALPHA, "a02", (42.0451, -87.6877), "US", "IL", "Evanston", "60201", Some(SmallFormat), 0.7, false, Fsq),
    row(ALPHA, "a03", (41.8850, -87.7845), "US", "IL", "Oak Park", "60302", Some(Pickup), CONFIDENCE_FLOOR, false, Overture),
    row(ALPHA, "a04", (42.5000, -88.5000), "US", "il", "CHICAGO", "60602", Some(FullRetail), 0.8, false, Atp),
    row(ALPHA, "a05", (41.7508, -88.1535), "US", "IL", "Naperville", "60540", None, 0.65, false, Fsq),
    row(ALPHA, "a06", (41.8700, -87.6200), "US", "IL", "chicago", "60605", Some(FullRetail), 0.95, true, Osm),
    row(ALPHA, "a07", (41.9000, -87.6500), "US", "Il", "Chicago", "60614", None, 0.59, false, Osm),
    row(ALPHA, "a08", (39.8000, -89.6400), "US", "IL", "Springfield", "62701", Some(FullRetail), 0.9, false, Atp),
    row(ALPHA, "a09", (37.2100, -93.2900), "US", "MO", "Springfield", "65806", Some(SmallFormat), 0.9, false, Fsq),
    row(ALPHA, "a10", (37.1800, -93.3000), "US", "mo", "springfield", "65807", Some(FullRetail), 0.7, false, Overture),
    row(ALPHA, "a11", (51.5014, -0.1419), "GB", "ENG", "London", "SW1A 1AA", Some(FullRetail), 0.8, false, Atp),
    row(ALPHA, "a12", (51.5010, -0.1420), "GB", "ENG", "london", "sw1a1aa", Some(Pickup), 0.8, false, Overture),
    row(ALPHA, "a13", (51.5012, -0.1418), "GB", "eng", "LONDON", " Sw1a\t1aA ", Some(FullRetail), 0.3, false, Osm),
    row(ALPHA, "a14", (51.5033, -0.1276), "GB", "ENG", "London", "SW1A 2AA", Some(FullRetail), 0.8, false, Fsq),
    row(ALPHA, "a15", (47.3769, 8.5417), "CH", "ZH", "Zürich", "8001", Some(Studio), 0.9, false, Atp),
    row(ALPHA, "a16", (47.3780, 8.5400), "CH", "zh", "ZÜRICH", "8002", Some(SmallFormat), 0.9, true, Osm),
    row(ALPHA, "a17", (43.6532, -79.3832), "CA", "ON", "Toronto", "M5H 2N2", Some(Studio), 0.75, false, Overture),
    row(ALPHA, "a18", (41.7606, -88.3201), "US", "IL", "Aurora", "60505", Some(FullRetail), 0.9, false, Atp),
    row(ALPHA, "a19", (41.7700, -88.2900), "US", "IL", "aurora", "60506", Some(Pickup), 0.9, false, Fsq),
    row(BETA, "b01", (41.8781, -87.6298), "US", "IL", "Chicago", "60601", Some(FullRetail), 0.9, false, Fsq),
    row(BETA, "b02", (41.8790, -87.6310), "US", "IL", "Chicago", "SW1A 1AA", Some(Pickup), 0.9, false, Overture),
    row(BETA, "b03", (39.7392, -104.9903), "US", "CO", "Denver", "80202", Some(FullRetail), 0.9, false, Atp),
    row(BETA, "b04", (39.7294, -104.8319), "US", "CO", "Aurora", "80012", Some(FullRetail), 0.9, false, Atp),
    // A city known by two names (the gazetteer's München, also Munich), written either way by
    // the sources; and a Roma in Queensland beside Rome's own Roma.
    row(BETA, "b05", (48.1374, 11.5755), "DE", "BY", "München", "80331", Some(FullRetail), 0.9, false, Osm),
    row(BETA, "b06", (48.1500, 11.5800), "DE", "BY", "Munich", "80802", Some(FullRetail), 0.9, false, Fsq),
    row(BETA, "b07", (48.1200, 11.6000), "DE", "BY", "MÜNCHEN", "81667", Some(FullRetail), 0.9, false, Atp),
    row(BETA, "b08", (-26.5700, 148.7900), "AU", "QLD", "Roma", "4455", Some(FullRetail), 0.9, false, Atp),
    row(BETA, "b09", (41.9000, 12.5000), "IT", "62", "Roma", "00184", Some(FullRetail), 0.9, false, Overture),
];

/// The gazetteer: two Springfields (Missouri's the more populous), no Aurora, Portland or
/// Denver.
fn cities() -> Vec<CityRecord> {
    let city = |name: &str, country: &str, admin1: &str, lat: f64, lng: f64, population: u64| CityRecord {
        name: name.into(),
        country: country.into(),
        admin1: admin1.into(),
        lat,
        lng,
        population,
        also: String::new(),
    };
    vec![
        city("Chicago", "US", "IL", 41.878_1, -87.629_8, 2_746_388),
        city("Springfield", "US", "IL", 39.781_7, -89.650_1, 114_394),
        city("Springfield", "US", "MO", 37.209_0, -93.292_3, 169_176),
        city("London", "GB", "ENG", 51.507_4, -0.127_8, 8_799_800),
        city("Zürich", "CH", "ZH", 47.376_9, 8.541_7, 421_878),
        city("Toronto", "CA", "ON", 43.653_2, -79.383_2, 2_794_356),
        CityRecord { also: "Munich".into(), ..city("München", "DE", "BY", 48.137_4, 11.575_5, 1_260_391) },
        CityRecord { also: "Rome".into(), ..city("Roma", "IT", "62", 41.894_7, 12.485_1, 2_318_895) },
    ]
}

fn snapshot(name: &str) -> Snapshot {
    let brands = vec![BrandRecord::new("Alpha"), BrandRecord::new("Beta")];
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), brands, cities(), Vec::new());
    for (i, r) in ROWS.iter().enumerate() {
        let mut sources = SourceMask::default();
        sources.insert(r.source);
        b.push(&RowBuilder {
            brand: r.brand,
            lat: r.lat,
            lng: r.lng,
            id: 1000 - i as u64,
            name: r.name.into(),
            city: r.city.into(),
            state: r.state.into(),
            postcode: r.postcode.into(),
            country: r.country.into(),
            confidence: r.confidence,
            provenance: true,
            storefront: r.storefront,
            sources,
            community_only: r.community_only,
            ..RowBuilder::default()
        });
    }
    common::write_and_load(b, "filters", name).unwrap()
}

/// Great-circle distance in km on a sphere of the Earth's mean radius (IUGG, 6371 km).
fn distance_km(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let h = ((p2 - p1) / 2.0).sin().powi(2) + p1.cos() * p2.cos() * ((lng2 - lng1).to_radians() / 2.0).sin().powi(2);
    2.0 * 6371.0 * h.sqrt().asin()
}

fn same_text(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.trim().to_lowercase()
}

fn postcode_key(s: &str) -> String {
    s.split_whitespace().collect::<String>().to_lowercase()
}

/// The radius centre as documented: the most populous gazetteer city of that name within the
/// country and state filters, else the mean position of the brand's rows carrying the name.
fn centre(brand: u32, f: &Filters) -> Option<(f64, f64)> {
    let city = f.city.as_deref()?;
    let best = cities()
        .into_iter()
        .filter(|c| same_text(&c.name, city) || (!c.also.is_empty() && same_text(&c.also, city)))
        .filter(|c| f.country.as_deref().is_none_or(|k| same_text(&c.country, k)))
        .filter(|c| f.state.as_deref().is_none_or(|s| same_text(&c.admin1, s)))
        .max_by_key(|c| c.population);
    if let Some(c) = best {
        return Some((c.lat, c.lng));
    }
    let named: Vec<&Row> = ROWS.iter().filter(|r| r.brand == brand && same_text(r.city, city)).collect();
    if named.is_empty() {
        return None;
    }
    let n = named.len() as f64;
    Some((named.iter().map(|r| r.lat).sum::<f64>() / n, named.iter().map(|r| r.lng).sum::<f64>() / n))
}

/// The brute-force answer: the names of `brand`'s rows that pass every filter, sorted.
fn want(brand: u32, f: &Filters) -> Vec<&'static str> {
    let centre = f.radius_km.map(|_| centre(brand, f).expect("a radius test names a known city"));
    let mut out: Vec<&'static str> = ROWS
        .iter()
        .filter(|r| r.brand == brand)
        .filter(|r| !f.verified_only || (!r.community_only && r.confidence >= 0.6))
        .filter(|r| f.country.as_deref().is_none_or(|c| same_text(r.country, c)))
        .filter(|r| f.state.as_deref().is_none_or(|s| same_text(r.state, s)))
        .filter(|r| f.postcode.as_deref().is_none_or(|p| postcode_key(r.postcode) == postcode_key(p)))
        .filter(|r| f.storefront_type.is_none_or(|t| r.storefront == Some(t)))
        .filter(|r| match (centre, f.radius_km, f.city.as_deref()) {
            (Some((lat, lng)), Some(km), _) => distance_km(lat, lng, r.lat, r.lng) <= km,
            // The name as asked, or another name of a gazetteer city of that name within the
            // filters, in that city's country.
            (_, _, Some(c)) => {
                same_text(r.city, c)
                    || cities().iter().any(|g| {
                        (same_text(&g.name, c) || (!g.also.is_empty() && same_text(&g.also, c)))
                            && f.country.as_deref().is_none_or(|k| same_text(&g.country, k))
                            && f.state.as_deref().is_none_or(|s| same_text(&g.admin1, s))
                            && g.country == r.country
                            && (same_text(r.city, &g.name) || (!g.also.is_empty() && same_text(r.city, &g.also)))
                    })
            }
            _ => true,
        })
        .map(|r| r.name)
        .collect();
    out.sort_unstable();
    out
}

fn sources_of(names: &[&str]) -> SourceMask {
    let mut m = SourceMask::default();
    for r in ROWS.iter().filter(|r| names.contains(&r.name)) {
        m.insert(r.source);
    }
    m
}

/// The query's rows by name, sorted, after checking they come in snapshot order, once each,
/// within the brand, and that the sources are those of these rows.
fn names(snap: &Snapshot, brand: u32, res: &QueryResult) -> Vec<&'static str> {
    assert!(res.rows.windows(2).all(|w| w[0] < w[1]), "in snapshot order, once each: {:?}", res.rows);
    let mut out: Vec<&'static str> = res
        .rows
        .iter()
        .map(|&r| {
            assert_eq!(snap.brand_of_row(r), brand, "row {r}");
            let name = snap.row_text(TextColumn::Name, r as usize);
            ROWS.iter().find(|w| w.name == name).unwrap_or_else(|| panic!("row {r} is named {name:?}")).name
        })
        .collect();
    out.sort_unstable();
    assert_eq!(res.sources, sources_of(&out), "the sources of {out:?}");
    out
}

/// Runs the query, checks it against the brute force and returns the names it matched.
fn check(snap: &Snapshot, brand: u32, f: &Filters) -> Vec<&'static str> {
    let res = snap.query(brand, f).unwrap_or_else(|e| panic!("{f:?}: {e}"));
    let got = names(snap, brand, &res);
    assert_eq!(got, want(brand, f), "{f:?}");
    // The sightings count every row within the filters, verified or not, by its sources.
    let mut sightings = Sightings::default();
    for name in want(brand, &Filters { verified_only: false, ..f.clone() }) {
        sightings.add(sources_of(&[name]));
    }
    assert_eq!(res.sightings, sightings, "sightings of {f:?}");
    got
}

fn all() -> Filters {
    Filters::default()
}

#[test]
fn no_filter_returns_the_brands_rows_only() {
    let snap = snapshot("none");
    assert_eq!(check(&snap, ALPHA, &all()).len(), 19);
    assert_eq!(check(&snap, BETA, &all()), ["b01", "b02", "b03", "b04", "b05", "b06", "b07", "b08", "b09"]);
    let res = snap.query(2, &all()).unwrap();
    assert!(res.rows.is_empty() && res.sources.is_empty(), "a brand the snapshot does not have matches nothing");
}

#[test]
fn country_in_any_case() {
    let snap = snapshot("country");
    for c in ["GB", "gb", "Gb", " gB "] {
        assert_eq!(check(&snap, ALPHA, &Filters { country: Some(c.into()), ..all() }), ["a11", "a12", "a13", "a14"], "{c:?}");
    }
    for c in ["ch", "CA", "us"] {
        assert!(!check(&snap, ALPHA, &Filters { country: Some(c.into()), ..all() }).is_empty(), "{c}");
    }
    assert_eq!(check(&snap, ALPHA, &Filters { country: Some("ca".into()), ..all() }), ["a17"]);
}

#[test]
fn state_ignoring_case() {
    let snap = snapshot("state");
    for s in ["MO", "mo", "Mo"] {
        assert_eq!(check(&snap, ALPHA, &Filters { state: Some(s.into()), ..all() }), ["a09", "a10"], "{s}");
    }
    for s in ["IL", "il", "zh", "Eng"] {
        check(&snap, ALPHA, &Filters { state: Some(s.into()), ..all() });
    }
    assert_eq!(check(&snap, ALPHA, &Filters { state: Some("ZH".into()), ..all() }), ["a15", "a16"]);
    assert_eq!(check(&snap, ALPHA, &Filters { state: Some("I".into()), ..all() }), Vec::<&str>::new(), "exact, not a prefix");
}

#[test]
fn city_ignoring_case_exactly() {
    let snap = snapshot("city");
    for c in ["Chicago", "chicago", "CHICAGO", " cHiCaGo "] {
        assert_eq!(check(&snap, ALPHA, &Filters { city: Some(c.into()), ..all() }), ["a01", "a04", "a06", "a07"], "{c:?}");
    }
    for c in ["Zürich", "zürich", "ZÜRICH"] {
        assert_eq!(check(&snap, ALPHA, &Filters { city: Some(c.into()), ..all() }), ["a15", "a16"], "{c}");
    }
    assert_eq!(check(&snap, ALPHA, &Filters { city: Some("Springfield".into()), ..all() }), ["a08", "a09", "a10"]);
    assert_eq!(check(&snap, ALPHA, &Filters { city: Some("Chicag".into()), ..all() }), Vec::<&str>::new(), "exact, not a prefix");
    assert_eq!(check(&snap, ALPHA, &Filters { city: Some("Zurich".into()), ..all() }), Vec::<&str>::new(), "accents count");
}

#[test]
fn a_city_by_either_of_its_names_in_its_own_country() {
    let snap = snapshot("city-names");
    let city = |c: &str| Filters { city: Some(c.into()), ..all() };
    for c in ["Munich", "munich", "München", "MÜNCHEN"] {
        assert_eq!(check(&snap, BETA, &city(c)), ["b05", "b06", "b07"], "{c}");
    }
    assert_eq!(check(&snap, BETA, &Filters { country: Some("DE".into()), state: Some("BY".into()), ..city("Munich") }), ["b05", "b06", "b07"]);
    assert_eq!(check(&snap, BETA, &Filters { country: Some("US".into()), ..city("Munich") }), Vec::<&str>::new());
    // Rome is Roma in Italy, not the Roma in Queensland; asked as Roma, both are.
    assert_eq!(check(&snap, BETA, &city("Rome")), ["b09"]);
    assert_eq!(check(&snap, BETA, &city("Roma")), ["b08", "b09"]);
    assert_eq!(check(&snap, BETA, &Filters { country: Some("AU".into()), ..city("Rome") }), Vec::<&str>::new());
    // A radius around Munich is around München's centre.
    let res = snap.query(BETA, &Filters { radius_km: Some(5.0), ..city("Munich") }).unwrap();
    assert_eq!(res.center, Some((48.137_4, 11.575_5)));
    assert_eq!(check(&snap, BETA, &Filters { radius_km: Some(5.0), ..city("Munich") }), ["b05", "b06", "b07"]);
}

#[test]
fn postcode_ignoring_case_and_spaces() {
    let snap = snapshot("postcode");
    for p in ["SW1A 1AA", "sw1a1aa", "Sw1A 1aA", " S W 1 A 1 A A ", "SW1A\t1AA"] {
        assert_eq!(check(&snap, ALPHA, &Filters { postcode: Some(p.into()), ..all() }), ["a11", "a12", "a13"], "{p:?}");
    }
    assert_eq!(check(&snap, BETA, &Filters { postcode: Some("sw1a 1aa".into()), ..all() }), ["b02"]);
    assert_eq!(check(&snap, ALPHA, &Filters { postcode: Some("SW1A 2AA".into()), ..all() }), ["a14"]);
    assert_eq!(check(&snap, ALPHA, &Filters { postcode: Some("SW1A".into()), ..all() }), Vec::<&str>::new(), "exact, not a prefix");
    assert_eq!(check(&snap, ALPHA, &Filters { postcode: Some("m5h2n2".into()), ..all() }), ["a17"]);
}

#[test]
fn radius_around_the_gazetteer_city() {
    let snap = snapshot("radius");
    let chicago = (41.878_1, -87.629_8);
    for km in [1.0, 2.0, 5.0, 15.0, 30.0, 50.0, 150.0, 2000.0] {
        // No row within 2% of the edge: a different Earth radius or rounding cannot move one.
        for r in ROWS {
            let d = distance_km(chicago.0, chicago.1, r.lat, r.lng);
            assert!((d / km - 1.0).abs() > 0.02, "{} is {d} km out, at the {km} km edge", r.name);
        }
        let f = Filters { city: Some("chicago".into()), radius_km: Some(km), ..all() };
        let res = snap.query(ALPHA, &f).unwrap();
        assert_eq!(res.center, Some(chicago), "{km} km");
        assert_eq!(names(&snap, ALPHA, &res), want(ALPHA, &f), "{km} km");
    }
    // By hand: a01 0.2 km, a06 1.2 km, a07 3.0 km, a03 12.8 km, a02 19.2 km, a05 45.6 km, the
    // Aurora rows 56 and 59 km, a04 100 km. The rows' own city names do not matter inside the
    // radius, and "CHICAGO" 100 km out is outside.
    let f = |km: f64| Filters { city: Some("Chicago".into()), radius_km: Some(km), ..all() };
    assert_eq!(check(&snap, ALPHA, &f(1.0)), ["a01"]);
    assert_eq!(check(&snap, ALPHA, &f(2.0)), ["a01", "a06"]);
    assert_eq!(check(&snap, ALPHA, &f(15.0)), ["a01", "a03", "a06", "a07"]);
    assert_eq!(check(&snap, ALPHA, &f(30.0)), ["a01", "a02", "a03", "a06", "a07"]);
    assert_eq!(check(&snap, BETA, &f(30.0)), ["b01", "b02"]);
}

#[test]
fn radius_centre_is_the_most_populous_city_of_the_name_within_the_filters() {
    let snap = snapshot("radius-centre");
    let springfield = |state: Option<&str>| Filters { city: Some("SPRINGFIELD".into()), state: state.map(Into::into), radius_km: Some(50.0), ..all() };
    // Missouri's is the more populous.
    let res = snap.query(ALPHA, &springfield(None)).unwrap();
    assert_eq!(res.center, Some((37.209_0, -93.292_3)));
    assert_eq!(names(&snap, ALPHA, &res), ["a09", "a10"]);
    assert_eq!(check(&snap, ALPHA, &springfield(None)), ["a09", "a10"]);
    // Within a state filter, Illinois' (the state filter also applies to the rows).
    for s in ["IL", "il"] {
        let res = snap.query(ALPHA, &springfield(Some(s))).unwrap();
        assert_eq!(res.center, Some((39.781_7, -89.650_1)), "{s}");
        assert_eq!(names(&snap, ALPHA, &res), ["a08"], "{s}");
    }
    // With a country filter, the gazetteer city in that country.
    let f = Filters { city: Some("London".into()), country: Some("gb".into()), radius_km: Some(5.0), ..all() };
    assert_eq!(snap.query(ALPHA, &f).unwrap().center, Some((51.507_4, -0.127_8)));
    assert_eq!(check(&snap, ALPHA, &f), ["a11", "a12", "a13", "a14"]);
}

#[test]
fn radius_around_a_city_only_the_brands_rows_name() {
    let snap = snapshot("radius-rows");
    // Aurora is not in the gazetteer: the centre is the mean of Alpha's two Aurora rows (any
    // case), not moved by Beta's Aurora in Colorado.
    let f = Filters { city: Some("Aurora".into()), radius_km: Some(10.0), ..all() };
    let res = snap.query(ALPHA, &f).unwrap();
    let (lat, lng) = res.center.unwrap();
    assert!((lat - (41.7606 + 41.7700) / 2.0).abs() < 1e-9 && (lng - (-88.3201 - 88.2900) / 2.0).abs() < 1e-9, "({lat}, {lng})");
    assert_eq!(names(&snap, ALPHA, &res), ["a18", "a19"]);
    assert_eq!(check(&snap, ALPHA, &f), ["a18", "a19"]);
    // Naperville is 12.7 km from there.
    assert_eq!(check(&snap, ALPHA, &Filters { radius_km: Some(20.0), ..f.clone() }), ["a05", "a18", "a19"]);
}

#[test]
fn storefront_type() {
    let snap = snapshot("storefront");
    assert_eq!(check(&snap, ALPHA, &Filters { storefront_type: Some(Pickup), ..all() }), ["a03", "a12", "a19"]);
    assert_eq!(check(&snap, ALPHA, &Filters { storefront_type: Some(Studio), ..all() }), ["a15", "a17"]);
    assert_eq!(check(&snap, ALPHA, &Filters { storefront_type: Some(StorefrontType::Other), ..all() }), Vec::<&str>::new());
    for t in StorefrontType::ALL {
        check(&snap, ALPHA, &Filters { storefront_type: Some(t), ..all() });
        check(&snap, BETA, &Filters { storefront_type: Some(t), ..all() });
    }
}

#[test]
fn verified_only_is_the_floor_and_not_community_only() {
    let snap = snapshot("verified");
    let got = check(&snap, ALPHA, &Filters { verified_only: true, ..all() });
    // Out: a06 and a16 (community-only, above the floor), a07 (0.59) and a13 (0.3). In: a03,
    // exactly at the floor.
    for out in ["a06", "a07", "a13", "a16"] {
        assert!(!got.contains(&out), "{out} in {got:?}");
    }
    assert!(got.contains(&"a03"), "at the floor: {got:?}");
    assert_eq!(got.len(), 15);
    assert_eq!(check(&snap, ALPHA, &Filters { verified_only: true, city: Some("chicago".into()), ..all() }), ["a01", "a04"]);
}

#[test]
fn filters_combine_with_and() {
    let snap = snapshot("and");
    let f = Filters { country: Some("us".into()), storefront_type: Some(FullRetail), ..all() };
    assert_eq!(check(&snap, ALPHA, &f), ["a01", "a04", "a06", "a08", "a10", "a18"]);
    let f = Filters { state: Some("il".into()), verified_only: true, storefront_type: Some(FullRetail), ..all() };
    assert_eq!(check(&snap, ALPHA, &f), ["a01", "a04", "a08", "a18"]);
    let f = Filters { city: Some("london".into()), postcode: Some("sw1a1aa".into()), verified_only: true, ..all() };
    assert_eq!(check(&snap, ALPHA, &f), ["a11", "a12"]);
    let f = Filters { city: Some("Chicago".into()), radius_km: Some(30.0), storefront_type: Some(FullRetail), verified_only: true, ..all() };
    assert_eq!(check(&snap, ALPHA, &f), ["a01"]);
}

#[test]
fn a_filter_that_matches_nothing() {
    let snap = snapshot("nothing");
    for f in [
        Filters { country: Some("ZZ".into()), ..all() },
        Filters { country: Some("US".into()), city: Some("Zürich".into()), ..all() },
        Filters { postcode: Some("00000".into()), ..all() },
        Filters { city: Some("Denver".into()), ..all() },
        Filters { state: Some("MO".into()), storefront_type: Some(Pickup), ..all() },
    ] {
        let res = snap.query(ALPHA, &f).unwrap();
        assert_eq!((res.rows.len(), res.sources, res.center), (0, SourceMask::default(), None), "{f:?}");
        assert!(want(ALPHA, &f).is_empty(), "{f:?}");
    }
}

#[test]
fn a_radius_needs_a_city() {
    let snap = snapshot("radius-no-city");
    for f in [Filters { radius_km: Some(10.0), ..all() }, Filters { radius_km: Some(10.0), country: Some("US".into()), state: Some("IL".into()), ..all() }] {
        let e = snap.query(ALPHA, &f).unwrap_err();
        assert!(matches!(e, CoreError::RadiusWithoutCity), "{e:?}");
        assert_eq!(e.code(), "INVALID_REQUEST");
    }
}

#[test]
fn a_radius_must_be_positive() {
    let snap = snapshot("radius-sign");
    for km in [0.0, -0.0, -5.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = snap.query(ALPHA, &Filters { city: Some("Chicago".into()), radius_km: Some(km), ..all() }).unwrap_err();
        assert!(matches!(&e, CoreError::InvalidFilter(m) if m == "radius_km must be a positive number"), "{km}: {e:?}");
        assert_eq!(e.code(), "INVALID_REQUEST");
    }
    assert_eq!(check(&snap, ALPHA, &Filters { city: Some("Chicago".into()), radius_km: Some(0.5), ..all() }), ["a01"], "the smallest positive radius works");
}

#[test]
fn a_radius_around_an_unknown_city() {
    let snap = snapshot("radius-unknown");
    // Neither in the gazetteer nor on one of Alpha's rows (Denver is Beta's only).
    for city in ["Atlantis", "Denver"] {
        let e = snap.query(ALPHA, &Filters { city: Some(city.into()), radius_km: Some(10.0), ..all() }).unwrap_err();
        assert!(matches!(&e, CoreError::UnknownCity(c) if c == city), "{city}: {e:?}");
        assert_eq!(e.code(), "UNKNOWN_CITY");
    }
    let res = snap.query(BETA, &Filters { city: Some("Denver".into()), radius_km: Some(10.0), ..all() }).unwrap();
    assert_eq!((names(&snap, BETA, &res), res.center), (vec!["b03"], Some((39.7392, -104.9903))), "Beta's own row centres Denver");
}

/// A word-final capital sigma: `str::to_lowercase` makes it "ς", a character at a time it is
/// "σ"; the filter and the rows must be folded alike, or a city written in Greek capitals is not
/// found by its own name.
#[test]
fn a_city_in_greek_capitals_matches_itself() {
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), vec![BrandRecord::new("Alpha")], Vec::new(), Vec::new());
    for (i, city) in ["ΠΑΤΡΑΣ", "Πάτρας"].into_iter().enumerate() {
        b.push(&RowBuilder {
            brand: ALPHA,
            lat: 38.25 + i as f64 / 100.0,
            lng: 21.73,
            id: i as u64,
            city: city.into(),
            country: "GR".into(),
            ..RowBuilder::default()
        });
    }
    let snap = common::write_and_load(b, "filters", "sigma").unwrap();
    let city = |c: &str| snap.query(ALPHA, &Filters { city: Some(c.into()), ..all() }).unwrap().rows.len();
    assert_eq!(city("Πάτρας"), 1, "the mixed-case row");
    assert_eq!(city("ΠΑΤΡΑΣ"), 1, "the row in capitals, by its own text");
}
