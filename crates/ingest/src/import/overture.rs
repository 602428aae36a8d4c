//! Overture Maps places (GeoParquet): WKB `geometry`, nested `names`, `brand`, `categories`,
//! `addresses` and `sources`. Overture re-publishes rows it took from AllThePlaces and
//! Foursquare; `sources[].dataset` and `record_id` say so, and reconciliation uses them to
//! keep such a store from counting twice.

use std::path::Path;

use polars_arrow::datatypes::ArrowDataType;
use polars_error::{polars_bail, PolarsResult};
use storemap_core::{parse_iso, SourceType};

use super::parquet::{binary_col, list_first_str, list_strs, missing_columns, str_col, struct_str, struct_str2, Frame};
use super::wkb;
use super::Batcher;
use crate::error::Result;
use crate::source_row::{clean, Skip, Skipped};
use crate::{ImportReport, SourceRow};

pub fn import_overture(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut rows = Vec::new();
    let report = import_overture_into(path, &mut |batch| rows.extend(batch))?;
    Ok((rows, report))
}

/// A file as `overturemaps download` writes it, or a release's folder tree
/// (`theme=places/type=place/*.parquet`), one file at a time to `sink`.
pub fn import_overture_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    super::parquet::import_files(path, SourceType::Overture, read_rows, sink)
}

fn read_rows(df: &Frame, file: &str, rows: &mut Batcher, report: &mut ImportReport) -> PolarsResult<()> {
    let missing = missing_columns(df, &["id", "geometry"]);
    if !missing.is_empty() {
        polars_bail!(ColumnNotFound: "not an Overture places file: missing column(s) {}", missing.join(", "));
    }
    // 2023's alpha releases had `names` as a map of lists and temporary ids that were never
    // stable: not worth importing, and not to be read as empty names.
    if let Some(t) = df.dtype("names") {
        if !matches!(t, ArrowDataType::Struct(_) | ArrowDataType::Null) {
            polars_bail!(SchemaMismatch: "names is a {t:?}, not a struct: a pre-2024 Overture release, which is not supported");
        }
    }
    let n = df.height();
    let id = str_col(df, "id")?;
    let geometry = binary_col(df, "geometry")?.expect("checked above");
    let name = struct_str(df, "names", "primary")?;
    let brand_name = struct_str2(df, "brand", "names", "primary")?;
    let wikidata = struct_str(df, "brand", "wikidata")?;
    // The category moved between releases: `categories.main` (2023), `categories.primary`
    // (2024-), `taxonomy.primary` and `basic_category` (Dec 2025-). The most specific one the
    // file has wins.
    let categories = [
        struct_str(df, "taxonomy", "primary")?,
        struct_str(df, "categories", "primary")?,
        struct_str(df, "categories", "main")?,
        str_col(df, "basic_category")?,
    ];
    let status = str_col(df, "operating_status")?;
    let freeform = list_first_str(df, "addresses", Some("freeform"))?;
    let locality = list_first_str(df, "addresses", Some("locality"))?;
    let postcode = list_first_str(df, "addresses", Some("postcode"))?;
    let region = list_first_str(df, "addresses", Some("region"))?;
    let country = list_first_str(df, "addresses", Some("country"))?;
    let phone = list_first_str(df, "phones", None)?;
    let datasets = list_strs(df, "sources", "dataset")?;
    let record_ids = list_strs(df, "sources", "record_id")?;
    let update_times = list_strs(df, "sources", "update_time")?;

    for i in 0..n {
        report.rows_read += 1;
        let line = (df.first_row + i) as u64 + 1;
        let Some(gid) = clean(id.get(i)) else {
            report.skip(file, line, Skipped::new(Skip::Invalid, "no id"));
            continue;
        };
        let (lng, lat) = match geometry.get(i).map(wkb::point) {
            Some(Ok((x, y))) if crate::source_row::valid_point(y, x) => (x, y),
            Some(Ok((x, y))) => {
                report.skip(file, line, Skipped::new(Skip::BadGeometry, format!("coordinates out of range: [{x}, {y}]")));
                continue;
            }
            Some(Err(e)) => {
                report.skip(file, line, Skipped::new(Skip::BadGeometry, e));
                continue;
            }
            None => {
                report.skip(file, line, Skipped::new(Skip::BadGeometry, "null geometry"));
                continue;
            }
        };
        // `permanently_closed` and `temporarily_closed` (2025-) are not stores to visit; a
        // file without the column (2024) is all open.
        if let Some(s) = status.get(i).filter(|s| *s != "open") {
            report.skip(file, line, Skipped::new(Skip::Closed, format!("operating_status {s}")));
            continue;
        }
        let Some(primary) = clean(name.get(i)).or_else(|| clean(brand_name.get(i))) else {
            report.skip(file, line, Skipped::new(Skip::NoBrandMatch, "no names.primary"));
            continue;
        };
        let mut derived_from = Vec::new();
        let mut seen_at = None;
        let (ds, rid, ut) = (&datasets[i], &record_ids[i], &update_times[i]);
        for (k, d) in ds.iter().enumerate() {
            if let Some(t) = ut.get(k).and_then(|t| t.as_deref()).and_then(parse_iso) {
                seen_at = Some(seen_at.map_or(t, |s: i64| s.max(t)));
            }
            let src = match d.as_deref().map(str::to_ascii_lowercase).as_deref() {
                Some("alltheplaces") | Some("all the places") | Some("atp") => SourceType::Atp,
                Some("foursquare") | Some("fsq") => SourceType::Fsq,
                _ => continue,
            };
            if let Some(r) = rid.get(k).and_then(|r| clean(r.as_deref())) {
                derived_from.push((src, r));
            }
        }
        rows.push(SourceRow {
            source: Some(SourceType::Overture),
            source_id: gid,
            lat,
            lng,
            name: primary,
            brand: clean(brand_name.get(i)),
            brand_wikidata: clean(wikidata.get(i)).filter(|q| super::fields::is_qid(q)),
            category: categories.iter().find_map(|c| clean(c.get(i))),
            address: clean(freeform.get(i)),
            city: clean(locality.get(i)),
            // ISO 3166-2 ("US-IL"): the part after the country prefix is the state code.
            state: clean(region.get(i)).map(|r| r.split_once('-').map_or(r.clone(), |(_, s)| s.to_string())),
            postcode: clean(postcode.get(i)),
            country: clean(country.get(i)).map(|c| c.to_uppercase()).filter(|c| c.len() == 2),
            phone: clean(phone.get(i)),
            seen_at,
            derived_from,
            ..SourceRow::default()
        });
    }
    Ok(())
}
