//! Exports for benchmarks and tests only, built with the `testing` feature (`npm test` and
//! `npm run bench` build that variant into `native/testing/`); a production build
//! (`npm install`) has none of them.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::{guarded, run, settle, Code, Failure, NativeCode, Outcome};

/// 100 m anchor clustering over raw points (the algorithm reconciliation uses), for the
/// side-by-side benchmark. `source` holds source type codes (0 atp, 1 fsq, 2 osm, 3 overture).
/// Returns each point's cluster id.
#[napi]
pub fn cluster_points(lat: Float64Array, lng: Float64Array, source: Uint8Array, tolerance_m: f64) -> Result<Uint32Array, Code> {
    let clusters = run(|| {
        if lat.len() != lng.len() || lat.len() != source.len() {
            return Err(Failure::invalid("lat, lng and source must have the same length"));
        }
        let points = (0..lat.len())
            .map(|i| {
                let s = storemap_core::SourceType::from_u8(source[i]).ok_or_else(|| Failure::invalid(format!("unknown source code {}", source[i])))?;
                Ok(storemap_core::ClusterPoint { lat: lat[i], lng: lng[i], source: s, link: None })
            })
            .collect::<Outcome<Vec<_>>>()?;
        Ok(storemap_core::cluster(&points, tolerance_m).of_point)
    })?;
    Ok(Uint32Array::new(clusters))
}

/// PNG-encodes an untouched white image of this size with the maps' encoder and settings: the
/// floor under any render time.
#[napi]
pub fn encode_blank_png(width: u32, height: u32) -> Result<Buffer, Code> {
    run(|| Ok(storemap_render::encode_blank(width, height, storemap_render::ImageFormat::Png)?)).map(Into::into)
}

/// Panics inside the addon (on the calling thread, or on the pool when `on_pool`), to prove a
/// panic becomes an `INTERNAL` error and the process lives on. Refuses unless
/// `STOREMAP_TEST_HOOKS=1`, a second lock behind the feature.
#[napi]
pub fn panic_for_test(on_pool: bool) -> Result<AsyncTask<PanicTask>, Code> {
    if std::env::var("STOREMAP_TEST_HOOKS").as_deref() != Ok("1") {
        return Err(Failure::new(NativeCode::Forbidden, "test hooks are disabled").into());
    }
    if !on_pool {
        return run(|| panic!("panic_for_test (sync)"));
    }
    Ok(AsyncTask::new(PanicTask))
}

pub struct PanicTask;

impl Task for PanicTask {
    type Output = Outcome<()>;
    type JsValue = ();
    fn compute(&mut self) -> napi::Result<Outcome<()>> {
        Ok(guarded(|| panic!("panic_for_test (pool)")))
    }
    fn resolve(&mut self, env: Env, output: Outcome<()>) -> napi::Result<()> {
        settle(env, output)
    }
}

/// A street map drawn by our renderer, and its drawing operations for a peer renderer: the
/// benchmark's two sides (`bench/streets.ts`). Built from the files given, with and without the
/// basemap archive (the Natural Earth map of the same view is the baseline).
#[napi]
pub struct StreetBench {
    plain: storemap_render::Atlas,
    streets: std::sync::Mutex<storemap_render::Atlas>,
    themes: storemap_render::Themes,
    archive: String,
}

/// One drawing operation, in image pixels: `commands` holds triples (0 move to, 1 line to,
/// 2 close; then x, y); `width` is set for a stroke (else the path is filled, non-zero winding).
#[napi(object)]
pub struct PeerOp {
    pub color: String,
    pub alpha: u32,
    pub width: Option<f64>,
    pub dash: Option<Vec<f64>>,
    pub round: bool,
    pub commands: Float64Array,
}

fn bench_request(lat: f64, lng: f64, zoom: f64, width: u32, height: u32, markers: &[(f64, f64)], style: &str) -> storemap_render::MapRequest {
    let group = storemap_render::MarkerGroup { color: None, name: "bench".into(), points: markers.to_vec() };
    storemap_render::MapRequest {
        style: style.into(),
        viewport: storemap_render::Viewport::CenterZoom([lat, lng], zoom),
        ..storemap_render::MapRequest::new(width, height, vec![group])
    }
}

fn pairs(lat: &Float64Array, lng: &Float64Array) -> Vec<(f64, f64)> {
    lat.iter().zip(lng.iter()).map(|(a, b)| (*a, *b)).collect()
}

#[napi]
impl StreetBench {
    #[napi(constructor)]
    pub fn new(countries_geojson: String, font: String, themes_json: String, archive: String) -> Result<StreetBench, Code> {
        run(|| {
            let read = |p: &str| std::fs::read(p).map_err(|e| Failure::new(NativeCode::IoError, format!("{p}: {e}")));
            let text = |p: &str| read(p).and_then(|b| String::from_utf8(b).map_err(|e| Failure::new(NativeCode::IoError, e.to_string())));
            let atlas =
                || -> Outcome<storemap_render::Atlas> { Ok(storemap_render::Atlas::from_geojson(&text(&countries_geojson)?)?.with_font(&read(&font)?)?) };
            let tiles = open_tiles(&archive)?;
            Ok(StreetBench {
                plain: atlas()?,
                streets: std::sync::Mutex::new(atlas()?.with_streets(tiles)),
                themes: storemap_render::Themes::from_json(&text(&themes_json)?)?,
                archive: archive.clone(),
            })
        })
    }

    /// Draws a map centred on (lat, lng): over the street map (`streets`, with its caches as the
    /// previous calls left them; `cold` empties them first) or the Natural Earth map alone.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &self,
        lat: f64,
        lng: f64,
        zoom: f64,
        width: u32,
        height: u32,
        markers_lat: Float64Array,
        markers_lng: Float64Array,
        style: String,
        streets: bool,
        cold: bool,
    ) -> Result<Buffer, Code> {
        run(|| {
            let req = bench_request(lat, lng, zoom, width, height, &pairs(&markers_lat, &markers_lng), &style);
            if !streets {
                return Ok(storemap_render::render(&self.plain, &self.themes, &req)?);
            }
            let mut atlas = self.streets.lock().unwrap_or_else(|p| p.into_inner());
            if cold {
                atlas.set_streets(open_tiles(&self.archive)?);
            }
            Ok(storemap_render::render(&atlas, &self.themes, &req)?)
        })
        .map(Into::into)
    }

    /// The street map's drawing operations for the same view, before stroking.
    #[napi]
    pub fn ops(&self, lat: f64, lng: f64, zoom: f64, width: u32, height: u32, style: String) -> Result<Vec<PeerOp>, Code> {
        run(|| {
            let req = bench_request(lat, lng, zoom, width, height, &[], &style);
            let atlas = self.streets.lock().unwrap_or_else(|p| p.into_inner());
            let ops = storemap_render::street_ops(&atlas, &self.themes, &req)?.unwrap_or_default();
            Ok(ops
                .into_iter()
                .map(|op| {
                    let mut commands = Vec::new();
                    for seg in op.path.segments() {
                        match seg {
                            tiny_skia::PathSegment::MoveTo(p) => commands.extend([0.0, f64::from(p.x), f64::from(p.y)]),
                            tiny_skia::PathSegment::LineTo(p) => commands.extend([1.0, f64::from(p.x), f64::from(p.y)]),
                            tiny_skia::PathSegment::Close => commands.extend([2.0, 0.0, 0.0]),
                            // Street maps are made of lines and rectangles only.
                            _ => {}
                        }
                    }
                    let [r, g, b] = op.color;
                    PeerOp {
                        color: format!("#{r:02x}{g:02x}{b:02x}"),
                        alpha: u32::from(op.alpha),
                        width: op.pen.as_ref().map(|p| f64::from(p.width)),
                        dash: op.pen.as_ref().and_then(|p| p.dash).map(|d| d.iter().map(|&v| f64::from(v)).collect()),
                        round: op.pen.as_ref().is_some_and(|p| p.round),
                        commands: Float64Array::new(commands),
                    }
                })
                .collect())
        })
    }
}

fn open_tiles(path: &str) -> Outcome<std::sync::Arc<storemap_render::tiles::source::VectorTiles>> {
    let tiles = storemap_render::tiles::source::VectorTiles::open(std::path::Path::new(path), storemap_render::tiles::source::DEFAULT_CACHE_BYTES)
        .map_err(|e| Failure::new(NativeCode::InvalidBasemap, format!("{path}: {e}")))?;
    Ok(std::sync::Arc::new(tiles))
}
