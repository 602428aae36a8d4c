//! What a request serves, on a small snapshot written and loaded through the real file format:
//! limits across brands, the sources of the served rows only, filter sets that add up, the
//! price and the deadline before any byte is written, per-country counts and the majority
//! country. Expected values are counted from the rows this file writes.

mod common;

use std::time::{Duration, Instant};

use storemap_core::{
    BrandRecord, Budget, DataQuery, Filters, Format, Refusal, RowBuilder, Snapshot, SnapshotBuilder, SnapshotMeta, SourceMask, SourceType, CONFIDENCE_FLOOR,
};

/// One row: brand, country, source, verified (else community-only), a distinct position.
struct Row(u32, &'static str, SourceType, bool);

/// Brand 0 "Alpha": 3 verified US rows (atp), 1 verified PR row (fsq), 1 community-only US row
/// (osm), 2 verified CA rows (overture). Brand 1 "Beta": 2 verified CA rows (atp), 2 verified US
/// rows (fsq). Brand 2 "Gamma": no rows.
const ROWS: &[Row] = &[
    Row(0, "US", SourceType::Atp, true),
    Row(0, "US", SourceType::Atp, true),
    Row(0, "US", SourceType::Atp, true),
    Row(0, "PR", SourceType::Fsq, true),
    Row(0, "US", SourceType::Osm, false),
    Row(0, "CA", SourceType::Overture, true),
    Row(0, "CA", SourceType::Overture, true),
    Row(1, "CA", SourceType::Atp, true),
    Row(1, "CA", SourceType::Atp, true),
    Row(1, "US", SourceType::Fsq, true),
    Row(1, "US", SourceType::Fsq, true),
];

fn snapshot(name: &str) -> Snapshot {
    let brands = vec![BrandRecord::new("Alpha"), BrandRecord::new("Beta"), BrandRecord::new("Gamma")];
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), brands, Vec::new(), Vec::new());
    for (i, Row(brand, country, source, verified)) in ROWS.iter().enumerate() {
        let mut sources = SourceMask::default();
        sources.insert(*source);
        b.push(&RowBuilder {
            brand: *brand,
            lat: 10.0 + i as f64,
            lng: -60.0 - i as f64,
            id: i as u64 + 1,
            name: format!("store {i}"),
            country: country.to_string(),
            confidence: if *verified { CONFIDENCE_FLOOR + 0.2 } else { 0.3 },
            community_only: !verified,
            sources,
            ..RowBuilder::default()
        });
    }
    common::write_and_load(b, "serve", name).unwrap()
}

/// Expected from `ROWS`: rows of `brand` matching `keep`.
fn expected(brand: u32, keep: impl Fn(&Row) -> bool) -> usize {
    ROWS.iter().filter(|r| r.0 == brand && keep(r)).count()
}

fn country(c: &str) -> Filters {
    Filters { country: Some(c.into()), ..Filters::default() }
}

fn names(m: SourceMask) -> Vec<&'static str> {
    m.iter().map(|s| s.as_str()).collect()
}

#[test]
fn serve_counts_every_brand_and_the_sources_of_served_rows() {
    let snap = snapshot("all");
    let served = snap.serve(&[0, 1], &[Filters::default()], None).unwrap();
    assert_eq!(served.by_brand[0].len(), expected(0, |_| true));
    assert_eq!(served.by_brand[1].len(), expected(1, |_| true));
    assert_eq!(served.total as usize, ROWS.len());
    assert_eq!(names(served.sources), ["atp", "fsq", "osm", "overture"]);

    let verified = snap.serve(&[0], &[Filters { verified_only: true, ..Filters::default() }], None).unwrap();
    assert_eq!(verified.count() as usize, expected(0, |r| r.3));
    assert!(!verified.sources.contains(SourceType::Osm), "the community-only row is not served");
}

#[test]
fn a_limit_cuts_across_brands_in_order_and_names_only_the_served_rows_sources() {
    let snap = snapshot("limit");
    let alpha = expected(0, |_| true) as u32;
    let served = snap.serve(&[1, 0], &[Filters::default()], Some(3)).unwrap();
    assert_eq!(served.by_brand[0].len(), 3, "Beta first, cut at 3 of its 4");
    assert!(served.by_brand[1].is_empty(), "nothing left for Alpha");
    assert_eq!(served.total, alpha + 4, "total counts every match");
    // Beta's rows sort CA (atp) before US (fsq): the first three are two atp and one fsq.
    assert_eq!(names(served.sources), ["atp", "fsq"]);
}

/// A trial key's cap takes rows spread over the brand's, not its first ones: the snapshot
/// keeps a brand's rows in latitude order, so the first 50 would be its southernmost stores.
#[test]
fn a_cap_keeps_rows_spread_over_the_brand_not_its_first_ones() {
    let snap = snapshot("spread");
    let all = snap.serve(&[0], &[Filters::default()], None).unwrap().by_brand[0].clone();
    assert_eq!(all.len(), expected(0, |_| true));
    let capped = snap.serve(&[0], &[Filters::default()], Some(3)).unwrap();
    assert_eq!(capped.total as usize, all.len(), "total counts every match");
    let at: Vec<usize> = capped.by_brand[0].iter().map(|r| all.iter().position(|a| a == r).expect("a row of the brand")).collect();
    assert_eq!(at.len(), 3);
    assert!(at.windows(2).all(|w| w[0] < w[1]), "in snapshot order, no row twice: {at:?}");
    assert_eq!(at[0], 0, "from the first row");
    assert!(at[2] >= all.len() / 2, "into the second half of the brand's rows: {at:?}");
    let gaps: Vec<usize> = at.windows(2).map(|w| w[1] - w[0]).chain(std::iter::once(all.len() - at[2])).collect();
    assert!(gaps.iter().max().unwrap() - gaps.iter().min().unwrap() <= 1, "evenly spaced: {at:?} of {}", all.len());
    // The same sample on every request.
    assert_eq!(snap.serve(&[0], &[Filters::default()], Some(3)).unwrap().by_brand, capped.by_brand);
}

#[test]
fn filter_sets_add_up() {
    let snap = snapshot("sets");
    let us = snap.serve(&[0], &[country("US")], None).unwrap();
    let us_pr = snap.serve(&[0], &[country("US"), country("pr")], None).unwrap();
    assert_eq!(us.count() as usize, expected(0, |r| r.1 == "US"));
    assert_eq!(us_pr.count() as usize, expected(0, |r| r.1 == "US" || r.1 == "PR"));
    assert!(us_pr.sources.contains(SourceType::Fsq) && !us.sources.contains(SourceType::Fsq));
}

#[test]
fn brands_must_name_brands_of_the_snapshot() {
    let snap = snapshot("brands");
    for bad in [&[][..], &[3][..], &[0, 99][..]] {
        let e = snap.serve(bad, &[Filters::default()], None).unwrap_err();
        assert_eq!(e.code(), "INVALID_REQUEST", "{bad:?}");
    }
    assert!(snap.serve(&[2], &[Filters::default()], None).unwrap().by_brand[0].is_empty(), "a brand without rows serves none");
}

fn data_query(brands: &[u32], budget: Budget) -> DataQuery {
    DataQuery {
        brands: brands.to_vec(),
        filters: Filters::default(),
        format: Format::Json,
        provenance: false,
        hours_column: false,
        brand_label: None,
        limit: None,
        budget,
    }
}

#[test]
fn an_answer_is_priced_before_it_is_written() {
    let snap = snapshot("price");
    let n = expected(0, |_| true) as u32;
    let a = snap.answer(&data_query(&[0], Budget { max_rows: Some(n - 1), deadline: None })).unwrap();
    assert_eq!(a.refused, Some(Refusal::Credits));
    assert!(a.body.is_empty());
    assert_eq!((a.count, a.total), (n, n), "the count that could not be paid for");

    let paid = snap.answer(&data_query(&[0], Budget { max_rows: Some(n), deadline: None })).unwrap();
    assert_eq!(paid.refused, None);
    let body: serde_json::Value = serde_json::from_slice(&paid.body).unwrap();
    assert_eq!(body["count"], n);
    assert_eq!(body["brand"], "Alpha");
    assert_eq!(body["region"], "worldwide");

    let two = snap.answer(&data_query(&[0, 1], Budget::default())).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&two.body).unwrap();
    assert_eq!(body["brand"], "Alpha, Beta", "the label defaults to the names joined");
}

#[test]
fn no_rows_cost_nothing_and_a_passed_deadline_does_no_work() {
    let snap = snapshot("deadline");
    let empty = snap.answer(&data_query(&[2], Budget { max_rows: Some(0), deadline: None })).unwrap();
    assert_eq!((empty.refused, empty.count), (None, 0), "an empty answer is never refused for credits");

    // A deadline already behind us: no race with a clock.
    let past = Instant::now().checked_sub(Duration::from_secs(1)).unwrap_or_else(Instant::now);
    let late = snap.answer(&data_query(&[0], Budget { max_rows: None, deadline: Some(past) })).unwrap();
    assert_eq!(late.refused, Some(Refusal::Deadline));
    assert_eq!((late.count, late.total), (0, 0), "work that starts late never starts");
}

#[test]
fn country_counts_are_verified_rows_most_first_ties_by_code() {
    let snap = snapshot("countries");
    let counts = snap.country_counts(0).unwrap();
    let want = |c: &str| expected(0, |r| r.3 && r.1 == c) as u32;
    assert_eq!(counts, vec![("US".to_string(), want("US")), ("CA".to_string(), want("CA")), ("PR".to_string(), want("PR"))]);
    // Beta: 2 CA and 2 US, a tie broken by code.
    assert_eq!(snap.country_counts(1).unwrap(), vec![("CA".to_string(), 2), ("US".to_string(), 2)]);
    assert_eq!(snap.country_counts(2), Some(vec![]));
    assert_eq!(snap.country_counts(3), None);
}

#[test]
fn the_majority_country_breaks_ties_alphabetically() {
    let snap = snapshot("majority");
    let beta = snap.serve(&[1], &[Filters::default()], None).unwrap();
    assert_eq!(snap.majority_country(beta.rows()), Some("CA".to_string()), "2 CA and 2 US");
    let alpha = snap.serve(&[0], &[Filters::default()], None).unwrap();
    assert_eq!(snap.majority_country(alpha.rows()), Some("US".to_string()));
    assert_eq!(snap.majority_country(std::iter::empty()), None);
}

/// coverage_confidence, worked by hand from `ROWS` (each row seen by one source, so every
/// storefront is seen exactly once: f1 = the rows, f2 = 0).
#[test]
fn coverage_confidence_in_the_json_envelope_and_the_geojson_collection() {
    let snap = snapshot("coverage");
    let json = |brands: &[u32], filters: Filters, format: Format| -> serde_json::Value {
        let q = DataQuery { filters, format, ..data_query(brands, Budget::default()) };
        serde_json::from_slice(&snap.answer(&q).unwrap().body).unwrap()
    };
    // Alpha: 7 storefronts from four sources, Chao: 7 + 7 × 6 / 2 = 28; all 7 served.
    assert_eq!(json(&[0], Filters::default(), Format::Json)["coverage_confidence"], 0.25);
    // The data formats leave out the community-only row: 6 of the 28.
    let verified = Filters { verified_only: true, ..Filters::default() };
    assert_eq!(json(&[0], verified.clone(), Format::Json)["coverage_confidence"], (6.0f64 / 28.0 * 1000.0).round() / 1000.0);
    assert_eq!(json(&[0], verified, Format::GeoJson)["coverage_confidence"], 0.214, "a foreign member of the collection");
    // Beta: 4 storefronts, one short of an estimate.
    assert_eq!(json(&[1], Filters::default(), Format::Json)["coverage_confidence"], serde_json::Value::Null);
    // Both: 11 storefronts seen once each by four sources: 11 + 11 × 10 / 2 = 66.
    assert_eq!(json(&[0, 1], Filters::default(), Format::Json)["coverage_confidence"], (11.0f64 / 66.0 * 1000.0).round() / 1000.0);
    // Alpha in Canada: 2 storefronts, too few to estimate.
    assert_eq!(json(&[0], country("CA"), Format::Json)["coverage_confidence"], serde_json::Value::Null);
    let a = snap.answer(&DataQuery { filters: country("CA"), ..data_query(&[0], Budget::default()) }).unwrap();
    assert_eq!(a.coverage, None);
    let csv = snap.answer(&DataQuery { format: Format::Csv, ..data_query(&[0], Budget::default()) }).unwrap();
    assert_eq!(csv.coverage, Some(0.25), "CSV carries it beside the body (a header), not in it");
    assert!(!String::from_utf8(csv.body).unwrap().contains("0.25"));
}
