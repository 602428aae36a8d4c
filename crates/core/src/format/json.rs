//! The JSON envelope `{brand, region, count, coverage_confidence, locations}`, and the row fields JSON and GeoJSON
//! share.

use std::sync::LazyLock;

use super::text::{json_f64, json_id, json_opt_f64, json_opt_str, json_str, json_time};
use super::{BrandCursor, TimeCache, WriteOptions};
use crate::model::{SourceType, StorefrontType};
use crate::snapshot::{Snapshot, TextColumn};

pub(super) fn write_json(snap: &Snapshot, rows: &[u32], opts: &WriteOptions, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"brand\":");
    json_str(out, &opts.brand_label);
    out.extend_from_slice(b",\"region\":");
    json_str(out, &opts.region);
    out.extend_from_slice(b",\"count\":");
    out.extend_from_slice(itoa::Buffer::new().format(rows.len()).as_bytes());
    out.extend_from_slice(b",\"coverage_confidence\":");
    json_opt_f64(out, opts.coverage);
    super::open_at_members(opts, out);
    out.extend_from_slice(b",\"locations\":[");
    // Rows come grouped by brand, in snapshot order: first and last differ iff several brands.
    let many_brands = match (rows.first(), rows.last()) {
        (Some(&f), Some(&l)) => snap.brand_of_row(f) != snap.brand_of_row(l),
        _ => false,
    };
    let mut brand = BrandCursor::default();
    let mut times = TimeCache::default();
    for (i, &r) in rows.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        open_location(snap, r as usize, &mut brand, many_brands, opts.provenance, out, &mut times);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
}

/// One location object without its closing brace, so a caller may add fields: `brand` when
/// asked (answers of several brands), the brand's Wikidata id always, the provenance fields
/// when asked for.
pub(super) fn open_location(snap: &Snapshot, r: usize, brand: &mut BrandCursor, with_brand: bool, provenance: bool, out: &mut Vec<u8>, times: &mut TimeCache) {
    out.extend_from_slice(b"{\"id\":");
    json_id(out, snap.id[r]);
    if with_brand {
        out.extend_from_slice(b",\"brand\":");
        json_str(out, brand.name(snap, r as u32));
    }
    out.extend_from_slice(b",\"brand_wikidata\":");
    json_opt_str(out, brand.wikidata(snap, r as u32));
    out.extend_from_slice(b",\"name\":");
    json_str(out, snap.row_text(TextColumn::Name, r));
    out.extend_from_slice(b",\"lat\":");
    json_f64(out, snap.lat[r]);
    out.extend_from_slice(b",\"lng\":");
    json_f64(out, snap.lng[r]);
    common_fields(snap, r, out, times);
    if provenance {
        provenance_fields(snap, r, out, times);
    }
}

/// `,"name":`, `,"address":` and the rest, made once from the column names.
static TEXT_KEYS: LazyLock<[Vec<u8>; 7]> = LazyLock::new(|| TextColumn::ALL.map(|c| format!(",\"{}\":", c.key()).into_bytes()));

/// The fields JSON and GeoJSON share, each preceded by a comma.
pub(super) fn common_fields(snap: &Snapshot, r: usize, out: &mut Vec<u8>, times: &mut TimeCache) {
    out.extend_from_slice(b",\"country\":");
    json_str(out, &snap.countries[snap.country[r] as usize]);
    let keys = &*TEXT_KEYS;
    for c in [TextColumn::State, TextColumn::City, TextColumn::Address, TextColumn::Postcode, TextColumn::Phone, TextColumn::OpeningHours] {
        out.extend_from_slice(&keys[c as usize]);
        json_opt_str(out, snap.row_text(c, r));
    }
    out.extend_from_slice(b",\"last_updated\":");
    json_time(out, snap.last_updated[r], times);
}

pub(super) fn provenance_fields(snap: &Snapshot, r: usize, out: &mut Vec<u8>, times: &mut TimeCache) {
    if !snap.row_has_provenance(r) {
        out.extend_from_slice(b",\"source_types\":null,\"confidence\":null,\"storefront_type\":null,\"alias_sources\":null,\"last_verified\":null");
        return;
    }
    out.extend_from_slice(b",\"source_types\":[");
    for (i, s) in snap.row_sources(r).iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_str(out, s.as_str());
    }
    out.extend_from_slice(b"],\"confidence\":");
    // Three decimals: the score is a model output, more digits would be noise.
    json_f64(out, (snap.confidence[r] as f64 * 1000.0).round() / 1000.0);
    out.extend_from_slice(b",\"storefront_type\":");
    match StorefrontType::from_u8(snap.storefront[r]) {
        Some(t) => json_str(out, t.as_str()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"alias_sources\":[");
    for (i, (s, id)) in snap.row_aliases(r).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"source_type\":");
        json_str(out, SourceType::as_str(s));
        out.extend_from_slice(b",\"source_id\":");
        json_str(out, id);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"last_verified\":");
    json_time(out, snap.last_verified[r], times);
}
