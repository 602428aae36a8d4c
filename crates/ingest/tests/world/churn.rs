//! The world ages, and stores keep their ids across refreshes.
//!
//! - A build at or before the survey day is the surveyed world; a later one holds every
//!   surveyed store at the same place, closes them and opens new ones at the rates of
//!   `world::churn` (checked as a Poisson count and binomial shares within 5 standard
//!   errors), and an earlier date's world is part of a later one's.
//! - A second build into the same data folder continues the first one's ids: a week later, and
//!   with AllThePlaces left out, every store seen in both keeps its id, where a build into an
//!   empty folder gives many of them fresh ones.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use storemap_core::{format_iso, Snapshot, SourceType};
use storemap_ingest::pipeline::{self, BuildOptions, Phases, SNAPSHOT_FILE};
use storemap_ingest::world::churn::{self, Event, SURVEY};
use storemap_ingest::world::{BrandWorld, Generator};

use crate::common::{land, reference, reference_paths, TempDir};

pub(crate) const DAY: i64 = storemap_core::DAY_S;
const YEAR: i64 = 365 * DAY + DAY / 4;
/// Brands looked at: enough for thousands of stores at scale 0.1.
const BRANDS: usize = 400;

fn worlds_at(scale: f64, as_of: Option<i64>) -> Vec<BrandWorld> {
    let r = reference();
    let gen = Generator::new(&r.catalog, &r.cities, &r.zips, land(), scale, 7);
    let gen = match as_of {
        Some(t) => gen.at(t),
        None => gen,
    };
    (0..BRANDS).map(|rank| gen.brand(rank)).collect()
}

/// What one store is: where it is, its number and its address.
fn place(w: &BrandWorld, number: u32) -> Option<(u64, u64, String, String)> {
    w.stores.iter().find(|s| s.number == number).map(|s| (s.lat.to_bits(), s.lng.to_bits(), s.country.clone(), s.address.line.clone()))
}

#[test]
fn before_and_on_the_survey_day_the_world_is_the_surveyed_world() {
    let surveyed = worlds_at(0.1, None);
    for t in [SURVEY, SURVEY - 40 * DAY] {
        let w = worlds_at(0.1, Some(t));
        for (a, b) in surveyed.iter().zip(&w) {
            assert_eq!(a.stores.len(), b.stores.len());
            assert_eq!(a.sightings.len(), b.sightings.len());
            assert!(a.stores.iter().zip(&b.stores).all(|(x, y)| x.number == y.number && x.lat == y.lat && x.closed == y.closed && y.opened.is_none()));
        }
    }
}

#[test]
fn a_year_on_stores_have_closed_and_opened_at_their_classes_rates() {
    let r = reference();
    let surveyed = worlds_at(0.1, None);
    let t = SURVEY + YEAR;
    let aged = worlds_at(0.1, Some(t));
    let (mut closed, mut closed_expected, mut closed_var) = (0u64, 0.0, 0.0);
    let (mut opened, mut opened_expected) = (0u64, 0.0);
    for (rank, (before, after)) in surveyed.iter().zip(&aged).enumerate() {
        let rates = churn::rates(&r.catalog.brands[rank].class);
        let n = before.stores.len();
        // Every surveyed store is still there, at the same place.
        for s in &before.stores {
            assert_eq!(place(after, s.number), place(before, s.number), "store {} of rank {rank} moved", s.number);
        }
        let p = 1.0 - (-rates.close).exp();
        closed_expected += n as f64 * p;
        closed_var += n as f64 * p * (1.0 - p);
        closed += after.stores[..n].iter().filter(|s| s.closed_at.is_some()).count() as u64;
        opened_expected += rates.open * n as f64;
        for s in &after.stores[n..] {
            let at = s.opened.expect("a store beyond the surveyed ones has an opening time");
            assert!(at > SURVEY && at <= t, "opened {} outside the year", format_iso(at));
            assert!(s.number as usize >= 1000 + n, "an opening's number follows the surveyed ones");
            opened += 1;
        }
        for s in &after.stores {
            if let Some(c) = s.closed_at {
                assert!(c > SURVEY && c <= t && s.closed, "closed at {}", format_iso(c));
            }
        }
    }
    assert!(closed_expected > 500.0, "enough stores to measure: {closed_expected}");
    let sd = closed_var.sqrt();
    assert!((closed as f64 - closed_expected).abs() < 5.0 * sd, "{closed} closures, expected {closed_expected:.0} ± {sd:.0}");
    // A Poisson count: its variance is its mean.
    let sd = opened_expected.sqrt();
    assert!((opened as f64 - opened_expected).abs() < 5.0 * sd, "{opened} openings, expected {opened_expected:.0} ± {sd:.0}");
}

#[test]
fn an_earlier_dates_world_is_part_of_a_later_ones() {
    let half = worlds_at(0.1, Some(SURVEY + YEAR / 2));
    let full = worlds_at(0.1, Some(SURVEY + YEAR));
    let mut openings = 0;
    for (a, b) in half.iter().zip(&full) {
        for s in &a.stores {
            assert_eq!(place(b, s.number), place(a, s.number));
            let later = b.stores.iter().find(|x| x.number == s.number).unwrap();
            assert_eq!(later.opened, s.opened);
            // Closed by the first date: closed at the same time by the second.
            if s.closed_at.is_some() {
                assert_eq!(later.closed_at, s.closed_at);
            }
            openings += s.opened.is_some() as usize;
        }
    }
    assert!(openings > 100, "{openings} openings in half a year");
}

#[test]
fn sources_list_a_store_only_between_its_opening_and_its_closure_each_with_its_lag() {
    let t = SURVEY + YEAR;
    let aged = worlds_at(0.1, Some(t));
    let (mut atp_long_closed, mut long_closed, mut atp_of_new) = (0, 0, 0);
    for w in &aged {
        for s in &w.sightings {
            let store = &w.stores[s.store as usize];
            // Seen no earlier than it opened.
            if let Some(o) = store.opened {
                assert!(t - s.days_ago as i64 * DAY >= o - DAY, "seen {} days ago, opened {}", s.days_ago, format_iso(o));
                atp_of_new += (s.source == SourceType::Atp) as usize;
            }
            // Retailers' locators drop a closure within days: none 60 days on (the chance
            // of a 4-day mean lag reaching 60 days is e^-15 a store).
            if store.closed_at.is_some_and(|c| t - c > 60 * DAY) {
                long_closed += 1;
                atp_long_closed += (s.source == SourceType::Atp) as usize;
            }
        }
    }
    assert!(churn::mean_lag_days(SourceType::Atp, Event::Closing) <= 60.0 / 15.0 + 1.0);
    assert_eq!(atp_long_closed, 0, "AllThePlaces still lists stores closed two months ago");
    assert!(long_closed > 0, "the slower sources still list some closed stores: the contract's closure lag");
    assert!(atp_of_new > 0, "new stores are seen");
}

// ---------------------------------------------------------------------------------------------
// ids across builds

pub(crate) fn options(dir: &Path, as_of: i64, disabled: Vec<SourceType>) -> BuildOptions {
    BuildOptions {
        data_dir: dir.to_path_buf(),
        reference: reference_paths(),
        as_of,
        disabled,
        multi_source: true,
        synthetic: Some((0.01, 7)),
        region: Default::default(),
        keep_history: storemap_core::HISTORY_DEFAULT_KEEP,
        rewrite_history: false,
        record: Default::default(),
    }
}

pub(crate) fn build(dir: &Path, as_of: i64, disabled: Vec<SourceType>) -> storemap_ingest::pipeline::BuildSummary {
    pipeline::build_synthetic(&options(dir, as_of, disabled), 0.01, 7, &mut Phases::new(false)).unwrap_or_else(|e| panic!("build: {e}"))
}

/// `source:source_id` -> the true store it sighted, from the generator's `truth.csv`.
pub(crate) fn truth(dir: &Path) -> HashMap<String, String> {
    let mut m = HashMap::new();
    let mut rd = csv::Reader::from_path(dir.join("sources").join("truth.csv")).expect("truth.csv");
    for rec in rd.records() {
        let rec = rec.expect("a truth row");
        m.insert(format!("{}:{}", &rec[0], &rec[1]), rec[2].to_string());
    }
    m
}

/// The id of each true store that exactly one row stands for (all its sightings in one row).
fn ids_by_store(dir: &Path) -> HashMap<String, u64> {
    let truth = truth(dir);
    let snap = Snapshot::load(&dir.join(SNAPSHOT_FILE)).expect("snapshot loads");
    // Every row holding one of a store's sightings, and whether that row holds other stores
    // too: a store split between its own row and a neighbour's (dense Taiwan) is not one row.
    let mut rows_of: HashMap<String, Vec<(u64, bool)>> = HashMap::new();
    for r in 0..snap.row_count() {
        let stores: BTreeSet<&String> = snap.row_aliases(r).filter_map(|(s, id)| truth.get(&format!("{}:{id}", s.as_str()))).collect();
        let alone = stores.len() == 1;
        for store in stores {
            rows_of.entry(store.clone()).or_default().push((snap.row_id(r), alone));
        }
    }
    rows_of.into_iter().filter(|(_, rows)| rows.len() == 1 && rows[0].1).map(|(k, rows)| (k, rows[0].0)).collect()
}

/// Stores one row stands for in both builds, and how many of them changed id.
fn changed(a: &HashMap<String, u64>, b: &HashMap<String, u64>) -> (usize, usize) {
    let both: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
    (both.len(), both.iter().filter(|k| a[**k] != b[**k]).count())
}

#[test]
fn stores_keep_their_ids_through_a_weekly_refresh_and_a_source_left_out() {
    let t1 = SURVEY + 30 * DAY;
    let t2 = t1 + 7 * DAY;
    let refreshed = TempDir::new("ids-refreshed");
    build(refreshed.path(), t1, Vec::new());
    let first = ids_by_store(refreshed.path());
    let summary = build(refreshed.path(), t2, Vec::new());
    let second = ids_by_store(refreshed.path());
    assert!(summary.reconcile.previous_rows > 0 && summary.reconcile.ids_kept_by_source_id > 0, "{:?}", summary.reconcile);
    let (both, moved) = changed(&first, &second);
    assert!(both > 1000, "{both} stores in both weeks");
    assert_eq!(moved, 0, "{moved} of {both} stores changed id between two weekly refreshes");

    // The same two weeks with no previous snapshot: the fresh ids of some stores differ (a
    // source joined or left their cluster), which is what continuing ids is for.
    let fresh = TempDir::new("ids-fresh");
    build(fresh.path(), t2, Vec::new());
    let (_, fresh_moved) = changed(&first, &ids_by_store(fresh.path()));
    assert!(fresh_moved > 0, "no store's fresh id changed in a week: the test shows nothing");

    // AllThePlaces left out: the store's smallest source id (an `atp:` one) is gone, so its
    // fresh id changes; continued, it does not.
    let summary = build(refreshed.path(), t2, vec![SourceType::Atp]);
    let without = ids_by_store(refreshed.path());
    let (both, moved) = changed(&second, &without);
    assert!(both > 500, "{both} stores in both builds");
    assert_eq!(moved, 0, "{moved} of {both} stores changed id when AllThePlaces was left out");
    assert!(summary.reconcile.ids_kept_by_source_id as usize >= both);
}

// ---------------------------------------------------------------------------------------------
// the id history

/// `store` -> (opened, closed) since the survey, from `truth-churn.csv`.
pub(crate) fn churn_truth(dir: &Path) -> HashMap<String, (bool, bool)> {
    let mut rd = csv::Reader::from_path(dir.join("sources").join(storemap_ingest::world::CHURN_TRUTH_FILE)).expect("truth-churn.csv");
    rd.records().map(|r| r.expect("a churn row")).map(|r| (r[0].to_string(), (!r[1].is_empty(), !r[2].is_empty()))).collect()
}

/// The true store a row stands for, when all its source ids name one.
pub(crate) fn store_of(aliases: impl Iterator<Item = (SourceType, String)>, truth: &HashMap<String, String>) -> Option<String> {
    let stores: BTreeSet<&String> = aliases.filter_map(|(s, id)| truth.get(&format!("{}:{id}", s.as_str()))).collect();
    (stores.len() == 1).then(|| stores.into_iter().next().unwrap().clone())
}

pub(crate) fn servable(dir: &Path) -> (Snapshot, BTreeSet<u64>) {
    let snap = Snapshot::load(&dir.join(SNAPSHOT_FILE)).expect("snapshot loads");
    let ids = (0..snap.row_count()).filter(|&r| snap.row_is_verified(r)).map(|r| snap.row_id(r)).collect();
    (snap, ids)
}

#[test]
fn the_history_records_each_weeks_openings_and_closures_and_keeps_the_closed_rows() {
    let dir = TempDir::new("history");
    let weeks = [SURVEY + 60 * DAY, SURVEY + 67 * DAY, SURVEY + 74 * DAY];
    let mut truth: HashMap<String, String> = HashMap::new();
    let mut snaps = Vec::new();
    for &t in &weeks {
        let summary = build(dir.path(), t, Vec::new());
        truth.extend(crate::churn::truth(dir.path()));
        let (snap, ids) = servable(dir.path());
        if let Some((_, before)) = snaps.last() {
            let before: &BTreeSet<u64> = before;
            assert_eq!(summary.history.opened as usize, ids.difference(before).count());
            assert_eq!(summary.history.closed as usize, before.difference(&ids).count());
        }
        snaps.push((snap, ids));
    }
    let history = storemap_core::IdHistory::read(&storemap_core::IdHistory::path(dir.path())).expect("history reads");
    assert_eq!(history.entries().len(), 3);
    for (k, (snap, ids)) in snaps.iter().enumerate() {
        assert_eq!(history.set_at(k + 1), ids.iter().copied().collect::<Vec<_>>(), "week {k}: the history's set is what the snapshot served");
        assert_eq!(history.entries()[k].version, snap.meta().snapshot_version);
    }

    // The departed rows: every store served in week 1 or 2 and not in week 3, as last served.
    let departed = Snapshot::load(&dir.path().join("history").join(storemap_core::HISTORY_DEPARTED_FILE)).expect("departed rows load");
    let now = &snaps[2].1;
    let mut want: BTreeSet<u64> = snaps[0].1.union(&snaps[1].1).copied().collect();
    want.retain(|id| !now.contains(id));
    let got: BTreeSet<u64> = (0..departed.row_count()).map(|r| departed.row_id(r)).collect();
    assert_eq!(got, want);
    assert!(!got.is_empty(), "stores closed in two weeks");
    for r in 0..departed.row_count() {
        let id = departed.row_id(r);
        let (last, _) = snaps[..2].iter().rev().find(|(_, ids)| ids.contains(&id)).unwrap();
        let there = (0..last.row_count()).find(|&x| last.row_id(x) == id).unwrap();
        assert_eq!(format!("{:?}", departed.row(r).aliases), format!("{:?}", last.row(there).aliases));
        assert_eq!(departed.row_lat_lng(r), last.row_lat_lng(there));
        assert_eq!(departed.row_last_updated(r), last.row_last_updated(there), "when it was last seen");
        let brand = &departed.brands()[departed.brand_of_row(r as u32) as usize];
        assert_eq!(brand.identity(), last.brands()[last.brand_of_row(there as u32) as usize].identity());
    }

    // Against the generator's truth: what the last week reports opened is a store that opened
    // since the survey, and what it reports closed is a store that closed (either noticed late
    // or early; how late is the report's business).
    let churn = churn_truth(dir.path());
    let (last_snap, last_ids) = &snaps[2];
    let (prev_snap, prev_ids) = &snaps[1];
    let opened: Vec<u64> = last_ids.difference(prev_ids).copied().collect();
    let closed: Vec<u64> = prev_ids.difference(last_ids).copied().collect();
    let real = |snap: &Snapshot, id: u64, closing: bool| {
        let r = (0..snap.row_count()).find(|&x| snap.row_id(x) == id).unwrap();
        let store = store_of(snap.row(r).aliases.into_iter(), &truth);
        store.and_then(|s| churn.get(&s).copied()).is_some_and(|(o, c)| if closing { c } else { o })
    };
    let right_openings = opened.iter().filter(|&&id| real(last_snap, id, false)).count();
    let right_closures = closed.iter().filter(|&&id| real(prev_snap, id, true)).count();
    eprintln!("last week: {} opened ({right_openings} real), {} closed ({right_closures} real)", opened.len(), closed.len());
    assert!(!opened.is_empty() && !closed.is_empty());
    assert!(right_openings as f64 >= 0.95 * opened.len() as f64, "{right_openings} of {} openings are real", opened.len());
    assert!(right_closures as f64 >= 0.95 * closed.len() as f64, "{right_closures} of {} closures are real", closed.len());

    // `data report`'s score of the same week says the same.
    let score = storemap_ingest::feed_score::change_score(dir.path(), last_snap).expect("scores").expect("a refreshed synthetic folder");
    eprintln!("{score:?}");
    assert_eq!((score.since.as_str(), score.until.as_str()), (format_iso(weeks[1]).as_str(), format_iso(weeks[2]).as_str()));
    assert_eq!((score.opened as usize, score.closed as usize), (opened.len(), closed.len()));
    assert!(score.opened_precision >= 0.95 && score.closed_precision >= 0.95, "{score:?}");
    assert!(score.closures_in_window_reported <= score.closures_in_window && score.openings_in_window_reported <= score.openings_in_window);
    // With the sources' lag excluded, every opening and closure of the week is reported.
    assert!(score.openings_in_window_reported as f64 >= 0.95 * score.openings_in_window_served as f64, "{score:?}");
    assert!(score.closures_in_window_reported as f64 >= 0.95 * score.closures_in_window_unserved as f64, "{score:?}");
    assert!(score.closed_still_served > 0, "the slower sources still list closed stores");
}

#[test]
fn after_a_rollback_the_history_goes_back_to_the_snapshot_served_and_carries_on_from_it() {
    let dir = TempDir::new("history-rollback");
    let weeks = [SURVEY + 120 * DAY, SURVEY + 127 * DAY, SURVEY + 134 * DAY];
    build(dir.path(), weeks[0], Vec::new());
    let (first, first_ids) = servable(dir.path());
    build(dir.path(), weeks[1], Vec::new());
    // `storemap data rollback`: the two files swap places by renames.
    let (current, previous) = (dir.path().join(SNAPSHOT_FILE), dir.path().join(storemap_core::PREVIOUS_SNAPSHOT_FILE));
    let swap = dir.path().join("swap.smap");
    std::fs::rename(&current, &swap).unwrap();
    std::fs::rename(&previous, &current).unwrap();
    std::fs::rename(&swap, &previous).unwrap();
    let summary = build(dir.path(), weeks[2], Vec::new());
    let (third, third_ids) = servable(dir.path());

    let history = storemap_core::IdHistory::read(&storemap_core::IdHistory::path(dir.path())).expect("history reads");
    let versions: Vec<&str> = history.entries().iter().map(|e| e.version.as_str()).collect();
    assert_eq!(versions, [first.meta().snapshot_version.as_str(), third.meta().snapshot_version.as_str()], "the rolled-back week is gone, the first kept");
    assert_eq!(history.set_at(1), first_ids.iter().copied().collect::<Vec<_>>());
    assert_eq!(history.set_at(2), third_ids.iter().copied().collect::<Vec<_>>());
    assert_eq!(summary.history.opened as usize, third_ids.difference(&first_ids).count(), "opened against the snapshot served before");
    assert_eq!(summary.history.closed as usize, first_ids.difference(&third_ids).count());
}

#[test]
fn a_build_earlier_than_the_snapshot_served_is_refused_unless_the_history_may_be_rewritten() {
    let dir = TempDir::new("history-earlier");
    let weeks = [SURVEY + 120 * DAY, SURVEY + 127 * DAY, SURVEY + 134 * DAY];
    build(dir.path(), weeks[0], Vec::new());
    build(dir.path(), weeks[2], Vec::new());
    let (ids_path, snapshot) = (storemap_core::IdHistory::path(dir.path()), dir.path().join(SNAPSHOT_FILE));
    let (history_before, snapshot_before) = (std::fs::read(&ids_path).unwrap(), std::fs::read(&snapshot).unwrap());

    let e = pipeline::build_synthetic(&options(dir.path(), weeks[1], Vec::new()), 0.01, 7, &mut Phases::new(false)).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains(&format_iso(weeks[1])) && e.contains(&format_iso(weeks[2])) && e.contains("--rewrite-history"), "{e}");
    assert_eq!(std::fs::read(&ids_path).unwrap(), history_before, "the history is untouched");
    assert_eq!(std::fs::read(&snapshot).unwrap(), snapshot_before, "the snapshot is untouched");
    // The same time again is a rebuild, not a rewrite.
    build(dir.path(), weeks[2], Vec::new());
    // Another world (another seed) starts a history of its own, so there is nothing to lose.
    let mut other = options(dir.path(), weeks[0], Vec::new());
    other.synthetic = Some((0.01, 8));
    pipeline::build_synthetic(&other, 0.01, 8, &mut Phases::new(false)).expect("another world");
    build(dir.path(), weeks[2], Vec::new());

    let mut opts = options(dir.path(), weeks[1], Vec::new());
    opts.rewrite_history = true;
    pipeline::build_synthetic(&opts, 0.01, 7, &mut Phases::new(false)).expect("asked for");
    let history = storemap_core::IdHistory::read(&ids_path).unwrap();
    assert_eq!(history.entries().last().map(|e| e.as_of), Some(weeks[1]), "the later entry dropped, as asked");
}
