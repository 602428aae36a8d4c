//! One change-feed request, answered: the feed's changes priced and timed like a data request
//! (`serve.rs`), then written. Its own module so that the feed's query (`changes.rs`) and its
//! documents (`format/changes.rs`) need not know about each other.

use crate::changes::ChangeFeed;
use crate::error::Result;
use crate::format::{write_changes, Format, WriteOptions};
use crate::model::SourceMask;
use crate::query::Filters;
use crate::serve::{Answer, Budget, Refusal};
use crate::snapshot::Snapshot;

/// A change-feed request: one brand, the contract's filters, the date, the format and what the
/// caller may spend (priced like a data request of as many rows as opened and closed).
#[derive(Debug, Clone)]
pub struct ChangeQuery {
    pub brand: u32,
    pub filters: Filters,
    /// Unix seconds: the snapshot in force then is compared with the serving one.
    pub since: i64,
    pub format: Format,
    pub provenance: bool,
    /// CSV: the opening_hours column.
    pub hours_column: bool,
    /// The document's `brand`; the brand's name when not given.
    pub brand_label: Option<String>,
    pub budget: Budget,
}

/// A change-feed request's answer: the body (or why there is none) and its dates and counts.
#[derive(Debug, Clone, Default)]
pub struct ChangeAnswer {
    /// `count` is opened plus closed rows; `sources` those of the listed rows.
    pub answer: Answer,
    /// The as-of of the snapshot in force at the requested date and of the serving one; `None`
    /// when the deadline passed before the history was read.
    pub span: Option<(i64, i64)>,
    pub opened: u32,
    pub closed: u32,
}

impl ChangeFeed {
    /// Answers a change-feed request: priced and timed like `Snapshot::answer`, before a byte
    /// is written.
    pub fn answer(&self, current: &Snapshot, q: &ChangeQuery) -> Result<ChangeAnswer> {
        let region = q.filters.region_text();
        current.check_brands(&[q.brand])?;
        if q.budget.passed() {
            return Ok(ChangeAnswer { answer: Answer::refused(Refusal::Deadline, 0, 0, region), ..ChangeAnswer::default() });
        }
        let changes = self.changes(current, q.brand, &q.filters, q.since)?;
        let count = changes.count();
        let (span, opened, closed) = (Some((changes.since, changes.until)), changes.opened.len() as u32, changes.closed.len() as u32);
        if let Some(why) = q.budget.refusal(count) {
            return Ok(ChangeAnswer { answer: Answer::refused(why, count, count, region), span, opened, closed });
        }
        let mut sources = SourceMask::default();
        for &(r, _) in &changes.opened {
            sources.0 |= current.sources[r as usize];
        }
        for &(r, _) in &changes.closed {
            sources.0 |= self.departed().sources[r as usize];
        }
        let label = q.brand_label.clone().unwrap_or_else(|| current.brands[q.brand as usize].name.clone());
        let opts = WriteOptions {
            provenance: q.provenance,
            brand_label: label,
            region: region.clone(),
            coverage: None,
            hours_column: q.hours_column,
            ..WriteOptions::default()
        };
        let body = write_changes(current, self.departed(), &changes, q.format, &opts);
        Ok(ChangeAnswer {
            answer: Answer { body, count, total: count, sources, region, coverage: None, refused: None, hours_unknown: None },
            span,
            opened,
            closed,
        })
    }
}
