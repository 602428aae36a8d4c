//! A GeoJSON FeatureCollection of Points, `[lng, lat]`, the JSON fields as properties.

use super::json::{common_fields, provenance_fields};
use super::text::{json_f64, json_id, json_opt_f64, json_opt_str, json_str};
use super::{BrandCursor, TimeCache, WriteOptions};
use crate::snapshot::{Snapshot, TextColumn};

pub(super) fn write_geojson(snap: &Snapshot, rows: &[u32], opts: &WriteOptions, out: &mut Vec<u8>) {
    let mut brand = BrandCursor::default();
    let mut times = TimeCache::default();
    // coverage_confidence is a foreign member (RFC 7946 §6.1): readers that do not know it skip it.
    out.extend_from_slice(b"{\"type\":\"FeatureCollection\",\"coverage_confidence\":");
    json_opt_f64(out, opts.coverage);
    super::open_at_members(opts, out);
    out.extend_from_slice(b",\"features\":[");
    for (i, &r) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        open_feature(snap, r as usize, &mut brand, opts.provenance, out, &mut times);
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"]}");
}

/// One feature without the closing braces of its properties and itself, so a caller may add
/// properties.
pub(super) fn open_feature(snap: &Snapshot, r: usize, brand: &mut BrandCursor, provenance: bool, out: &mut Vec<u8>, times: &mut TimeCache) {
    out.extend_from_slice(b"{\"type\":\"Feature\",\"id\":");
    json_id(out, snap.id[r]);
    out.extend_from_slice(b",\"geometry\":{\"type\":\"Point\",\"coordinates\":[");
    json_f64(out, snap.lng[r]);
    out.push(b',');
    json_f64(out, snap.lat[r]);
    out.extend_from_slice(b"]},\"properties\":{\"brand\":");
    json_str(out, brand.name(snap, r as u32));
    out.extend_from_slice(b",\"brand_wikidata\":");
    json_opt_str(out, brand.wikidata(snap, r as u32));
    out.extend_from_slice(b",\"name\":");
    json_str(out, snap.row_text(TextColumn::Name, r));
    common_fields(snap, r, out, times);
    if provenance {
        provenance_fields(snap, r, out, times);
    }
}
