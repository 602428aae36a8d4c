//! Foursquare Open Source Places (Parquet). There is no brand column in the open data: brand
//! comes later, from the name and the category (see `catalog`).

use std::path::Path;

use polars_arrow::array::{PrimitiveArray, StaticArray};
use polars_error::{polars_bail, PolarsResult};
use storemap_core::{parse_iso, SourceType};

use super::parquet::{f64_col, list_first_str, missing_columns, str_col, str_col_any, Col, Frame, Rows};
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
    super::parquet::import_files(path, SourceType::Fsq, columns, sink)
}

/// Without these a row cannot be placed or named. `fsq_place_id` was `fsq_id` before the
/// 2024-11 release; either will do.
const REQUIRED: [&str; 3] = ["name", "latitude", "longitude"];

/// The columns of a row group the rows are made of.
struct Columns {
    id: Col,
    name: Col,
    lat: PrimitiveArray<f64>,
    lng: PrimitiveArray<f64>,
    address: Col,
    locality: Col,
    region: Col,
    postcode: Col,
    country: Col,
    tel: Col,
    refreshed: Col,
    closed: Col,
    label: Col,
}

/// Every column a Foursquare row is made of (decoded at once, each on a core).
const COLUMNS: [&str; 14] = [
    "fsq_place_id",
    "fsq_id",
    "name",
    "latitude",
    "longitude",
    "address",
    "locality",
    "region",
    "postcode",
    "country",
    "tel",
    "date_refreshed",
    "date_closed",
    "fsq_category_labels",
];

fn columns(df: &Frame) -> PolarsResult<Box<dyn Rows>> {
    let mut missing = missing_columns(df, &REQUIRED);
    if missing_columns(df, &["fsq_place_id"]).len() + missing_columns(df, &["fsq_id"]).len() == 2 {
        missing.insert(0, "fsq_place_id".into());
    }
    if !missing.is_empty() {
        let have = df.names();
        polars_bail!(ColumnNotFound: "not a Foursquare OS Places file: required column(s) missing or empty: {} (it has {})", missing.join(", "), have.join(", "));
    }
    df.preload(&COLUMNS)?;
    Ok(Box::new(Columns {
        id: str_col_any(df, &["fsq_place_id", "fsq_id"])?,
        name: str_col(df, "name")?,
        lat: f64_col(df, "latitude")?.expect("checked above"),
        lng: f64_col(df, "longitude")?.expect("checked above"),
        address: str_col(df, "address")?,
        locality: str_col(df, "locality")?,
        region: str_col(df, "region")?,
        postcode: str_col(df, "postcode")?,
        country: str_col(df, "country")?,
        tel: str_col(df, "tel")?,
        refreshed: str_col(df, "date_refreshed")?,
        closed: str_col(df, "date_closed")?,
        label: list_first_str(df, "fsq_category_labels", None)?,
    }))
}

impl Rows for Columns {
    fn row(&self, i: usize) -> std::result::Result<SourceRow, Skipped> {
        let Some(pid) = clean(self.id.get(i)) else {
            return Err(Skipped::new(Skip::Invalid, "no fsq_place_id"));
        };
        let (y, x) = match (self.lat.get(i), self.lng.get(i)) {
            (Some(y), Some(x)) if valid_point(y, x) => (y, x),
            (Some(y), Some(x)) => return Err(Skipped::new(Skip::BadGeometry, format!("coordinates out of range: [{x}, {y}]"))),
            _ => return Err(Skipped::new(Skip::BadGeometry, "null latitude or longitude")),
        };
        if let Some(d) = clean(self.closed.get(i)) {
            return Err(Skipped::new(Skip::Closed, format!("date_closed {d}")));
        }
        let Some(n) = clean(self.name.get(i)) else {
            return Err(Skipped::new(Skip::NoBrandMatch, "no name"));
        };
        Ok(SourceRow {
            source: Some(SourceType::Fsq),
            source_id: pid,
            lat: y,
            lng: x,
            name: n,
            category: clean(self.label.get(i)),
            address: clean(self.address.get(i)),
            city: clean(self.locality.get(i)),
            state: clean(self.region.get(i)),
            postcode: clean(self.postcode.get(i)),
            country: clean(self.country.get(i)).map(|c| c.to_uppercase()).filter(|c| c.len() == 2),
            phone: clean(self.tel.get(i)),
            seen_at: self.refreshed.get(i).and_then(parse_iso),
            ..SourceRow::default()
        })
    }
}
