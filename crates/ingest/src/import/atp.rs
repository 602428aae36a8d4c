//! AllThePlaces spider output: one GeoJSON FeatureCollection per spider, with the run's
//! `dataset_attributes` (`@spider`, `spider:collection_time`, licence keys) at the top.

use std::path::Path;

use serde::Deserialize;
use storemap_core::{parse_iso, SourceType};

use super::fields::{opt_string, Geometry, Tags};
use crate::error::{IngestError, Result};
use crate::source_row::clean;
use crate::{ImportReport, SourceRow};

#[derive(Deserialize)]
struct Collection {
    #[serde(default)]
    dataset_attributes: serde_json::Map<String, serde_json::Value>,
    features: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Feature {
    #[serde(default, deserialize_with = "opt_string")]
    id: Option<String>,
    geometry: Option<Geometry>,
    properties: Props,
}

#[derive(Deserialize)]
struct Props {
    #[serde(default, rename = "ref", deserialize_with = "opt_string")]
    reference: Option<String>,
    #[serde(default, rename = "@spider", deserialize_with = "opt_string")]
    spider: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    branch: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    end_date: Option<String>,
    #[serde(flatten)]
    tags: Tags,
}

pub fn import_atp(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut rows = Vec::new();
    let report = import_atp_into(path, &mut |batch| rows.extend(batch))?;
    Ok((rows, report))
}

/// Streams the rows to `sink`, one spider file at a time.
pub fn import_atp_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    let mut report = ImportReport::new(SourceType::Atp);
    for file in super::input_files(path, &[".geojson", ".json"])? {
        let mut rows = Vec::new();
        let name = file.display().to_string();
        let bytes = std::fs::read(&file).map_err(|e| IngestError::io(&name, e))?;
        let coll: Collection = serde_json::from_slice(&bytes)
            .map_err(|e| IngestError::file(&name, format!("not a GeoJSON FeatureCollection: {e}")))?;
        report.files += 1;
        let attr = |k: &str| coll.dataset_attributes.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let spider = attr("@spider");
        let collected = attr("spider:collection_time").and_then(|t| parse_iso(&t));
        // A spider may declare the terms of the site it scrapes; they are reported in the
        // snapshot so /ATTRIBUTION.txt can name them.
        if let (Some(licence), Some(s)) = (attr("license").or_else(|| attr("license:wikidata")), &spider) {
            report.declared_licences.entry(licence).or_default().push(s.clone());
        }
        for (i, value) in coll.features.into_iter().enumerate() {
            report.rows_read += 1;
            match parse_feature(value, spider.as_deref(), collected) {
                Ok(Some(row)) => rows.push(row),
                Ok(None) => report.rows_closed += 1,
                Err(why) => report.skip(&name, i as u64 + 1, why),
            }
        }
        report.rows_kept += rows.len() as u64;
        sink(rows);
    }
    Ok(report)
}

/// `Ok(None)` for a store the spider reports as closed (`end_date` of `yes` or a past date).
fn parse_feature(value: serde_json::Value, file_spider: Option<&str>, collected: Option<i64>) -> std::result::Result<Option<SourceRow>, String> {
    let f: Feature = serde_json::from_value(value).map_err(|e| format!("invalid feature: {e}"))?;
    // ATP allows a null geometry (DATA_FORMAT.md); such a store cannot be placed.
    let (lng, lat) = f.geometry.as_ref().ok_or("null geometry")?.point()?;
    let p = f.properties;
    let spider = p.spider.clone().or(file_spider.map(str::to_string)).ok_or("no @spider")?;
    let reference = clean(p.reference.as_deref()).ok_or("no ref")?;
    if let Some(end) = p.end_date.as_deref() {
        let ended = end == "yes" || matches!((parse_iso(end), collected), (Some(e), Some(c)) if e <= c);
        if ended {
            return Ok(None);
        }
    }
    let spider_ref = format!("{spider}/{reference}");
    let mut row = SourceRow {
        source: Some(SourceType::Atp),
        source_id: f.id.clone().unwrap_or_else(|| spider_ref.clone()),
        other_ids: vec![spider_ref, reference],
        lat,
        lng,
        seen_at: collected,
        ..SourceRow::default()
    };
    let branch = clean(p.branch.as_deref());
    p.tags.fill(&mut row);
    if row.name.is_empty() {
        row.name = branch.unwrap_or_default();
    }
    if row.name.is_empty() {
        return Err("no name, brand or branch".into());
    }
    Ok(Some(row))
}

#[cfg(test)]
mod licence_tests {
    use super::*;

    #[test]
    fn spider_declared_licences_are_reported_by_licence() {
        let dir = std::env::temp_dir().join(format!("storemap-atp-licences-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let feature = r#"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[2.35,48.85]},"properties":{"ref":"1","name":"Shop"}}"#;
        for (spider, attrs) in [
            ("a_spider", r#","license":"CC-BY-4.0""#),
            ("b_spider", r#","license":"CC-BY-4.0""#),
            ("c_spider", r#","license:wikidata":"Q6938433""#),
            ("d_spider", ""),
        ] {
            let text = format!(r#"{{"type":"FeatureCollection","dataset_attributes":{{"@spider":"{spider}"{attrs}}},"features":[{feature}]}}"#);
            std::fs::write(dir.join(format!("{spider}.geojson")), text).unwrap();
        }
        let (_, report) = import_atp(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let got: Vec<(String, Vec<String>)> = report.declared_licences.into_iter().collect();
        assert_eq!(
            got,
            vec![
                ("CC-BY-4.0".to_string(), vec!["a_spider".to_string(), "b_spider".to_string()]),
                ("Q6938433".to_string(), vec!["c_spider".to_string()]),
            ]
        );
    }
}
