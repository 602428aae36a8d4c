//! The change feed's documents: the stores a brand opened and closed between two dates, each
//! row as the location formats write it plus when it was first seen (opened) or last seen
//! (closed). The opened rows come from the serving snapshot, the closed ones from the departed
//! rows, so each list is written by its own snapshot's row writers.
//!
//! - JSON: `{brand, region, since, until, opened_count, closed_count, opened: [...],
//!   closed: [...]}`, each row with `first_seen` or `last_seen`.
//! - CSV: the location columns, then `change` (`opened` or `closed`) and `seen` (the first or
//!   last time seen); opened rows first.
//! - GeoJSON: one FeatureCollection whose features carry `change` and `first_seen` or
//!   `last_seen` among their properties, with `since` and `until` as foreign members.

use super::csv::{csv_columns, CsvRows};
use super::geojson::open_feature;
use super::json::open_location;
use super::text::{json_str, json_time};
use super::{BrandCursor, Format, TimeCache, WriteOptions};
use crate::changes::Changes;
use crate::snapshot::Snapshot;

/// The CSV header of a change document.
pub fn changes_csv_header(hours: bool) -> String {
    format!("{},change,seen\r\n", csv_columns(hours))
}

/// One list of a change document: its rows, the snapshot they are rows of, and the names of the
/// change and of its time.
struct List<'a> {
    snap: &'a Snapshot,
    rows: &'a [(u32, i64)],
    change: &'static str,
    seen: &'static str,
}

/// Writes `changes` of one brand (`opts.brand_label`, `opts.region`) in `format`.
pub fn write_changes(current: &Snapshot, departed: &Snapshot, changes: &Changes, format: Format, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + changes.count() as usize * 360);
    let lists = [
        List { snap: current, rows: &changes.opened, change: "opened", seen: "first_seen" },
        List { snap: departed, rows: &changes.closed, change: "closed", seen: "last_seen" },
    ];
    let mut times = TimeCache::default();
    match format {
        Format::Json => {
            out.extend_from_slice(b"{\"brand\":");
            json_str(&mut out, &opts.brand_label);
            out.extend_from_slice(b",\"region\":");
            json_str(&mut out, &opts.region);
            out.extend_from_slice(b",\"since\":");
            json_time(&mut out, changes.since, &mut times);
            out.extend_from_slice(b",\"until\":");
            json_time(&mut out, changes.until, &mut times);
            for List { rows, change, .. } in &lists {
                out.extend_from_slice(format!(",\"{change}_count\":{}", rows.len()).as_bytes());
            }
            for List { snap, rows, change, seen } in &lists {
                out.extend_from_slice(format!(",\"{change}\":[").as_bytes());
                // Each list has a snapshot of its own (the serving one, the departed rows).
                let mut brand = BrandCursor::default();
                for (i, &(r, t)) in rows.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    open_location(snap, r as usize, &mut brand, false, opts.provenance, &mut out, &mut times);
                    out.extend_from_slice(format!(",\"{seen}\":").as_bytes());
                    json_time(&mut out, t, &mut times);
                    out.push(b'}');
                }
                out.push(b']');
            }
            out.push(b'}');
        }
        Format::Csv => {
            out.extend_from_slice(changes_csv_header(opts.hours_column).as_bytes());
            for List { snap, rows, change, .. } in &lists {
                let mut writer = CsvRows::new(opts.hours_column);
                for &(r, t) in rows.iter() {
                    writer.write(snap, r as usize, &mut out);
                    out.extend_from_slice(format!(",{change},").as_bytes());
                    out.extend_from_slice(times.get(t));
                    out.extend_from_slice(b"\r\n");
                }
            }
        }
        Format::GeoJson => {
            out.extend_from_slice(b"{\"type\":\"FeatureCollection\",\"since\":");
            json_time(&mut out, changes.since, &mut times);
            out.extend_from_slice(b",\"until\":");
            json_time(&mut out, changes.until, &mut times);
            out.extend_from_slice(b",\"features\":[");
            let mut first = true;
            for List { snap, rows, change, seen } in &lists {
                let mut brand = BrandCursor::default();
                for &(r, t) in rows.iter() {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    open_feature(snap, r as usize, &mut brand, opts.provenance, &mut out, &mut times);
                    out.extend_from_slice(format!(",\"change\":\"{change}\",\"{seen}\":").as_bytes());
                    json_time(&mut out, t, &mut times);
                    out.extend_from_slice(b"}}");
                }
            }
            out.extend_from_slice(b"]}");
        }
    }
    out
}
