//! Pairs of stores of different brands within a distance, against a brute-force pair scan with
//! the tests' own haversine: every pair, the per-brand counts of stores with a partner, the
//! per-country counts, a country filter; then the refusals and the price.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::world::{distance, world, Row};
use storemap_core::{Budget, Format, NearbyIndex, OverlapQuery, Refusal, Snapshot, OVERLAP_MAX_DISTANCE_M, OVERLAP_MAX_PAIRS};

/// The tests' index of the snapshot's row `r`.
fn mine(snap: &Snapshot, r: u32) -> usize {
    snap.row_id(r as usize) as usize - 1
}

/// Every pair (first brand's row, second's) of served rows of two different brands in
/// `brands` (ordered as given), within `d`, as the tests' own indices.
fn scan(rows: &[Row], brands: &[u32], d: f64) -> BTreeSet<(usize, usize)> {
    let mut out = BTreeSet::new();
    for (i, &bi) in brands.iter().enumerate() {
        for &bj in &brands[i + 1..] {
            for (a, ra) in rows.iter().enumerate().filter(|(_, r)| r.served && r.brand == bi) {
                for (b, rb) in rows.iter().enumerate().filter(|(_, r)| r.served && r.brand == bj) {
                    if distance(ra.lat, ra.lng, rb.lat, rb.lng) <= d {
                        out.insert((a, b));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn the_pairs_and_counts_are_the_brute_force_pair_scans() {
    let (snap, rows) = world("overlap", "scan");
    let index = NearbyIndex::new(&snap);
    let mut nonempty = 0;
    for brands in [vec![0, 1], vec![2, 0], vec![0, 1, 2]] {
        for d in [50.0, 100.0, 500.0, 1_000.0] {
            let got = index.overlap(&snap, &brands, d, None, &Budget::default()).unwrap().unwrap();
            let pairs: BTreeSet<(usize, usize)> = got.pairs.iter().map(|p| (mine(&snap, p.a), mine(&snap, p.b))).collect();
            assert_eq!(pairs.len(), got.pairs.len(), "no pair twice");
            let want = scan(&rows, &brands, d);
            assert_eq!(pairs, want, "brands {brands:?} within {d} m");
            for p in &got.pairs {
                let (a, b) = (&rows[mine(&snap, p.a)], &rows[mine(&snap, p.b)]);
                assert!((p.distance_m - distance(a.lat, a.lng, b.lat, b.lng)).abs() < 1e-6);
            }
            // Each brand's stores with a partner, and the per-country sums.
            for (k, &b) in brands.iter().enumerate() {
                let with: BTreeSet<usize> = want.iter().flat_map(|&(x, y)| [x, y]).filter(|&i| rows[i].brand == b).collect();
                assert_eq!(got.stores_with_partner[k] as usize, with.len(), "brand {b} within {d} m");
            }
            assert_eq!(got.by_country.iter().map(|c| c.pairs as usize).sum::<usize>(), want.len());
            nonempty += usize::from(!want.is_empty());
        }
    }
    assert!(nonempty >= 10, "{nonempty} non-empty cases");
}

#[test]
fn a_country_filter_keeps_the_pairs_whose_first_store_is_in_it() {
    let (snap, _) = world("overlap", "country");
    let index = NearbyIndex::new(&snap);
    let all = index.overlap(&snap, &[0, 1], 1_000.0, None, &Budget::default()).unwrap().unwrap();
    let by_country: BTreeMap<String, usize> = all.pairs.iter().fold(BTreeMap::new(), |mut m, p| {
        *m.entry(snap.row_country(p.a as usize).to_string()).or_default() += 1;
        m
    });
    assert!(by_country.len() >= 2, "{by_country:?}");
    for (country, n) in &by_country {
        let only = index.overlap(&snap, &[0, 1], 1_000.0, Some(&country.to_lowercase()), &Budget::default()).unwrap().unwrap();
        assert_eq!(only.pairs.len(), *n, "{country}");
        assert!(only.pairs.iter().all(|p| snap.row_country(p.a as usize) == country));
        assert_eq!((only.by_country.len(), only.by_country[0].pairs as usize), (1, *n));
    }
}

#[test]
fn refusals_and_the_price() {
    let (snap, _) = world("overlap", "bad");
    let index = NearbyIndex::new(&snap);
    let none = Budget::default();
    for (brands, d) in [
        (vec![0], 100.0),
        (vec![0, 1, 2, 0, 1, 2], 100.0),
        (vec![0, 0], 100.0),
        (vec![0, 9], 100.0),
        (vec![0, 1], 0.0),
        (vec![0, 1], 5_000.5),
        (vec![0, 1], f64::NAN),
    ] {
        assert_eq!(index.overlap(&snap, &brands, d, None, &none).unwrap_err().code(), "INVALID_REQUEST", "{brands:?} {d}");
    }
    // The whole dense city within 5 km of itself: too many pairs to list, refused with advice.
    let err = index.overlap(&snap, &[0, 1, 2], OVERLAP_MAX_DISTANCE_M, None, &none).unwrap_err().to_string();
    assert!(err.contains(&format!("more than {OVERLAP_MAX_PAIRS} pairs")), "{err}");
    let query = |max_rows, format| OverlapQuery {
        brands: vec![0, 1],
        distance_m: 1_000.0,
        country: None,
        format,
        provenance: false,
        budget: Budget { max_rows, deadline: None },
    };
    let n = index.overlap(&snap, &[0, 1], 1_000.0, None, &none).unwrap().unwrap().pairs.len() as u32;
    assert!(n > 1);
    let refused = index.answer_overlap(&snap, &query(Some(n - 1), Format::Json)).unwrap();
    assert_eq!((refused.refused, refused.count, refused.body.len()), (Some(Refusal::Credits), n, 0));
    let json: serde_json::Value = serde_json::from_slice(&index.answer_overlap(&snap, &query(None, Format::Json)).unwrap().body).unwrap();
    assert_eq!((json["pair_count"].as_u64(), json["pairs"].as_array().unwrap().len() as u32), (Some(n as u64), n));
    assert_eq!(json["brands"], serde_json::json!(["Alpha", "Beta"]));
    assert_eq!(json["pairs"][0]["a"]["brand"], "Alpha");
    assert_eq!(json["pairs"][0]["b"]["brand"], "Beta");
    let csv = String::from_utf8(index.answer_overlap(&snap, &query(None, Format::Csv)).unwrap().body).unwrap();
    assert!(csv.starts_with(&storemap_core::overlap_csv_header()));
    assert_eq!(csv.lines().count() as u32, n + 1);
    let geo: serde_json::Value = serde_json::from_slice(&index.answer_overlap(&snap, &query(None, Format::GeoJson)).unwrap().body).unwrap();
    assert_eq!(geo["features"].as_array().unwrap().len() as u32, n);
    assert_eq!(geo["features"][0]["geometry"]["type"], "LineString");
}
