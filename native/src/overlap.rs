//! Pairs of stores of different brands within a distance (`overlap` on the libuv pool), priced
//! by pairs and timed like a data query.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{Answer, NearbyIndex, OverlapQuery, Snapshot};
use storemap_render::{Atlas, MapAnswer, OverlapMapQuery, Themes};

use crate::error::{guarded, run, settle, Code, Outcome};
use crate::query::{budget, DataFormat, QueryResponse};
use crate::render::{ImageKind, RenderResponse, Renderer};
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

/// An overlap map: the pairs drawn as lines between each brand's paired stores.
#[napi(object)]
#[derive(Clone)]
pub struct OverlapRenderRequest {
    pub brands: Vec<u32>,
    pub distance_m: f64,
    pub country: Option<String>,
    pub format: ImageKind,
    pub width: u32,
    pub height: u32,
    pub style: Option<String>,
    pub marker_radius: Option<f64>,
    pub marker_colors: Option<Vec<String>>,
    pub legend: Option<bool>,
    /// As in `OverlapRequest`.
    pub max_rows: Option<u32>,
    pub time_budget_ms: Option<u32>,
}

impl From<OverlapRenderRequest> for OverlapMapQuery {
    fn from(r: OverlapRenderRequest) -> OverlapMapQuery {
        OverlapMapQuery {
            brands: r.brands,
            distance_m: r.distance_m,
            country: r.country,
            budget: budget(r.max_rows, r.time_budget_ms),
            width: r.width,
            height: r.height,
            style: r.style.unwrap_or_else(|| storemap_render::DEFAULT_STYLE.into()),
            format: r.format.format(None),
            marker_radius: r.marker_radius.map(|m| m as f32),
            marker_colors: r.marker_colors.unwrap_or_default(),
            legend: r.legend.unwrap_or(false),
        }
    }
}

pub struct OverlapRenderTask {
    snap: Arc<Snapshot>,
    index: Arc<NearbyIndex>,
    atlas: Arc<Atlas>,
    themes: Arc<Themes>,
    query: OverlapMapQuery,
}

impl Task for OverlapRenderTask {
    type Output = Outcome<MapAnswer>;
    type JsValue = RenderResponse;
    fn compute(&mut self) -> napi::Result<Outcome<MapAnswer>> {
        Ok(guarded(|| Ok(storemap_render::render_overlap(&self.snap, &self.index, &self.atlas, &self.themes, &self.query)?)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<MapAnswer>) -> napi::Result<RenderResponse> {
        settle(env, output).map(Into::into)
    }
}

#[napi]
impl Renderer {
    /// Draws an overlap map on the libuv pool; `count` is the number of pairs.
    #[napi(ts_return_type = "Promise<RenderResponse>")]
    pub fn render_overlap(&self, store: &Store, req: OverlapRenderRequest) -> AsyncTask<OverlapRenderTask> {
        AsyncTask::new(OverlapRenderTask {
            snap: store.inner.clone(),
            index: store.nearby.clone(),
            atlas: self.atlas.clone(),
            themes: self.themes.clone(),
            query: req.into(),
        })
    }
}
