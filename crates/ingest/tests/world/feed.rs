//! The change feed's query against the snapshots it summarises: three weekly builds into one
//! folder, then for brands that both opened and closed stores, the opened and closed lists for
//! several dates equal the differences of the snapshots' servable ids, with the right first and
//! last seen times, in every format.

use std::collections::BTreeSet;

use storemap_core::{format_iso, Snapshot};
use storemap_ingest::world::churn::SURVEY;

use crate::churn::{build, servable, DAY};
use crate::common::TempDir;

#[test]
fn the_change_feed_answers_from_the_history_what_the_snapshots_say() {
    use storemap_core::{ChangeFeed, Filters, Format, WriteOptions};
    let dir = TempDir::new("feed");
    let weeks = [SURVEY + 90 * DAY, SURVEY + 97 * DAY, SURVEY + 104 * DAY];
    let snaps: Vec<(Snapshot, BTreeSet<u64>)> = weeks
        .iter()
        .map(|&t| {
            build(dir.path(), t, Vec::new());
            servable(dir.path())
        })
        .collect();
    for (s, _) in &snaps {
        let mut ids: Vec<u64> = (0..s.row_count()).map(|r| s.row_id(r)).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "ids are unique in a snapshot");
    }
    let (current, now) = &snaps[2];
    let feed = ChangeFeed::load(dir.path(), current).expect("the history reads").expect("the folder has a history");
    assert_eq!(feed.reaches_back_to(), weeks[0]);

    // Brands whose stores both opened and closed over the two weeks, by identity.
    let brand_of = |s: &Snapshot, id: u64| {
        let r = (0..s.row_count()).find(|&x| s.row_id(x) == id).unwrap();
        s.brands()[s.brand_of_row(r as u32) as usize].identity().to_string()
    };
    let opened_brands: BTreeSet<String> = now.difference(&snaps[0].1).map(|&id| brand_of(current, id)).collect();
    let closed_brands: BTreeSet<String> = snaps[0].1.difference(now).map(|&id| brand_of(&snaps[0].0, id)).collect();
    let both: Vec<&String> = opened_brands.intersection(&closed_brands).collect();
    assert!(!both.is_empty(), "no brand both opened and closed a store in two weeks");

    for identity in both.iter().take(5) {
        let b = current.brands().iter().position(|x| x.identity() == identity.as_str()).unwrap() as u32;
        for (since, k) in [(weeks[0], 0), (weeks[0] + 3 * DAY, 0), (weeks[1], 1), (weeks[2] + 30 * DAY, 2)] {
            let got = feed.changes(current, b, &Filters::default(), since).expect("changes");
            assert_eq!((got.since, got.until), (weeks[k], weeks[2]));
            // Expected from the snapshots themselves: the brand's servable ids then and now.
            let ids_of =
                |s: &Snapshot, ids: &BTreeSet<u64>| -> BTreeSet<u64> { ids.iter().copied().filter(|&id| brand_of(s, id) == identity.as_str()).collect() };
            let then = ids_of(&snaps[k].0, &snaps[k].1);
            let later = ids_of(current, now);
            let opened: BTreeSet<u64> = got.opened.iter().map(|&(r, _)| current.row_id(r as usize)).collect();
            let closed: BTreeSet<u64> = got.closed.iter().map(|&(r, _)| feed.departed().row_id(r as usize)).collect();
            assert_eq!(opened, later.difference(&then).copied().collect::<BTreeSet<u64>>(), "{identity} since {}", format_iso(since));
            assert_eq!(closed, then.difference(&later).copied().collect::<BTreeSet<u64>>(), "{identity} since {}", format_iso(since));
            for &(r, first) in &got.opened {
                let id = current.row_id(r as usize);
                // First seen: the earliest week from which it is in every later week.
                let j = (0..3).rev().take_while(|&j| snaps[j].1.contains(&id)).last().unwrap();
                assert_eq!(first, weeks[j]);
            }
            for &(r, last) in &got.closed {
                let id = feed.departed().row_id(r as usize);
                let j = (0..3).rev().find(|&j| snaps[j].1.contains(&id)).unwrap();
                assert_eq!(last, weeks[j]);
            }
            if k == 0 {
                // The documents say the same in each format.
                let opts = WriteOptions { brand_label: identity.to_string(), ..WriteOptions::default() };
                let json: serde_json::Value =
                    serde_json::from_slice(&storemap_core::write_changes(current, feed.departed(), &got, Format::Json, &opts)).unwrap();
                assert_eq!(json["opened_count"], got.opened.len());
                assert_eq!(json["closed"].as_array().unwrap().len(), got.closed.len());
                assert_eq!(json["since"], format_iso(weeks[0]));
                assert!(json["closed"][0]["last_seen"].is_string() && json["opened"][0]["first_seen"].is_string());
                let csv = String::from_utf8(storemap_core::write_changes(current, feed.departed(), &got, Format::Csv, &opts)).unwrap();
                assert!(csv.starts_with(&storemap_core::changes_csv_header()));
                assert_eq!(csv.lines().filter(|l| l.contains(",closed,")).count(), got.closed.len());
                let geo: serde_json::Value =
                    serde_json::from_slice(&storemap_core::write_changes(current, feed.departed(), &got, Format::GeoJson, &opts)).unwrap();
                assert_eq!(geo["features"].as_array().unwrap().len() as u32, got.count());
            }
        }
    }
    let err = feed.changes(current, 0, &Filters::default(), weeks[0] - DAY).unwrap_err();
    assert_eq!((err.code(), err.to_string()), ("SINCE_OUT_OF_RANGE", format!("the history begins at {}", format_iso(weeks[0]))));

    // Priced before a byte is written: the answer's count is the feed's, and a budget of fewer
    // rows gets no body.
    use storemap_core::{Budget, ChangeQuery, Refusal};
    let b = current.brands().iter().position(|x| x.identity() == both[0].as_str()).unwrap() as u32;
    let expected = feed.changes(current, b, &Filters::default(), weeks[0]).unwrap();
    let query = |max_rows| ChangeQuery {
        brand: b,
        filters: Filters::default(),
        since: weeks[0],
        format: Format::Json,
        provenance: false,
        brand_label: None,
        budget: Budget { max_rows, deadline: None },
    };
    let paid = feed.answer(current, &query(None)).unwrap();
    assert_eq!((paid.answer.count, paid.opened, paid.closed), (expected.count(), expected.opened.len() as u32, expected.closed.len() as u32));
    assert_eq!(paid.span, Some((weeks[0], weeks[2])));
    let opts = WriteOptions { brand_label: current.brands()[b as usize].name.clone(), region: "worldwide".into(), ..WriteOptions::default() };
    assert_eq!(paid.answer.body, storemap_core::write_changes(current, feed.departed(), &expected, Format::Json, &opts));
    let refused = feed.answer(current, &query(Some(expected.count() - 1))).unwrap();
    assert_eq!((refused.answer.refused, refused.answer.count, refused.answer.body.len()), (Some(Refusal::Credits), expected.count(), 0));
}
