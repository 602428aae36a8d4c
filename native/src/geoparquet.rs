//! An area cut out of a remote GeoParquet file by byte ranges (storemap-geoparquet), for
//! `storemap data fetch`'s Overture source: the caller reads the footer and the ranges the cut
//! names (HTTP range requests), stores the ranges one after another in a file, and `write`
//! makes the GeoParquet file of the kept row groups.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_geoparquet::{Cut, GeoParquetError};

use crate::error::{run, Code, Failure, NativeCode};
use crate::render::ByteRange;

/// What a first read from the end of a file takes (the footer usually fits in it).
#[napi]
pub const PARQUET_TAIL_BYTES: u32 = storemap_geoparquet::TAIL_BYTES as u32;

fn failure(e: GeoParquetError) -> Failure {
    let code = if matches!(e, GeoParquetError::Io { .. }) { NativeCode::IoError } else { NativeCode::InvalidSource };
    Failure::new(code, e)
}

/// How many bytes at the end of the file hold its footer, from its last bytes (at least 8).
#[napi]
pub fn parquet_footer_length(tail: Buffer, file_size: f64) -> Result<f64, Code> {
    run(|| Ok(storemap_geoparquet::footer_len(&tail, file_size as u64).map_err(failure)? as f64))
}

/// What a cut keeps.
#[napi(object)]
pub struct CutSummary {
    pub row_groups: u32,
    pub kept_row_groups: u32,
    pub rows: f64,
    pub kept_rows: f64,
    /// The bytes the ranges cover.
    pub range_bytes: f64,
    pub file_size: f64,
}

#[napi]
pub struct GeoParquetCut {
    inner: Cut,
}

#[napi]
impl GeoParquetCut {
    /// From the file's last `parquetFooterLength` bytes (or more), its size, and the area as
    /// boxes [west, south, east, north] (west east of east across the antimeridian).
    #[napi(constructor)]
    pub fn new(tail: Buffer, file_size: f64, area: Vec<Vec<f64>>) -> Result<GeoParquetCut, Code> {
        run(|| {
            let boxes = area
                .iter()
                .map(|b| <[f64; 4]>::try_from(b.as_slice()).ok().filter(|b| b.iter().all(|v| v.is_finite())))
                .collect::<Option<Vec<[f64; 4]>>>()
                .ok_or_else(|| Failure::invalid("each box must be four numbers [west, south, east, north]"))?;
            Ok(GeoParquetCut { inner: Cut::plan(&tail, file_size as u64, &boxes).map_err(failure)? })
        })
    }

    /// Whether the file has bbox statistics; without them the cut keeps every row group.
    #[napi(getter)]
    pub fn filterable(&self) -> bool {
        self.inner.filterable()
    }

    /// The ranges to read, in file order, to be stored one after another.
    #[napi]
    pub fn ranges(&self) -> Vec<ByteRange> {
        self.inner.ranges().iter().map(|r| ByteRange { offset: r.offset as f64, length: r.length as f64 }).collect()
    }

    #[napi]
    pub fn summary(&self) -> CutSummary {
        summary(self.inner.summary())
    }

    /// Writes the kept row groups, read from `rangesFile`, as a GeoParquet file at `out`.
    #[napi]
    pub fn write(&self, ranges_file: String, out: String) -> Result<CutSummary, Code> {
        run(|| Ok(summary(self.inner.write(std::path::Path::new(&ranges_file), std::path::Path::new(&out)).map_err(failure)?)))
    }
}

fn summary(s: storemap_geoparquet::Summary) -> CutSummary {
    CutSummary {
        row_groups: s.row_groups as u32,
        kept_row_groups: s.kept_row_groups as u32,
        rows: s.rows as f64,
        kept_rows: s.kept_rows as f64,
        range_bytes: s.range_bytes as f64,
        file_size: s.file_size as f64,
    }
}
