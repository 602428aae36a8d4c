//! Exports for benchmarks and tests only, built with the `testing` feature (`npm test` and
//! `npm run bench` build that variant into `native/testing/`); a production build
//! (`npm install`) has none of them.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::{guarded, run, settle, Code, Failure, Outcome};

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
        return Err(Failure::new("FORBIDDEN", "test hooks are disabled").into());
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
