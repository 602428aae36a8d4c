//! Store counts over time: a brand's stores at each month's or quarter's end and its openings
//! and closings within it, from the change feed's history, priced and timed like a data query
//! (`history` on the libuv pool, `historySync` on the calling thread).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::sync::Arc;
use storemap_core::{format_iso, Interval, Series, SeriesQuery, Snapshot};

use crate::changes::ready;
use crate::error::{guarded, run, settle, Code, Outcome};
use crate::query::{budget, LocationFilters, Refusal, StorefrontKind};
use crate::store::{Feed, Store};

/// The calendar step of a series (UTC).
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HistoryInterval {
    Month,
    #[default]
    Quarter,
}

impl From<HistoryInterval> for Interval {
    fn from(i: HistoryInterval) -> Interval {
        match i {
            HistoryInterval::Month => Interval::Month,
            HistoryInterval::Quarter => Interval::Quarter,
        }
    }
}

/// A history request: one brand (by index), the location filters, the step and the range.
#[napi(object)]
#[derive(Clone, Default)]
pub struct HistoryRequest {
    pub brand: u32,
    pub interval: HistoryInterval,
    /// Unix seconds within the first and the last period; the history's whole reach when
    /// absent.
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub country: Option<String>,
    pub state: Option<String>,
    pub city: Option<String>,
    pub postcode: Option<String>,
    pub radius_km: Option<f64>,
    pub storefront_type: Option<StorefrontKind>,
    /// As in `QueryRequest`, counted in periods.
    pub max_rows: Option<u32>,
    pub time_budget_ms: Option<u32>,
}

impl From<HistoryRequest> for SeriesQuery {
    fn from(r: HistoryRequest) -> SeriesQuery {
        let filters = LocationFilters {
            country: &r.country,
            state: &r.state,
            city: &r.city,
            postcode: &r.postcode,
            radius_km: r.radius_km,
            storefront_type: r.storefront_type,
        };
        SeriesQuery {
            brand: r.brand,
            filters: filters.to_filters(true),
            interval: r.interval.into(),
            from: r.from,
            to: r.to,
            budget: budget(r.max_rows, r.time_budget_ms),
        }
    }
}

/// One period: its label (`2026-07`, `2026-Q3`), its bounds (ISO 8601, the end exclusive),
/// the stores served at its end, and the openings and closings within it.
#[napi(object)]
pub struct HistoryPeriod {
    pub period: String,
    pub start: String,
    pub end: String,
    pub stores: u32,
    pub opened: u32,
    pub closed: u32,
}

#[napi(object)]
pub struct HistoryResponse {
    /// The periods, oldest first; empty when refused.
    pub series: Vec<HistoryPeriod>,
    /// Periods answered, or that would have been (what the price is reckoned on).
    pub count: u32,
    /// The as-of of the oldest snapshot the history keeps and of the serving one (ISO 8601).
    pub begins: String,
    pub until: String,
    /// The filter as text.
    pub region: String,
    pub refused: Option<Refusal>,
}

impl From<Series> for HistoryResponse {
    fn from(s: Series) -> HistoryResponse {
        HistoryResponse {
            series: s
                .points
                .into_iter()
                .map(|p| HistoryPeriod {
                    period: p.period.label,
                    start: format_iso(p.period.start),
                    end: format_iso(p.period.end),
                    stores: p.stores,
                    opened: p.opened,
                    closed: p.closed,
                })
                .collect(),
            count: s.count,
            begins: format_iso(s.begins),
            until: format_iso(s.until),
            region: s.region,
            refused: s.refused.map(Into::into),
        }
    }
}

fn answer(snap: &Snapshot, feed: &Feed, q: &SeriesQuery) -> Outcome<Series> {
    Ok(ready(feed)?.series(snap, q)?)
}

pub struct HistoryTask {
    snap: Arc<Snapshot>,
    feed: Arc<Feed>,
    query: SeriesQuery,
}

impl Task for HistoryTask {
    type Output = Outcome<Series>;
    type JsValue = HistoryResponse;
    fn compute(&mut self) -> napi::Result<Outcome<Series>> {
        Ok(guarded(|| answer(&self.snap, &self.feed, &self.query)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<Series>) -> napi::Result<HistoryResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Store {
    /// A brand's store counts by month or quarter, on the libuv pool.
    #[napi(ts_return_type = "Promise<HistoryResponse>")]
    pub fn history(&self, req: HistoryRequest) -> AsyncTask<HistoryTask> {
        AsyncTask::new(HistoryTask { snap: self.inner.clone(), feed: self.feed.clone(), query: req.into() })
    }

    #[napi]
    pub fn history_sync(&self, req: HistoryRequest) -> Result<HistoryResponse, Code> {
        let query: SeriesQuery = req.into();
        run(|| answer(&self.inner, &self.feed, &query)).map(Into::into)
    }
}
