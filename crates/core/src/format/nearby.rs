//! The nearest-store documents: each row as the location formats write it plus `distance_m`
//! (great-circle metres to the point asked about, to the decimetre), nearest first.
//!
//! - JSON: `{brand, region, count, locations: [...]}`; rows carry `brand` unless the request
//!   named one brand.
//! - CSV: the location columns, then `distance_m`.
//! - GeoJSON: a FeatureCollection whose features carry `distance_m` among their properties.

use super::csv::{csv_columns, CsvRows};
use super::geojson::open_feature;
use super::json::open_location;
use super::text::{json_f64, json_str};
use super::{BrandCursor, Format, TimeCache, WriteOptions};
use crate::snapshot::Snapshot;

/// The CSV header of a nearest-store document.
pub fn nearby_csv_header(hours: bool) -> String {
    format!("{},distance_m\r\n", csv_columns(hours))
}

/// Distances to the decimetre: pins are not more precise than that.
fn metres(d: f64) -> f64 {
    (d * 10.0).round() / 10.0
}

/// Writes `rows` (row, metres), with each row's brand when `with_brand`.
pub fn write_nearby(snap: &Snapshot, rows: &[(u32, f64)], with_brand: bool, format: Format, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + rows.len() * 360);
    let mut times = TimeCache::default();
    let mut brand = BrandCursor::default();
    match format {
        Format::Json => {
            out.extend_from_slice(b"{\"brand\":");
            json_str(&mut out, &opts.brand_label);
            out.extend_from_slice(b",\"region\":");
            json_str(&mut out, &opts.region);
            out.extend_from_slice(format!(",\"count\":{}", rows.len()).as_bytes());
            super::open_at_members(opts, &mut out);
            out.extend_from_slice(b",\"locations\":[");
            for (i, &(r, d)) in rows.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                open_location(snap, r as usize, &mut brand, with_brand, opts.provenance, &mut out, &mut times);
                out.extend_from_slice(b",\"distance_m\":");
                json_f64(&mut out, metres(d));
                out.push(b'}');
            }
            out.extend_from_slice(b"]}");
        }
        Format::Csv => {
            out.extend_from_slice(nearby_csv_header(opts.hours_column).as_bytes());
            let mut writer = CsvRows::new(opts.hours_column);
            for &(r, d) in rows {
                writer.write(snap, r as usize, &mut out);
                out.push(b',');
                json_f64(&mut out, metres(d));
                out.extend_from_slice(b"\r\n");
            }
        }
        Format::GeoJson => {
            out.extend_from_slice(b"{\"type\":\"FeatureCollection\"");
            super::open_at_members(opts, &mut out);
            out.extend_from_slice(b",\"features\":[");
            for (i, &(r, d)) in rows.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                open_feature(snap, r as usize, &mut brand, opts.provenance, &mut out, &mut times);
                out.extend_from_slice(b",\"distance_m\":");
                json_f64(&mut out, metres(d));
                out.extend_from_slice(b"}}");
            }
            out.extend_from_slice(b"]}");
        }
    }
    out
}
