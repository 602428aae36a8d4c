//! The overlap documents: pairs of stores of different brands within a distance, with the
//! counts.
//!
//! - JSON: `{brands, distance_m, region, pair_count, stores_with_partner, by_country, pairs}`;
//!   `stores_with_partner` maps each brand to its stores with a partner, `by_country` gives the
//!   same per country (the first store's) with its pair count, each pair is `{distance_m, a, b}`
//!   with `a` and `b` rows as location-map writes them, brand included.
//! - CSV: `distance_m`, then the location columns of `a` and of `b`, prefixed `a_` and `b_`.
//! - GeoJSON: one LineString feature per pair, from `a` to `b`, with `distance_m` and each
//!   store's id, brand and name as properties.

use super::csv::{CsvRows, CSV_HEADER};
use super::json::open_location;
use super::text::{json_f64, json_id, json_str};
use super::{BrandCursor, Format, TimeCache, WriteOptions};
use crate::pairs::Overlap;
use crate::snapshot::{Snapshot, TextColumn};

/// The CSV header of an overlap document.
pub fn overlap_csv_header() -> String {
    let side = |p: &str| CSV_HEADER.trim_end().split(',').map(|c| format!("{p}_{c}")).collect::<Vec<_>>().join(",");
    format!("distance_m,{},{}\r\n", side("a"), side("b"))
}

fn metres(d: f64) -> f64 {
    (d * 10.0).round() / 10.0
}

fn brand_counts(out: &mut Vec<u8>, names: &[&str], counts: &[u32]) {
    out.push(b'{');
    for (i, (n, c)) in names.iter().zip(counts).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(out, n);
        out.extend_from_slice(format!(":{c}").as_bytes());
    }
    out.push(b'}');
}

/// Writes `overlap` of the brands `names` (request order) within `distance_m`.
pub fn write_overlap(snap: &Snapshot, names: &[&str], distance_m: f64, overlap: &Overlap, format: Format, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + overlap.pairs.len() * 700);
    let mut times = TimeCache::default();
    let (mut brand_a, mut brand_b) = (BrandCursor::default(), BrandCursor::default());
    match format {
        Format::Json => {
            out.extend_from_slice(b"{\"brands\":[");
            for (i, n) in names.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_str(&mut out, n);
            }
            out.extend_from_slice(b"],\"distance_m\":");
            json_f64(&mut out, distance_m);
            out.extend_from_slice(b",\"region\":");
            json_str(&mut out, &opts.region);
            out.extend_from_slice(format!(",\"pair_count\":{},\"stores_with_partner\":", overlap.pairs.len()).as_bytes());
            brand_counts(&mut out, names, &overlap.stores_with_partner);
            out.extend_from_slice(b",\"by_country\":[");
            for (i, c) in overlap.by_country.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"country\":");
                json_str(&mut out, &c.country);
                out.extend_from_slice(format!(",\"pairs\":{},\"stores_with_partner\":", c.pairs).as_bytes());
                brand_counts(&mut out, names, &c.stores_with_partner);
                out.push(b'}');
            }
            out.extend_from_slice(b"],\"pairs\":[");
            for (i, p) in overlap.pairs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"distance_m\":");
                json_f64(&mut out, metres(p.distance_m));
                out.extend_from_slice(b",\"a\":");
                open_location(snap, p.a as usize, &mut brand_a, true, opts.provenance, &mut out, &mut times);
                out.extend_from_slice(b"},\"b\":");
                open_location(snap, p.b as usize, &mut brand_b, true, opts.provenance, &mut out, &mut times);
                out.extend_from_slice(b"}}");
            }
            out.extend_from_slice(b"]}");
        }
        Format::Csv => {
            out.extend_from_slice(overlap_csv_header().as_bytes());
            let (mut a, mut b) = (CsvRows::default(), CsvRows::default());
            for p in &overlap.pairs {
                json_f64(&mut out, metres(p.distance_m));
                out.push(b',');
                a.write(snap, p.a as usize, &mut out);
                out.push(b',');
                b.write(snap, p.b as usize, &mut out);
                out.extend_from_slice(b"\r\n");
            }
        }
        Format::GeoJson => {
            out.extend_from_slice(b"{\"type\":\"FeatureCollection\",\"features\":[");
            for (i, p) in overlap.pairs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let (a, b) = (p.a as usize, p.b as usize);
                out.extend_from_slice(b"{\"type\":\"Feature\",\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[");
                for (k, r) in [a, b].into_iter().enumerate() {
                    if k > 0 {
                        out.extend_from_slice(b"],[");
                    }
                    json_f64(&mut out, snap.lng[r]);
                    out.push(b',');
                    json_f64(&mut out, snap.lat[r]);
                }
                out.extend_from_slice(b"]]},\"properties\":{\"distance_m\":");
                json_f64(&mut out, metres(p.distance_m));
                for (side, r, cursor) in [("a", a, &mut brand_a), ("b", b, &mut brand_b)] {
                    out.extend_from_slice(format!(",\"{side}_id\":").as_bytes());
                    json_id(&mut out, snap.id[r]);
                    out.extend_from_slice(format!(",\"{side}_brand\":").as_bytes());
                    json_str(&mut out, cursor.name(snap, r as u32));
                    out.extend_from_slice(format!(",\"{side}_name\":").as_bytes());
                    json_str(&mut out, snap.row_text(TextColumn::Name, r));
                }
                out.extend_from_slice(b"}}");
            }
            out.extend_from_slice(b"]}");
        }
    }
    out
}
