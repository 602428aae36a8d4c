//! Rows -> response bytes. One writer per format, each writing straight into one `Vec<u8>`
//! that crosses to Node as a Buffer without a copy; `text` holds the escaping and number
//! printing they share.

mod changes;
mod csv;
mod geojson;
mod json;
mod nearby;
mod overlap;
mod text;

use crate::open_at::OpenAt;
use crate::snapshot::Snapshot;
use crate::time::format_iso;

pub use changes::{changes_csv_header, write_changes};
pub use csv::{CSV_HEADER, HOURS_COLUMN};
pub use nearby::{nearby_csv_header, write_nearby};
pub use overlap::{overlap_csv_header, write_overlap};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    GeoJson,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "geojson" => Some(Format::GeoJson),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Adds the five provenance fields (JSON and GeoJSON only; CSV never has them).
    pub provenance: bool,
    /// The envelope's `brand` (JSON): the canonical name, or names joined for several brands.
    pub brand_label: String,
    /// The envelope's `region` (JSON).
    pub region: String,
    /// `coverage_confidence`: in the JSON envelope and as a GeoJSON foreign member (`null`
    /// when it cannot be estimated); CSV carries it in a header only.
    pub coverage: Option<f64>,
    /// With `open_at`: the moment as asked and the stores left out for unknown hours, in the
    /// JSON envelope and as GeoJSON foreign members.
    pub open_at: Option<OpenAt>,
    pub hours_unknown: Option<u32>,
    /// CSV: the opening_hours column after the contract's eleven (`include_hours`).
    pub hours_column: bool,
}

/// `,"open_at":"…","hours_unknown":N` when the request gave `open_at`.
pub(super) fn open_at_members(opts: &WriteOptions, out: &mut Vec<u8>) {
    if let (Some(at), Some(n)) = (opts.open_at, opts.hours_unknown) {
        out.extend_from_slice(b",\"open_at\":");
        text::json_str(out, &at.to_string());
        out.extend_from_slice(b",\"hours_unknown\":");
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

pub fn write_rows(snap: &Snapshot, rows: &[u32], format: Format, opts: &WriteOptions) -> Vec<u8> {
    // About 300 bytes a row in JSON; reserving avoids most regrowth copies.
    let mut out = Vec::with_capacity(256 + rows.len() * 320);
    match format {
        Format::Json => json::write_json(snap, rows, opts, &mut out),
        Format::Csv => csv::write_csv(snap, rows, opts.hours_column, &mut out),
        Format::GeoJson => geojson::write_geojson(snap, rows, opts, &mut out),
    }
    out
}

/// The brand of consecutive rows, found by walking the brand ranges once instead of a search
/// per row.
#[derive(Default)]
struct BrandCursor {
    brand: u32,
    end: u32,
    started: bool,
}

impl BrandCursor {
    /// The brand whose range holds `row` (rows come grouped by brand: looked up once a brand).
    fn record<'a>(&mut self, snap: &'a Snapshot, row: u32) -> &'a crate::records::BrandRecord {
        if !self.started || row >= self.end || row < snap.brands[self.brand as usize].row_start {
            self.brand = snap.brand_of_row(row);
            self.end = snap.brands[self.brand as usize].row_end;
            self.started = true;
        }
        &snap.brands[self.brand as usize]
    }

    fn name<'a>(&mut self, snap: &'a Snapshot, row: u32) -> &'a str {
        &self.record(snap, row).name
    }

    /// The brand's Wikidata id, "" where none is known.
    fn wikidata<'a>(&mut self, snap: &'a Snapshot, row: u32) -> &'a str {
        self.record(snap, row).wikidata.as_deref().unwrap_or("")
    }
}

/// The last timestamp formatted: nearly every row carries the same refresh time.
#[derive(Default)]
struct TimeCache {
    t: Option<i64>,
    text: String,
}

impl TimeCache {
    fn get(&mut self, t: i64) -> &[u8] {
        if self.t != Some(t) {
            self.t = Some(t);
            self.text = format_iso(t);
        }
        self.text.as_bytes()
    }
}
