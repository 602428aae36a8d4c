//! The change feed's query against the snapshots it summarises: three weekly builds into one
//! folder, then for brands that both opened and closed stores, the opened and closed lists for
//! several dates equal the differences of the snapshots' servable ids, with the right first and
//! last seen times, in every format.

use std::collections::{BTreeSet, HashMap};

use storemap_core::{format_iso, Snapshot};
use storemap_ingest::world::churn::SURVEY;

use crate::churn::{build, servable, DAY};
use crate::common::TempDir;

/// One build into `dir` as of each time, in order: each snapshot and its servable ids.
fn builds(dir: &TempDir, times: &[i64]) -> Vec<(Snapshot, BTreeSet<u64>)> {
    times
        .iter()
        .map(|&t| {
            build(dir.path(), t, Vec::new());
            servable(dir.path())
        })
        .collect()
}

#[test]
fn the_change_feed_answers_from_the_history_what_the_snapshots_say() {
    use storemap_core::{ChangeFeed, Filters, Format, WriteOptions};
    let dir = TempDir::new("feed");
    let weeks = [SURVEY + 90 * DAY, SURVEY + 97 * DAY, SURVEY + 104 * DAY];
    let snaps = builds(&dir, &weeks);
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
                assert!(csv.starts_with(&storemap_core::changes_csv_header(false)));
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
        hours_column: false,
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

/// Store counts by month and quarter over the same kind of three weekly builds, for brands that
/// opened and closed stores: each period's count, openings and closings equal what the
/// snapshots themselves serve (the brand's servable ids in the last snapshot before the period
/// ends, and the differences of consecutive snapshots dated within it).
#[test]
fn the_series_counts_what_each_snapshot_served() {
    use storemap_core::{Budget, ChangeFeed, Filters, Interval, Refusal, SeriesQuery};
    let dir = TempDir::new("series");
    // Two of the three builds in one month and the third in the next (or all in one quarter).
    let weeks = [SURVEY + 80 * DAY, SURVEY + 87 * DAY, SURVEY + 125 * DAY];
    let snaps = builds(&dir, &weeks);
    let current = &snaps[2].0;
    let feed = ChangeFeed::load(dir.path(), current).unwrap().unwrap();
    // Each snapshot's servable ids by brand identity.
    let by_brand: Vec<HashMap<String, BTreeSet<u64>>> = snaps
        .iter()
        .map(|(s, ids)| {
            let mut m: HashMap<String, BTreeSet<u64>> = HashMap::new();
            for r in 0..s.row_count() {
                if ids.contains(&s.row_id(r)) {
                    m.entry(s.brands()[s.brand_of_row(r as u32) as usize].identity().to_string()).or_default().insert(s.row_id(r));
                }
            }
            m
        })
        .collect();
    let brand_ids = |k: usize, identity: &str| by_brand[k].get(identity).cloned().unwrap_or_default();
    // The brands with the most changes over the builds.
    let mut by_change: Vec<(usize, u32)> = (0..current.brands().len() as u32)
        .map(|b| {
            let identity = current.brands()[b as usize].identity();
            (brand_ids(0, identity).symmetric_difference(&brand_ids(2, identity)).count(), b)
        })
        .collect();
    by_change.sort_unstable_by(|x, y| y.cmp(x));
    for &(changed, b) in by_change.iter().take(3) {
        assert!(changed > 0, "no brand changed over the builds");
        let identity = current.brands()[b as usize].identity();
        let sets: Vec<BTreeSet<u64>> = (0..3).map(|k| brand_ids(k, identity)).collect();
        for interval in [Interval::Month, Interval::Quarter] {
            let q = SeriesQuery { brand: b, filters: Filters::default(), interval, from: None, to: None, budget: Budget::default() };
            let got = feed.series(current, &q).unwrap();
            assert_eq!((got.begins, got.until), (weeks[0], weeks[2]));
            assert_eq!(got.points.first().unwrap().period, interval.period_of(weeks[0]));
            assert_eq!(got.points.last().unwrap().period, interval.period_of(weeks[2]));
            for p in &got.points {
                let last = (0..3).rev().find(|&k| weeks[k] < p.period.end).unwrap();
                let (mut opened, mut closed) = (0, 0);
                for k in 1..3 {
                    if weeks[k] >= p.period.start && weeks[k] < p.period.end {
                        opened += sets[k].difference(&sets[k - 1]).count() as u32;
                        closed += sets[k - 1].difference(&sets[k]).count() as u32;
                    }
                }
                assert_eq!((p.stores, p.opened, p.closed), (sets[last].len() as u32, opened, closed), "{identity} {}", p.period.label);
            }
        }
    }
    // Out of the history's reach, named; priced before the walk.
    let q = |from, to, max_rows| SeriesQuery {
        brand: by_change[0].1,
        filters: Filters::default(),
        interval: Interval::Month,
        from,
        to,
        budget: Budget { max_rows, deadline: None },
    };
    let first = Interval::Month.period_of(weeks[0]);
    let err = feed.series(current, &q(Some(first.start - 1), None, None)).unwrap_err();
    assert_eq!((err.code(), err.to_string()), ("FROM_OUT_OF_RANGE", format!("the history begins at {} (period {})", format_iso(weeks[0]), first.label)));
    let last = Interval::Month.period_of(weeks[2]);
    let err = feed.series(current, &q(None, Some(last.end), None)).unwrap_err();
    assert_eq!(err.code(), "TO_OUT_OF_RANGE");
    assert!(feed.series(current, &q(Some(last.start), Some(first.start), None)).is_err_and(|e| e.code() == "FROM_OUT_OF_RANGE"));
    let all = feed.series(current, &q(None, None, None)).unwrap();
    let refused = feed.series(current, &q(None, None, Some(all.count - 1))).unwrap();
    assert_eq!((refused.refused, refused.count, refused.points.len()), (Some(Refusal::Credits), all.count, 0));
}
