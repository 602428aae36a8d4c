//! Data queries: the request as JavaScript sends it, converted into the core's
//! [`DataQuery`], answered on the libuv pool (`query`) or the calling thread (`querySync`).

use std::time::{Duration, Instant};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{Answer, Budget, DataQuery, Filters, Format, OpenAt, SourceMask, StorefrontType};

use crate::error::{guarded, run, settle, Code, Failure, Outcome};
use crate::store::Store;

/// A query: one or more brands (by index), the contract's filters, the output format.
#[napi(object)]
#[derive(Clone, Default)]
pub struct QueryRequest {
    /// Brand indices, as `resolve` returns them (several for a multi-ticker request).
    pub brands: Vec<u32>,
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
    /// Data formats: confidence floor and no community-only rows. Images draw everything.
    pub verified_only: bool,
    /// Cut the result to this many rows (trial keys); `total` still counts them all.
    pub limit: Option<u32>,
    /// The envelope's `brand`; defaults to the brand names joined.
    pub brand_label: Option<String>,
    /// Price before work: when more rows than this would be served, nothing is serialized or
    /// drawn and the response says `refused: "credits"` with the count (the caller's balance
    /// cannot pay for them). The caller turns its balance into rows; no rule about credits
    /// lives here.
    pub max_rows: Option<u32>,
    /// Milliseconds from the call the work may take: past them it is abandoned at the next
    /// step (`refused: "deadline"`), and work that starts late never starts.
    pub time_budget_ms: Option<u32>,
    /// Only stores open at this moment (ISO 8601; without an offset, each store's own time).
    pub open_at: Option<String>,
}

/// The data formats.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    #[default]
    Json,
    Csv,
    Geojson,
}

impl From<DataFormat> for Format {
    fn from(f: DataFormat) -> Format {
        match f {
            DataFormat::Json => Format::Json,
            DataFormat::Csv => Format::Csv,
            DataFormat::Geojson => Format::GeoJson,
        }
    }
}

/// The storefront types.
#[napi(string_enum = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorefrontKind {
    FullRetail,
    SmallFormat,
    Pickup,
    Studio,
    Other,
}

impl From<StorefrontKind> for StorefrontType {
    fn from(k: StorefrontKind) -> StorefrontType {
        match k {
            StorefrontKind::FullRetail => StorefrontType::FullRetail,
            StorefrontKind::SmallFormat => StorefrontType::SmallFormat,
            StorefrontKind::Pickup => StorefrontType::Pickup,
            StorefrontKind::Studio => StorefrontType::Studio,
            StorefrontKind::Other => StorefrontType::Other,
        }
    }
}

/// Why a call did no work: answered as data, with the count that was reached.
#[napi(string_enum = "lowercase")]
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// More rows than `max_rows`.
    Credits,
    /// `time_budget_ms` ran out.
    Deadline,
}

impl From<storemap_core::Refusal> for Refusal {
    fn from(r: storemap_core::Refusal) -> Refusal {
        match r {
            storemap_core::Refusal::Credits => Refusal::Credits,
            storemap_core::Refusal::Deadline => Refusal::Deadline,
        }
    }
}

/// The request's filters, brands and budget; the deadline counts from now.
pub(crate) struct Selection {
    pub brands: Vec<u32>,
    pub filters: Filters,
    pub limit: Option<u32>,
    pub budget: Budget,
}

/// The location filters a request gives, as the core's.
pub(crate) struct LocationFilters<'a> {
    pub country: &'a Option<String>,
    pub state: &'a Option<String>,
    pub city: &'a Option<String>,
    pub postcode: &'a Option<String>,
    pub radius_km: Option<f64>,
    pub storefront_type: Option<StorefrontKind>,
}

impl LocationFilters<'_> {
    pub fn to_filters(&self, verified_only: bool) -> Filters {
        Filters {
            country: self.country.clone(),
            state: self.state.clone(),
            city: self.city.clone(),
            postcode: self.postcode.clone(),
            radius_km: self.radius_km,
            storefront_type: self.storefront_type.map(Into::into),
            verified_only,
            open_at: None,
        }
    }
}

/// What a request may spend: rows, and milliseconds from now.
pub(crate) fn budget(max_rows: Option<u32>, time_budget_ms: Option<u32>) -> Budget {
    Budget { max_rows, deadline: time_budget_ms.map(|ms| Instant::now() + Duration::from_millis(ms as u64)) }
}

/// `open_at` as the core reads it: INVALID_REQUEST when it is not a date and time.
pub(crate) fn open_at(text: Option<&str>) -> Outcome<Option<OpenAt>> {
    text.map(OpenAt::parse).transpose().map_err(Into::into)
}

impl TryFrom<&QueryRequest> for Selection {
    type Error = Failure;

    fn try_from(r: &QueryRequest) -> Outcome<Selection> {
        let filters = LocationFilters {
            country: &r.country,
            state: &r.state,
            city: &r.city,
            postcode: &r.postcode,
            radius_km: r.radius_km,
            storefront_type: r.storefront_type,
        };
        let filters = Filters { open_at: open_at(r.open_at.as_deref())?, ..filters.to_filters(r.verified_only) };
        Ok(Selection { brands: r.brands.clone(), filters, limit: r.limit, budget: budget(r.max_rows, r.time_budget_ms) })
    }
}

impl TryFrom<QueryRequest> for DataQuery {
    type Error = Failure;

    fn try_from(r: QueryRequest) -> Outcome<DataQuery> {
        let Selection { brands, filters, limit, budget } = Selection::try_from(&r)?;
        Ok(DataQuery {
            brands,
            filters,
            format: r.format.into(),
            provenance: r.include_provenance.unwrap_or(false),
            hours_column: r.include_hours.unwrap_or(false),
            brand_label: r.brand_label,
            limit,
            budget,
        })
    }
}

pub(crate) fn source_names(s: SourceMask) -> Vec<String> {
    s.iter().map(|t| t.as_str().to_string()).collect()
}

#[napi(object)]
pub struct QueryResponse {
    /// The serialized body, ready to send.
    pub body: Buffer,
    /// Rows in the body.
    pub count: u32,
    /// Rows that matched before any `limit`.
    pub total: u32,
    /// Sources that contributed the returned rows, alphabetical.
    pub sources: Vec<String>,
    /// The filter as text.
    pub region: String,
    /// The estimated share of the brands' storefronts within the filters that the body holds,
    /// in [0, 1]; null where it cannot be estimated (fewer than 5 storefronts, one source).
    pub coverage_confidence: Option<f64>,
    /// Set when no work was done; `body` is then empty and `count` what would have been served.
    pub refused: Option<Refusal>,
    /// With `open_at`: stores within the other filters left out because their hours are unknown.
    pub hours_unknown: Option<u32>,
}

impl From<Answer> for QueryResponse {
    fn from(a: Answer) -> QueryResponse {
        // Buffer::from(Vec<u8>) hands the allocation to JS without a copy.
        QueryResponse {
            body: a.body.into(),
            count: a.count,
            total: a.total,
            sources: source_names(a.sources),
            region: a.region,
            coverage_confidence: a.coverage,
            refused: a.refused.map(Into::into),
            hours_unknown: a.hours_unknown,
        }
    }
}

pub struct QueryTask {
    snap: std::sync::Arc<storemap_core::Snapshot>,
    query: DataQuery,
}

impl Task for QueryTask {
    type Output = Outcome<Answer>;
    type JsValue = QueryResponse;
    fn compute(&mut self) -> napi::Result<Outcome<Answer>> {
        Ok(guarded(|| Ok(self.snap.answer(&self.query)?)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<Answer>) -> napi::Result<QueryResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Store {
    /// Runs a query on the libuv pool; the rows come back serialized in one Buffer.
    #[napi(ts_return_type = "Promise<QueryResponse>")]
    pub fn query(&self, req: QueryRequest) -> Result<AsyncTask<QueryTask>, Code> {
        let query = run(|| DataQuery::try_from(req))?;
        Ok(AsyncTask::new(QueryTask { snap: self.inner.clone(), query }))
    }

    #[napi]
    pub fn query_sync(&self, req: QueryRequest) -> Result<QueryResponse, Code> {
        run(|| Ok(self.inner.answer(&DataQuery::try_from(req)?)?)).map(Into::into)
    }
}
