//! `osmium export -f geojsonseq -a type,id`: one Feature per line, each optionally preceded by
//! the RFC 8142 record separator (0x1E); tags flat in `properties` with `@type` and `@id` added.
//! Any geometry: osmium writes nodes as Point, open ways as LineString, and every closed way
//! twice, as a LineString and as a (Multi)Polygon with the same `@type`/`@id`.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Deserialize;

use super::{classify, place_row, type_letter, Batcher, Kind, Seen};
use crate::error::{IngestError, Result};
use crate::import::fields::{opt_string, Geometry};
use crate::source_row::{Skip, Skipped};
use crate::{ImportReport, SourceRow};

#[derive(Deserialize)]
struct Feature {
    geometry: Option<Geometry>,
    #[serde(default)]
    properties: serde_json::Map<String, serde_json::Value>,
}

/// Lines parsed at once, on every core; what must go in order (the duplicate check, the
/// report, the rows' order) then goes through them one by one.
const CHUNK_LINES: usize = 8192;

pub(super) fn read(file: &Path, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) -> Result<()> {
    let f = std::fs::File::open(file).map_err(|e| IngestError::io(name, e))?;
    let reader = BufReader::with_capacity(1 << 20, f);
    let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK_LINES);
    let mut first_line = 1u64;
    for line in reader.split(b'\n') {
        chunk.push(line.map_err(|e| IngestError::io(name, e))?);
        if chunk.len() == CHUNK_LINES {
            take_chunk(&chunk, first_line, name, report, seen, out);
            first_line += chunk.len() as u64;
            chunk.clear();
        }
    }
    take_chunk(&chunk, first_line, name, report, seen, out);
    Ok(())
}

/// Parses a chunk's lines in parallel, then keeps or skips each in file order.
fn take_chunk(lines: &[Vec<u8>], first_line: u64, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) {
    let parsed = crate::parallel::parallel_map(lines, |line| {
        let text = trim_record(line);
        (!text.is_empty()).then(|| parse_feature(text))
    });
    for (i, p) in parsed.into_iter().enumerate() {
        let Some(p) = p else { continue };
        report.rows_read += 1;
        match keep(p, seen) {
            Ok(row) => {
                report.rows_kept += 1;
                report.count_hours(&row);
                out.push(row);
            }
            Err(skipped) => report.skip(name, first_line + i as u64, skipped),
        }
    }
}

/// Drops the record separator and surrounding white space.
fn trim_record(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|&b| b != 0x1e && !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line.iter().rposition(|&b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &line[start..end.max(start)]
}

/// A parsed feature's row, unless its object came before (a duplicate, whatever else it holds).
fn keep(p: Parsed, seen: &mut Seen) -> std::result::Result<SourceRow, Skipped> {
    let (letter, id, row) = p?;
    if seen.first(letter, id) {
        row
    } else {
        Err(Skipped::new(Skip::DuplicateId, "the same object again"))
    }
}

/// A feature's object (type letter and id) and its row, or why it is skipped before the
/// duplicate check (the check runs in file order, after this).
type Parsed = std::result::Result<(char, i64, std::result::Result<SourceRow, Skipped>), Skipped>;

fn parse_feature(text: &[u8]) -> Parsed {
    let invalid = |why: String| Skipped::new(Skip::Invalid, why);
    let mut f: Feature = serde_json::from_slice(text).map_err(|e| invalid(format!("invalid JSON: {e}")))?;
    let kind = classify(f.properties.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))));
    match kind {
        Kind::Place => {}
        Kind::NotStorefront | Kind::Ignore => return Err(Skipped::new(Skip::NotStorefront, "not tagged as a place")),
    }
    let osm_type = f.properties.remove("@type").and_then(|v| opt_string(v).ok().flatten());
    let id = f.properties.remove("@id").and_then(|v| opt_string(v).ok().flatten()).ok_or_else(|| invalid("no @id property (export with -a type,id)".into()))?;
    let id: i64 = id.trim_start_matches(['n', 'w', 'r']).parse().map_err(|_| invalid(format!("@id is not a number: {id}")))?;
    // Without `-a type` osmium writes no @type; nodes are then the only safe guess.
    let letter = osm_type.as_deref().map_or(Some('n'), type_letter).ok_or_else(|| invalid("unknown @type".into()))?;
    let pos = f.geometry.as_ref().ok_or_else(|| Skipped::new(Skip::BadGeometry, "no geometry"))?.position()?;
    Ok((letter, id, place_row(letter, id, f.properties, pos)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> std::result::Result<SourceRow, Skipped> {
        keep(parse_feature(trim_record(line.as_bytes())), &mut Seen::default())
    }

    #[test]
    fn parses_an_osmium_line() {
        let line = "\u{1e}{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[-87.63,41.88]},\"properties\":{\"@type\":\"node\",\"@id\":42,\"amenity\":\"cafe\",\"brand\":\"Starbucks\",\"brand:wikidata\":\"Q37158\",\"name\":\"Starbucks\",\"addr:housenumber\":\"1\",\"addr:street\":\"Main St\",\"addr:country\":\"us\"}}";
        let row = parse(line).unwrap();
        assert_eq!(row.source_id, "n42");
        assert_eq!((row.lat, row.lng), (41.88, -87.63));
        assert_eq!(row.category.as_deref(), Some("amenity/cafe"));
        assert_eq!(row.address.as_deref(), Some("1 Main St"));
        assert_eq!(row.country.as_deref(), Some("US"));
        assert_eq!(row.brand_wikidata.as_deref(), Some("Q37158"));
    }

    #[test]
    fn skips_with_a_reason() {
        let bad = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[200,95]},"properties":{"@id":1,"name":"x","shop":"bakery"}}"#;
        let e = parse(bad).unwrap_err();
        assert_eq!(e.reason, Skip::BadGeometry);
        assert!(e.why.contains("out of range"));
        assert_eq!(parse("{\"type\":\"Feat").unwrap_err().reason, Skip::Invalid);
        let road = r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,1],[1,2]]},"properties":{"@type":"way","@id":1,"name":"Main Street","highway":"primary"}}"#;
        assert_eq!(parse(road).unwrap_err().reason, Skip::NotStorefront);
        let nameless = r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"@type":"node","@id":1,"shop":"bakery"}}"#;
        assert_eq!(parse(nameless).unwrap_err().reason, Skip::NoBrandMatch);
    }

    #[test]
    fn a_closed_way_exported_twice_is_one_row() {
        let ring = "[[8.0,47.0],[8.001,47.0],[8.001,47.001],[8.0,47.001],[8.0,47.0]]";
        let as_line = format!(
            r#"{{"type":"Feature","geometry":{{"type":"LineString","coordinates":{ring}}},"properties":{{"@type":"way","@id":7,"shop":"supermarket","name":"Denner"}}}}"#
        );
        let as_area = format!(
            r#"{{"type":"Feature","geometry":{{"type":"MultiPolygon","coordinates":[[{ring}]]}},"properties":{{"@type":"way","@id":7,"shop":"supermarket","name":"Denner"}}}}"#
        );
        let mut seen = Seen::default();
        let row = keep(parse_feature(as_line.as_bytes()), &mut seen).unwrap();
        assert_eq!(row.source_id, "w7");
        assert!(row.lng > 8.0 && row.lng < 8.001 && row.lat > 47.0 && row.lat < 47.001);
        assert_eq!(keep(parse_feature(as_area.as_bytes()), &mut seen).unwrap_err().reason, Skip::DuplicateId);
        // A node with the same number is another object.
        let node =
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"@type":"node","@id":7,"shop":"bakery","name":"B"}}"#;
        assert_eq!(keep(parse_feature(node.as_bytes()), &mut seen).unwrap().source_id, "n7");
    }
}
