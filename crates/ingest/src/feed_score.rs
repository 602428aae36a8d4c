//! The change feed against the synthetic world's truth: for the last refresh of a data folder
//! (its history's two newest entries), were the stores it reports opened and closed really
//! opened and closed (precision), how many of the window's true openings and closures it
//! reports (recall), and how many closed stores the sources still list (the contract's closure
//! lag). `storemap data report` shows it once a synthetic folder has been refreshed.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Serialize;
use storemap_core::{format_iso, parse_iso, IdHistory, Snapshot, HISTORY_DEPARTED_FILE, HISTORY_DIR};

use crate::error::{IngestError, Result};
use crate::world::CHURN_TRUTH_FILE;

/// The previous synthetic build's `truth.csv`, kept beside the history: the sightings of stores
/// the newest build no longer sees, which its own truth file does not name.
pub const PREVIOUS_TRUTH_FILE: &str = "truth.prev.csv";

#[derive(Debug, Serialize, PartialEq)]
pub struct ChangeScore {
    pub since: String,
    pub until: String,
    /// Stores the refresh reports opened, and how many of them opened since the survey.
    pub opened: u64,
    pub opened_real: u64,
    pub opened_precision: f64,
    /// Stores the refresh reports closed, and how many of them closed.
    pub closed: u64,
    pub closed_real: u64,
    pub closed_precision: f64,
    /// Stores that opened within the window, and how many of them it reports (the rest are
    /// not yet listed by enough sources to be served: detection lag).
    pub openings_in_window: u64,
    pub openings_in_window_reported: u64,
    /// Of those, the ones served at `until`: what the feed could report without the sources'
    /// lag. Its recall with the lag excluded is `openings_in_window_reported` over this.
    pub openings_in_window_served: u64,
    /// Stores served at `since` that closed within the window, and how many it reports.
    pub closures_in_window: u64,
    pub closures_in_window_reported: u64,
    /// Of those, the ones no longer served at `until` (the rest are the closure lag). Its
    /// recall with the lag excluded is `closures_in_window_reported` over this.
    pub closures_in_window_unserved: u64,
    /// The closure lag: stores closed at any time before `until` that are still served then,
    /// and the median days since they closed.
    pub closed_still_served: u64,
    pub closed_still_served_median_days: Option<f64>,
}

/// `source:source_id` -> store, from a `truth.csv`.
fn read_truth(path: &Path, into: &mut HashMap<String, String>) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let name = path.display().to_string();
    let mut rd = csv::Reader::from_path(path).map_err(|e| IngestError::file(&name, e))?;
    for rec in rd.records() {
        let rec = rec.map_err(|e| IngestError::file(&name, e))?;
        into.insert(format!("{}:{}", &rec[0], &rec[1]), rec[2].to_string());
    }
    Ok(())
}

/// The true store a row stands for: the one most of its source ids name.
fn store_of(snap: &Snapshot, r: usize, truth: &HashMap<String, String>) -> Option<String> {
    let mut votes: HashMap<&String, u32> = HashMap::new();
    for (s, id) in snap.row_aliases(r) {
        if let Some(store) = truth.get(&format!("{}:{id}", s.as_str())) {
            *votes.entry(store).or_default() += 1;
        }
    }
    votes.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(s, _)| s.clone())
}

/// Scores the last refresh of `data_dir` (serving `current`). `None` unless the folder holds a
/// synthetic world refreshed at least once.
pub fn change_score(data_dir: &Path, current: &Snapshot) -> Result<Option<ChangeScore>> {
    let sources = data_dir.join("sources");
    let churn_path = sources.join(CHURN_TRUTH_FILE);
    if !current.meta().synthetic || !churn_path.exists() {
        return Ok(None);
    }
    let history = IdHistory::read(&IdHistory::path(data_dir))?;
    let n = match history.entries().iter().rposition(|e| e.version == current.meta().snapshot_version) {
        Some(n) if n >= 1 => n,
        _ => return Ok(None),
    };
    let (since, until) = (history.entries()[n - 1].as_of, history.entries()[n].as_of);
    let then: HashSet<u64> = history.set_at(n).into_iter().collect();
    let now: HashSet<u64> = history.set_at(n + 1).into_iter().collect();
    let departed = Snapshot::load(&data_dir.join(HISTORY_DIR).join(HISTORY_DEPARTED_FILE))?;
    let mut truth = HashMap::new();
    read_truth(&data_dir.join(HISTORY_DIR).join(PREVIOUS_TRUTH_FILE), &mut truth)?;
    read_truth(&sources.join("truth.csv"), &mut truth)?;

    // store -> (opened, closed), unix seconds.
    let name = churn_path.display().to_string();
    let mut churn: HashMap<String, (Option<i64>, Option<i64>)> = HashMap::new();
    let mut rd = csv::Reader::from_path(&churn_path).map_err(|e| IngestError::file(&name, e))?;
    for rec in rd.records() {
        let rec = rec.map_err(|e| IngestError::file(&name, e))?;
        churn.insert(rec[0].to_string(), (parse_iso(&rec[1]), parse_iso(&rec[2])));
    }
    let opened_at = |s: &str| churn.get(s).and_then(|c| c.0);
    let closed_at = |s: &str| churn.get(s).and_then(|c| c.1);
    let within = |t: Option<i64>| t.is_some_and(|t| t > since && t <= until);

    let (mut served_since, mut served_until) = (HashSet::new(), HashSet::new());
    let (mut reported_opened, mut reported_closed) = (HashSet::new(), HashSet::new());
    let (mut opened, mut opened_real, mut closed, mut closed_real) = (0u64, 0u64, 0u64, 0u64);
    for r in (0..current.row_count()).filter(|&r| current.row_is_verified(r)) {
        let id = current.row_id(r);
        let store = store_of(current, r, &truth);
        if let Some(s) = &store {
            served_until.insert(s.clone());
            if then.contains(&id) {
                served_since.insert(s.clone());
            }
        }
        if !then.contains(&id) {
            opened += 1;
            if let Some(s) = store {
                opened_real += u64::from(opened_at(&s).is_some() && closed_at(&s).is_none_or(|c| c > until));
                reported_opened.insert(s);
            }
        }
    }
    for r in 0..departed.row_count() {
        let id = departed.row_id(r);
        if !then.contains(&id) {
            continue;
        }
        let store = store_of(&departed, r, &truth);
        if let Some(s) = &store {
            served_since.insert(s.clone());
        }
        if !now.contains(&id) {
            closed += 1;
            if let Some(s) = store {
                closed_real += u64::from(closed_at(&s).is_some_and(|c| c <= until));
                reported_closed.insert(s);
            }
        }
    }

    let openings: Vec<&String> = churn.iter().filter(|(_, c)| within(c.0)).map(|(s, _)| s).collect();
    let closures: Vec<&String> = churn.iter().filter(|(s, c)| within(c.1) && served_since.contains(*s)).map(|(s, _)| s).collect();
    let mut lag_days: Vec<f64> = churn
        .iter()
        .filter(|(s, c)| c.1.is_some_and(|t| t <= until) && served_until.contains(*s))
        .map(|(_, c)| (until - c.1.unwrap_or(until)) as f64 / storemap_core::DAY_S as f64)
        .collect();
    lag_days.sort_by(f64::total_cmp);
    let ratio = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    Ok(Some(ChangeScore {
        since: format_iso(since),
        until: format_iso(until),
        opened,
        opened_real,
        opened_precision: ratio(opened_real, opened),
        closed,
        closed_real,
        closed_precision: ratio(closed_real, closed),
        openings_in_window: openings.len() as u64,
        openings_in_window_reported: openings.iter().filter(|s| reported_opened.contains(**s)).count() as u64,
        openings_in_window_served: openings.iter().filter(|s| served_until.contains(**s)).count() as u64,
        closures_in_window: closures.len() as u64,
        closures_in_window_reported: closures.iter().filter(|s| reported_closed.contains(**s)).count() as u64,
        closures_in_window_unserved: closures.iter().filter(|s| !served_until.contains(**s)).count() as u64,
        closed_still_served: lag_days.len() as u64,
        closed_still_served_median_days: (!lag_days.is_empty()).then(|| lag_days[lag_days.len() / 2]),
    }))
}
