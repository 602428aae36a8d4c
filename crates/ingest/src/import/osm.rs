//! OpenStreetMap as `osmium export -f geojsonseq -a type,id` writes it: one Feature per line,
//! each optionally preceded by the RFC 8142 record separator (0x1E); tags flat in `properties`
//! with `@type` and `@id` added.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;
use storemap_core::SourceType;

use super::fields::{opt_string, Geometry, Tags};
use crate::error::{IngestError, Result};
use crate::{ImportReport, SourceRow};

#[derive(Deserialize)]
struct Feature {
    geometry: Option<Geometry>,
    #[serde(default)]
    properties: Props,
}

#[derive(Default, Deserialize)]
struct Props {
    #[serde(default, rename = "@type", deserialize_with = "opt_string")]
    osm_type: Option<String>,
    #[serde(default, rename = "@id", deserialize_with = "opt_string")]
    osm_id: Option<String>,
    #[serde(flatten)]
    tags: Tags,
}

/// Rows handed to the sink at a time: a full planet extract never sits in memory whole.
const BATCH: usize = 100_000;

pub fn import_osm(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut rows = Vec::new();
    let report = import_osm_into(path, &mut |batch| rows.extend(batch))?;
    Ok((rows, report))
}

/// Streams the rows to `sink` in batches.
pub fn import_osm_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    let mut report = ImportReport::new(SourceType::Osm);
    let mut rows = Vec::with_capacity(BATCH);
    for file in super::input_files(path, &[".geojsonseq", ".geojsonl", ".jsonl", ".geojsons"])? {
        let name = file.display().to_string();
        let f = std::fs::File::open(&file).map_err(|e| IngestError::io(&name, e))?;
        report.files += 1;
        let reader = BufReader::with_capacity(1 << 20, f);
        for (i, line) in reader.split(b'\n').enumerate() {
            let line = line.map_err(|e| IngestError::io(&name, e))?;
            let line_no = i as u64 + 1;
            let text = trim_record(&line);
            if text.is_empty() {
                continue;
            }
            report.rows_read += 1;
            match parse_feature(text) {
                Ok(row) => {
                    rows.push(row);
                    report.rows_kept += 1;
                    if rows.len() == BATCH {
                        sink(std::mem::replace(&mut rows, Vec::with_capacity(BATCH)));
                    }
                }
                Err(why) => report.skip(&name, line_no, why),
            }
        }
    }
    sink(rows);
    Ok(report)
}

/// Drops the record separator and surrounding white space.
fn trim_record(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|&b| b != 0x1e && !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line.iter().rposition(|&b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &line[start..end.max(start)]
}

fn parse_feature(text: &[u8]) -> std::result::Result<SourceRow, String> {
    let f: Feature = serde_json::from_slice(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let (lng, lat) = f.geometry.as_ref().ok_or("no geometry")?.point()?;
    let p = f.properties;
    let id = p.osm_id.ok_or("no @id property (export with -a type,id)")?;
    let kind = match p.osm_type.as_deref() {
        Some("way") | Some("w") => 'w',
        Some("relation") | Some("r") => 'r',
        _ => 'n',
    };
    let mut row = SourceRow { source: Some(SourceType::Osm), source_id: format!("{kind}{id}"), lat, lng, ..SourceRow::default() };
    p.tags.fill(&mut row);
    if row.name.is_empty() {
        return Err("no name or brand tag".into());
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_osmium_line() {
        let line = "\u{1e}{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[-87.63,41.88]},\"properties\":{\"@type\":\"node\",\"@id\":42,\"amenity\":\"cafe\",\"brand\":\"Starbucks\",\"brand:wikidata\":\"Q37158\",\"name\":\"Starbucks\",\"addr:housenumber\":\"1\",\"addr:street\":\"Main St\",\"addr:country\":\"us\"}}";
        let row = parse_feature(trim_record(line.as_bytes())).unwrap();
        assert_eq!(row.source_id, "n42");
        assert_eq!((row.lat, row.lng), (41.88, -87.63));
        assert_eq!(row.category.as_deref(), Some("amenity/cafe"));
        assert_eq!(row.address.as_deref(), Some("1 Main St"));
        assert_eq!(row.country.as_deref(), Some("US"));
        assert_eq!(row.brand_wikidata.as_deref(), Some("Q37158"));
    }

    #[test]
    fn rejects_bad_geometry_with_a_reason() {
        let bad = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[200,95]},"properties":{"@id":1,"name":"x"}}"#;
        assert!(parse_feature(bad.as_bytes()).unwrap_err().contains("out of range"));
        let line = r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,1],[1,2]]},"properties":{"@id":1,"name":"x"}}"#;
        assert!(parse_feature(line.as_bytes()).unwrap_err().contains("LineString"));
        assert!(parse_feature(b"{\"type\":\"Feat").unwrap_err().contains("invalid JSON"));
    }
}
