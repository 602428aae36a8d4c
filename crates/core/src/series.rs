//! Store counts over time: how many of a brand's stores each calendar month or quarter ended
//! with, and how many opened and closed within it, read from the change feed's id history (the
//! ids each kept snapshot served) and the rows of the serving and departed snapshots (which
//! say which ids are the brand's, in the region asked).
//!
//! A period's count is what the snapshot in force at its end served; its openings and closings
//! are the ids the snapshots dated within it added and removed. The oldest snapshot kept is the
//! history's base, not a day of openings: its own period counts only the changes after it.

use crate::changes::ChangeFeed;
use crate::error::{CoreError, Result};
use crate::query::Filters;
use crate::serve::{Budget, Refusal};
use crate::snapshot::Snapshot;
use crate::time::{civil_from_days, days_from_civil, format_iso, DAY_S};

/// The most periods one answer holds: a century of months.
pub const MAX_PERIODS: i64 = 1_200;

/// The calendar step of a series (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Month,
    Quarter,
}

/// One calendar period, `[start, end)` in unix seconds, and its label (`2026-07`, `2026-Q3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub label: String,
    pub start: i64,
    pub end: i64,
}

impl Interval {
    fn months(self) -> i64 {
        match self {
            Interval::Month => 1,
            Interval::Quarter => 3,
        }
    }

    /// The period numbered `n` since 1970 (month or quarter 0 begins 1970-01-01).
    fn nth(self, n: i64) -> Period {
        let first_month = |n: i64| {
            let m = n * self.months();
            (m.div_euclid(12), m.rem_euclid(12) + 1)
        };
        let (y, m) = first_month(n);
        let (ny, nm) = first_month(n + 1);
        let label = match self {
            Interval::Month => format!("{y:04}-{m:02}"),
            Interval::Quarter => format!("{y:04}-Q{}", (m - 1) / 3 + 1),
        };
        Period { label, start: days_from_civil(y, m, 1) * DAY_S, end: days_from_civil(ny, nm, 1) * DAY_S }
    }

    /// The number of the period holding `t`.
    fn number_of(self, t: i64) -> i64 {
        let (y, m, _) = civil_from_days(t.div_euclid(DAY_S));
        (y * 12 + m - 1).div_euclid(self.months())
    }

    /// The period holding `t` (unix seconds).
    pub fn period_of(self, t: i64) -> Period {
        self.nth(self.number_of(t))
    }
}

/// One period's counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeriodCount {
    pub period: Period,
    /// Stores served by the snapshot in force at the period's end (for the period still
    /// running: the serving one).
    pub stores: u32,
    /// Stores the snapshots dated within the period added and removed.
    pub opened: u32,
    pub closed: u32,
}

/// A series request: one brand (an index of the serving snapshot), location filters (data rows
/// only), the step and the range (instants within the first and the last period; the
/// history's whole reach when not given).
#[derive(Debug, Clone)]
pub struct SeriesQuery {
    pub brand: u32,
    pub filters: Filters,
    pub interval: Interval,
    pub from: Option<i64>,
    pub to: Option<i64>,
    /// Priced like a data request of as many rows as periods.
    pub budget: Budget,
}

/// A series request's answer: the periods, oldest first, or why there are none.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// The as-of of the oldest snapshot the history holds and of the serving one.
    pub begins: i64,
    pub until: i64,
    pub points: Vec<PeriodCount>,
    /// Periods answered, or that would have been when refused.
    pub count: u32,
    pub region: String,
    pub refused: Option<Refusal>,
}

/// Calls `hit(i)` for every `i` with `ids[i]` in `list` (both ascending), searching the
/// longer one for each of the shorter's: the base entry lists every id served, a later one a
/// few.
fn each_common(ids: &[u64], list: &[u64], mut hit: impl FnMut(usize)) {
    if list.len() > ids.len() {
        for (i, id) in ids.iter().enumerate() {
            if list.binary_search(id).is_ok() {
                hit(i);
            }
        }
    } else {
        for id in list {
            if let Ok(i) = ids.binary_search(id) {
                hit(i);
            }
        }
    }
}

/// What one snapshot of the history did to the brand's stores in the region.
struct Step {
    as_of: i64,
    opened: u32,
    closed: u32,
    /// Stores served from it on.
    stores: u32,
}

impl ChangeFeed {
    /// The periods `q` asks for, checked against the history's reach: `from` no earlier than
    /// the period of its oldest snapshot, `to` no later than the serving one's.
    fn periods(&self, q: &SeriesQuery) -> Result<Vec<Period>> {
        let (begins, until) = self.reach();
        let (first, last) = (q.interval.number_of(begins), q.interval.number_of(until));
        let from = q.from.map_or(first, |t| q.interval.number_of(t));
        let to = q.to.map_or(last, |t| q.interval.number_of(t));
        let begins_at = || format!("the history begins at {} (period {})", format_iso(begins), q.interval.nth(first).label);
        let ends_at = || format!("the history ends at {} (period {})", format_iso(until), q.interval.nth(last).label);
        // Each bound against the reach first, so that the field named is one the caller gave.
        if from < first {
            return Err(CoreError::FromOutOfRange(begins_at()));
        }
        if from > last {
            return Err(CoreError::FromOutOfRange(ends_at()));
        }
        if to > last {
            return Err(CoreError::ToOutOfRange(ends_at()));
        }
        if to < first {
            return Err(CoreError::ToOutOfRange(begins_at()));
        }
        if from > to {
            return Err(CoreError::FromOutOfRange(format!("period {} is after to's period {}", q.interval.nth(from).label, q.interval.nth(to).label)));
        }
        // A history's reach is what its snapshots' dates say; a damaged date must not make a
        // request build millions of periods.
        if to - from >= MAX_PERIODS {
            return Err(CoreError::FromOutOfRange(format!("at most {MAX_PERIODS} periods: give a later from")));
        }
        Ok((from..=to).map(|n| q.interval.nth(n)).collect())
    }

    /// The brand's stores in the region snapshot by snapshot: the ids of its rows served now
    /// and of its departed rows are every id of it the kept snapshots served (a store that left
    /// within the history's reach is a departed row), so walking the differences over those
    /// ids alone counts it without rebuilding a past snapshot's whole set.
    fn steps(&self, current: &Snapshot, brand: u32, filters: &Filters) -> Result<Vec<Step>> {
        let filters = &Filters { verified_only: true, ..filters.clone() };
        let mut ids: Vec<u64> = current.query(brand, filters)?.rows.iter().map(|&r| current.id[r as usize]).collect();
        ids.extend(self.departed_rows(current, brand, filters)?.iter().map(|&r| self.departed.id[r as usize]));
        ids.sort_unstable();
        ids.dedup();
        let mut served = vec![false; ids.len()];
        let mut stores = 0u32;
        let mut steps = Vec::with_capacity(self.history.entries().len());
        for (k, e) in self.history.entries().iter().enumerate() {
            let (mut opened, mut closed) = (0, 0);
            each_common(&ids, &e.added, |i| {
                if !served[i] {
                    served[i] = true;
                    stores += 1;
                    // The oldest entry's ids are the base the history starts from.
                    opened += u32::from(k > 0);
                }
            });
            each_common(&ids, &e.removed, |i| {
                if served[i] {
                    served[i] = false;
                    stores -= 1;
                    closed += 1;
                }
            });
            steps.push(Step { as_of: e.as_of, opened, closed, stores });
        }
        Ok(steps)
    }

    /// Answers a series request: the range checked, then priced and timed like a data request
    /// of as many rows as periods, before the history is walked.
    pub fn series(&self, current: &Snapshot, q: &SeriesQuery) -> Result<Series> {
        current.check_brands(&[q.brand])?;
        let region = q.filters.region_text();
        let (begins, until) = self.reach();
        let periods = self.periods(q)?;
        let count = periods.len() as u32;
        let refused = |why| Ok(Series { begins, until, count, region: region.clone(), refused: Some(why), ..Series::default() });
        if let Some(why) = q.budget.refusal(count) {
            return refused(why);
        }
        let steps = self.steps(current, q.brand, &q.filters)?;
        if q.budget.passed() {
            return refused(Refusal::Deadline);
        }
        Ok(Series { begins, until, points: counts(periods, &steps), count, region, refused: None })
    }
}

/// Each period's counts from the steps (oldest first): the stores after the last step dated
/// before its end, and the changes of the steps dated within it (`[start, end)`: a snapshot as
/// of a period's first instant is that period's). */
fn counts(periods: Vec<Period>, steps: &[Step]) -> Vec<PeriodCount> {
    periods
        .into_iter()
        .map(|period| {
            let within = steps.iter().filter(|s| s.as_of >= period.start && s.as_of < period.end);
            let (opened, closed) = within.fold((0, 0), |(o, c), s| (o + s.opened, c + s.closed));
            let stores = steps.iter().rev().find(|s| s.as_of < period.end).map_or(0, |s| s.stores);
            PeriodCount { period, stores, opened, closed }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_iso;

    fn at(s: &str) -> i64 {
        parse_iso(s).unwrap()
    }

    #[test]
    fn periods_are_calendar_months_and_quarters_in_utc() {
        let p = Interval::Quarter.period_of(at("2026-08-15T12:00:00Z"));
        assert_eq!((p.label.as_str(), p.start, p.end), ("2026-Q3", at("2026-07-01"), at("2026-10-01")));
        let p = Interval::Quarter.period_of(at("2026-12-31T23:59:59Z"));
        assert_eq!((p.label.as_str(), p.start, p.end), ("2026-Q4", at("2026-10-01"), at("2027-01-01")));
        let p = Interval::Month.period_of(at("2024-02-29T23:59:59Z"));
        assert_eq!((p.label.as_str(), p.start, p.end), ("2024-02", at("2024-02-01"), at("2024-03-01")));
        let p = Interval::Month.period_of(at("2026-12-01"));
        assert_eq!((p.label.as_str(), p.end), ("2026-12", at("2027-01-01")));
        let p = Interval::Month.period_of(-1);
        assert_eq!((p.label.as_str(), p.start, p.end), ("1969-12", at("1969-12-01"), 0));
        // Consecutive periods tile the calendar.
        for n in -30..30 {
            assert_eq!(Interval::Month.nth(n).end, Interval::Month.nth(n + 1).start);
            assert_eq!(Interval::Quarter.nth(n).end, Interval::Quarter.nth(n + 1).start);
        }
    }

    #[test]
    fn a_snapshot_dated_at_a_period_start_counts_in_that_period_and_not_the_one_before() {
        // Snapshots on 2026-11-15 (the base: 10 stores), exactly at 2027-01-01 (+3, -1: 12) and
        // on 2027-02-10 (+1: 13). Expected by hand, quarter by quarter.
        let steps = [
            Step { as_of: at("2026-11-15"), opened: 0, closed: 0, stores: 10 },
            Step { as_of: at("2027-01-01"), opened: 3, closed: 1, stores: 12 },
            Step { as_of: at("2027-02-10"), opened: 1, closed: 0, stores: 13 },
        ];
        let periods = (Interval::Quarter.number_of(steps[0].as_of)..=Interval::Quarter.number_of(steps[2].as_of)).map(|n| Interval::Quarter.nth(n)).collect();
        let got: Vec<(String, u32, u32, u32)> = counts(periods, &steps).into_iter().map(|p| (p.period.label, p.stores, p.opened, p.closed)).collect();
        assert_eq!(got, vec![("2026-Q4".to_string(), 10, 0, 0), ("2027-Q1".to_string(), 13, 4, 1)]);
        // By month, a month with no snapshot keeps the count before it.
        let periods = (Interval::Month.number_of(at("2026-11-01"))..=Interval::Month.number_of(at("2027-03-01"))).map(|n| Interval::Month.nth(n)).collect();
        let got: Vec<(String, u32, u32, u32)> = counts(periods, &steps).into_iter().map(|p| (p.period.label, p.stores, p.opened, p.closed)).collect();
        let want = [("2026-11", 10, 0, 0), ("2026-12", 10, 0, 0), ("2027-01", 12, 3, 1), ("2027-02", 13, 1, 0), ("2027-03", 13, 0, 0)];
        assert_eq!(got, want.iter().map(|&(l, s, o, c)| (l.to_string(), s, o, c)).collect::<Vec<_>>());
    }
}
