//! Maps: the renderer's loaded state, and map requests as JavaScript sends them, converted into
//! the render crate's [`MapQuery`] and drawn on the libuv pool (`render`) or the calling thread
//! (`renderSync`).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::Snapshot;
use storemap_render::tiles::pmtiles::PmtilesError;
use storemap_render::tiles::source::{VectorTiles, DEFAULT_CACHE_BYTES};
use storemap_render::{Atlas, FocusCountry, FocusQuery, ImageFormat, MapAnswer, MapQuery, Themes, Viewport};

use crate::error::{guarded, run, settle, Code, Failure, NativeCode, Outcome};
use crate::query::{source_names, QueryRequest, Refusal, Selection};
use crate::store::Store;

/// The map renderer's loaded state: atlas shapes and theme palettes. Loaded once per server.
#[napi]
pub struct Renderer {
    pub(crate) atlas: Arc<Atlas>,
    pub(crate) themes: Arc<Themes>,
    /// The basemap archive asked for, and why it is not drawn from when it could not be opened.
    basemap: Option<(String, Option<String>)>,
}

/// Where the renderer's data lives: shapes and the gazetteer from the reference step, the
/// theme table and the label font.
#[napi(object)]
pub struct RendererAssets {
    pub countries_geojson: String,
    pub us_states_geojson: Option<String>,
    /// The big lakes, drawn as water over the land.
    pub lakes_geojson: Option<String>,
    pub cities_csv: Option<String>,
    pub font: Option<String>,
    pub themes_json: String,
    /// A PMTiles archive of vector tiles (Protomaps or OpenMapTiles schema) to draw city and
    /// street views from.
    pub basemap: Option<String>,
    /// The decoded-tile cache's bound, in bytes.
    pub basemap_cache_bytes: Option<f64>,
    /// The bound of the Natural Earth map's drawn cells, in bytes (0: none kept).
    pub map_cell_bytes: Option<f64>,
}

fn read(path: &str) -> Outcome<Vec<u8>> {
    std::fs::read(path).map_err(|e| Failure::new(NativeCode::IoError, format!("{path}: {e}")))
}

fn read_text(path: &str) -> Outcome<String> {
    String::from_utf8(read(path)?).map_err(|e| Failure::new(NativeCode::IoError, format!("{path}: {e}")))
}

/// Loads the renderer from the reference step's files, the theme table and the font.
#[napi]
pub fn load_renderer_sync(assets: RendererAssets) -> Result<Renderer, Code> {
    run(|| {
        let mut atlas = Atlas::from_geojson(&read_text(&assets.countries_geojson)?)?;
        if let Some(p) = &assets.us_states_geojson {
            atlas = atlas.with_us_states(&read_text(p)?)?;
        }
        if let Some(p) = &assets.lakes_geojson {
            atlas = atlas.with_lakes(&read_text(p)?)?;
        }
        if let Some(p) = &assets.cities_csv {
            atlas = atlas.with_cities_csv(&read_text(p)?)?;
        }
        if let Some(p) = &assets.font {
            atlas = atlas.with_font(&read(p)?)?;
        }
        if let Some(b) = assets.map_cell_bytes {
            atlas = atlas.with_basemap_cell_bytes(b.max(0.0) as u64);
        }
        let themes = Themes::from_json(&read_text(&assets.themes_json)?)?;
        // An archive that cannot be opened leaves the Natural Earth map: the service starts and
        // says why (basemapStatus), rather than not starting over a map layer.
        let mut basemap = None;
        if let Some(p) = &assets.basemap {
            let bytes = assets.basemap_cache_bytes.map_or(DEFAULT_CACHE_BYTES, |b| b.max(0.0) as u64);
            match VectorTiles::open(std::path::Path::new(p), bytes) {
                Ok(tiles) => {
                    atlas = atlas.with_streets(Arc::new(tiles));
                    basemap = Some((p.clone(), None));
                }
                Err(e) => basemap = Some((p.clone(), Some(e.to_string()))),
            }
        }
        Ok(Renderer { atlas: Arc::new(atlas), themes: Arc::new(themes), basemap })
    })
}

/// The image formats.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
}

/// A map image request: the query (its `format` and `verifiedOnly` are ignored: images draw
/// every reconciled row) and the picture.
#[napi(object)]
#[derive(Clone)]
pub struct RenderRequest {
    pub query: QueryRequest,
    pub format: ImageKind,
    pub width: u32,
    pub height: u32,
    pub scale: u32,
    pub dpi: u32,
    /// A theme of `data/themes.json`.
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

impl From<&FocusRequest> for FocusQuery {
    fn from(f: &FocusRequest) -> FocusQuery {
        FocusQuery {
            country: if f.country.eq_ignore_ascii_case("auto") { FocusCountry::Auto } else { FocusCountry::Code(f.country.clone()) },
            mainland_only: f.mainland_only.unwrap_or(false),
            conus: f.conus.unwrap_or(false),
            regions: f.regions.clone().unwrap_or_default(),
            fill_color: f.fill_color.clone(),
            outline_color: f.outline_color.clone(),
            outline_width: f.outline_width.map(|w| w as f32),
            background: f.background.clone(),
        }
    }
}

impl ImageKind {
    pub(crate) fn format(self, jpeg_quality: Option<u32>) -> ImageFormat {
        match self {
            ImageKind::Png => ImageFormat::Png,
            ImageKind::Jpeg => ImageFormat::jpeg(jpeg_quality),
        }
    }
}

/// A fixed-length list from JavaScript, or INVALID_REQUEST naming what it must be: a bounds of
/// three numbers is the caller's mistake, not a request for an auto-fitted map.
fn exactly<const N: usize>(v: Option<&[f64]>, what: &str) -> Outcome<Option<[f64; N]>> {
    v.map(|v| v.try_into().map_err(|_| Failure::invalid(format!("{what} must be {N} numbers, not {}", v.len())))).transpose()
}

impl TryFrom<&RenderRequest> for MapQuery {
    type Error = Failure;

    fn try_from(r: &RenderRequest) -> Outcome<MapQuery> {
        let Selection { brands, filters, limit, budget } = Selection::try_from(&r.query)?;
        let format = r.format.format(r.jpeg_quality);
        let bounds = exactly::<4>(r.bounds.as_deref(), "bounds [south, west, north, east]")?;
        let center = exactly::<2>(r.center.as_deref(), "center [lat, lng]")?;
        Ok(MapQuery {
            brands,
            filters,
            limit,
            budget,
            width: r.width,
            height: r.height,
            scale: r.scale,
            dpi: r.dpi,
            style: r.style.clone(),
            format,
            viewport: Viewport::from_parts(bounds, center, r.zoom),
            marker_radius: r.marker_radius.map(|m| m as f32),
            marker_colors: r.marker_colors.clone().unwrap_or_default(),
            marker_color: r.marker_color.clone(),
            heatmap: r.heatmap.unwrap_or(false),
            legend: r.legend.unwrap_or(false),
            focus: r.focus.as_ref().map(Into::into),
        })
    }
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
    /// The estimated share of the storefronts within the filters that the markers are, in
    /// [0, 1]; null where it cannot be estimated.
    pub coverage_confidence: Option<f64>,
    /// Set when nothing was drawn; `body` is then empty.
    pub refused: Option<Refusal>,
    /// The attribution of the street map's tiles, when the image shows them.
    pub basemap_attribution: Option<String>,
    /// A basemap tile failed for the first time while drawing this map (it was skipped): why.
    pub basemap_warning: Option<String>,
    /// The legend asked for is left out: it would cover too much of so small an image.
    pub legend_omitted: bool,
}

impl From<MapAnswer> for RenderResponse {
    fn from(a: MapAnswer) -> RenderResponse {
        RenderResponse {
            body: a.body.into(),
            count: a.count,
            total: a.total,
            sources: source_names(a.sources),
            region: a.region,
            focus_country: a.focus_country,
            coverage_confidence: a.coverage,
            refused: a.refused.map(Into::into),
            basemap_attribution: a.attribution,
            basemap_warning: a.warning,
            legend_omitted: a.legend_omitted,
        }
    }
}

pub struct RenderTask {
    snap: Arc<Snapshot>,
    atlas: Arc<Atlas>,
    themes: Arc<Themes>,
    query: MapQuery,
}

impl Task for RenderTask {
    type Output = Outcome<MapAnswer>;
    type JsValue = RenderResponse;
    fn compute(&mut self) -> napi::Result<Outcome<MapAnswer>> {
        Ok(guarded(|| Ok(storemap_render::render_served(&self.snap, &self.atlas, &self.themes, &self.query)?)))
    }
    fn resolve(&mut self, env: Env, output: Outcome<MapAnswer>) -> napi::Result<RenderResponse> {
        settle(env, output).map(Into::into)
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
    atlas: Arc<Atlas>,
    themes: Arc<Themes>,
}

impl Task for HealthTask {
    type Output = Outcome<storemap_render::RendererHealth>;
    type JsValue = RendererHealth;
    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(guarded(|| Ok(storemap_render::health_check(&self.atlas, &self.themes)?)))
    }
    fn resolve(&mut self, env: Env, o: Self::Output) -> napi::Result<RendererHealth> {
        let h = settle(env, o)?;
        Ok(RendererHealth { version: env!("CARGO_PKG_VERSION").to_string(), width: h.width, height: h.height, png_bytes: h.png_bytes, font: h.font })
    }
}

#[napi]
impl Renderer {
    /// Renders a map of a query's locations on the libuv pool; the encoded image comes back
    /// as one Buffer.
    #[napi(ts_return_type = "Promise<RenderResponse>")]
    pub fn render(&self, store: &Store, req: RenderRequest) -> Result<AsyncTask<RenderTask>, Code> {
        let query = run(|| MapQuery::try_from(&req))?;
        Ok(AsyncTask::new(RenderTask { snap: store.inner.clone(), atlas: self.atlas.clone(), themes: self.themes.clone(), query }))
    }

    /// As `render`, on the calling thread. Its failures are made on this thread with `env`, so
    /// that they carry the request field at fault as the pool's do.
    #[napi]
    pub fn render_sync(&self, env: Env, store: &Store, req: RenderRequest) -> napi::Result<RenderResponse> {
        settle(env, guarded(|| Ok(storemap_render::render_served(&store.inner, &self.atlas, &self.themes, &MapQuery::try_from(&req)?)?))).map(Into::into)
    }

    /// What a map filtered to a country frames (its mainland as focus maps cut it, with a
    /// margin), [south, west, north, east] degrees (west east of east across the antimeridian);
    /// null for a code with no shape.
    #[napi]
    pub fn country_frame(&self, code: String) -> Option<Vec<f64>> {
        self.atlas.country_frame(&code).map(|b| b.to_vec())
    }

    /// Each polygon of a country as a box [west, south, east, north]; null for a code with no
    /// shape.
    #[napi]
    pub fn country_boxes(&self, code: String) -> Option<Vec<Vec<f64>>> {
        self.atlas.country_boxes(&code).map(|b| b.iter().map(|b| b.to_vec()).collect())
    }

    /// The basemap archive's state: null without STOREMAP_BASEMAP; `error` when it could not be
    /// opened (the Natural Earth map is drawn instead); the tiles read, skipped and cached.
    #[napi]
    pub fn basemap_status(&self) -> Option<BasemapStatus> {
        let (path, error) = self.basemap.clone()?;
        let Some(tiles) = self.atlas.streets() else {
            return Some(BasemapStatus {
                path,
                ok: false,
                error,
                info: None,
                tiles_decoded: 0.0,
                tiles_failed: 0.0,
                first_tile_error: None,
                cached_bytes: 0.0,
            });
        };
        let s = tiles.stats();
        Some(BasemapStatus {
            path,
            ok: true,
            error: None,
            info: Some(tiles.info().into()),
            tiles_decoded: s.decoded as f64,
            tiles_failed: s.failed as f64,
            first_tile_error: s.first_error,
            cached_bytes: s.cached_bytes as f64,
        })
    }

    /// Draws and encodes a small map with a label and a marker on the libuv pool: the status
    /// endpoint's proof that the renderer works end to end.
    #[napi(ts_return_type = "Promise<RendererHealth>")]
    pub fn health_check(&self) -> AsyncTask<HealthTask> {
        AsyncTask::new(HealthTask { atlas: self.atlas.clone(), themes: self.themes.clone() })
    }
}

/// The renderer's defaults and bounds, for the service's request schemas and documents: their
/// one home is the render crate.
#[napi(object)]
pub struct RenderDefaults {
    /// The largest image side, after scale, in pixels.
    pub max_side: u32,
    /// Marker radius at scale 1, in pixels.
    pub marker_radius: f64,
    /// The resolution written into the image's metadata.
    pub dpi: u32,
    pub jpeg_quality: u32,
    pub focus_fill: String,
    pub focus_outline: String,
    /// Focus-map outline width at scale 1, in pixels.
    pub focus_outline_width: f64,
    /// The most pixels one map's markers may cover in all (the bound on a request's work).
    pub max_marker_pixels: f64,
    /// The theme a map is drawn in when the request names none.
    pub style: String,
    /// The most of an image a legend may cover; a bigger one is left out.
    pub max_legend_share: f64,
}

#[napi]
pub fn render_defaults() -> RenderDefaults {
    RenderDefaults {
        max_side: storemap_render::MAX_SIDE,
        marker_radius: storemap_render::DEFAULT_MARKER_RADIUS as f64,
        dpi: storemap_render::DEFAULT_DPI,
        jpeg_quality: storemap_render::DEFAULT_JPEG_QUALITY as u32,
        focus_fill: storemap_render::FOCUS_FILL.into(),
        focus_outline: storemap_render::FOCUS_OUTLINE.into(),
        focus_outline_width: storemap_render::FOCUS_OUTLINE_WIDTH as f64,
        max_marker_pixels: storemap_render::MAX_MARKER_PIXELS as f64,
        style: storemap_render::DEFAULT_STYLE.into(),
        max_legend_share: storemap_render::MAX_LEGEND_SHARE as f64,
    }
}

/// What a basemap archive holds, as `storemap basemap info` prints it.
#[napi(object)]
pub struct BasemapInfo {
    /// "protomaps" or "openmaptiles".
    pub schema: String,
    pub min_zoom: u32,
    pub max_zoom: u32,
    /// [west, south, east, north], degrees.
    pub bounds: Vec<f64>,
    /// [longitude, latitude, zoom].
    pub center: Vec<f64>,
    pub attribution: String,
    /// The metadata's name, when it has one.
    pub name: Option<String>,
    pub tile_compression: String,
    pub addressed_tiles: f64,
    pub tile_contents: f64,
    pub bytes: f64,
}

impl From<storemap_render::tiles::source::ArchiveInfo> for BasemapInfo {
    fn from(i: storemap_render::tiles::source::ArchiveInfo) -> BasemapInfo {
        BasemapInfo {
            schema: i.schema.name().to_string(),
            min_zoom: u32::from(i.min_zoom),
            max_zoom: u32::from(i.max_zoom),
            bounds: i.bounds.to_vec(),
            center: i.center.to_vec(),
            attribution: i.attribution,
            name: i.name,
            tile_compression: i.tile_compression.to_string(),
            addressed_tiles: i.addressed_tiles as f64,
            tile_contents: i.tile_contents as f64,
            bytes: i.bytes as f64,
        }
    }
}

#[napi(object)]
pub struct BasemapStatus {
    pub path: String,
    /// Whether maps are drawn from it.
    pub ok: bool,
    /// Why it could not be opened.
    pub error: Option<String>,
    pub info: Option<BasemapInfo>,
    pub tiles_decoded: f64,
    /// Tiles skipped because they could not be read or decoded.
    pub tiles_failed: f64,
    pub first_tile_error: Option<String>,
    pub cached_bytes: f64,
}

/// Opens a basemap archive and says what it holds (`storemap basemap info`).
#[napi]
pub fn basemap_info(path: String) -> Result<BasemapInfo, Code> {
    run(|| {
        let tiles = VectorTiles::open(std::path::Path::new(&path), 1 << 20).map_err(|e| {
            // An I/O error names the file already.
            let text = if matches!(e, PmtilesError::Io { .. }) { e.to_string() } else { format!("{path}: {e}") };
            Failure::new(NativeCode::InvalidBasemap, text)
        })?;
        Ok(tiles.info().into())
    })
}

/// A byte range of a basemap archive to read.
#[napi(object)]
pub struct ByteRange {
    pub offset: f64,
    pub length: f64,
}

/// What `storemap basemap extract` wrote.
#[napi(object)]
pub struct ExtractSummary {
    pub tiles: f64,
    pub tile_contents: f64,
    pub bytes: f64,
    pub min_zoom: u32,
    pub max_zoom: u32,
    /// [west, south, east, north]
    pub bounds: Vec<f64>,
}

/// A region cut out of a PMTiles archive by byte ranges (the crate's `tiles::extract`): the
/// caller reads the ranges it asks for (HTTP range requests or a file) and feeds them back.
#[napi]
pub struct BasemapExtract {
    inner: Option<storemap_render::tiles::extract::Extract>,
    pending: Vec<storemap_render::tiles::extract::Range>,
}

fn extract_failure(e: PmtilesError) -> Failure {
    Failure::new(NativeCode::InvalidBasemap, e.to_string())
}

fn byte_ranges(r: &[storemap_render::tiles::extract::Range]) -> Vec<ByteRange> {
    r.iter().map(|r| ByteRange { offset: r.offset as f64, length: r.length as f64 }).collect()
}

#[napi]
impl BasemapExtract {
    /// From the archive's first bytes (16 KiB: the header and, by the spec, the root
    /// directory), a box [west, south, east, north] and zooms; tile contents are kept at
    /// `data_path` until `finish`.
    #[napi(constructor)]
    pub fn new(head: Buffer, bbox: Vec<f64>, min_zoom: u32, max_zoom: u32, data_path: String) -> Result<BasemapExtract, Code> {
        run(|| {
            let bbox: [f64; 4] = bbox.as_slice().try_into().map_err(|_| Failure::invalid("bbox must be [west, south, east, north]"))?;
            let zoom = |z: u32| u8::try_from(z.min(31)).unwrap_or(31);
            let region = storemap_render::tiles::extract::Region { bbox, min_zoom: zoom(min_zoom), max_zoom: zoom(max_zoom) };
            let (ex, pending) = storemap_render::tiles::extract::Extract::new(&head, region, std::path::Path::new(&data_path)).map_err(extract_failure)?;
            Ok(BasemapExtract { inner: Some(ex), pending })
        })
    }

    /// The ranges to read next, in order; none when it is time to `finish`.
    #[napi]
    pub fn ranges(&self) -> Vec<ByteRange> {
        byte_ranges(&self.pending)
    }

    /// The bytes of the ranges `ranges()` gave, in the same order.
    #[napi]
    pub fn feed(&mut self, chunks: Vec<Buffer>) -> Result<(), Code> {
        run(|| {
            let ex = self.inner.as_mut().ok_or_else(|| Failure::invalid("the extract is finished"))?;
            self.pending = ex.feed(chunks.into_iter().map(|b| b.to_vec()).collect()).map_err(extract_failure)?;
            Ok(())
        })
    }

    /// Bytes asked for so far (the header's 16 KiB included).
    #[napi(getter)]
    pub fn bytes_asked(&self) -> f64 {
        self.inner.as_ref().map_or(0.0, |e| e.bytes_asked as f64)
    }

    /// Writes the archive to `out` (through a temporary file renamed into place).
    #[napi]
    pub fn finish(&mut self, out: String) -> Result<ExtractSummary, Code> {
        run(|| {
            let ex = self.inner.take().ok_or_else(|| Failure::invalid("the extract is finished"))?;
            let s = ex.finish(std::path::Path::new(&out)).map_err(extract_failure)?;
            Ok(ExtractSummary {
                tiles: s.tiles as f64,
                tile_contents: s.tile_contents as f64,
                bytes: s.bytes as f64,
                min_zoom: u32::from(s.min_zoom),
                max_zoom: u32::from(s.max_zoom),
                bounds: s.bounds.to_vec(),
            })
        })
    }
}
