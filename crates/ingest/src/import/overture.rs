//! Overture Maps places (GeoParquet): WKB `geometry`, nested `names`, `brand`, `categories`,
//! `addresses` and `sources`. Overture re-publishes rows it took from AllThePlaces and
//! Foursquare; `sources[].dataset` and `record_id` say so, and reconciliation uses them to
//! keep such a store from counting twice.

use std::path::Path;

use polars::prelude::*;
use storemap_core::{parse_iso, SourceType};

use super::parquet::{list_first_str, list_strs, str_col, struct_str, Col};
use super::wkb;
use crate::error::Result;
use crate::source_row::clean;
use crate::{ImportReport, SourceRow};

pub fn import_overture(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    super::parquet::import_files(path, SourceType::Overture, read_rows)
}

fn read_rows(df: &DataFrame, file: &str, rows: &mut Vec<SourceRow>, report: &mut ImportReport) -> PolarsResult<()> {
    let n = df.height();
    let id = str_col(df, "id")?;
    let geometry = df.column("geometry")?.as_materialized_series().binary()?.rechunk();
    let name = struct_str(df, "names", "primary")?;
    let brand_name = match df.column("brand") {
        Ok(c) => {
            let names = c.as_materialized_series().struct_()?.field_by_name("names")?;
            Col::from_series(&names.struct_()?.field_by_name("primary")?)?
        }
        Err(_) => Col::Missing,
    };
    let wikidata = struct_str(df, "brand", "wikidata")?;
    let category = struct_str(df, "categories", "primary")?;
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
        let line = i as u64 + 1;
        let Some(gid) = clean(id.get(i)) else {
            report.skip(file, line, "no id");
            continue;
        };
        let (lng, lat) = match geometry.get(i).map(wkb::point) {
            Some(Ok((x, y))) if crate::source_row::valid_point(y, x) => (x, y),
            Some(Ok((x, y))) => {
                report.skip(file, line, format!("coordinates out of range: [{x}, {y}]"));
                continue;
            }
            Some(Err(e)) => {
                report.skip(file, line, e);
                continue;
            }
            None => {
                report.skip(file, line, "null geometry");
                continue;
            }
        };
        if matches!(status.get(i), Some("permanently_closed")) {
            report.rows_closed += 1;
            continue;
        }
        let Some(primary) = clean(name.get(i)).or_else(|| clean(brand_name.get(i))) else {
            report.skip(file, line, "no names.primary");
            continue;
        };
        let mut derived_from = Vec::new();
        let mut seen_at = None;
        let (ds, rid, ut) = (&datasets[i], &record_ids[i], &update_times[i]);
        for k in 0..ds.len() {
            if let Some(t) = ut.get(k).and_then(|t| t.as_deref()).and_then(parse_iso) {
                seen_at = Some(seen_at.map_or(t, |s: i64| s.max(t)));
            }
            let src = match ds[k].as_deref().map(str::to_ascii_lowercase).as_deref() {
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
            category: clean(category.get(i)),
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
