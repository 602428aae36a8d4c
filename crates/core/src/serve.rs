//! What one request serves: the rows of one or more brands under the contract's filters, cut to
//! a trial key's row limit, priced before any bytes are written, and serialized. The napi
//! binding converts a request into a [`DataQuery`] and an [`Answer`] back; every rule about
//! limits, budgets and sources lives here.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::coverage::Sightings;
use crate::error::{CoreError, Result};
use crate::format::{write_rows, Format, WriteOptions};
use crate::model::SourceMask;
use crate::query::Filters;
use crate::snapshot::Snapshot;

/// Why a request did no work: answered as data, with the count that was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// More rows than the caller's balance pays for.
    Credits,
    /// The request's time ran out.
    Deadline,
}

/// What a request may spend: rows (the caller turns its balance into rows; no rule about
/// credits lives here) and time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// When more rows than this would be served, nothing is serialized or drawn.
    pub max_rows: Option<u32>,
    /// Past this instant work is abandoned at its next step, and work that starts late never
    /// starts.
    pub deadline: Option<Instant>,
}

impl Budget {
    pub fn passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// `count` rows cost more than the caller can pay (no rows cost nothing).
    pub fn cannot_pay(&self, count: u32) -> bool {
        count > 0 && self.max_rows.is_some_and(|m| count > m)
    }

    /// The refusal `count` served rows meet, the price first.
    pub fn refusal(&self, count: u32) -> Option<Refusal> {
        if self.cannot_pay(count) {
            Some(Refusal::Credits)
        } else if self.passed() {
            Some(Refusal::Deadline)
        } else {
            None
        }
    }
}

/// The rows a request serves, per brand in request order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Served {
    /// Each brand's served rows, in snapshot order (and in the order of the filter sets).
    pub by_brand: Vec<Vec<u32>>,
    /// Rows that matched before the limit.
    pub total: u32,
    /// Sources of the rows actually served (a trial key's header names only those).
    pub sources: SourceMask,
    /// Every storefront within the filters, served or not, by the sources that saw it.
    pub sightings: Sightings,
    /// With `open_at`: rows left out because their hours are unknown.
    pub hours_unknown: u32,
}

impl Served {
    pub fn count(&self) -> u32 {
        self.by_brand.iter().map(|r| r.len() as u32).sum()
    }

    pub fn rows(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_brand.iter().flatten().copied()
    }

    /// `coverage_confidence`: the estimated share of the brands' storefronts within the
    /// filters that the served rows are; `None` where it cannot be estimated.
    pub fn coverage(&self) -> Option<f64> {
        self.sightings.coverage(self.count())
    }
}

/// A data request: brands, filters, the format and what the caller may spend.
#[derive(Debug, Clone)]
pub struct DataQuery {
    /// Brand indices (several for a multi-ticker request).
    pub brands: Vec<u32>,
    pub filters: Filters,
    pub format: Format,
    pub provenance: bool,
    /// CSV: the opening_hours column.
    pub hours_column: bool,
    /// The envelope's `brand`; the brand names joined when not given.
    pub brand_label: Option<String>,
    /// Cut the result to this many rows (trial keys); `total` still counts them all.
    pub limit: Option<u32>,
    pub budget: Budget,
}

/// A data request's answer: the body, or why there is none.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Empty when refused.
    pub body: Vec<u8>,
    /// Rows in the body, or that would have been served when refused.
    pub count: u32,
    pub total: u32,
    pub sources: SourceMask,
    /// The filter as text.
    pub region: String,
    /// `coverage_confidence` (see `Served::coverage`).
    pub coverage: Option<f64>,
    pub refused: Option<Refusal>,
    /// With `open_at`: stores within the other filters left out because their hours are
    /// unknown.
    pub hours_unknown: Option<u32>,
}

impl Answer {
    pub fn refused(why: Refusal, count: u32, total: u32, region: String) -> Answer {
        Answer { count, total, region, refused: Some(why), ..Answer::default() }
    }
}

/// `take` of `rows`, spread evenly over them: a brand's rows are in latitude order, so a trial
/// key's first 50 would all be its southernmost stores (Florida and Texas on a US map). Every
/// (len / take)-th row keeps the cap's sample the shape of the whole, and the same on every
/// request.
fn spread(rows: Vec<u32>, take: usize) -> Vec<u32> {
    if take >= rows.len() {
        return rows;
    }
    (0..take).map(|i| rows[i * rows.len() / take]).collect()
}

impl Snapshot {
    /// The request's brands checked against the snapshot.
    pub fn check_brands(&self, brands: &[u32]) -> Result<()> {
        if brands.is_empty() || brands.iter().any(|&b| b as usize >= self.brands.len()) {
            return Err(CoreError::InvalidFilter("brands must name brands of this snapshot".into()));
        }
        Ok(())
    }

    /// The rows `brands` serve under `filters` (one filter set, or several whose matches add
    /// up: a country and its territories), at most `limit` of them: each brand in turn takes
    /// what is left of it, spread over its rows.
    pub fn serve(&self, brands: &[u32], filters: &[Filters], limit: Option<u32>) -> Result<Served> {
        self.check_brands(brands)?;
        let mut left = limit.unwrap_or(u32::MAX);
        let mut served = Served::default();
        for &b in brands {
            let mut found = Vec::new();
            for f in filters {
                let q = self.query(b, f)?;
                served.sightings.absorb(&q.sightings);
                served.hours_unknown += q.hours_unknown;
                found.extend(q.rows);
            }
            served.total += found.len() as u32;
            let take = (found.len() as u32).min(left);
            left -= take;
            let found = spread(found, take as usize);
            for &r in &found {
                served.sources.0 |= self.sources[r as usize];
            }
            served.by_brand.push(found);
        }
        Ok(served)
    }

    /// Answers a data request: the price and the deadline are checked before a byte is
    /// written.
    pub fn answer(&self, q: &DataQuery) -> Result<Answer> {
        let region = q.filters.region_text();
        self.check_brands(&q.brands)?;
        if q.budget.passed() {
            return Ok(Answer::refused(Refusal::Deadline, 0, 0, region));
        }
        let served = self.serve(&q.brands, std::slice::from_ref(&q.filters), q.limit)?;
        let count = served.count();
        if let Some(why) = q.budget.refusal(count) {
            return Ok(Answer::refused(why, count, served.total, region));
        }
        let label = q.brand_label.clone().unwrap_or_else(|| q.brands.iter().map(|&b| self.brands[b as usize].name.as_str()).collect::<Vec<_>>().join(", "));
        let rows: Vec<u32> = served.rows().collect();
        let coverage = served.coverage();
        let hours_unknown = q.filters.open_at.map(|_| served.hours_unknown);
        let opts = WriteOptions {
            provenance: q.provenance,
            brand_label: label,
            region: region.clone(),
            coverage,
            open_at: q.filters.open_at,
            hours_unknown,
            hours_column: q.hours_column,
        };
        let body = write_rows(self, &rows, q.format, &opts);
        Ok(Answer { body, count, total: served.total, sources: served.sources, region, coverage, refused: None, hours_unknown })
    }

    /// A brand's rows the data formats serve, by country: most first, ties by code. `None` for
    /// an index the snapshot does not have.
    pub fn country_counts(&self, brand: u32) -> Option<Vec<(String, u32)>> {
        let b = self.brands.get(brand as usize)?;
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for r in b.row_start as usize..b.row_end as usize {
            if self.row_is_verified(r) {
                *counts.entry(self.row_country(r)).or_default() += 1;
            }
        }
        let mut out: Vec<(String, u32)> = counts.into_iter().map(|(c, n)| (c.to_string(), n)).collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(out)
    }

    /// The country most of `rows` are in; ties go to the alphabetically first code, so the
    /// choice is stable. `None` without rows.
    pub fn majority_country(&self, rows: impl IntoIterator<Item = u32>) -> Option<String> {
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for r in rows {
            *counts.entry(self.row_country(r as usize)).or_default() += 1;
        }
        counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0))).map(|(c, _)| c.to_string())
    }
}
