//! Overture Maps places (GeoParquet): WKB `geometry`, nested `names`, `brand`, `categories`,
//! `addresses` and `sources`. Overture re-publishes rows it took from AllThePlaces and
//! Foursquare; `sources[].dataset` and `record_id` say so, and reconciliation uses them to
//! keep such a store from counting twice.

use std::path::Path;

use polars_arrow::datatypes::ArrowDataType;
use polars_error::{polars_bail, PolarsResult};
use storemap_core::{parse_iso, SourceType};

use polars_arrow::array::BinaryViewArray;

use super::parquet::{binary_col, list_first_str, list_strs, missing_columns, str_col, struct_str, struct_str2, Col, Frame, Lists, Rows};
use super::wkb;
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
    super::parquet::import_files(path, SourceType::Overture, columns, sink)
}

/// The columns of a row group the rows are made of.
struct Columns {
    id: Col,
    geometry: BinaryViewArray,
    name: Col,
    brand_name: Col,
    wikidata: Col,
    categories: [Col; 4],
    status: Col,
    freeform: Col,
    locality: Col,
    postcode: Col,
    region: Col,
    country: Col,
    phone: Col,
    datasets: Lists,
    record_ids: Lists,
    update_times: Lists,
}

/// Every column an Overture row is made of, by the paths read of each (decoded at once, each
/// top-level column on a core, only these leaves of it: a release's `names` has every
/// language's, its `sources` each property's).
const COLUMNS: [&str; 19] = [
    "id",
    "geometry",
    "names.primary",
    "brand.names.primary",
    "brand.wikidata",
    "taxonomy.primary",
    "categories.primary",
    "categories.main",
    "basic_category",
    "operating_status",
    "addresses.freeform",
    "addresses.locality",
    "addresses.postcode",
    "addresses.region",
    "addresses.country",
    "phones",
    "sources.dataset",
    "sources.record_id",
    "sources.update_time",
];

fn columns(df: &Frame) -> PolarsResult<Box<dyn Rows>> {
    let missing = missing_columns(df, &["id", "geometry"]);
    if !missing.is_empty() {
        polars_bail!(ColumnNotFound: "not an Overture places file: required column(s) missing or empty: {}", missing.join(", "));
    }
    // 2023's alpha releases had `names` as a map of lists and temporary ids that were never
    // stable: not worth importing, and not to be read as empty names.
    if let Some(t) = df.dtype("names") {
        if !matches!(t, ArrowDataType::Struct(_) | ArrowDataType::Null) {
            polars_bail!(SchemaMismatch: "names is a {t:?}, not a struct: a pre-2024 Overture release, which is not supported");
        }
    }
    df.preload(&COLUMNS)?;
    Ok(Box::new(Columns {
        id: str_col(df, "id")?,
        geometry: binary_col(df, "geometry")?.expect("checked above"),
        name: struct_str(df, "names", "primary")?,
        brand_name: struct_str2(df, "brand", "names", "primary")?,
        wikidata: struct_str(df, "brand", "wikidata")?,
        // The category moved between releases: `categories.main` (2023), `categories.primary`
        // (2024-), `taxonomy.primary` and `basic_category` (Dec 2025-). The most specific one
        // the file has wins.
        categories: [
            struct_str(df, "taxonomy", "primary")?,
            struct_str(df, "categories", "primary")?,
            struct_str(df, "categories", "main")?,
            str_col(df, "basic_category")?,
        ],
        status: str_col(df, "operating_status")?,
        freeform: list_first_str(df, "addresses", Some("freeform"))?,
        locality: list_first_str(df, "addresses", Some("locality"))?,
        postcode: list_first_str(df, "addresses", Some("postcode"))?,
        region: list_first_str(df, "addresses", Some("region"))?,
        country: list_first_str(df, "addresses", Some("country"))?,
        phone: list_first_str(df, "phones", None)?,
        datasets: list_strs(df, "sources", "dataset")?,
        record_ids: list_strs(df, "sources", "record_id")?,
        update_times: list_strs(df, "sources", "update_time")?,
    }))
}

impl Rows for Columns {
    fn row(&self, i: usize) -> std::result::Result<SourceRow, Skipped> {
        let Some(gid) = clean(self.id.get(i)) else {
            return Err(Skipped::new(Skip::Invalid, "no id"));
        };
        let (lng, lat) = match self.geometry.get(i).map(wkb::point) {
            Some(Ok((x, y))) if crate::source_row::valid_point(y, x) => (x, y),
            Some(Ok((x, y))) => return Err(Skipped::new(Skip::BadGeometry, format!("coordinates out of range: [{x}, {y}]"))),
            Some(Err(e)) => return Err(Skipped::new(Skip::BadGeometry, e)),
            None => return Err(Skipped::new(Skip::BadGeometry, "null geometry")),
        };
        // `permanently_closed` and `temporarily_closed` (2025-) are not stores to visit; a
        // file without the column (2024) is all open.
        if let Some(s) = self.status.get(i).filter(|s| *s != "open") {
            return Err(Skipped::new(Skip::Closed, format!("operating_status {s}")));
        }
        let Some(primary) = clean(self.name.get(i)).or_else(|| clean(self.brand_name.get(i))) else {
            return Err(Skipped::new(Skip::NoBrandMatch, "no names.primary"));
        };
        let mut derived_from = Vec::new();
        let mut seen_at = None;
        for (k, d) in self.datasets.row(i).enumerate() {
            if let Some(t) = self.update_times.get(i, k).and_then(parse_iso) {
                seen_at = Some(seen_at.map_or(t, |s: i64| s.max(t)));
            }
            let src = match d.map(str::to_ascii_lowercase).as_deref() {
                Some("alltheplaces") | Some("all the places") | Some("atp") => SourceType::Atp,
                Some("foursquare") | Some("fsq") => SourceType::Fsq,
                _ => continue,
            };
            if let Some(r) = clean(self.record_ids.get(i, k)) {
                derived_from.push((src, r));
            }
        }
        Ok(SourceRow {
            source: Some(SourceType::Overture),
            source_id: gid,
            lat,
            lng,
            name: primary,
            brand: clean(self.brand_name.get(i)),
            brand_wikidata: clean(self.wikidata.get(i)).filter(|q| super::fields::is_qid(q)),
            category: self.categories.iter().find_map(|c| clean(c.get(i))),
            address: clean(self.freeform.get(i)),
            city: clean(self.locality.get(i)),
            // ISO 3166-2 ("US-IL"): the part after the country prefix is the state code.
            state: clean(self.region.get(i)).map(|r| r.split_once('-').map_or(r.clone(), |(_, s)| s.to_string())),
            postcode: clean(self.postcode.get(i)),
            country: clean(self.country.get(i)).map(|c| c.to_uppercase()).filter(|c| c.len() == 2),
            phone: clean(self.phone.get(i)),
            seen_at,
            derived_from,
            ..SourceRow::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::parquet::ParquetFile;

    #[test]
    fn a_release_file_is_decoded_only_in_the_leaves_rows_are_made_of() {
        // The overturemaps download (test/fixtures/real): `names` carries every language's
        // names and the rules, `sources` each property's; none of that is decoded.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test/fixtures/real/overture/boulder_places_2026-04-15.0.parquet");
        let file = ParquetFile::open(std::path::Path::new(path)).unwrap();
        let frame = file.frame(0);
        columns(&frame).unwrap();
        let whole = |name: &str| {
            let dtype = &frame.dtype(name).unwrap().clone();
            crate::import::parquet::leaf_paths(dtype, name)
        };
        for (name, read) in [("names", vec!["names.primary"]), ("sources", vec!["sources.dataset", "sources.record_id", "sources.update_time"])] {
            assert_eq!(frame.leaves_read(name).unwrap(), read, "{name}");
            assert!(whole(name).len() > read.len(), "{name}'s leaves in the file: {:?}", whole(name));
        }
    }
}
