//! Cutting an area out of a GeoParquet file that may be remote, as `overturemaps download --bbox`
//! and DuckDB do with Overture's release: only the footer, then the row groups whose `bbox`
//! statistics meet the area, are read, and they are written out as a valid file of their own
//! (the same schema and `geo` metadata, the row groups' bytes unchanged). A country costs its
//! row groups instead of the whole worldwide release.
//!
//! The reading (HTTP range requests in the service) stays with the caller, as with the render
//! crate's PMTiles extract:
//!
//! ```text
//! let n = footer_len(&last_8_bytes)?;               // read the last n bytes
//! let cut = Cut::plan(&last_n_bytes, file_size, &area)?;
//! // read cut.ranges() one after another into one file, then
//! cut.write(&ranges_file, &out)?;
//! ```
//!
//! Nothing here decodes a page: row groups are kept or dropped whole, by the column-chunk
//! statistics of the covering columns the file's `geo` metadata names (GeoParquet 1.1
//! `covering.bbox`), else of a `bbox` struct with `xmin`/`ymin`/`xmax`/`ymax` fields (Overture's
//! layout before it wrote the covering). A file with neither cannot be cut: [`Cut::filterable`]
//! says so and the caller downloads it whole.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use polars_parquet_format::thrift::protocol::{TCompactInputProtocol, TCompactOutputProtocol};
use polars_parquet_format::{ColumnChunk, FileMetaData, Statistics, Type};

/// A Parquet file begins and ends with these four bytes.
const MAGIC: &[u8; 4] = b"PAR1";
/// The footer's last 8 bytes: the metadata's length (u32, little-endian) and the magic.
pub const TRAILER_BYTES: u64 = 8;
/// What a caller reads first from the end of the file: Overture's footers are 20–200 KiB, so
/// one request usually holds the whole footer.
pub const TAIL_BYTES: u64 = 256 * 1024;
/// Kept row groups at most this far apart are read as one range: fewer requests for a few
/// wasted bytes.
pub const COALESCE_GAP: u64 = 1024 * 1024;
/// A footer larger than this is not a places file (Overture's biggest are well under 1 MiB).
const MAX_FOOTER: u64 = 64 * 1024 * 1024;
/// Row-group bounds come from float statistics that writers may round to f32: an area is
/// widened by this much (degrees) so a store on its edge is never cut away.
const EDGE: f64 = 1e-4;

#[derive(Debug, thiserror::Error)]
pub enum GeoParquetError {
    #[error("not a Parquet file: {0}")]
    NotParquet(String),
    #[error("damaged Parquet file: {0}")]
    Damaged(String),
    #[error("cannot cut this Parquet file: {0}")]
    Unsupported(String),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
}

pub type Result<T> = std::result::Result<T, GeoParquetError>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> GeoParquetError + '_ {
    move |source| GeoParquetError::Io { path: path.display().to_string(), source }
}

/// A byte range of the source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub offset: u64,
    pub length: u64,
}

/// A box in degrees: west, south, east, north. One whose west is east of its east crosses the
/// antimeridian.
pub type Bbox = [f64; 4];

/// How many bytes at the end of the file hold the footer (the metadata and the trailer), from
/// the file's last [`TRAILER_BYTES`] (or more) bytes.
pub fn footer_len(tail: &[u8], file_size: u64) -> Result<u64> {
    let Some(trailer) = tail.len().checked_sub(TRAILER_BYTES as usize).map(|i| &tail[i..]) else {
        return Err(GeoParquetError::NotParquet(format!("{} bytes is too short for a Parquet footer", tail.len())));
    };
    if &trailer[4..] != MAGIC {
        return Err(GeoParquetError::NotParquet("it does not end with PAR1 (an encrypted footer ends with PARE and is not supported)".into()));
    }
    let meta = u64::from(u32::from_le_bytes(trailer[..4].try_into().expect("four bytes")));
    let len = meta + TRAILER_BYTES;
    if len > MAX_FOOTER || len + MAGIC.len() as u64 > file_size {
        return Err(GeoParquetError::Damaged(format!("its footer claims {meta} bytes of metadata in a file of {file_size}")));
    }
    Ok(len)
}

/// The bounds of one row group, from its statistics; `None` where a statistic is missing (the
/// row group is then kept: it cannot be ruled out).
type Extent = Option<Bbox>;

/// A cut planned from a file's footer: which row groups meet the area and where their bytes are.
#[derive(Debug)]
pub struct Cut {
    meta: FileMetaData,
    file_size: u64,
    /// Each row group's byte span in the source, and its extent.
    spans: Vec<(Range, Extent)>,
    kept: Vec<usize>,
    ranges: Vec<Range>,
    filterable: bool,
}

/// What a cut keeps, for the caller's report.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub row_groups: usize,
    pub kept_row_groups: usize,
    pub rows: u64,
    pub kept_rows: u64,
    /// The bytes the ranges cover.
    pub range_bytes: u64,
    pub file_size: u64,
}

impl Cut {
    /// Plans a cut from the file's last `footer_len` bytes (at least: a longer tail is fine).
    /// An empty `area` keeps nothing.
    pub fn plan(tail: &[u8], file_size: u64, area: &[Bbox]) -> Result<Cut> {
        let len = footer_len(tail, file_size)?;
        if (tail.len() as u64) < len {
            return Err(GeoParquetError::Damaged(format!("the footer is {len} bytes but only {} were given", tail.len())));
        }
        let meta_bytes = &tail[tail.len() - len as usize..tail.len() - TRAILER_BYTES as usize];
        // The limit bounds what a hostile footer can make the reader allocate.
        let mut prot = TCompactInputProtocol::new(meta_bytes, meta_bytes.len() * 2 + 1024);
        let meta = FileMetaData::read_from_in_protocol(&mut prot).map_err(|e| GeoParquetError::Damaged(format!("its metadata does not decode: {e}")))?;
        if meta.encryption_algorithm.is_some() {
            return Err(GeoParquetError::Unsupported("it is encrypted".into()));
        }
        let data_end = file_size - len;
        let covering = covering_columns(&meta);
        let mut spans = Vec::with_capacity(meta.row_groups.len());
        for (i, rg) in meta.row_groups.iter().enumerate() {
            let span = row_group_span(&rg.columns, data_end).map_err(|m| GeoParquetError::Damaged(format!("row group {i}: {m}")))?;
            let extent = covering.as_ref().and_then(|c| extent(&rg.columns, c));
            spans.push((span, extent));
        }
        let area: Vec<Bbox> = area.iter().flat_map(|b| split_antimeridian(*b)).collect();
        let kept: Vec<usize> = (0..spans.len()).filter(|&i| covering.is_none() || spans[i].1.is_none_or(|e| area.iter().any(|a| meets(&e, a)))).collect();
        let ranges = coalesce(kept.iter().map(|&i| spans[i].0));
        // Covering columns whose statistics were never written rule nothing out.
        let filterable = covering.is_some() && spans.iter().any(|s| s.1.is_some());
        Ok(Cut { meta, file_size, spans, kept, ranges, filterable })
    }

    /// Whether the file has bbox statistics to cut by (covering columns, and statistics for
    /// them in some row group); without them every row group is kept.
    pub fn filterable(&self) -> bool {
        self.filterable
    }

    /// The byte ranges to read, in file order; [`Cut::write`] expects them one after another.
    pub fn ranges(&self) -> &[Range] {
        &self.ranges
    }

    pub fn summary(&self) -> Summary {
        let rows = |it: &mut dyn Iterator<Item = usize>| it.map(|i| self.meta.row_groups[i].num_rows.max(0) as u64).sum();
        Summary {
            row_groups: self.meta.row_groups.len(),
            kept_row_groups: self.kept.len(),
            rows: rows(&mut (0..self.meta.row_groups.len())),
            kept_rows: rows(&mut self.kept.iter().copied()),
            range_bytes: self.ranges.iter().map(|r| r.length).sum(),
            file_size: self.file_size,
        }
    }

    /// Writes the kept row groups, read from `ranges_file` (the bytes of [`Cut::ranges`] one
    /// after another), as a Parquet file at `out`: `PAR1`, the row groups' bytes unchanged,
    /// then the footer with their offsets moved, the page indexes and bloom filters (not read)
    /// left out, and the `geo` metadata's `bbox` narrowed to the kept row groups.
    pub fn write(&self, ranges_file: &Path, out: &Path) -> Result<Summary> {
        let expected: u64 = self.ranges.iter().map(|r| r.length).sum();
        let mut src = File::open(ranges_file).map_err(io(ranges_file))?;
        let have = src.metadata().map_err(io(ranges_file))?.len();
        if have != expected {
            return Err(GeoParquetError::Damaged(format!("{} holds {have} bytes, the ranges {expected}", ranges_file.display())));
        }
        let mut meta = self.meta.clone();
        meta.row_groups = Vec::with_capacity(self.kept.len());
        let mut dst = BufWriter::new(File::create(out).map_err(io(out))?);
        dst.write_all(MAGIC).map_err(io(out))?;
        let mut pos = MAGIC.len() as u64;
        let mut buf = Vec::new();
        for (ordinal, &i) in self.kept.iter().enumerate() {
            let span = self.spans[i].0;
            src.seek(SeekFrom::Start(self.offset_in_ranges(span))).map_err(io(ranges_file))?;
            buf.resize(span.length as usize, 0);
            src.read_exact(&mut buf).map_err(io(ranges_file))?;
            dst.write_all(&buf).map_err(io(out))?;
            let mut rg = self.meta.row_groups[i].clone();
            let shift = pos as i64 - span.offset as i64;
            for c in &mut rg.columns {
                move_chunk(c, shift, span);
            }
            rg.file_offset = Some(pos as i64);
            rg.ordinal = i16::try_from(ordinal).ok();
            meta.row_groups.push(rg);
            pos += span.length;
        }
        meta.num_rows = meta.row_groups.iter().map(|rg| rg.num_rows).sum();
        self.narrow_geo_bbox(&mut meta);
        let mut footer = Vec::new();
        meta.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut footer))
            .map_err(|e| GeoParquetError::Damaged(format!("its metadata does not encode again: {e}")))?;
        let footer_len = u32::try_from(footer.len()).map_err(|_| GeoParquetError::Unsupported("a footer over 4 GiB".into()))?;
        dst.write_all(&footer).map_err(io(out))?;
        dst.write_all(&footer_len.to_le_bytes()).map_err(io(out))?;
        dst.write_all(MAGIC).map_err(io(out))?;
        dst.into_inner().map_err(|e| e.into_error()).and_then(|f| f.sync_all()).map_err(io(out))?;
        Ok(self.summary())
    }

    /// Where a row group's bytes start in the concatenated ranges.
    fn offset_in_ranges(&self, span: Range) -> u64 {
        let mut before = 0;
        for r in &self.ranges {
            if span.offset >= r.offset && span.offset < r.offset + r.length {
                return before + span.offset - r.offset;
            }
            before += r.length;
        }
        unreachable!("every kept row group lies in a range")
    }

    /// GeoParquet's optional `bbox` of the primary column, narrowed to what is kept (left as
    /// is when a kept row group's extent is unknown: it may reach anywhere).
    fn narrow_geo_bbox(&self, meta: &mut FileMetaData) {
        let extents: Option<Vec<Bbox>> = self.kept.iter().map(|&i| self.spans[i].1).collect();
        let Some(extents) = extents.filter(|e| !e.is_empty()) else { return };
        let union = extents.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |u, e| {
            [u[0].min(e[0]), u[1].min(e[1]), u[2].max(e[2]), u[3].max(e[3])]
        });
        let Some(kv) = meta.key_value_metadata.as_mut().and_then(|kvs| kvs.iter_mut().find(|kv| kv.key == "geo")) else { return };
        let Some(Ok(mut geo)) = kv.value.as_deref().map(serde_json::from_str::<serde_json::Value>) else { return };
        let primary = geo.get("primary_column").and_then(|p| p.as_str()).unwrap_or("geometry").to_owned();
        let Some(col) = geo.get_mut("columns").and_then(|c| c.get_mut(&primary)).and_then(|c| c.as_object_mut()) else { return };
        if col.contains_key("bbox") {
            col.insert("bbox".into(), serde_json::json!(union));
            kv.value = Some(geo.to_string());
        }
    }
}

/// The covering columns' paths: xmin, ymin, xmax, ymax.
type Covering = [Vec<String>; 4];

/// From the `geo` metadata's `covering.bbox` of the primary column, else a top-level `bbox`
/// struct with the four fields, if the file has those leaf columns.
fn covering_columns(meta: &FileMetaData) -> Option<Covering> {
    let leaf_paths: Vec<&Vec<String>> =
        meta.row_groups.first().map(|rg| rg.columns.iter().filter_map(|c| c.meta_data.as_ref().map(|m| &m.path_in_schema)).collect()).unwrap_or_default();
    let has = |c: &Covering| c.iter().all(|p| leaf_paths.contains(&p));
    let geo = meta
        .key_value_metadata
        .iter()
        .flatten()
        .find(|kv| kv.key == "geo")
        .and_then(|kv| kv.value.as_deref())
        .and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok());
    let from_geo = geo.and_then(|g| {
        let primary = g.get("primary_column")?.as_str()?.to_owned();
        let bbox = g.get("columns")?.get(primary)?.get("covering")?.get("bbox")?.clone();
        let path = |k: &str| -> Option<Vec<String>> { bbox.get(k)?.as_array()?.iter().map(|s| s.as_str().map(str::to_owned)).collect() };
        Some([path("xmin")?, path("ymin")?, path("xmax")?, path("ymax")?])
    });
    let fallback = ["xmin", "ymin", "xmax", "ymax"].map(|f| vec!["bbox".to_owned(), f.to_owned()]);
    from_geo.filter(has).or_else(|| has(&fallback).then_some(fallback))
}

/// A row group's extent: the least xmin and ymin, the greatest xmax and ymax.
fn extent(columns: &[ColumnChunk], covering: &Covering) -> Extent {
    let stat = |path: &Vec<String>, max: bool| -> Option<f64> {
        let m = columns.iter().filter_map(|c| c.meta_data.as_ref()).find(|m| &m.path_in_schema == path)?;
        let s: &Statistics = m.statistics.as_ref()?;
        // min_value/max_value, else the deprecated min/max (signed order: right for floats).
        let bytes = if max { s.max_value.as_ref().or(s.max.as_ref()) } else { s.min_value.as_ref().or(s.min.as_ref()) }?;
        let v = match m.type_ {
            Type::DOUBLE => f64::from_le_bytes(bytes.as_slice().try_into().ok()?),
            Type::FLOAT => f64::from(f32::from_le_bytes(bytes.as_slice().try_into().ok()?)),
            _ => return None,
        };
        v.is_finite().then_some(v)
    };
    Some([stat(&covering[0], false)?, stat(&covering[1], false)?, stat(&covering[2], true)?, stat(&covering[3], true)?])
}

fn meets(e: &Bbox, a: &Bbox) -> bool {
    e[0] <= a[2] + EDGE && e[2] >= a[0] - EDGE && e[1] <= a[3] + EDGE && e[3] >= a[1] - EDGE
}

/// A box across the antimeridian as the two boxes either side of it.
fn split_antimeridian(b: Bbox) -> Vec<Bbox> {
    if b[0] <= b[2] {
        vec![b]
    } else {
        vec![[b[0], b[1], 180.0, b[3]], [-180.0, b[1], b[2], b[3]]]
    }
}

/// Where a column chunk's bytes start: its dictionary page when it has one (some writers put
/// a 0 there for "none", which a real dictionary can never be at, after the magic).
fn chunk_start(m: &polars_parquet_format::ColumnMetaData) -> i64 {
    match m.dictionary_page_offset {
        Some(d) if d >= MAGIC.len() as i64 && d < m.data_page_offset => d,
        _ => m.data_page_offset,
    }
}

/// The bytes from a row group's first column chunk to the end of its last, checked to lie
/// between the magic and the footer.
fn row_group_span(columns: &[ColumnChunk], data_end: u64) -> std::result::Result<Range, String> {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for c in columns {
        if c.file_path.is_some() {
            return Err("a column chunk lives in another file".into());
        }
        let m = c.meta_data.as_ref().ok_or("a column chunk has no metadata")?;
        let (start, len) = (chunk_start(m), m.total_compressed_size);
        if start < MAGIC.len() as i64 || len < 0 {
            return Err(format!("a column chunk at {start} of {len} bytes"));
        }
        let (start, end) = (start as u64, start as u64 + len as u64);
        if end > data_end {
            return Err(format!("a column chunk ends at {end}, past the data's end at {data_end}"));
        }
        lo = lo.min(start);
        hi = hi.max(end);
    }
    if lo >= hi {
        return Err("it has no bytes".into());
    }
    Ok(Range { offset: lo, length: hi - lo })
}

/// Sorted, with neighbours closer than [`COALESCE_GAP`] merged.
fn coalesce(spans: impl Iterator<Item = Range>) -> Vec<Range> {
    let mut spans: Vec<Range> = spans.collect();
    spans.sort_by_key(|r| r.offset);
    let mut out: Vec<Range> = Vec::new();
    for s in spans {
        match out.last_mut() {
            Some(last) if s.offset <= last.offset + last.length + COALESCE_GAP => {
                let end = (last.offset + last.length).max(s.offset + s.length);
                last.length = end - last.offset;
            }
            _ => out.push(s),
        }
    }
    out
}

/// A column chunk's offsets moved by `shift` bytes; the page indexes and bloom filter, which
/// live outside the row group and were not read, dropped.
fn move_chunk(c: &mut ColumnChunk, shift: i64, span: Range) {
    if let Some(m) = c.meta_data.as_mut() {
        let start = chunk_start(m);
        if m.dictionary_page_offset.is_some_and(|d| d == start) {
            m.dictionary_page_offset = Some(start + shift);
        } else {
            m.dictionary_page_offset = None;
        }
        m.data_page_offset += shift;
        m.index_page_offset = m.index_page_offset.filter(|&o| o >= span.offset as i64 && o < (span.offset + span.length) as i64).map(|o| o + shift);
        m.bloom_filter_offset = None;
        m.bloom_filter_length = None;
        // Writers disagree on this deprecated field (the chunk's start, or the end where its
        // metadata used to be written): moved with the chunk when it points into the row
        // group, else the chunk's new start.
        let inside = c.file_offset >= span.offset as i64 && c.file_offset <= (span.offset + span.length) as i64;
        c.file_offset = if inside { c.file_offset + shift } else { start + shift };
    }
    c.column_index_offset = None;
    c.column_index_length = None;
    c.offset_index_offset = None;
    c.offset_index_length = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_coalesce_across_small_gaps_only() {
        let r = |offset, length| Range { offset, length };
        let got = coalesce([r(4 + 3 * COALESCE_GAP, 10), r(4, 100), r(104 + COALESCE_GAP, 50)].into_iter());
        assert_eq!(got, vec![r(4, 150 + COALESCE_GAP), r(4 + 3 * COALESCE_GAP, 10)]);
    }

    #[test]
    fn a_box_across_the_antimeridian_meets_both_sides() {
        let fiji = [177.0, -19.0, -179.0, -16.0];
        let boxes = split_antimeridian(fiji);
        assert!(boxes.iter().any(|a| meets(&[178.0, -18.0, 178.5, -17.0], a)));
        assert!(boxes.iter().any(|a| meets(&[-179.9, -18.0, -179.5, -17.0], a)));
        assert!(!boxes.iter().any(|a| meets(&[0.0, -18.0, 1.0, -17.0], a)));
    }

    #[test]
    fn a_footer_must_end_with_the_magic_and_fit_the_file() {
        assert!(matches!(footer_len(b"xxxx\x10\0\0\0PAR1", 100), Ok(24)));
        assert!(matches!(footer_len(b"\x10\0\0\0PARE", 100), Err(GeoParquetError::NotParquet(_))));
        assert!(matches!(footer_len(b"\xff\xff\0\0PAR1", 100), Err(GeoParquetError::Damaged(_))));
        assert!(matches!(footer_len(b"PAR1", 100), Err(GeoParquetError::NotParquet(_))));
    }
}
