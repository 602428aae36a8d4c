//! Foursquare Open Source Places (Parquet). There is no brand column in the open data: brand
//! comes later, from the name and the category (see `catalog`).

use std::path::Path;

use polars::prelude::*;
use storemap_core::{parse_iso, SourceType};

use super::parquet::{f64_col, list_first_str, str_col};
use crate::error::Result;
use crate::source_row::{clean, valid_point};
use crate::{ImportReport, SourceRow};

pub fn import_fsq(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    super::parquet::import_files(path, SourceType::Fsq, read_rows)
}

fn read_rows(df: &DataFrame, file: &str, rows: &mut Vec<SourceRow>, report: &mut ImportReport) -> PolarsResult<()> {
    let id = str_col(df, "fsq_place_id")?;
    let name = str_col(df, "name")?;
    let (Some(lat), Some(lng)) = (f64_col(df, "latitude")?, f64_col(df, "longitude")?) else {
        polars_bail!(ColumnNotFound: "latitude/longitude columns are missing");
    };
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
        let line = i as u64 + 1;
        let Some(pid) = clean(id.get(i)) else {
            report.skip(file, line, "no fsq_place_id");
            continue;
        };
        let (y, x) = match (lat.get(i), lng.get(i)) {
            (Some(y), Some(x)) if valid_point(y, x) => (y, x),
            (Some(y), Some(x)) => {
                report.skip(file, line, format!("coordinates out of range: [{x}, {y}]"));
                continue;
            }
            _ => {
                report.skip(file, line, "null latitude or longitude");
                continue;
            }
        };
        if clean(closed.get(i)).is_some() {
            report.rows_closed += 1;
            continue;
        }
        let Some(n) = clean(name.get(i)) else {
            report.skip(file, line, "no name");
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
