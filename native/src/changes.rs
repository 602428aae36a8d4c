//! The change feed: which of a brand's stores opened and closed since a date, under the
//! location filters, priced and timed like a data query (`changes` on the libuv pool,
//! `changesSync` on the calling thread).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use std::sync::Arc;
use storemap_core::{format_iso, ChangeAnswer, ChangeFeed, ChangeQuery, Snapshot};

use crate::error::{guarded, run, settle, Code, Failure, NativeCode, Outcome};
use crate::query::{budget, source_names, DataFormat, LocationFilters, Refusal, StorefrontKind};
use crate::store::{Feed, Store};

/// A change-feed request: one brand (by index), the date, the location filters, the format.
#[napi(object)]
#[derive(Clone, Default)]
pub struct ChangesRequest {
    pub brand: u32,
    /// Unix seconds: the snapshot in force then is compared with the serving one.
    pub since: i64,
    pub country: Option<String>,
    pub state: Option<String>,
    pub city: Option<String>,
    pub postcode: Option<String>,
    pub radius_km: Option<f64>,
    pub storefront_type: Option<StorefrontKind>,
    pub format: DataFormat,
    pub include_provenance: Option<bool>,
    /// CSV: adds opening_hours after the contract's eleven columns.
    pub include_hours: Option<bool>,
    /// The document's `brand`; defaults to the brand's name.
    pub brand_label: Option<String>,
    /// As in `QueryRequest`: more opened plus closed rows than this, and nothing is written.
    pub max_rows: Option<u32>,
    /// As in `QueryRequest`.
    pub time_budget_ms: Option<u32>,
}

impl From<ChangesRequest> for ChangeQuery {
    fn from(r: ChangesRequest) -> ChangeQuery {
        let filters = LocationFilters {
            country: &r.country,
            state: &r.state,
            city: &r.city,
            postcode: &r.postcode,
            radius_km: r.radius_km,
            storefront_type: r.storefront_type,
        };
        ChangeQuery {
            brand: r.brand,
            // The feed lists data rows whatever is asked.
            filters: filters.to_filters(true),
            since: r.since,
            format: r.format.into(),
            provenance: r.include_provenance.unwrap_or(false),
            hours_column: r.include_hours.unwrap_or(false),
            budget: budget(r.max_rows, r.time_budget_ms),
            brand_label: r.brand_label,
        }
    }
}

#[napi(object)]
pub struct ChangesResponse {
    /// The serialized document, ready to send; empty when refused.
    pub body: Buffer,
    /// Opened plus closed rows (what the price is reckoned on).
    pub count: u32,
    pub opened: u32,
    pub closed: u32,
    /// The as-of of the snapshot in force at the requested date, and of the serving one (ISO
    /// 8601); absent when refused before the history was read.
    pub since: Option<String>,
    pub until: Option<String>,
    /// Sources of the listed rows, alphabetical.
    pub sources: Vec<String>,
    /// The filter as text.
    pub region: String,
    pub refused: Option<Refusal>,
}

impl From<ChangeAnswer> for ChangesResponse {
    fn from(a: ChangeAnswer) -> ChangesResponse {
        ChangesResponse {
            since: a.span.map(|(s, _)| format_iso(s)),
            until: a.span.map(|(_, u)| format_iso(u)),
            body: a.answer.body.into(),
            count: a.answer.count,
            opened: a.opened,
            closed: a.closed,
            sources: source_names(a.answer.sources),
            region: a.answer.region,
            refused: a.answer.refused.map(Into::into),
        }
    }
}

/// The feed, or the failure a request for it meets: a data folder without a history (built
/// before histories were kept, or by hand) is `NOT_IMPLEMENTED` on this server, an unreadable
/// one `INTERNAL` with its cause.
pub(crate) fn ready(feed: &Feed) -> Outcome<&ChangeFeed> {
    match feed {
        Feed::Ready(f) => Ok(f),
        Feed::Absent => Err(Failure::new(
            NativeCode::NotImplemented,
            "this server's data folder has no change history: the next `storemap data build` or `data refresh` starts one",
        )),
        Feed::Unreadable(why) => Err(Failure::new(NativeCode::Internal, format!("the change history cannot be read: {why}"))),
    }
}

fn answer(snap: &Snapshot, feed: &Feed, q: &ChangeQuery) -> Outcome<ChangeAnswer> {
    Ok(ready(feed)?.answer(snap, q)?)
}

pub struct ChangesTask {
    snap: Arc<Snapshot>,
    feed: Arc<Feed>,
    query: ChangeQuery,
}

impl Task for ChangesTask {
    type Output = Outcome<ChangeAnswer>;
    type JsValue = ChangesResponse;
    fn compute(&mut self) -> napi::Result<Outcome<ChangeAnswer>> {
        Ok(guarded(|| answer(&self.snap, &self.feed, &self.query)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<ChangeAnswer>) -> napi::Result<ChangesResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Store {
    /// A brand's stores opened and closed since a date, on the libuv pool.
    #[napi(ts_return_type = "Promise<ChangesResponse>")]
    pub fn changes(&self, req: ChangesRequest) -> AsyncTask<ChangesTask> {
        AsyncTask::new(ChangesTask { snap: self.inner.clone(), feed: self.feed.clone(), query: req.into() })
    }

    #[napi]
    pub fn changes_sync(&self, req: ChangesRequest) -> Result<ChangesResponse, Code> {
        let query: ChangeQuery = req.into();
        run(|| answer(&self.inner, &self.feed, &query)).map(Into::into)
    }
}
