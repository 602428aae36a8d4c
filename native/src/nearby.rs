//! The stores nearest a point (`nearby` on the libuv pool, `nearbySync` on the calling thread),
//! priced and timed like a data query.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{Answer, NearbyIndex, NearbyQuery, Snapshot};

use crate::error::{guarded, run, settle, Code, Failure, Outcome};
use crate::query::{budget, open_at, DataFormat, QueryResponse};
use crate::store::Store;

/// A nearest-store request.
#[napi(object)]
#[derive(Clone, Default)]
pub struct NearbyRequest {
    /// Brand indices, as `resolve` returns them; empty for stores of any brand.
    pub brands: Vec<u32>,
    pub lat: f64,
    pub lng: f64,
    pub limit: u32,
    pub radius_km: Option<f64>,
    pub format: DataFormat,
    pub include_provenance: Option<bool>,
    /// The document's `brand`.
    pub brand_label: String,
    /// As in `QueryRequest`.
    pub max_rows: Option<u32>,
    /// As in `QueryRequest`.
    pub time_budget_ms: Option<u32>,
    /// CSV: adds opening_hours after the contract's eleven columns.
    pub include_hours: Option<bool>,
    /// As in `QueryRequest`: only stores open at this moment.
    pub open_at: Option<String>,
}

impl TryFrom<NearbyRequest> for NearbyQuery {
    type Error = Failure;

    fn try_from(r: NearbyRequest) -> Outcome<NearbyQuery> {
        Ok(NearbyQuery {
            open_at: open_at(r.open_at.as_deref())?,
            brands: r.brands,
            lat: r.lat,
            lng: r.lng,
            limit: r.limit,
            radius_m: r.radius_km.map(|km| km * 1000.0),
            format: r.format.into(),
            provenance: r.include_provenance.unwrap_or(false),
            hours_column: r.include_hours.unwrap_or(false),
            brand_label: r.brand_label,
            budget: budget(r.max_rows, r.time_budget_ms),
        })
    }
}

pub struct NearbyTask {
    snap: Arc<Snapshot>,
    index: Arc<NearbyIndex>,
    query: NearbyQuery,
}

impl Task for NearbyTask {
    type Output = Outcome<Answer>;
    type JsValue = QueryResponse;
    fn compute(&mut self) -> napi::Result<Outcome<Answer>> {
        Ok(guarded(|| Ok(self.index.answer(&self.snap, &self.query)?)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<Answer>) -> napi::Result<QueryResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Store {
    /// The stores nearest a point, nearest first, on the libuv pool (a brand's tree is built by
    /// the first request that needs it).
    #[napi(ts_return_type = "Promise<QueryResponse>")]
    pub fn nearby(&self, req: NearbyRequest) -> Result<AsyncTask<NearbyTask>, Code> {
        let query = run(|| NearbyQuery::try_from(req))?;
        Ok(AsyncTask::new(NearbyTask { snap: self.inner.clone(), index: self.nearby.clone(), query }))
    }

    #[napi]
    pub fn nearby_sync(&self, req: NearbyRequest) -> Result<QueryResponse, Code> {
        run(|| Ok(self.nearby.answer(&self.inner, &NearbyQuery::try_from(req)?)?)).map(Into::into)
    }
}
