//! Foursquare Open Source Places (Parquet). There is no brand column in the open data: brand
//! comes later, from the name and the category (see `catalog`).

use std::path::Path;

use polars_arrow::array::StaticArray;
use polars_error::{polars_bail, PolarsResult};
use storemap_core::{parse_iso, SourceType};

use super::parquet::{f64_col, list_first_str, missing_columns, str_col, str_col_any, Frame};
use super::Batcher;
use crate::error::Result;
use crate::source_row::{clean, valid_point, Skip, Skipped};
use crate::{ImportReport, SourceRow};

pub fn import_fsq(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut rows = Vec::new();
    let report = import_fsq_into(path, &mut |batch| rows.extend(batch))?;
    Ok((rows, report))
}

/// A Places file or a release's folder of parts, one file at a time to `sink`.
pub fn import_fsq_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    super::parquet::import_files(path, SourceType::Fsq, read_rows, sink)
}

/// Without these a row cannot be placed or named. `fsq_place_id` was `fsq_id` before the
/// 2024-11 release; either will do.
const REQUIRED: [&str; 3] = ["name", "latitude", "longitude"];

fn read_rows(df: &Frame, file: &str, rows: &mut Batcher, report: &mut ImportReport) -> PolarsResult<()> {
    let mut missing = missing_columns(df, &REQUIRED);
    if missing_columns(df, &["fsq_place_id"]).len() + missing_columns(df, &["fsq_id"]).len() == 2 {
        missing.insert(0, "fsq_place_id".into());
    }
    if !missing.is_empty() {
        let have = df.names();
        polars_bail!(ColumnNotFound: "not a Foursquare OS Places file: missing required column(s) {} (it has {})", missing.join(", "), have.join(", "));
    }
    let id = str_col_any(df, &["fsq_place_id", "fsq_id"])?;
    let name = str_col(df, "name")?;
    let (lat, lng) = (f64_col(df, "latitude")?.expect("checked above"), f64_col(df, "longitude")?.expect("checked above"));
    let address = str_col(df, "address")?;
    let locality = str_col(df, "locality")?;
    let region = str_col(df, "region")?;
    let postcode = str_col(df, "postcode")?;
    let country = str_col(df, "country")?;
    let tel = str_col(df, "tel")?;
    let refreshed = str_col(df, "date_refreshed")?;
    let closed = str_col(df, "date_closed")?;
    let label = list_first_str(df, "fsq_category_labels", None)?;

    for i in 0..df.height() {
        report.rows_read += 1;
        let line = (df.first_row + i) as u64 + 1;
        let Some(pid) = clean(id.get(i)) else {
            report.skip(file, line, Skipped::new(Skip::Invalid, "no fsq_place_id"));
            continue;
        };
        let (y, x) = match (lat.get(i), lng.get(i)) {
            (Some(y), Some(x)) if valid_point(y, x) => (y, x),
            (Some(y), Some(x)) => {
                report.skip(file, line, Skipped::new(Skip::BadGeometry, format!("coordinates out of range: [{x}, {y}]")));
                continue;
            }
            _ => {
                report.skip(file, line, Skipped::new(Skip::BadGeometry, "null latitude or longitude"));
                continue;
            }
        };
        if let Some(d) = clean(closed.get(i)) {
            report.skip(file, line, Skipped::new(Skip::Closed, format!("date_closed {d}")));
            continue;
        }
        let Some(n) = clean(name.get(i)) else {
            report.skip(file, line, Skipped::new(Skip::NoBrandMatch, "no name"));
            continue;
        };
        rows.push(SourceRow {
            source: Some(SourceType::Fsq),
            source_id: pid,
            lat: y,
            lng: x,
            name: n,
            category: clean(label.get(i)),
            address: clean(address.get(i)),
            city: clean(locality.get(i)),
            state: clean(region.get(i)),
            postcode: clean(postcode.get(i)),
            country: clean(country.get(i)).map(|c| c.to_uppercase()).filter(|c| c.len() == 2),
            phone: clean(tel.get(i)),
            seen_at: refreshed.get(i).and_then(parse_iso),
            ..SourceRow::default()
        });
    }
    Ok(())
}
