//! The snapshot file, end to end: every field of every row, the brand table with its ranges and
//! verified counts, the cities, tickers and build facts survive a write and a load; the bytes
//! do not depend on the order rows were pushed in; a file cut short, changed in one byte or
//! carrying another magic does not load. Expected values come from the rows this file writes,
//! and the fields the snapshot has no accessor for (id, last_updated, last_verified) are read
//! both from the served JSON and from the file's own columns, by a section reader of this file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

mod common;
use common::TempDir;

use storemap_core::{
    write_rows, BrandRecord, CityRecord, CoreError, Format, RowBuilder, Snapshot, SnapshotBuilder, SnapshotMeta, SourceImport, SourceMask, SourceType,
    StorefrontType, TextColumn, TickerRecord, WriteOptions, CONFIDENCE_FLOOR, FORMAT_VERSION,
};

/// The instants the rows carry, with their ISO text (from `date -u -d @<secs>`), so the JSON
/// check does not lean on the crate's own formatter.
const TIMES: &[(i64, &str)] = &[
    (1_709_210_096, "2024-02-29T12:34:56Z"),
    (1_793_491_200, "2026-11-01T00:00:00Z"),
    (0, "1970-01-01T00:00:00Z"),
    (946_684_799, "1999-12-31T23:59:59Z"),
    (1_234_567_890, "2009-02-13T23:31:30Z"),
    (1_700_000_000, "2023-11-14T22:13:20Z"),
    (-86_401, "1969-12-30T23:59:59Z"),
];

fn iso(t: i64) -> &'static str {
    TIMES.iter().find(|(s, _)| *s == t).unwrap_or_else(|| panic!("{t} is not in TIMES")).1
}

fn mask(sources: &[SourceType]) -> SourceMask {
    let mut m = SourceMask::default();
    for s in sources {
        m.insert(*s);
    }
    m
}

fn aliases(list: &[(SourceType, &str)]) -> Vec<(SourceType, String)> {
    list.iter().map(|(s, id)| (*s, id.to_string())).collect()
}

const ALPHA: u32 = 0;
const BETA: u32 = 1;
const EMPTY: u32 = 2;
const DELTA: u32 = 3;

/// Alpha, a non-ASCII Beta, Empty (no rows, between brands with rows) and Delta. The builder's
/// fields are set to garbage: the builder fills them.
fn brands() -> Vec<BrandRecord> {
    let mut alpha = BrandRecord::new("Alpha");
    alpha.wikidata = Some("Q1".into());
    alpha.nsi_id = Some("alpha-7f3e1a".into());
    alpha.category = Some("shop=supermarket".into());
    alpha.alt_names = vec!["Alpha Market".into(), "アルファ".into()];
    alpha.row_start = 77;
    alpha.row_end = 3;
    alpha.verified_count = 999;
    let mut beta = BrandRecord::new("Βήτα Café");
    beta.category = Some("amenity=cafe".into());
    let mut empty = BrandRecord::new("Empty");
    empty.row_end = 12;
    let mut delta = BrandRecord::new("Delta");
    delta.wikidata = Some("Q4".into());
    vec![alpha, beta, empty, delta]
}

/// Coordinates whose shortest text has 16 or 17 digits.
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
        city("Chicago", "US", "IL", 41.878_113_6_f64.next_up(), -87.629_798_2, 2_746_388),
        city("東京", "JP", "13", 35.689_5_f64.next_down(), 139.691_7, 13_960_000),
        city("São Paulo", "BR", "SP", -23.550_5, -46.633_308_999_999_99, 12_330_000),
        city("Zürich", "CH", "ZH", 0.1 + 0.2, 8.541_694, 421_878),
        city("Springfield", "US", "IL", 39.781_721, -89.650_148, 114_394),
        CityRecord { also: "Munich".into(), ..city("München", "DE", "BY", 48.137_43, 11.575_49, 1_260_391) },
    ]
}

/// Two tickers on Alpha (the first is its ticker), one on Delta, one with a portfolio.
fn tickers() -> Vec<TickerRecord> {
    vec![
        TickerRecord {
            ticker: "ALP".into(),
            exchange: "NYSE".into(),
            brand: ALPHA,
            company: "Alpha Holdings".into(),
            portfolio: vec!["Alpha".into(), "Delta".into()],
        },
        TickerRecord { ticker: "DLT".into(), exchange: "LSE".into(), brand: DELTA, company: "Delta plc".into(), portfolio: vec![] },
        TickerRecord { ticker: "ALP.B".into(), exchange: "NYSE".into(), brand: ALPHA, company: "Alpha Holdings".into(), portfolio: vec!["Alpha".into()] },
    ]
}

/// Every field away from its default.
fn meta() -> SnapshotMeta {
    let counts = |pairs: &[(&str, u64)]| pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect::<BTreeMap<String, u64>>();
    let mut imports = BTreeMap::new();
    imports.insert(
        "atp".to_string(),
        SourceImport {
            files: 12,
            files_empty: 1,
            files_failed: 2,
            rows_read: 1000,
            rows_kept: 990,
            skipped: counts(&[("no_brand", 7), ("bad_coordinates", 3)]),
            rows_corroborated: 450,
            rows_with_hours: 300,
            hours_invalid: 4,
        },
    );
    imports.insert("osm".to_string(), SourceImport { files: 1, rows_read: 5, rows_kept: 5, ..SourceImport::default() });
    let mut licences = BTreeMap::new();
    licences.insert("CC0-1.0".to_string(), vec!["alpha_spider".to_string(), "delta_spider".to_string()]);
    licences.insert("ODbL-1.0".to_string(), vec!["beta_spider".to_string()]);
    SnapshotMeta {
        snapshot_version: "v2026.11.01-ab12cd".into(),
        as_of: "2026-11-01T00:00:00Z".into(),
        synthetic: true,
        scale: Some(0.25),
        seed: Some(u64::MAX - 5),
        rows_by_source: counts(&[("atp", 1000), ("osm", 5), ("fsq", 0)]),
        skipped_by_source: counts(&[("atp", 10)]),
        disabled_sources: vec!["overture".into()],
        multi_source: true,
        atp_spider_licences: licences,
        imports,
        region: Some("US,CA".into()),
    }
}

/// Every field in its variants: six text columns with empty and non-ASCII values, shared values,
/// provenance on and off, last_verified and storefront set and not, one to four sources and
/// none, community-only rows, several alias pairs and none; two rows at one position (sorted by
/// id), a negative time, a negative latitude and a -0.0 longitude.
fn rows() -> Vec<RowBuilder> {
    vec![
        RowBuilder {
            brand: ALPHA,
            id: 102,
            lat: 41.878_113_6,
            lng: -87.629_798_2,
            name: "Alpha Loop".into(),
            city: "Chicago".into(),
            state: "IL".into(),
            country: "US".into(),
            last_updated: 1_709_210_096,
            confidence: 0.4,
            provenance: false,
            last_verified: None,
            storefront: None,
            sources: mask(&[SourceType::Osm]),
            community_only: true,
            ..RowBuilder::default()
        },
        RowBuilder {
            brand: ALPHA,
            id: 101,
            lat: 41.878_113_6,
            lng: -87.629_798_2,
            name: "Alpha Loop".into(),
            address: "1 N State St".into(),
            city: "Chicago".into(),
            state: "IL".into(),
            postcode: "60601".into(),
            phone: "+1 312 555 0100".into(),
            opening_hours: String::new(),
            country: "US".into(),
            last_updated: 1_709_210_096,
            confidence: 0.95,
            provenance: true,
            last_verified: Some(1_700_000_000),
            storefront: Some(StorefrontType::FullRetail),
            sources: mask(&[SourceType::Atp, SourceType::Osm]),
            community_only: false,
            aliases: aliases(&[(SourceType::Atp, "alpha/1"), (SourceType::Osm, "node/123"), (SourceType::Osm, "way/456")]),
        },
        RowBuilder {
            brand: ALPHA,
            id: 103,
            lat: 35.689_5,
            lng: 139.691_7,
            name: "アルファ 新宿".into(),
            address: "東京都新宿区西新宿2-8-1".into(),
            city: "東京".into(),
            state: "13".into(),
            postcode: "163-8001".into(),
            phone: "+81 3-5321-1111".into(),
            opening_hours: String::new(),
            country: "JP".into(),
            last_updated: 1_793_491_200,
            confidence: CONFIDENCE_FLOOR,
            provenance: true,
            last_verified: Some(0),
            storefront: Some(StorefrontType::SmallFormat),
            sources: mask(&[SourceType::Fsq, SourceType::Overture]),
            community_only: false,
            aliases: aliases(&[(SourceType::Fsq, "4b0588a1f964a520"), (SourceType::Overture, "08f2a100d2e2b0a3")]),
        },
        RowBuilder {
            brand: ALPHA,
            id: 104,
            lat: 47.376_9,
            lng: 8.541_7,
            name: "Alpha Zürich ☕".into(),
            address: "Bahnhofstraße 1".into(),
            city: "Zürich".into(),
            state: "ZH".into(),
            postcode: "8001".into(),
            phone: String::new(),
            opening_hours: String::new(),
            country: "CH".into(),
            last_updated: -86_401,
            confidence: 0.59,
            provenance: true,
            last_verified: Some(946_684_799),
            storefront: Some(StorefrontType::Pickup),
            sources: mask(&SourceType::ALL),
            community_only: false,
            aliases: aliases(&[(SourceType::Atp, "a"), (SourceType::Fsq, "f"), (SourceType::Osm, "o"), (SourceType::Overture, "ü")]),
        },
        RowBuilder {
            brand: ALPHA,
            id: 105,
            lat: -33.868_8,
            lng: 151.209_3,
            country: "AU".into(),
            last_updated: 0,
            confidence: 0.7,
            provenance: false,
            last_verified: None,
            storefront: Some(StorefrontType::Studio),
            sources: SourceMask::default(),
            community_only: false,
            ..RowBuilder::default()
        },
        RowBuilder {
            brand: BETA,
            id: 201,
            lat: -23.550_5,
            lng: -46.633_3,
            name: "Βήτα São Paulo".into(),
            address: "Av. Paulista, 1578".into(),
            city: "São Paulo".into(),
            state: "SP".into(),
            postcode: "01310-200".into(),
            phone: "+55 11 3149-5959".into(),
            opening_hours: String::new(),
            country: "BR".into(),
            last_updated: 1_234_567_890,
            confidence: 0.8,
            provenance: true,
            last_verified: Some(1_234_567_890),
            storefront: Some(StorefrontType::Other),
            sources: mask(&[SourceType::Overture]),
            community_only: false,
            aliases: aliases(&[(SourceType::Overture, "ovt-1"), (SourceType::Overture, "ovt-2")]),
        },
        RowBuilder {
            brand: BETA,
            id: 202,
            lat: -23.561_4,
            lng: -46.655_9,
            name: "Βήτα São Paulo".into(),
            address: "Rua Augusta, 2000".into(),
            city: "São Paulo".into(),
            state: "SP".into(),
            postcode: "01412-000".into(),
            phone: String::new(),
            opening_hours: String::new(),
            country: "BR".into(),
            last_updated: 1_234_567_890,
            confidence: 0.99,
            provenance: false,
            last_verified: None,
            storefront: None,
            sources: mask(&[SourceType::Osm]),
            community_only: true,
            aliases: aliases(&[(SourceType::Osm, "node/9")]),
        },
        RowBuilder {
            brand: DELTA,
            id: 301,
            lat: 40.712_8,
            lng: -74.006,
            name: "Delta \"Quoted\", Inc.\tNY".into(),
            address: "1 Centre St,\nFloor 2".into(),
            city: "New York".into(),
            state: "NY".into(),
            postcode: "10007".into(),
            phone: "+1 212 555 0199".into(),
            opening_hours: String::new(),
            country: "US".into(),
            last_updated: 1_793_491_200,
            confidence: 1.0,
            provenance: true,
            last_verified: Some(1_793_491_200),
            storefront: Some(StorefrontType::FullRetail),
            sources: mask(&[SourceType::Atp]),
            community_only: false,
            aliases: aliases(&[(SourceType::Atp, "delta/ny")]),
        },
        RowBuilder {
            brand: DELTA,
            id: 302,
            lat: 0.0,
            lng: -0.0,
            name: "Delta Null Island".into(),
            country: "GH".into(),
            last_updated: 946_684_799,
            confidence: 0.0,
            provenance: false,
            last_verified: None,
            storefront: None,
            sources: mask(&[SourceType::Fsq]),
            community_only: false,
            ..RowBuilder::default()
        },
        RowBuilder {
            brand: DELTA,
            id: 3,
            lat: 40.758_0,
            lng: -73.985_5,
            name: "Delta Times Sq".into(),
            address: "1 Centre St,\nFloor 2".into(),
            city: "New York".into(),
            state: "NY".into(),
            postcode: "10036".into(),
            phone: String::new(),
            opening_hours: String::new(),
            country: "US".into(),
            last_updated: 1_700_000_000,
            confidence: 0.61,
            provenance: true,
            last_verified: Some(-86_401),
            storefront: Some(StorefrontType::SmallFormat),
            sources: mask(&[SourceType::Atp, SourceType::Fsq]),
            community_only: true,
            aliases: aliases(&[(SourceType::Atp, "delta/ts"), (SourceType::Fsq, "")]),
        },
    ]
}

/// Verified by the contract's definition: at or above the floor and not community-only.
fn verified(r: &RowBuilder) -> bool {
    !r.community_only && r.confidence >= CONFIDENCE_FLOOR
}

fn write(rows: &[RowBuilder], path: &Path) -> SnapshotMeta {
    let mut b = SnapshotBuilder::new(meta(), brands(), cities(), tickers());
    for r in rows {
        b.push(r);
    }
    assert_eq!(b.row_count(), rows.len());
    b.write(path).unwrap()
}

/// The section table, read by this file: the magic, the version, the count, then 32-byte
/// entries (name padded with zeros, offset, length).
fn sections(bytes: &[u8]) -> HashMap<String, (usize, usize)> {
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    (0..n)
        .map(|i| {
            let e = &bytes[16 + 32 * i..16 + 32 * (i + 1)];
            let name = std::str::from_utf8(&e[..16]).unwrap().trim_end_matches('\0').to_string();
            let off = u64::from_le_bytes(e[16..24].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(e[24..32].try_into().unwrap()) as usize;
            (name, (off, len))
        })
        .collect()
}

/// An 8-byte little-endian column of the file, as i64.
fn column_i64(bytes: &[u8], name: &str) -> Vec<i64> {
    let (off, len) = sections(bytes)[name];
    assert_eq!(len % 8, 0, "{name}");
    bytes[off..off + len].chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn snapshot_error(r: Result<Snapshot, CoreError>) -> String {
    match r {
        Err(CoreError::Snapshot { message, .. }) => message,
        Err(e) => panic!("expected a snapshot error, got {e:?}"),
        Ok(_) => panic!("expected a snapshot error, the file loaded"),
    }
}

#[test]
fn every_field_of_every_row_survives_a_write_and_a_load() {
    let dir = TempDir::new("snapshot", "round-trip");
    let path = dir.file("snapshot.smap");
    let input = rows();
    let written_meta = write(&input, &path);
    assert_eq!(written_meta, meta());
    let snap = Snapshot::load(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    assert_eq!(snap.row_count(), input.len());
    assert_eq!(snap.meta(), &meta());
    assert_eq!(snap.cities(), cities());
    assert_eq!(snap.tickers(), &tickers()[..]);
    let mut countries: Vec<&str> = snap.countries().iter().map(String::as_str).collect();
    countries.sort_unstable();
    assert_eq!(countries, ["AU", "BR", "CH", "GH", "JP", "US"]);

    // The brand table: the records as given, the ranges and counts from the rows pushed.
    let mut want_brands = brands();
    let mut next = 0u32;
    for (i, b) in want_brands.iter_mut().enumerate() {
        let mine: Vec<&RowBuilder> = input.iter().filter(|r| r.brand as usize == i).collect();
        b.row_start = next;
        b.row_end = next + mine.len() as u32;
        b.verified_count = mine.iter().filter(|r| verified(r)).count() as u32;
        next = b.row_end;
    }
    assert_eq!(snap.brands(), &want_brands[..]);
    let ranges: Vec<(u32, u32, u32)> = snap.brands().iter().map(|b| (b.row_start, b.row_end, b.verified_count)).collect();
    assert_eq!(ranges, [(0, 5, 3), (5, 7, 1), (7, 7, 0), (7, 10, 1)], "counted by hand from rows()");

    assert_eq!(snap.ticker_of(ALPHA), Some("ALP"), "the first of Alpha's two tickers");
    assert_eq!(snap.ticker_of(BETA), None);
    assert_eq!(snap.ticker_of(EMPTY), None);
    assert_eq!(snap.ticker_of(DELTA), Some("DLT"));
    assert_eq!(snap.ticker_of(99), None);

    let ids = column_i64(&bytes, "id");
    let last_updated = column_i64(&bytes, "last_updated");
    let last_verified = column_i64(&bytes, "last_verified");
    let mut seen = Vec::new();
    for r in 0..snap.row_count() {
        // The loaded row's id, last_updated and last_verified as the service prints them.
        let json = write_rows(&snap, &[r as u32], Format::Json, &WriteOptions { provenance: true, ..WriteOptions::default() });
        let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
        let loc = &json["locations"][0];
        let id = u64::from_str_radix(loc["id"].as_str().unwrap().strip_prefix("loc_").unwrap(), 16).unwrap();
        assert_eq!(ids[r] as u64, id, "row {r}: the file's id column and the loaded row agree");
        let w = input.iter().find(|w| w.id == id).unwrap_or_else(|| panic!("row {r} has id {id}, which was never written"));
        seen.push(id);

        assert_eq!(snap.brand_of_row(r as u32), w.brand, "id {id}");
        let b = &snap.brands()[w.brand as usize];
        assert!((b.row_start..b.row_end).contains(&(r as u32)), "id {id} at row {r} is outside its brand's range");
        let (lat, lng) = snap.row_lat_lng(r);
        assert_eq!((lat.to_bits(), lng.to_bits()), (w.lat.to_bits(), w.lng.to_bits()), "id {id}: ({lat}, {lng})");
        assert_eq!(snap.row_country(r), w.country, "id {id}");
        for c in TextColumn::ALL {
            assert_eq!(snap.row_text(c, r), w.text(c), "id {id}, {c:?}");
        }
        assert_eq!(snap.row_confidence(r).to_bits(), w.confidence.to_bits(), "id {id}");
        assert_eq!(snap.row_has_provenance(r), w.provenance, "id {id}");
        assert_eq!(snap.row_storefront(r), w.storefront, "id {id}");
        assert_eq!(snap.row_sources(r), w.sources, "id {id}");
        assert_eq!(snap.row_is_community_only(r), w.community_only, "id {id}");
        assert_eq!(snap.row_is_verified(r), verified(w), "id {id}");
        let got: Vec<(SourceType, String)> = snap.row_aliases(r).map(|(s, a)| (s, a.to_string())).collect();
        assert_eq!(got, w.aliases, "id {id}");

        assert_eq!(last_updated[r], w.last_updated, "id {id}");
        assert_eq!(last_verified[r], w.last_verified.unwrap_or(i64::MIN), "id {id}: i64::MIN is the file's null");
        assert_eq!(loc["last_updated"], iso(w.last_updated), "id {id}");
        let lv = match w.last_verified {
            Some(t) if w.provenance => serde_json::Value::from(iso(t)),
            _ => serde_json::Value::Null,
        };
        assert_eq!(loc["last_verified"], lv, "id {id}");
    }
    seen.sort_unstable();
    let mut want: Vec<u64> = input.iter().map(|w| w.id).collect();
    want.sort_unstable();
    assert_eq!(seen, want, "every row written comes back once");

    // Rows at one position sort by id.
    let pos = |id: u64| ids.iter().position(|&x| x as u64 == id).unwrap();
    assert!(pos(101) < pos(102), "101 at {}, 102 at {}", pos(101), pos(102));
}

/// The countries in the order rows first name them.
fn first_seen_countries(rows: &[RowBuilder]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.country.as_str()) {
            out.push(&r.country);
        }
    }
    out
}

/// The file `rows` written in the given order (indices into `rows()`).
fn bytes_in_order(dir: &TempDir, name: &str, order: &[usize]) -> Vec<u8> {
    let input = rows();
    let mut sorted = order.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..input.len()).collect::<Vec<_>>(), "{name} is a permutation");
    let path = dir.file(&format!("{name}.smap"));
    write(&order.iter().map(|&i| input[i].clone()).collect::<Vec<_>>(), &path);
    std::fs::read(path).unwrap()
}

fn assert_same_bytes(name: &str, a: &[u8], b: &[u8]) {
    assert!(a == b, "{name}: {} and {} bytes, first difference at byte {:?}", a.len(), b.len(), a.iter().zip(b).position(|(x, y)| x != y));
}

#[test]
fn rows_pushed_in_another_order_give_the_same_bytes() {
    let dir = TempDir::new("snapshot", "order");
    let input = rows();
    let a = bytes_in_order(&dir, "pushed", &(0..input.len()).collect::<Vec<_>>());
    // Brands, ids and shared strings arrive in another order (Delta's row first, the two rows
    // at one position swapped, Beta's two rows swapped); the countries are first named in the
    // same order.
    let order = [7, 1, 0, 9, 2, 3, 4, 6, 5, 8];
    let shuffled: Vec<RowBuilder> = order.iter().map(|&i| input[i].clone()).collect();
    assert_eq!(first_seen_countries(&shuffled), first_seen_countries(&input));
    assert_same_bytes("shuffled", &a, &bytes_in_order(&dir, "shuffled", &order));
}

/// The builder numbers countries as rows first name them; the written table must not follow
/// that push order (it is sorted by code, and the `country` column renumbered).
#[test]
fn rows_pushed_in_any_order_give_the_same_bytes_even_when_countries_come_first_in_another_order() {
    let dir = TempDir::new("snapshot", "any-order");
    let input = rows();
    let a = bytes_in_order(&dir, "pushed", &(0..input.len()).collect::<Vec<_>>());
    let reversed: Vec<usize> = (0..input.len()).rev().collect();
    let rotated: Vec<usize> = (5..input.len()).chain(0..5).collect();
    for (name, order) in [("reversed", reversed), ("rotated", rotated)] {
        let pushed: Vec<RowBuilder> = order.iter().map(|&i| input[i].clone()).collect();
        assert_ne!(first_seen_countries(&pushed), first_seen_countries(&input), "{name}");
        assert_same_bytes(name, &a, &bytes_in_order(&dir, name, &order));
    }
}

/// The file, its header length (magic, version, count, section table) and where the checksum
/// section starts.
fn written(dir: &TempDir) -> (Vec<u8>, usize, usize) {
    let path = dir.file("snapshot.smap");
    write(&rows(), &path);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"STOREMAP");
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), FORMAT_VERSION);
    assert_eq!(FORMAT_VERSION, 3);
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let (checksum, len) = sections(&bytes)["checksum"];
    assert_eq!((checksum + len, len), (bytes.len(), 8), "the checksum is the last section");
    Snapshot::from_bytes("intact", &bytes).unwrap();
    (bytes, 16 + 32 * n, checksum)
}

#[test]
fn a_file_cut_short_does_not_load() {
    let dir = TempDir::new("snapshot", "truncated");
    let (bytes, _, _) = written(&dir);
    for len in 0..bytes.len() {
        let message = snapshot_error(Snapshot::from_bytes("cut", &bytes[..len]));
        assert!(!message.is_empty(), "cut at {len}");
    }
    // Cut past the section table, the sections run past the end.
    let path = dir.file("cut.smap");
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let message = snapshot_error(Snapshot::load(&path));
    assert!(message.contains("runs past the end of the file"), "{message}");
}

#[test]
fn one_byte_changed_anywhere_past_the_header_does_not_load() {
    let dir = TempDir::new("snapshot", "flipped");
    let (bytes, header, checksum) = written(&dir);
    for i in 16..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] ^= flip;
            let message = snapshot_error(Snapshot::from_bytes("flipped", &bad));
            // Past the section table every byte (padding and the checksum's zeros included) is
            // the checksum's to catch; inside the table a bound check may answer first.
            if i >= header {
                assert!(message.starts_with("checksum mismatch"), "byte {i} ^ {flip:#x} (checksum at {checksum}): {message}");
            }
        }
    }
}

#[test]
fn a_file_with_another_magic_does_not_load() {
    let dir = TempDir::new("snapshot", "magic");
    let (bytes, _, _) = written(&dir);
    for i in 0..8 {
        let mut bad = bytes.clone();
        bad[i] = b'x';
        let message = snapshot_error(Snapshot::from_bytes("magic", &bad));
        assert!(message.contains("bad magic"), "byte {i}: {message}");
    }
}

/// The small tables are JSON sections: serde_json without its `float_roundtrip` feature reads
/// some 17-digit numbers back one unit in the last place off (about one random coordinate in
/// sixteen), so a gazetteer centre or `meta.scale` could change in a round trip.
#[test]
fn gazetteer_coordinates_of_seventeen_digits_survive_a_write_and_a_load() {
    let dir = TempDir::new("snapshot", "floats");
    let path = dir.file("snapshot.smap");
    let mut cities = cities();
    cities[0].lat = 10.938_711_676_632_721;
    cities[0].lng = -57.179_661_383_605_676;
    let mut b = SnapshotBuilder::new(SnapshotMeta { scale: Some(13.346_133_595_589_677), ..meta() }, brands(), cities.clone(), tickers());
    b.push(&rows()[0]);
    b.write(&path).unwrap();
    let snap = Snapshot::load(&path).unwrap();
    assert_eq!(snap.meta().scale.map(f64::to_bits), Some(13.346_133_595_589_677_f64.to_bits()));
    assert_eq!((snap.cities()[0].lat.to_bits(), snap.cities()[0].lng.to_bits()), (cities[0].lat.to_bits(), cities[0].lng.to_bits()));
}

#[test]
fn a_loaded_row_copies_back_into_the_row_that_was_pushed() {
    let dir = TempDir::new("snapshot", "row-copy");
    let path = dir.file("snapshot.smap");
    let input = rows();
    write(&input, &path);
    let snap = Snapshot::load(&path).unwrap();
    for r in 0..snap.row_count() {
        let copy = snap.row(r);
        let pushed = input.iter().find(|w| w.id == copy.id).unwrap_or_else(|| panic!("row {r}: id {} never written", copy.id));
        assert_eq!(format!("{copy:?}"), format!("{pushed:?}"), "row {r}");
    }
    // Copied into a second snapshot, the rows load as the first's did.
    let again = dir.file("again.smap");
    write(&(0..snap.row_count()).map(|r| snap.row(r)).collect::<Vec<_>>(), &again);
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&path).unwrap());
}

/// The file's sections in file order, less those named, rewritten as a file of `version` with
/// a fresh checksum: the layout `file.rs` documents, written here independently.
fn rewritten(bytes: &[u8], version: u32, without: &[&str]) -> Vec<u8> {
    let mut kept: Vec<(String, (usize, usize))> = sections(bytes).into_iter().filter(|(n, _)| n != "checksum" && !without.contains(&n.as_str())).collect();
    kept.sort_by_key(|(_, (off, _))| *off);
    let align = |n: usize| (n + 7) & !7;
    let count = kept.len() + 1;
    let mut out = b"STOREMAP".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(count as u32).to_le_bytes());
    let mut offset = align(16 + 32 * count);
    let mut body = Vec::new();
    for (name, len) in kept.iter().map(|(n, (_, len))| (n.as_str(), *len)).chain([("checksum", 8)]) {
        let mut field = [0u8; 16];
        field[..name.len()].copy_from_slice(name.as_bytes());
        out.extend_from_slice(&field);
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(len as u64).to_le_bytes());
        offset = align(offset + len);
    }
    for (_, (off, len)) in &kept {
        body.resize(align(out.len() + body.len()) - out.len(), 0);
        body.extend_from_slice(&bytes[*off..off + len]);
    }
    out.extend_from_slice(&body);
    out.resize(align(out.len()), 0);
    let sum = crc32fast::hash(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]);
    out
}

#[test]
fn opening_hours_are_kept_and_a_version_2_file_without_them_loads_with_none() {
    let dir = TempDir::new("snapshot", "hours");
    let path = dir.file("snapshot.smap");
    let mut input = rows();
    input[0].opening_hours = "Mo-Fr 08:00-20:00; Sa 09:00-18:00".into();
    input[1].opening_hours = "24/7".into();
    write(&input, &path);
    let bytes = std::fs::read(&path).unwrap();
    let snap = Snapshot::from_bytes("v3", &bytes).unwrap();
    let hours_of = |s: &Snapshot, id: u64| {
        let r = (0..s.row_count()).find(|&r| s.row_id(r) == id).unwrap();
        s.row_text(TextColumn::OpeningHours, r).to_string()
    };
    for r in &input {
        assert_eq!(hours_of(&snap, r.id), r.opening_hours, "row {}", r.id);
    }
    // The same rows as a version 2 file (no hours section): they load, with no hours, and
    // every other column as before.
    let old = Snapshot::from_bytes("v2", &rewritten(&bytes, 2, &["opening_hours"])).expect("a version 2 file loads");
    assert_eq!(old.row_count(), snap.row_count());
    for r in &input {
        assert_eq!(hours_of(&old, r.id), "");
    }
    for r in 0..snap.row_count() {
        let mut was = snap.row(r);
        was.opening_hours = String::new();
        assert_eq!(format!("{:?}", old.row(r)), format!("{was:?}"), "row {r}: every other column as before");
    }
    // A version 3 file must have the section.
    let message = snapshot_error(Snapshot::from_bytes("v3 cut", &rewritten(&bytes, 3, &["opening_hours"])));
    assert!(message.contains("missing section opening_hours"), "{message}");
    // The rewriter itself is faithful: the file rewritten whole loads the same.
    assert_eq!(Snapshot::from_bytes("same", &rewritten(&bytes, 3, &[])).unwrap().row_count(), snap.row_count());
}

#[test]
fn rows_that_sort_alike_keep_the_order_they_were_pushed_in() {
    // Same brand, country, position and id (a source listing one store twice): the sort's keys
    // tie, and the rows keep the order they came in, as a stable sort keeps them.
    let dir = TempDir::new("snapshot", "ties");
    let base = rows()[0].clone();
    let named = |n: &str| RowBuilder { name: n.into(), ..base.clone() };
    // Among other rows, so the tie is sorted with them (and a dozen of them, so it is not
    // settled by where they started).
    let mut input: Vec<RowBuilder> = rows();
    for (k, n) in (0..12).map(|i| format!("tie {i:02}")).enumerate() {
        input.insert((k * 7) % input.len(), named(&n));
    }
    // The tied rows' names as the snapshot holds them, and as they were pushed.
    let ties = |input: &[RowBuilder], file: &str| {
        let path = dir.file(file);
        write(input, &path);
        let snap = Snapshot::load(&path).unwrap();
        let held: Vec<String> = (0..snap.row_count()).map(|r| snap.row(r).name).filter(|n| n.starts_with("tie ")).collect();
        let pushed: Vec<String> = input.iter().map(|r| r.name.clone()).filter(|n| n.starts_with("tie ")).collect();
        (held, pushed)
    };
    let (held, pushed) = ties(&input, "ties.smap");
    assert_eq!(held, pushed);
    // Pushed the other way round, they come out the other way round.
    input.reverse();
    let (held_back, pushed_back) = ties(&input, "ties-back.smap");
    assert_eq!(held_back, pushed_back);
    assert_ne!(held_back, held);
}

#[test]
fn rows_packed_on_other_threads_in_any_order_give_the_bytes_of_rows_pushed_on_one() {
    // A build packs each brand's rows (interning their text) on the thread that reconciled it,
    // in whatever order the threads get there, and pushes the batches in brand order.
    let dir = TempDir::new("snapshot", "packed");
    let base = rows();
    // Enough rows and texts to fill every shard of the pool, names and cities repeating.
    let input: Vec<RowBuilder> = (0..600)
        .map(|i| {
            let mut r = base[i % base.len()].clone();
            r.id = 10_000 + i as u64;
            r.name = format!("{} {}", r.name, i % 37);
            r.city = format!("City {}", i % 53);
            r.address = format!("{} Main Street", i);
            r.aliases = vec![(SourceType::Osm, format!("node/{i}")), (SourceType::Atp, format!("atp-{}", i % 300))];
            r
        })
        .collect();
    let one = dir.file("one.smap");
    write(&input, &one);

    let batches: Vec<&[RowBuilder]> = input.chunks(45).collect();
    let mut b = SnapshotBuilder::new(meta(), brands(), cities(), tickers());
    let packer = b.packer();
    // Packed last batch first, four threads at a time; pushed in order.
    let mut packed: Vec<Option<storemap_core::PackedRows>> = (0..batches.len()).map(|_| None).collect();
    for group in (0..batches.len()).rev().collect::<Vec<_>>().chunks(4) {
        let made: Vec<(usize, storemap_core::PackedRows)> = std::thread::scope(|scope| {
            let threads: Vec<_> = group
                .iter()
                .map(|&k| {
                    let (packer, batch) = (packer.clone(), batches[k]);
                    scope.spawn(move || (k, packer.pack(batch)))
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (k, p) in made {
            assert_eq!(p.len(), batches[k].len());
            packed[k] = Some(p);
        }
    }
    drop(packer);
    for p in packed {
        b.push_packed(p.unwrap());
    }
    assert_eq!(b.row_count(), input.len());
    let threads = dir.file("threads.smap");
    b.write(&threads).unwrap();
    assert_same_bytes("packed on threads", &std::fs::read(&one).unwrap(), &std::fs::read(&threads).unwrap());

    // And the pool holds each name, city, state, postcode and opening hours once, each
    // address and source id once a row (texts of their own, never looked up), and the empty
    // string: counted here from the input.
    let snap = Snapshot::load(&threads).unwrap();
    let mut interned = std::collections::HashSet::new();
    let mut own = 0;
    for r in &input {
        for t in [&r.name, &r.city, &r.state, &r.postcode, &r.opening_hours] {
            if !t.is_empty() {
                interned.insert(t.clone());
            }
        }
        own += [&r.address, &r.phone].iter().filter(|t| !t.is_empty()).count() + r.aliases.len();
    }
    let bytes = std::fs::read(&threads).unwrap();
    let (_, offsets_len) = sections(&bytes)["str_offsets"];
    assert_eq!(offsets_len / 4 - 1, 1 + interned.len() + own);
    for (k, r) in input.iter().enumerate() {
        let held = (0..snap.row_count()).map(|i| snap.row(i)).find(|h| h.id == r.id).unwrap_or_else(|| panic!("row {k} is missing"));
        assert_eq!((held.name.as_str(), held.city.as_str(), held.address.as_str()), (r.name.as_str(), r.city.as_str(), r.address.as_str()));
    }
}

#[test]
#[should_panic(expected = "another snapshot's packer")]
fn rows_packed_for_another_snapshot_are_refused() {
    // Their text ids point into the other builder's pool.
    let other = SnapshotBuilder::new(meta(), brands(), cities(), tickers());
    let packed = other.packer().pack(&rows());
    let mut b = SnapshotBuilder::new(meta(), brands(), cities(), tickers());
    b.push_packed(packed);
}

/// A snapshot with more than 4 GiB of text: its string offsets pass 2^32 (a planet's worth of
/// addresses and source ids may), the file records where (`str_wraps`), and every row's text
/// reads back. Each row's address is 1,000,003 bytes of its own, so 4,300 rows hold 4.3 GB.
/// About 9 GB of memory and 4.3 GB of disk at its peak, for half a minute.
#[test]
fn more_than_4_gib_of_text_is_written_and_read_back() {
    const LEN: usize = 1_000_003;
    let dir = TempDir::new("snapshot", "past-4-gib");
    let path = dir.file("big.smap");
    let letters: String = (0..LEN + 26).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let address = |k: usize| format!("{k:08}{}", &letters[k % 26..k % 26 + LEN - 8]);
    let template = rows().into_iter().find(|r| !r.community_only).expect("a served row");
    let n = 4_300;
    let mut b = SnapshotBuilder::new(meta(), brands(), cities(), tickers());
    for k in 0..n {
        b.push(&RowBuilder { id: 1_000 + k as u64, lat: (k as f64) / 1000.0, address: address(k), aliases: vec![], ..template.clone() });
    }
    b.write(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let table = sections(&bytes);
    let (wraps_at, wraps_len) = table["str_wraps"];
    assert_eq!(wraps_len, 4, "one wrap");
    let wrap = u32::from_le_bytes(bytes[wraps_at..wraps_at + 4].try_into().unwrap()) as usize;
    let offsets = table["str_offsets"];
    let low = |i: usize| u32::from_le_bytes(bytes[offsets.0 + 4 * i..offsets.0 + 4 * i + 4].try_into().unwrap());
    assert!(low(wrap) < low(wrap - 1), "the offsets wrap where the file says");
    drop(bytes);
    let snap = Snapshot::load(&path).unwrap();
    assert_eq!(snap.row_count(), n);
    let mut seen = vec![false; n];
    for r in 0..n {
        let text = snap.row_text(TextColumn::Address, r);
        let k: usize = text[..8].parse().unwrap_or_else(|_| panic!("row {r}: {:?}", &text[..8]));
        assert!(text == address(k) && snap.row(r).id == 1_000 + k as u64, "row {r}: the address of store {k}");
        seen[k] = true;
    }
    assert!(seen.iter().all(|&s| s), "every store once");
}

#[test]
fn peek_meta_reads_the_build_facts_without_the_checksum_and_read_meta_checks_it() {
    let dir = TempDir::new("snapshot", "peek");
    let (bytes, header, checksum) = written(&dir);
    let path = dir.file("snapshot.smap");
    let meta = Snapshot::from_bytes("intact", &bytes).unwrap().meta().clone();
    assert_eq!(Snapshot::peek_meta(&path).unwrap(), meta);
    assert_eq!(Snapshot::read_meta(&path).unwrap(), meta);
    // A byte changed past the table and before the checksum, outside the meta section: only the
    // whole read sees it.
    let (meta_at, meta_len) = sections(&bytes)["meta"];
    let i = (header..checksum).find(|i| !(meta_at..meta_at + meta_len).contains(i)).unwrap();
    let mut bad = bytes.clone();
    bad[i] ^= 0x01;
    std::fs::write(&path, &bad).unwrap();
    assert_eq!(Snapshot::peek_meta(&path).unwrap(), meta);
    let message = match Snapshot::read_meta(&path) {
        Err(CoreError::Snapshot { message, .. }) => message,
        other => panic!("expected a snapshot error, got {other:?}"),
    };
    assert!(message.starts_with("checksum mismatch"), "{message}");
    // A header that is not a snapshot's is refused by both.
    std::fs::write(&path, b"not a snapshot at all").unwrap();
    assert!(Snapshot::peek_meta(&path).is_err() && Snapshot::read_meta(&path).is_err());
}
