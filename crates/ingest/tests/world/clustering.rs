//! The clustering rules on source rows placed by hand (metre offsets from a base point in
//! downtown Chicago, a dense region, so no sparse-region penalty is involved).

use std::collections::BTreeSet;

use storemap_core::{haversine_m, offset_m, RowBuilder, SourceType};
use storemap_ingest::reconcile::TOLERANCE_M;
use storemap_ingest::SourceRow;

use crate::common::{alias_keys, brand_index, key, reconcile};

const BASE: (f64, f64) = (41.8800, -87.6300);

#[derive(Clone, Copy)]
struct Brand {
    name: &'static str,
    qid: &'static str,
    category: &'static str,
}

const MCD: Brand = Brand { name: "McDonald's", qid: "Q38076", category: "amenity/fast_food" };
const SBUX: Brand = Brand { name: "Starbucks", qid: "Q37158", category: "amenity/cafe" };

/// A source row of `brand` at `north`/`east` metres from `BASE`, tagged US.
fn at(source: SourceType, id: &str, brand: Brand, north: f64, east: f64) -> SourceRow {
    let (lat, lng) = offset_m(BASE.0, BASE.1, north, east);
    SourceRow {
        source: Some(source),
        source_id: id.to_string(),
        lat,
        lng,
        name: brand.name.to_string(),
        brand: Some(brand.name.to_string()),
        brand_wikidata: Some(brand.qid.to_string()),
        category: Some(brand.category.to_string()),
        country: Some("US".to_string()),
        ..SourceRow::default()
    }
}

fn keys(rows: &[RowBuilder]) -> Vec<BTreeSet<String>> {
    let mut v: Vec<BTreeSet<String>> = rows.iter().map(alias_keys).collect();
    v.sort();
    v
}

fn set(items: &[(SourceType, &str)]) -> BTreeSet<String> {
    items.iter().map(|(s, id)| key(*s, id)).collect()
}

fn dist(a: &SourceRow, b: &SourceRow) -> f64 {
    haversine_m(a.lat, a.lng, b.lat, b.lng)
}

#[test]
fn one_store_in_three_sources_is_one_row_with_higher_confidence() {
    let rows = vec![at(SourceType::Atp, "atp-1", MCD, 0.0, 0.0), at(SourceType::Overture, "ov-1", MCD, 30.0, 0.0), at(SourceType::Osm, "n1", MCD, 0.0, 40.0)];
    assert!(rows.iter().all(|r| dist(r, &rows[0]) < TOLERANCE_M));
    let (out, _) = reconcile(&rows, true);
    assert_eq!(keys(&out), vec![set(&[(SourceType::Atp, "atp-1"), (SourceType::Overture, "ov-1"), (SourceType::Osm, "n1")])]);
    let merged = &out[0];
    assert_eq!(merged.aliases.len(), 3);
    assert_eq!(merged.sources.len(), 3, "sources {:?}", merged.sources);
    assert!(merged.provenance && !merged.community_only);
    assert_eq!(merged.brand, brand_index(MCD.qid));
    // Each sighting alone gives a weaker row than the three together.
    for r in &rows {
        let (single, _) = reconcile(std::slice::from_ref(r), true);
        assert_eq!(single.len(), 1);
        assert!(
            merged.confidence > single[0].confidence,
            "merged confidence {} must exceed the single-source {} row's {}",
            merged.confidence,
            r.source().as_str(),
            single[0].confidence
        );
    }
}

#[test]
fn same_brand_110_m_apart_in_two_sources_is_two_rows() {
    let rows = vec![at(SourceType::Atp, "atp-1", MCD, 0.0, 0.0), at(SourceType::Osm, "n1", MCD, 0.0, 110.0)];
    assert!(dist(&rows[0], &rows[1]) > TOLERANCE_M);
    let (out, _) = reconcile(&rows, true);
    assert_eq!(keys(&out), vec![set(&[(SourceType::Atp, "atp-1")]), set(&[(SourceType::Osm, "n1")])]);
}

#[test]
fn two_stores_of_one_brand_in_one_source_stay_two() {
    // 80 m apart, within the tolerance: one source never lists one store twice.
    let rows = vec![at(SourceType::Osm, "n1", SBUX, 0.0, 0.0), at(SourceType::Osm, "n2", SBUX, 80.0, 0.0)];
    let (out, _) = reconcile(&rows, true);
    assert_eq!(out.len(), 2, "{:?}", keys(&out));
    // However close they are.
    let rows = vec![at(SourceType::Atp, "a1", SBUX, 0.0, 0.0), at(SourceType::Atp, "a2", SBUX, 0.0, 5.0)];
    let (out, _) = reconcile(&rows, true);
    assert_eq!(out.len(), 2, "{:?}", keys(&out));
}

/// A record given twice (a file imported twice, a spider listing a store twice): one row, as
/// from one copy, and the second copy counted; the same id in another source is no copy.
#[test]
fn a_record_given_twice_is_one_sighting() {
    let once = vec![at(SourceType::Atp, "a1", SBUX, 0.0, 0.0), at(SourceType::Overture, "ov-1", SBUX, 20.0, 0.0), at(SourceType::Fsq, "a1", SBUX, 500.0, 0.0)];
    for multi_source in [true, false] {
        let (single, stats) = reconcile(&once, multi_source);
        assert_eq!(stats.duplicate_source_ids, 0);
        let mut twice = once.clone();
        twice.extend(once.iter().cloned());
        // The copy of a1 moved, as a second listing would be: the first one is kept.
        twice[3].lat += 0.0001;
        let (out, stats) = reconcile(&twice, multi_source);
        assert_eq!(stats.duplicate_source_ids, 3, "multi_source {multi_source}");
        let by_source: Vec<(&str, u64)> = stats.duplicates_by_source.iter().map(|(s, n)| (s.as_str(), *n)).collect();
        assert_eq!(by_source, [("atp", 1), ("fsq", 1), ("overture", 1)], "multi_source {multi_source}");
        assert_eq!(keys(&out), keys(&single), "multi_source {multi_source}");
        assert_eq!(
            out.iter().map(|r| (r.lat, r.lng, r.confidence)).collect::<Vec<_>>(),
            single.iter().map(|r| (r.lat, r.lng, r.confidence)).collect::<Vec<_>>()
        );
    }
    // Rows without an id are no copies of one another, however many there are.
    let idless: Vec<SourceRow> = (0..3).map(|i| at(SourceType::Atp, "", SBUX, 200.0 * i as f64, 0.0)).collect();
    let (out, stats) = reconcile(&idless, true);
    assert_eq!((out.len(), stats.duplicate_source_ids), (3, 0));
}

#[test]
fn an_80_m_chain_in_one_source_does_not_collapse() {
    let rows: Vec<SourceRow> = (0..5).map(|i| at(SourceType::Osm, &format!("n{i}"), SBUX, 80.0 * i as f64, 0.0)).collect();
    let (out, _) = reconcile(&rows, true);
    assert_eq!(out.len(), 5, "{:?}", keys(&out));
    assert!(out.iter().all(|r| r.aliases.len() == 1));
}

#[test]
fn a_chain_across_sources_does_not_collapse() {
    // ATP at 0 m, OSM at 80 m, FSQ at 160 m: each neighbour within 100 m, the ends 160 m apart.
    let rows = vec![at(SourceType::Atp, "atp-1", MCD, 0.0, 0.0), at(SourceType::Osm, "n1", MCD, 80.0, 0.0), at(SourceType::Fsq, "fsq-1", MCD, 160.0, 0.0)];
    assert!(dist(&rows[0], &rows[2]) > TOLERANCE_M);
    let (out, _) = reconcile(&rows, true);
    assert!(out.len() >= 2, "the chain collapsed into one row: {:?}", keys(&out));
    let atp = key(SourceType::Atp, "atp-1");
    let fsq = key(SourceType::Fsq, "fsq-1");
    for r in &out {
        let k = alias_keys(r);
        assert!(!(k.contains(&atp) && k.contains(&fsq)), "rows 160 m apart merged: {k:?}");
    }
    // Every source row is in exactly one output row.
    let all: Vec<String> = out.iter().flat_map(alias_keys).collect();
    assert_eq!(all.len(), 3, "{all:?}");
}

#[test]
fn different_brands_at_the_same_spot_stay_apart() {
    let rows = vec![at(SourceType::Atp, "atp-1", MCD, 0.0, 0.0), at(SourceType::Osm, "n1", SBUX, 0.0, 0.0)];
    let (out, _) = reconcile(&rows, true);
    assert_eq!(out.len(), 2, "{:?}", keys(&out));
    for r in &out {
        let want = if r.aliases[0].0 == SourceType::Atp { MCD } else { SBUX };
        assert_eq!(r.brand, brand_index(want.qid), "{:?}", r.aliases);
    }
}

#[test]
fn overture_rows_join_the_atp_row_they_came_from_whatever_the_distance() {
    let atp = at(SourceType::Atp, "atp-src-1", MCD, 0.0, 0.0);
    let mut ov = at(SourceType::Overture, "ov-derived-1", MCD, 150.0, 0.0);
    assert!(dist(&atp, &ov) > TOLERANCE_M);
    // Control: without the record link, 150 m is too far.
    let (out, _) = reconcile(&[atp.clone(), ov.clone()], true);
    assert_eq!(out.len(), 2, "control: 150 m apart with no link -> two rows: {:?}", keys(&out));

    ov.derived_from = vec![(SourceType::Atp, atp.source_id.clone())];
    let (out, stats) = reconcile(&[atp.clone(), ov.clone()], true);
    assert_eq!(keys(&out), vec![set(&[(SourceType::Atp, "atp-src-1"), (SourceType::Overture, "ov-derived-1")])]);
    assert_eq!(stats.linked_by_record_id, 1);
    // Listed the other way round, too.
    let (out, _) = reconcile(&[ov, atp], true);
    assert_eq!(out.len(), 1, "{:?}", keys(&out));
}

/// The module doc of `reconcile` promises the same for rows Overture took from Foursquare.
#[test]
fn overture_rows_join_the_fsq_row_they_came_from_whatever_the_distance() {
    let fsq = at(SourceType::Fsq, "fsq-src-1", MCD, 0.0, 0.0);
    let mut ov = at(SourceType::Overture, "ov-derived-2", MCD, 150.0, 0.0);
    ov.derived_from = vec![(SourceType::Fsq, fsq.source_id.clone())];
    let (out, stats) = reconcile(&[fsq, ov], true);
    assert_eq!(
        keys(&out),
        vec![set(&[(SourceType::Fsq, "fsq-src-1"), (SourceType::Overture, "ov-derived-2")])],
        "an Overture row re-published from Foursquare counted the store twice (linked_by_record_id {})",
        stats.linked_by_record_id
    );
}

#[test]
fn single_source_mode_keeps_one_row_per_source_row_without_provenance() {
    let rows = vec![
        at(SourceType::Atp, "atp-1", MCD, 0.0, 0.0),
        at(SourceType::Overture, "ov-1", MCD, 10.0, 0.0),
        at(SourceType::Osm, "n1", MCD, 0.0, 10.0),
        at(SourceType::Fsq, "fsq-1", SBUX, 0.0, 0.0),
    ];
    let (out, _) = reconcile(&rows, false);
    assert_eq!(out.len(), rows.len(), "{:?}", keys(&out));
    let want: Vec<BTreeSet<String>> = {
        let mut v: Vec<BTreeSet<String>> = rows.iter().map(|r| set(&[(r.source(), r.source_id.as_str())])).collect();
        v.sort();
        v
    };
    assert_eq!(keys(&out), want);
    for r in &out {
        assert!(!r.provenance, "provenance must be false: {:?}", r.aliases);
        assert_eq!(r.last_verified, None);
        assert_eq!(r.storefront, None);
    }
}

#[test]
fn country_is_backfilled_from_the_shapes_near_a_border() {
    // Real places about 2 km either side of a border, with no country tag: Detroit (US) and
    // Windsor (CA) across the Detroit River; Strasbourg (FR) and Kehl (DE) across the Rhine.
    let places =
        [("detroit", 42.3450, -83.0550, "US"), ("windsor", 42.3000, -83.0300, "CA"), ("strasbourg", 48.5800, 7.7650, "FR"), ("kehl", 48.5640, 7.8400, "DE")];
    let rows: Vec<SourceRow> = places
        .iter()
        .map(|(id, lat, lng, _)| {
            let mut r = at(SourceType::Atp, id, MCD, 0.0, 0.0);
            (r.lat, r.lng, r.country) = (*lat, *lng, None);
            r
        })
        .collect();
    let (out, stats) = reconcile(&rows, true);
    assert_eq!(out.len(), places.len());
    for (id, _, _, country) in places {
        let r = out.iter().find(|r| r.aliases[0].1 == id).unwrap();
        assert_eq!(r.country, country, "{id}");
    }
    assert_eq!(stats.countries_backfilled, places.len() as u64);
}
