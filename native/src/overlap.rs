//! Pairs of stores of different brands within a distance (`overlap` on the libuv pool), priced
//! by pairs and timed like a data query.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{Answer, NearbyIndex, OverlapQuery, Snapshot};

use crate::error::{guarded, run, settle, Code, Outcome};
use crate::query::{budget, DataFormat, QueryResponse};
use crate::store::Store;

/// An overlap request: two to five brands (by index, different companies), the distance.
#[napi(object)]
#[derive(Clone, Default)]
pub struct OverlapRequest {
    pub brands: Vec<u32>,
    pub distance_m: f64,
    /// Pairs whose first store (of the brand named earlier) is in this country.
    pub country: Option<String>,
    pub format: DataFormat,
    pub include_provenance: Option<bool>,
    /// As in `QueryRequest`, counted in pairs.
    pub max_rows: Option<u32>,
    /// As in `QueryRequest`.
    pub time_budget_ms: Option<u32>,
}

impl From<OverlapRequest> for OverlapQuery {
    fn from(r: OverlapRequest) -> OverlapQuery {
        OverlapQuery {
            brands: r.brands,
            distance_m: r.distance_m,
            country: r.country,
            format: r.format.into(),
            provenance: r.include_provenance.unwrap_or(false),
            budget: budget(r.max_rows, r.time_budget_ms),
        }
    }
}

pub struct OverlapTask {
    snap: Arc<Snapshot>,
    index: Arc<NearbyIndex>,
    query: OverlapQuery,
}

impl Task for OverlapTask {
    type Output = Outcome<Answer>;
    type JsValue = QueryResponse;
    fn compute(&mut self) -> napi::Result<Outcome<Answer>> {
        Ok(guarded(|| Ok(self.index.answer_overlap(&self.snap, &self.query)?)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<Answer>) -> napi::Result<QueryResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Store {
    /// Pairs of stores of different brands within a distance, on the libuv pool; `count` is
    /// the number of pairs.
    #[napi(ts_return_type = "Promise<QueryResponse>")]
    pub fn overlap(&self, req: OverlapRequest) -> AsyncTask<OverlapTask> {
        AsyncTask::new(OverlapTask { snap: self.inner.clone(), index: self.nearby.clone(), query: req.into() })
    }

    #[napi]
    pub fn overlap_sync(&self, req: OverlapRequest) -> Result<QueryResponse, Code> {
        let query: OverlapQuery = req.into();
        run(|| Ok(self.nearby.answer_overlap(&self.inner, &query)?)).map(Into::into)
    }
}
