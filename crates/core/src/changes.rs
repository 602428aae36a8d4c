//! The change feed's query: which of a brand's stores opened and which closed, under the
//! contract's filters, between the snapshot in force at a past date and the serving one. Read
//! from the data folder's history (`history`): the ids each snapshot served, and the rows of
//! stores no longer served as they were last served.

use std::path::Path;

use crate::error::{CoreError, Result};
use crate::history::{IdHistory, HISTORY_DEPARTED_FILE, HISTORY_DIR};
use crate::query::Filters;
use crate::snapshot::Snapshot;
use crate::time::format_iso;

/// The history as far as the serving snapshot, and the rows of stores it no longer serves.
#[derive(Debug)]
pub struct ChangeFeed {
    pub(crate) history: IdHistory,
    pub(crate) departed: Snapshot,
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
        Ok(Some(ChangeFeed { history, departed }))
    }

    /// The as-of of the oldest snapshot the history holds: the earliest `since` it answers.
    pub fn reaches_back_to(&self) -> i64 {
        self.history.entries().first().map_or(i64::MAX, |e| e.as_of)
    }

    /// The as-of of the oldest snapshot the history holds and of the serving one.
    pub(crate) fn reach(&self) -> (i64, i64) {
        let e = self.history.entries();
        (e.first().map_or(0, |e| e.as_of), e.last().map_or(0, |e| e.as_of))
    }

    /// The departed rows of `current`'s brand `brand` under `filters` (the departed file numbers
    /// brands its own way: matched by identity).
    pub(crate) fn departed_rows(&self, current: &Snapshot, brand: u32, filters: &Filters) -> Result<Vec<u32>> {
        let identity = current.brands[brand as usize].identity();
        match self.departed.brands.iter().position(|b| b.identity() == identity) {
            Some(b) => Ok(self.departed.query(b as u32, filters)?.rows),
            None => Ok(Vec::new()),
        }
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
            return Err(CoreError::SinceBeforeHistory(format_iso(self.reaches_back_to())));
        };
        let entries = self.history.entries();
        let until = entries.last().map_or(since, |e| e.as_of);
        // Whether the snapshot in force at `since` served an id: read from the differences after
        // it, per id, so a request costs its brand's rows and not a rebuild of a past id set.
        let served_then = |id: u64, served_now: bool| self.history.first_change_after(k, id).map_or(served_now, |added| !added);

        let opened = current
            .query(brand, filters)?
            .rows
            .into_iter()
            .filter(|&r| !served_then(current.id[r as usize], true))
            .map(|r| (r, self.history.first_seen(current.id[r as usize]).unwrap_or(until)))
            .collect();

        let closed = self
            .departed_rows(current, brand, filters)?
            .into_iter()
            .filter(|&r| {
                let id = self.departed.id[r as usize];
                // A departed row can be served again (a reopening the departed file has not
                // caught up with, after a rollback): then it did not close.
                let served_now = self.history.first_seen(id).is_some();
                !served_now && served_then(id, served_now)
            })
            .map(|r| (r, self.departed.last_updated[r as usize]))
            .collect();
        Ok(Changes { since: entries[k].as_of, until, opened, closed })
    }
}
