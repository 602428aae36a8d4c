//! The napi-rs binding: converts types and runs storemap-core work off the event loop.
//! Nothing here decides anything; every rule lives in `storemap-core`.
//!
//! Each heavy call has a `fooSync` form and an async `foo` form that runs on the libuv pool;
//! both go through one `foo_impl`. A panic inside becomes a JS error with code `INTERNAL`,
//! never a dead process.

#![deny(clippy::all)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{CoreError, Filters, Format, Snapshot, StorefrontType, WriteOptions};

/// Every response body is a fresh multi-megabyte Vec handed to JS and freed at the next GC.
/// glibc maps each one anew and unmaps it on free, so every request paid a page fault per
/// 4 KiB written; jemalloc keeps freed extents for the next request. Only the addon's own
/// allocations use it (the symbols are prefixed), not Node's.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once at its start. By default allocations over 8 MiB go to an
/// arena that returns pages to the OS at once, which for bodies of that size (a large brand
/// as GeoJSON is 10 MB) brings the page faults back; with the threshold off they are reused
/// like the rest. The one place the addon needs an exported symbol.
#[allow(unsafe_code)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &u8 = &b"oversize_threshold:0\0"[0];

/// Errors cross as `CODE: message`; the TS wrapper splits them into `err.code`.
fn core_err(e: CoreError) -> Error {
    Error::new(Status::GenericFailure, format!("{}: {e}", e.code()))
}

fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::new(Status::InvalidArg, format!("INVALID_REQUEST: {msg}"))
}

/// Runs `f`, turning a panic into an `INTERNAL` error.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "panic".into());
            eprintln!("storemap-native: panic caught at the boundary: {msg}");
            Err(Error::new(Status::GenericFailure, format!("INTERNAL: {msg}")))
        }
    }
}

/// A loaded snapshot. Cheap to share: queries borrow it through an `Arc`.
#[napi]
pub struct Store {
    inner: Arc<Snapshot>,
    path: String,
}

fn load_impl(path: &str) -> Result<Snapshot> {
    Snapshot::load(&PathBuf::from(path)).map_err(core_err)
}

pub struct LoadTask {
    path: String,
}

impl Task for LoadTask {
    type Output = Snapshot;
    type JsValue = Store;
    fn compute(&mut self) -> Result<Snapshot> {
        guarded(|| load_impl(&self.path))
    }
    fn resolve(&mut self, _env: Env, output: Snapshot) -> Result<Store> {
        Ok(Store { inner: Arc::new(output), path: std::mem::take(&mut self.path) })
    }
}

/// Loads a snapshot file on the libuv pool.
#[napi(ts_return_type = "Promise<Store>")]
pub fn load_store(path: String) -> AsyncTask<LoadTask> {
    AsyncTask::new(LoadTask { path })
}

/// Loads a snapshot file on the calling thread (CLI tools and tests).
#[napi]
pub fn load_store_sync(path: String) -> Result<Store> {
    let inner = guarded(|| load_impl(&path))?;
    Ok(Store { inner: Arc::new(inner), path })
}

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
    /// full_retail, small_format, pickup, studio or other.
    pub storefront_type: Option<String>,
    /// json, csv or geojson.
    pub format: String,
    pub include_provenance: Option<bool>,
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
}

/// Why a call did no work: answered as data, with the count that was reached.
#[napi(string_enum)]
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// More rows than `max_rows`.
    #[napi(value = "credits")]
    Credits,
    /// `time_budget_ms` ran out.
    #[napi(value = "deadline")]
    Deadline,
}

/// When a request's time runs out, measured from the moment its task was made.
fn deadline_of(req: &QueryRequest) -> Option<Instant> {
    req.time_budget_ms.map(|ms| Instant::now() + Duration::from_millis(ms as u64))
}

fn passed(deadline: Option<Instant>) -> bool {
    deadline.is_some_and(|d| Instant::now() >= d)
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
    /// Set when no work was done; `body` is then empty and `count` what would have been served.
    pub refused: Option<Refusal>,
}

pub struct QueryOutput {
    body: Vec<u8>,
    count: u32,
    total: u32,
    sources: Vec<String>,
    region: String,
    refused: Option<Refusal>,
}

impl QueryOutput {
    fn refused(why: Refusal, count: u32, total: u32, region: String) -> QueryOutput {
        QueryOutput { body: Vec::new(), count, total, sources: Vec::new(), region, refused: Some(why) }
    }
}

/// `max_rows` exceeded: the caller cannot pay for `count` rows.
fn over_budget(req: &QueryRequest, count: u32) -> bool {
    count > 0 && req.max_rows.is_some_and(|m| count > m)
}

/// The request's brands checked against the snapshot and its filters as core filters: the one
/// conversion data queries and map renders share.
fn filters_of(snap: &Snapshot, req: &QueryRequest, verified_only: bool) -> Result<Filters> {
    let storefront = match &req.storefront_type {
        Some(t) => Some(StorefrontType::parse(t).ok_or_else(|| invalid(format!("unknown storefront_type {t}")))?),
        None => None,
    };
    if req.brands.is_empty() || req.brands.iter().any(|&b| b as usize >= snap.brands().len()) {
        return Err(invalid("brands must name brands of this snapshot"));
    }
    Ok(Filters {
        country: req.country.clone(),
        state: req.state.clone(),
        city: req.city.clone(),
        postcode: req.postcode.clone(),
        radius_km: req.radius_km,
        storefront_type: storefront,
        verified_only,
    })
}

fn query_impl(snap: &Snapshot, req: &QueryRequest, deadline: Option<Instant>) -> Result<QueryOutput> {
    let format = Format::parse(&req.format).ok_or_else(|| invalid(format!("format must be json, csv or geojson, not {}", req.format)))?;
    let filters = filters_of(snap, req, req.verified_only)?;
    if passed(deadline) {
        return Ok(QueryOutput::refused(Refusal::Deadline, 0, 0, filters.region_text()));
    }
    let mut rows = Vec::new();
    let mut sources = storemap_core::SourceMask::default();
    for &b in &req.brands {
        let r = snap.query(b, &filters).map_err(core_err)?;
        rows.extend(r.rows);
        sources.0 |= r.sources.0;
    }
    let total = rows.len() as u32;
    if let Some(limit) = req.limit {
        rows.truncate(limit as usize);
        // The header names the sources of the rows actually served.
        sources = rows.iter().fold(storemap_core::SourceMask::default(), |mut m, &r| {
            m.0 |= snap.row_sources(r as usize).0;
            m
        });
    }
    let count = rows.len() as u32;
    if let Some(why) = over_budget(req, count).then_some(Refusal::Credits).or_else(|| passed(deadline).then_some(Refusal::Deadline)) {
        return Ok(QueryOutput::refused(why, count, total, filters.region_text()));
    }
    let label = req.brand_label.clone().unwrap_or_else(|| req.brands.iter().map(|&b| snap.brands()[b as usize].name.as_str()).collect::<Vec<_>>().join(", "));
    let region = filters.region_text();
    let opts = WriteOptions { provenance: req.include_provenance.unwrap_or(false), brand_label: label, region: region.clone() };
    let body = storemap_core::write_rows(snap, &rows, format, &opts);
    Ok(QueryOutput { body, count, total, sources: sources.iter().map(|s| s.as_str().to_string()).collect(), region, refused: None })
}

fn to_response(o: QueryOutput) -> QueryResponse {
    // Buffer::from(Vec<u8>) hands the allocation to JS without a copy.
    QueryResponse { body: o.body.into(), count: o.count, total: o.total, sources: o.sources, region: o.region, refused: o.refused }
}

pub struct QueryTask {
    snap: Arc<Snapshot>,
    req: QueryRequest,
    deadline: Option<Instant>,
}

impl Task for QueryTask {
    type Output = QueryOutput;
    type JsValue = QueryResponse;
    fn compute(&mut self) -> Result<QueryOutput> {
        guarded(|| query_impl(&self.snap, &self.req, self.deadline))
    }
    fn resolve(&mut self, _env: Env, output: QueryOutput) -> Result<QueryResponse> {
        Ok(to_response(output))
    }
}

#[napi(object)]
pub struct CountryCount {
    pub country: String,
    pub location_count: u32,
}

#[napi(object)]
pub struct Resolved {
    pub brand: u32,
    pub name: String,
    /// name, variant, alt_name or ticker.
    pub by: String,
}

#[napi(object)]
pub struct BrandInfo {
    pub index: u32,
    pub name: String,
    pub wikidata: Option<String>,
    pub ticker: Option<String>,
    pub category: Option<String>,
    /// Rows a data format can serve (confidence >= 0.6, not community-only).
    pub location_count: u32,
    /// Every reconciled row, community-only included (what images draw).
    pub pool_count: u32,
}

#[napi]
impl Store {
    #[napi(getter)]
    pub fn path(&self) -> String {
        self.path.clone()
    }

    /// The snapshot's metadata and size, as JSON.
    #[napi]
    pub fn info(&self) -> Result<serde_json::Value> {
        guarded(|| {
            let s = &self.inner;
            let mut v = serde_json::to_value(s.meta()).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("rows".into(), s.row_count().into());
                o.insert("brands".into(), s.brands().len().into());
                o.insert("tickers".into(), s.tickers().len().into());
            }
            Ok(v)
        })
    }

    #[napi]
    pub fn resolve(&self, name: String) -> Result<Option<Resolved>> {
        guarded(|| {
            Ok(self.inner.aliases().resolve(&name).map(|r| Resolved {
                brand: r.brand,
                name: self.inner.brands()[r.brand as usize].name.clone(),
                by: r.by.as_str().into(),
            }))
        })
    }

    #[napi]
    pub fn is_ticker(&self, text: String) -> Result<bool> {
        guarded(|| Ok(self.inner.aliases().is_ticker(&text)))
    }

    /// Close matches for a name that resolves to nothing, best first.
    #[napi]
    pub fn suggest(&self, name: String, limit: Option<u32>) -> Result<Vec<BrandInfo>> {
        guarded(|| Ok(self.inner.aliases().suggest(&name, limit.unwrap_or(5) as usize).into_iter().map(|s| self.brand_info(s.brand)).collect()))
    }

    /// Storefronts the data formats serve, by country, most first (ties by code).
    #[napi]
    pub fn country_counts(&self, index: u32) -> Result<Vec<CountryCount>> {
        guarded(|| self.country_counts_impl(index))
    }

    fn country_counts_impl(&self, index: u32) -> Result<Vec<CountryCount>> {
        let snap = &self.inner;
        let b = snap.brands().get(index as usize).ok_or_else(|| invalid(format!("no brand {index}")))?;
        let mut counts: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
        for r in b.row_start as usize..b.row_end as usize {
            if snap.row_is_verified(r) {
                *counts.entry(snap.row_country(r)).or_default() += 1;
            }
        }
        let mut out: Vec<CountryCount> = counts.into_iter().map(|(c, n)| CountryCount { country: c.to_string(), location_count: n }).collect();
        out.sort_by(|a, b| b.location_count.cmp(&a.location_count).then_with(|| a.country.cmp(&b.country)));
        Ok(out)
    }

    #[napi]
    pub fn brand(&self, index: u32) -> Result<Option<BrandInfo>> {
        guarded(|| Ok(((index as usize) < self.inner.brands().len()).then(|| self.brand_info(index))))
    }

    fn brand_info(&self, index: u32) -> BrandInfo {
        let b = &self.inner.brands()[index as usize];
        BrandInfo {
            index,
            name: b.name.clone(),
            wikidata: b.wikidata.clone(),
            ticker: self.inner.ticker_of(index).map(str::to_string),
            category: b.category.clone(),
            location_count: b.verified_count,
            pool_count: b.pool_count(),
        }
    }

    /// Runs a query on the libuv pool; the rows come back serialized in one Buffer.
    #[napi(ts_return_type = "Promise<QueryResponse>")]
    pub fn query(&self, req: QueryRequest) -> AsyncTask<QueryTask> {
        AsyncTask::new(QueryTask { snap: self.inner.clone(), deadline: deadline_of(&req), req })
    }

    #[napi]
    pub fn query_sync(&self, req: QueryRequest) -> Result<QueryResponse> {
        guarded(|| query_impl(&self.inner, &req, deadline_of(&req))).map(to_response)
    }
}

/// The map renderer's loaded state: basemap shapes and theme palettes. Loaded once per server.
#[napi]
pub struct Renderer {
    basemap: Arc<storemap_render::Basemap>,
    themes: Arc<storemap_render::Themes>,
}

fn render_err(e: storemap_render::RenderError) -> Error {
    Error::new(Status::GenericFailure, format!("{}: {e}", e.code()))
}

/// Loads the renderer from a countries GeoJSON file and the themes JSON file.
/// Where the renderer's data lives: shapes and the gazetteer from the reference step, the
/// theme table and the label font.
#[napi(object)]
pub struct RendererAssets {
    pub countries_geojson: String,
    pub us_states_geojson: Option<String>,
    pub cities_csv: Option<String>,
    pub font: Option<String>,
    pub themes_json: String,
}

#[napi]
pub fn load_renderer_sync(assets: RendererAssets) -> Result<Renderer> {
    guarded(|| {
        let io = |p: &str, e: std::io::Error| Error::new(Status::GenericFailure, format!("IO_ERROR: {p}: {e}"));
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| io(p, e));
        let mut basemap = storemap_render::Basemap::from_geojson(&read(&assets.countries_geojson)?).map_err(render_err)?;
        if let Some(p) = &assets.us_states_geojson {
            basemap = basemap.with_us_states(&read(p)?).map_err(render_err)?;
        }
        if let Some(p) = &assets.cities_csv {
            basemap = basemap.with_cities_csv(&read(p)?).map_err(render_err)?;
        }
        if let Some(p) = &assets.font {
            basemap = basemap.with_font(&std::fs::read(p).map_err(|e| io(p, e))?).map_err(render_err)?;
        }
        let themes = storemap_render::Themes::from_json(&read(&assets.themes_json)?).map_err(render_err)?;
        Ok(Renderer { basemap: Arc::new(basemap), themes: Arc::new(themes) })
    })
}

/// PNG-encodes an untouched white image of this size with the maps' encoder and settings: the
/// floor under any render time (benchmarks only).
#[napi]
pub fn encode_blank_png(width: u32, height: u32) -> Result<Buffer> {
    let body = guarded(|| storemap_render::encode_blank(width, height, storemap_render::ImageFormat::Png).map_err(render_err))?;
    Ok(body.into())
}

/// A map image request: the query (its `format` and `verifiedOnly` are ignored: images draw
/// every reconciled row) and the picture.
#[napi(object)]
#[derive(Clone)]
pub struct RenderRequest {
    pub query: QueryRequest,
    /// png or jpeg.
    pub format: String,
    pub width: u32,
    pub height: u32,
    pub scale: u32,
    pub dpi: u32,
    pub style: String,
    /// [south, west, north, east]
    pub bounds: Option<Vec<f64>>,
    /// [lat, lng], with zoom.
    pub center: Option<Vec<f64>>,
    pub zoom: Option<f64>,
    pub marker_radius: Option<f64>,
    /// One colour per brand of `query.brands`; `marker_color` for all; the theme's otherwise.
    pub marker_colors: Option<Vec<String>>,
    pub marker_color: Option<String>,
    pub jpeg_quality: Option<u32>,
    /// Kernel density instead of markers.
    pub heatmap: Option<bool>,
    /// A legend box with each company's colour, name and count.
    pub legend: Option<bool>,
    /// Draw one country alone instead of the basemap.
    pub focus: Option<FocusRequest>,
}

#[napi(object)]
#[derive(Clone)]
pub struct FocusRequest {
    /// ISO 3166-1 alpha-2, or "auto": the country most of the result's locations are in.
    pub country: String,
    pub mainland_only: Option<bool>,
    pub conus: Option<bool>,
    /// US state codes to outline.
    pub regions: Option<Vec<String>>,
    pub fill_color: Option<String>,
    pub outline_color: Option<String>,
    pub outline_width: Option<f64>,
    /// A colour, or "transparent" (the default).
    pub background: Option<String>,
}

#[napi(object)]
pub struct RenderResponse {
    pub body: Buffer,
    /// Markers drawn.
    pub count: u32,
    /// Locations that matched before any `limit`.
    pub total: u32,
    pub sources: Vec<String>,
    pub region: String,
    /// The focus map's country, "auto" resolved.
    pub focus_country: Option<String>,
    /// Set when nothing was drawn; `body` is then empty.
    pub refused: Option<Refusal>,
}

/// The country most of `rows` are in; ties go to the alphabetically first code, so the choice
/// is stable. Empty when there are no rows.
fn majority_country(snap: &Snapshot, rows: &[u32]) -> String {
    let mut counts: std::collections::BTreeMap<&str, u32> = std::collections::BTreeMap::new();
    for &r in rows {
        *counts.entry(snap.row_country(r as usize)).or_default() += 1;
    }
    counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(c, _)| c.to_string()).unwrap_or_default()
}

/// The focus request as the renderer's spec; "auto" is the country most served rows are in.
fn focus_spec(snap: &Snapshot, f: &FocusRequest, rows: &[u32]) -> Result<storemap_render::FocusSpec> {
    let colour = |s: &Option<String>, default: &str| storemap_render::parse_hex(s.as_deref().unwrap_or(default)).map_err(render_err);
    let country = if f.country.eq_ignore_ascii_case("auto") { majority_country(snap, rows) } else { f.country.to_ascii_uppercase() };
    let background = match f.background.as_deref() {
        None | Some("transparent") => None,
        Some(c) => Some(storemap_render::parse_hex(c).map_err(render_err)?),
    };
    // Territories on the map: those the served rows are in.
    let territories =
        storemap_render::territories_of(&country).iter().filter(|t| rows.iter().any(|&r| snap.row_country(r as usize) == **t)).map(|t| t.to_string()).collect();
    Ok(storemap_render::FocusSpec {
        country,
        mainland_only: f.mainland_only.unwrap_or(false),
        conus: f.conus.unwrap_or(false),
        regions: f.regions.clone().unwrap_or_default(),
        territories,
        fill: colour(&f.fill_color, "#E5E7EB")?,
        outline: colour(&f.outline_color, "#9CA3AF")?,
        outline_width: f.outline_width.unwrap_or(1.5) as f32,
        background,
    })
}

fn render_impl(
    snap: &Snapshot,
    basemap: &storemap_render::Basemap,
    themes: &storemap_render::Themes,
    req: &RenderRequest,
    deadline: Option<Instant>,
) -> Result<RenderOutput> {
    use storemap_render::{ImageFormat, MapRequest, MarkerGroup, Viewport};
    let format = match req.format.as_str() {
        "png" => ImageFormat::Png,
        "jpeg" => ImageFormat::Jpeg(req.jpeg_quality.unwrap_or(85).clamp(1, 100) as u8),
        f => return Err(invalid(format!("image format must be png or jpeg, not {f}"))),
    };
    let q = &req.query;
    // Images draw every reconciled row, community-map rows included.
    let mut filters = filters_of(snap, q, false)?;
    if passed(deadline) {
        return Ok(RenderOutput { out: QueryOutput::refused(Refusal::Deadline, 0, 0, filters.region_text()), focus_country: None });
    }
    // A focus map is a map of the focus country's stores: without a country filter the focus
    // country becomes the filter ("auto": the country most matching stores are in), so the
    // count, the headers and the price are that country's, and nothing is drawn outside it.
    let focus_is_filter = req.focus.is_some() && filters.country.is_none();
    if let (Some(f), None) = (&req.focus, &filters.country) {
        let country = if f.country.eq_ignore_ascii_case("auto") {
            let mut rows = Vec::new();
            for &b in &q.brands {
                rows.extend(snap.query(b, &filters).map_err(core_err)?.rows);
            }
            majority_country(snap, &rows)
        } else {
            let code = f.country.to_ascii_uppercase();
            // An unknown focus country is the request's mistake (400), not an empty result.
            if basemap.country(&code).is_none() {
                return Err(render_err(storemap_render::RenderError::UnknownCountry(code)));
            }
            code
        };
        if !country.is_empty() {
            filters.country = Some(country);
        }
    }
    // A composite focus map also carries the country's territories with codes of their own
    // (Puerto Rico on a US map) unless it is cut to its mainland: their stores are counted,
    // priced and drawn in an inset.
    let mut territories: Vec<storemap_core::Filters> = Vec::new();
    if let (Some(f), Some(country), true) = (&req.focus, &filters.country, focus_is_filter) {
        if !f.conus.unwrap_or(false) && !f.mainland_only.unwrap_or(false) {
            for t in storemap_render::territories_of(country) {
                territories.push(storemap_core::Filters { country: Some(t.to_string()), ..filters.clone() });
            }
        }
    }
    let colour = |s: &String| storemap_render::parse_hex(s).map_err(render_err);
    let mut groups = Vec::new();
    let mut sources = storemap_core::SourceMask::default();
    let mut total = 0u32;
    let mut budget = q.limit.unwrap_or(u32::MAX);
    let mut served: Vec<u32> = Vec::new();
    for (i, &b) in q.brands.iter().enumerate() {
        let mut found = snap.query(b, &filters).map_err(core_err)?.rows;
        for t in &territories {
            found.extend(snap.query(b, t).map_err(core_err)?.rows);
        }
        total += found.len() as u32;
        let take = (found.len() as u32).min(budget);
        budget -= take;
        let rows = &found[..take as usize];
        for &row in rows {
            sources.0 |= snap.row_sources(row as usize).0;
        }
        let color = match (&req.marker_colors, &req.marker_color) {
            (Some(cs), _) if i < cs.len() => Some(colour(&cs[i])?),
            (_, Some(c)) => Some(colour(c)?),
            _ => None,
        };
        groups.push(MarkerGroup {
            color,
            name: snap.brands()[b as usize].name.clone(),
            points: rows.iter().map(|&row| snap.row_lat_lng(row as usize)).collect(),
        });
        served.extend_from_slice(rows);
    }
    let count = groups.iter().map(|g| g.points.len() as u32).sum();
    let viewport = match (&req.bounds, &req.center, req.zoom) {
        (Some(b), _, _) if b.len() == 4 => Viewport::Bounds([b[0], b[1], b[2], b[3]]),
        (_, Some(c), Some(z)) if c.len() == 2 => Viewport::CenterZoom([c[0], c[1]], z),
        _ => Viewport::Auto,
    };
    let region = filters.region_text();
    let sources: Vec<String> = sources.iter().map(|s| s.as_str().to_string()).collect();
    if count == 0 {
        // Nothing to draw: the service answers 404 without an image.
        return Ok(RenderOutput { out: QueryOutput { body: Vec::new(), count, total, sources, region, refused: None }, focus_country: None });
    }
    let focus = req.focus.as_ref().map(|f| focus_spec(snap, f, &served)).transpose()?;
    let focus_country = focus.as_ref().map(|f| f.country.clone());
    let map = MapRequest {
        width: req.width,
        height: req.height,
        scale: req.scale,
        dpi: req.dpi,
        style: req.style.clone(),
        format,
        viewport,
        marker_radius: req.marker_radius.unwrap_or(5.0) as f32,
        groups,
        heatmap: req.heatmap.unwrap_or(false),
        legend: req.legend.unwrap_or(false),
        focus,
        deadline,
    };
    // In the contract's order: a request beyond the work bound is invalid (400) whatever the
    // balance; then the price; then the drawing.
    storemap_render::admit(&map).map_err(render_err)?;
    if over_budget(q, count) {
        return Ok(RenderOutput { out: QueryOutput::refused(Refusal::Credits, count, total, region), focus_country });
    }
    let body = match storemap_render::render(basemap, themes, &map) {
        Err(storemap_render::RenderError::DeadlinePassed) => {
            return Ok(RenderOutput { out: QueryOutput::refused(Refusal::Deadline, count, total, region), focus_country })
        }
        r => r.map_err(render_err)?,
    };
    Ok(RenderOutput { out: QueryOutput { body, count, total, sources, region, refused: None }, focus_country })
}

pub struct RenderOutput {
    out: QueryOutput,
    focus_country: Option<String>,
}

fn to_render_response(o: RenderOutput) -> RenderResponse {
    let RenderOutput { out, focus_country } = o;
    RenderResponse { body: out.body.into(), count: out.count, total: out.total, sources: out.sources, region: out.region, focus_country, refused: out.refused }
}

pub struct RenderTask {
    snap: Arc<Snapshot>,
    basemap: Arc<storemap_render::Basemap>,
    themes: Arc<storemap_render::Themes>,
    req: RenderRequest,
    deadline: Option<Instant>,
}

impl Task for RenderTask {
    type Output = RenderOutput;
    type JsValue = RenderResponse;
    fn compute(&mut self) -> Result<RenderOutput> {
        guarded(|| render_impl(&self.snap, &self.basemap, &self.themes, &self.req, self.deadline))
    }
    fn resolve(&mut self, _env: Env, o: RenderOutput) -> Result<RenderResponse> {
        Ok(to_render_response(o))
    }
}

#[napi]
impl Renderer {
    /// Renders a map of a query's locations on the libuv pool; the encoded image comes back
    /// as one Buffer.
    #[napi(ts_return_type = "Promise<RenderResponse>")]
    pub fn render(&self, store: &Store, req: RenderRequest) -> AsyncTask<RenderTask> {
        AsyncTask::new(RenderTask {
            snap: store.inner.clone(),
            basemap: self.basemap.clone(),
            themes: self.themes.clone(),
            deadline: deadline_of(&req.query),
            req,
        })
    }

    /// Draws and encodes a small map with a label and a marker on the libuv pool: the status
    /// endpoint's proof that the renderer works end to end.
    #[napi(ts_return_type = "Promise<RendererHealth>")]
    pub fn health_check(&self) -> AsyncTask<HealthTask> {
        AsyncTask::new(HealthTask { basemap: self.basemap.clone(), themes: self.themes.clone() })
    }

    #[napi]
    pub fn render_sync(&self, store: &Store, req: RenderRequest) -> Result<RenderResponse> {
        Ok(to_render_response(guarded(|| render_impl(&store.inner, &self.basemap, &self.themes, &req, deadline_of(&req.query)))?))
    }
}

#[napi(object)]
pub struct RendererHealth {
    /// The addon's version.
    pub version: String,
    pub width: u32,
    pub height: u32,
    /// Bytes of the encoded PNG.
    pub png_bytes: u32,
    /// Whether the label font is loaded.
    pub font: bool,
}

pub struct HealthTask {
    basemap: Arc<storemap_render::Basemap>,
    themes: Arc<storemap_render::Themes>,
}

impl Task for HealthTask {
    type Output = RendererHealth;
    type JsValue = RendererHealth;
    fn compute(&mut self) -> Result<RendererHealth> {
        guarded(|| {
            use storemap_render::{MapRequest, MarkerGroup, Viewport};
            let group = MarkerGroup { color: None, name: "health".into(), points: vec![(48.8566, 2.3522)] };
            let req = MapRequest { viewport: Viewport::CenterZoom([48.8566, 2.3522], 4.0), legend: true, ..MapRequest::new(96, 64, vec![group]) };
            let png = storemap_render::render(&self.basemap, &self.themes, &req).map_err(render_err)?;
            Ok(RendererHealth {
                version: env!("CARGO_PKG_VERSION").to_string(),
                width: 96,
                height: 64,
                png_bytes: png.len() as u32,
                font: self.basemap.has_font(),
            })
        })
    }
    fn resolve(&mut self, _env: Env, o: RendererHealth) -> Result<RendererHealth> {
        Ok(o)
    }
}

/// 100 m anchor clustering over raw points (the algorithm reconciliation uses), for the
/// side-by-side benchmark. `source` holds source type codes (0 atp, 1 fsq, 2 osm, 3 overture).
/// Returns each point's cluster id.
#[napi]
pub fn cluster_points(lat: Float64Array, lng: Float64Array, source: Uint8Array, tolerance_m: f64) -> Result<Uint32Array> {
    if lat.len() != lng.len() || lat.len() != source.len() {
        return Err(invalid("lat, lng and source must have the same length"));
    }
    let points = guarded(|| {
        (0..lat.len())
            .map(|i| {
                let s = storemap_core::SourceType::from_u8(source[i]).ok_or_else(|| invalid(format!("unknown source code {}", source[i])))?;
                Ok(storemap_core::ClusterPoint { lat: lat[i], lng: lng[i], source: s, link: None })
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let c = guarded(|| Ok(storemap_core::cluster(&points, tolerance_m)))?;
    Ok(Uint32Array::new(c.of_point))
}

/// Test hook: panics inside the addon (sync, or on the pool when `on_pool`), to prove a panic
/// becomes an `INTERNAL` error and the process lives on. Refuses unless
/// `STOREMAP_TEST_HOOKS=1`, so a production server cannot be made to run it.
#[napi]
pub fn panic_for_test(on_pool: bool) -> Result<AsyncTask<PanicTask>> {
    if std::env::var("STOREMAP_TEST_HOOKS").as_deref() != Ok("1") {
        return Err(Error::new(Status::GenericFailure, "FORBIDDEN: test hooks are disabled".to_string()));
    }
    if !on_pool {
        return guarded(|| panic!("panic_for_test (sync)"));
    }
    Ok(AsyncTask::new(PanicTask))
}

pub struct PanicTask;

impl Task for PanicTask {
    type Output = ();
    type JsValue = ();
    fn compute(&mut self) -> Result<()> {
        guarded(|| panic!("panic_for_test (pool)"))
    }
    fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
        Ok(())
    }
}

/// The most pixels one map's markers may cover in all (the renderer's bound on a request's
/// work), for the service's documents.
#[napi]
pub const MAX_MARKER_PIXELS: u32 = storemap_render::MAX_MARKER_PIXELS as u32;
