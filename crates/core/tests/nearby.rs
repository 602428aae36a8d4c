//! The nearest stores against a brute-force scan: a snapshot of three brands' stores scattered
//! over the globe (some community-only, some below the confidence floor, some on the very same
//! spot), written and loaded through the real file format; for random points, every brand set
//! and limit, with and without a radius, the index's answer equals sorting every data row by an
//! independent haversine (the tests' own) and taking the first ones.

mod common;

use common::world::{distance, world, Rng, Row};
use storemap_core::{Budget, Format, NearbyIndex, NearbyQuery, Refusal, Snapshot};

/// This file's index of the snapshot's row `r`.
fn mine(snap: &Snapshot, r: u32) -> u32 {
    snap.row_id(r as usize) as u32 - 1
}

/// The brute-force answer: (row, metres), nearest first, ties by row.
fn scan(rows: &[Row], brands: &[u32], lat: f64, lng: f64, limit: usize, radius_m: Option<f64>) -> Vec<(u32, f64)> {
    let mut all: Vec<(u32, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.served && (brands.is_empty() || brands.contains(&r.brand)))
        .map(|(i, r)| (i as u32, distance(lat, lng, r.lat, r.lng)))
        .filter(|&(_, d)| radius_m.is_none_or(|m| d <= m))
        .collect();
    all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    all.truncate(limit);
    all
}

#[test]
fn the_nearest_stores_are_the_brute_force_scans_first_rows() {
    let (snap, rows) = world("nearby", "scan");
    // The snapshot orders rows its own way: a row is known by its id (its index here, plus 1).
    for r in 0..snap.row_count() {
        let row = &rows[mine(&snap, r as u32) as usize];
        assert_eq!(snap.row_lat_lng(r), (row.lat, row.lng));
    }
    let index = NearbyIndex::new(&snap);
    let mut rng = Rng(42);
    let mut points: Vec<(f64, f64)> = (0..150).map(|_| (rng.next() * 180.0 - 90.0, rng.next() * 360.0 - 180.0)).collect();
    points.extend((0..50).map(|_| (48.85 + rng.next() * 0.05, 2.30 + rng.next() * 0.08)));
    points.extend([(10.0, 179.999), (10.0, -179.9995), (90.0, 0.0), (-90.0, 45.0)]);
    let mut compared = 0;
    for (k, &(lat, lng)) in points.iter().enumerate() {
        for brands in [vec![], vec![0], vec![1, 2]] {
            for limit in [1, 10, 500] {
                for radius_m in [None, Some(2_000.0), Some(3_000_000.0)] {
                    let got = index.nearest(&snap, &brands, lat, lng, limit, radius_m).unwrap();
                    let want = scan(&rows, &brands, lat, lng, limit as usize, radius_m);
                    let got: Vec<(u32, f64)> = got.iter().map(|&(r, d)| (mine(&snap, r), d)).collect();
                    let ids = |v: &[(u32, f64)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
                    // Equal distances are ordered by the snapshot's row, which this file does
                    // not know: compare each distance's set of rows.
                    let by_distance = |v: &[(u32, f64)]| {
                        let mut v = v.to_vec();
                        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
                        ids(&v)
                    };
                    assert_eq!(by_distance(&got), by_distance(&want), "point {k} ({lat}, {lng}), brands {brands:?}, limit {limit}, radius {radius_m:?}");
                    for (g, w) in got.iter().zip(&want) {
                        assert!((g.1 - w.1).abs() < 1e-6, "{} vs {}", g.1, w.1);
                    }
                    compared += got.len();
                }
            }
        }
    }
    assert!(compared > 100_000, "{compared} rows compared");
}

#[test]
fn both_stores_on_one_spot_and_across_the_antimeridian() {
    let (snap, rows) = world("nearby", "spot");
    let index = NearbyIndex::new(&snap);
    let got = index.nearest(&snap, &[], 10.0, 179.999, 3, None).unwrap();
    let at = |r: u32| {
        let row = &rows[mine(&snap, r) as usize];
        (row.lat, row.lng, row.brand)
    };
    let mut first_two = [at(got[0].0), at(got[1].0)];
    first_two.sort_by_key(|x| x.2);
    assert_eq!(first_two, [(10.0, 179.999, 0), (10.0, 179.999, 1)]);
    assert_eq!(got[0].1, 0.0);
    // 0.002 degrees of longitude away, across the line: about 219 m, not 40,000 km.
    assert_eq!(at(got[2].0), (10.0, -179.999, 2));
    assert!((got[2].1 - distance(10.0, 179.999, 10.0, -179.999)).abs() < 1e-6 && got[2].1 < 250.0, "{}", got[2].1);
}

#[test]
fn bad_requests_are_refused_and_the_price_is_checked_before_writing() {
    let (snap, _) = world("nearby", "bad");
    let index = NearbyIndex::new(&snap);
    for (lat, lng, limit, radius) in
        [(91.0, 0.0, 10, None), (0.0, 180.5, 10, None), (0.0, 0.0, 0, None), (0.0, 0.0, 501, None), (0.0, 0.0, 10, Some(0.0)), (f64::NAN, 0.0, 10, None)]
    {
        let err = index.nearest(&snap, &[], lat, lng, limit, radius).unwrap_err();
        assert_eq!(err.code(), "INVALID_REQUEST", "{lat} {lng} {limit} {radius:?}");
    }
    assert_eq!(index.nearest(&snap, &[7], 0.0, 0.0, 10, None).unwrap_err().code(), "INVALID_REQUEST");

    let query = |max_rows, format| NearbyQuery {
        brands: vec![0],
        lat: 48.87,
        lng: 2.33,
        limit: 25,
        radius_m: None,
        format,
        provenance: false,
        hours_column: false,
        brand_label: "Alpha".into(),
        budget: Budget { max_rows, deadline: None },
        open_at: None,
    };
    let refused = index.answer(&snap, &query(Some(24), Format::Json)).unwrap();
    assert_eq!((refused.refused, refused.count, refused.body.len()), (Some(Refusal::Credits), 25, 0));
    let json: serde_json::Value = serde_json::from_slice(&index.answer(&snap, &query(None, Format::Json)).unwrap().body).unwrap();
    let locations = json["locations"].as_array().unwrap();
    assert_eq!((json["count"].as_u64(), locations.len()), (Some(25), 25));
    let d: Vec<f64> = locations.iter().map(|l| l["distance_m"].as_f64().unwrap()).collect();
    assert!(d.windows(2).all(|w| w[0] <= w[1]), "nearest first: {d:?}");
    assert!(locations.iter().all(|l| l.get("brand").is_none()), "one brand asked: no brand per row");
    let csv = String::from_utf8(index.answer(&snap, &query(None, Format::Csv)).unwrap().body).unwrap();
    assert!(csv.starts_with(&storemap_core::nearby_csv_header(false)));
    assert_eq!(csv.lines().count(), 26);
    let geo: serde_json::Value = serde_json::from_slice(&index.answer(&snap, &query(None, Format::GeoJson)).unwrap().body).unwrap();
    assert_eq!(geo["features"][0]["properties"]["distance_m"].as_f64(), Some(d[0]));
}
