//! The change feed's query: which of a brand's stores opened and which closed, under the
//! contract's filters, between the snapshot in force at a past date and the serving one. Read
//! from the data folder's history (`history`): the ids each snapshot served, and the rows of
//! stores no longer served as they were last served.

use std::collections::HashSet;
use std::path::Path;

use crate::error::{CoreError, Result};
use crate::history::{IdHistory, HISTORY_DEPARTED_FILE, HISTORY_DIR};
use crate::query::Filters;
use crate::snapshot::Snapshot;
use crate::time::format_iso;

/// The history as far as the serving snapshot, and the rows of stores it no longer serves.
#[derive(Debug)]
pub struct ChangeFeed {
    history: IdHistory,
    departed: Snapshot,
    /// Ids the serving snapshot serves.
    now: HashSet<u64>,
}

/// One brand's changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// The as-of of the snapshot in force at the requested date, and of the serving one.
    pub since: i64,
    pub until: i64,
    /// Rows of the serving snapshot that the earlier one did not serve, each with the time
    /// since which it has been served without a break.
    pub opened: Vec<(u32, i64)>,
    /// Rows of the departed rows that the earlier one served and the serving one does not,
    /// each with when it was last served.
    pub closed: Vec<(u32, i64)>,
}

impl Changes {
    pub fn count(&self) -> u32 {
        (self.opened.len() + self.closed.len()) as u32
    }
}

impl ChangeFeed {
    /// Reads the history of `data_dir` up to the snapshot `current` (a history a step ahead of
    /// it, after a rollback or a build that failed late, is read up to it). `None` when the
    /// folder has no history, or none that reaches the serving snapshot.
    pub fn load(data_dir: &Path, current: &Snapshot) -> Result<Option<ChangeFeed>> {
        let mut history = IdHistory::read(&IdHistory::path(data_dir))?;
        let version = &current.meta().snapshot_version;
        let Some(n) = history.entries().iter().rposition(|e| &e.version == version) else { return Ok(None) };
        history.truncate(n + 1);
        let departed = Snapshot::load(&data_dir.join(HISTORY_DIR).join(HISTORY_DEPARTED_FILE))?;
        let now = history.set_at(n + 1).into_iter().collect();
        Ok(Some(ChangeFeed { history, departed, now }))
    }

    /// The as-of of the oldest snapshot the history holds: the earliest `since` it answers.
    pub fn reaches_back_to(&self) -> i64 {
        self.history.entries().first().map_or(i64::MAX, |e| e.as_of)
    }

    pub fn departed(&self) -> &Snapshot {
        &self.departed
    }

    /// `brand` (an index of `current`) under `filters`, since `since` (unix seconds). A date
    /// before the history's oldest snapshot is refused, naming it.
    pub fn changes(&self, current: &Snapshot, brand: u32, filters: &Filters, since: i64) -> Result<Changes> {
        current.check_brands(&[brand])?;
        // The feed lists data rows: what a data format would serve then and now.
        let filters = &Filters { verified_only: true, ..filters.clone() };
        let Some(k) = self.history.index_at(since) else {
            return Err(CoreError::InvalidFilter(format!("since: the history begins at {}", format_iso(self.reaches_back_to()))));
        };
        let entries = self.history.entries();
        let until = entries.last().map_or(since, |e| e.as_of);
        let then: HashSet<u64> = self.history.set_at(k + 1).into_iter().collect();

        let rows: Vec<u32> = current.query(brand, filters)?.rows.into_iter().filter(|&r| !then.contains(&current.id[r as usize])).collect();
        let ids: Vec<u64> = rows.iter().map(|&r| current.id[r as usize]).collect();
        let opened = rows.into_iter().zip(self.history.first_seen(&ids)).map(|(r, t)| (r, t.unwrap_or(until))).collect();

        let identity = current.brands[brand as usize].identity();
        let closed = match self.departed.brands.iter().position(|b| b.identity() == identity) {
            Some(b) => {
                let rows: Vec<u32> = self
                    .departed
                    .query(b as u32, filters)?
                    .rows
                    .into_iter()
                    .filter(|&r| {
                        let id = self.departed.id[r as usize];
                        then.contains(&id) && !self.now.contains(&id)
                    })
                    .collect();
                rows.iter().map(|&r| (r, self.departed.last_updated[r as usize])).collect()
            }
            None => Vec::new(),
        };
        Ok(Changes { since: entries[k].as_of, until, opened, closed })
    }
}
