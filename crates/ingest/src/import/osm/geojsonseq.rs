//! `osmium export -f geojsonseq -a type,id`: one Feature per line, each optionally preceded by
//! the RFC 8142 record separator (0x1E); tags flat in `properties` with `@type` and `@id` added.
//! Any geometry: osmium writes nodes as Point, open ways as LineString, and every closed way
//! twice, as a LineString and as a (Multi)Polygon with the same `@type`/`@id`.

use std::ops::ControlFlow;
use std::path::Path;

use serde::Deserialize;

use super::{classify, duplicate, place_row, type_letter, Batcher, Kind, Seen};
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

/// Bytes of the file one parse job takes at most: whole lines, those that start within its
/// span. Jobs run on every core while the lines already parsed are kept or skipped in file order
/// on the calling thread (the duplicate check, the report and the rows' order need that order),
/// so reading, parsing and keeping overlap and no line is copied on its own.
const CHUNK_BYTES: u64 = 1 << 20;

/// ... and at least, where a smaller file is cut in four jobs per core.
const CHUNK_BYTES_MIN: u64 = 64 << 10;

/// Parse jobs done or running ahead of the one being kept, per core.
const CHUNKS_AHEAD_PER_CORE: usize = 2;

pub(super) fn read(file: &Path, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) -> Result<()> {
    let size = std::fs::metadata(file).map_err(|e| IngestError::io(name, e))?.len();
    let cores = crate::parallel::threads() as u64;
    read_in_chunks(file, (size / (4 * cores)).clamp(CHUNK_BYTES_MIN, CHUNK_BYTES), name, report, seen, out)
}

fn read_in_chunks(file: &Path, chunk_bytes: u64, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) -> Result<()> {
    let f = std::fs::File::open(file).map_err(|e| IngestError::io(name, e))?;
    let size = f.metadata().map_err(|e| IngestError::io(name, e))?.len();
    let chunks: Vec<u64> = (0..size.div_ceil(chunk_bytes)).collect();
    let ahead = CHUNKS_AHEAD_PER_CORE * crate::parallel::threads();
    let mut first_line = 1u64;
    let mut failed = None;
    crate::parallel::parallel_stream(
        &chunks,
        |next, i| i < next + ahead,
        |&k| parse_chunk(&f, size, k * chunk_bytes, ((k + 1) * chunk_bytes).min(size)),
        |chunk| match chunk {
            Ok(chunk) => {
                take_chunk(chunk.parsed, first_line, name, report, seen, out);
                first_line += chunk.lines;
                ControlFlow::Continue(())
            }
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        },
    );
    failed.map_or(Ok(()), |e| Err(IngestError::io(name, e)))
}

/// One job's lines: how many (empty ones too, for line numbers) and each non-empty one parsed,
/// by its index among them.
struct Chunk {
    lines: u64,
    parsed: Vec<(u32, Parsed)>,
}

/// Parses the lines that start in bytes `start..end` of the file, reading on past `end` to the
/// end of the last of them.
fn parse_chunk(f: &std::fs::File, size: u64, start: u64, end: u64) -> std::io::Result<Chunk> {
    let (buf, first) = chunk_lines(f, size, start, end)?;
    let bytes = &buf[first..];
    let mut parsed = Vec::new();
    let (mut count, mut at) = (0u64, 0);
    while at < bytes.len() {
        let line_end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
        let text = trim_record(&bytes[at..line_end]);
        if !text.is_empty() {
            parsed.push((count as u32, parse_feature(text)));
        }
        count += 1;
        at = line_end;
    }
    Ok(Chunk { lines: count, parsed })
}

/// The bytes of the lines that start at or after `start` and before `end`, each with its line
/// end (the file's last line may have none): `buf[first..]`. The byte before `start` says
/// whether a line starts there; a line that starts before `end` is read to its end, wherever
/// that is.
fn chunk_lines(f: &std::fs::File, size: u64, start: u64, end: u64) -> std::io::Result<(Vec<u8>, usize)> {
    use std::os::unix::fs::FileExt;
    let from = start.saturating_sub(1);
    let mut buf = vec![0u8; (end - from) as usize];
    f.read_exact_at(&mut buf, from)?;
    let first = if start == 0 {
        0
    } else {
        match memchr::memchr(b'\n', &buf) {
            Some(i) => i + 1,
            // A line that began in an earlier chunk runs through this one.
            None => return Ok((Vec::new(), 0)),
        }
    };
    if first == buf.len() {
        return Ok((Vec::new(), 0));
    }
    // The last line starting here runs past `end` unless the span ends with a line end.
    let mut at = end;
    while buf.last() != Some(&b'\n') && at < size {
        let more = (64u64 << 10).min(size - at) as usize;
        let old = buf.len();
        buf.resize(old + more, 0);
        f.read_exact_at(&mut buf[old..], at)?;
        at += more as u64;
        if let Some(i) = memchr::memchr(b'\n', &buf[old..]) {
            buf.truncate(old + i + 1);
            break;
        }
    }
    Ok((buf, first))
}

/// Keeps or skips a chunk's parsed lines in file order.
fn take_chunk(parsed: Vec<(u32, Parsed)>, first_line: u64, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) {
    // The chunk's objects checked against those before at once (`Seen::first_of_each`).
    let objects: Vec<(char, i64)> = parsed.iter().filter_map(|(_, p)| p.as_ref().ok().map(|(letter, id, _)| (*letter, *id))).collect();
    let mut first = seen.first_of_each(&objects).into_iter();
    for (i, p) in parsed {
        report.rows_read += 1;
        let kept = p.and_then(|(_, _, row)| if first.next().expect("an answer for every object") { row } else { Err(duplicate()) });
        match kept {
            Ok(row) => {
                report.rows_kept += 1;
                report.count_hours(&row);
                out.push(row);
            }
            Err(skipped) => report.skip(name, first_line + u64::from(i), skipped),
        }
    }
}

/// Drops the record separator and surrounding white space.
fn trim_record(line: &[u8]) -> &[u8] {
    // The first line may carry a byte-order mark (a file saved by a Windows editor).
    let line = line.strip_prefix(crate::import::UTF8_BOM).unwrap_or(line);
    let start = line.iter().position(|&b| b != 0x1e && !b.is_ascii_whitespace()).unwrap_or(line.len());
    let end = line.iter().rposition(|&b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &line[start..end.max(start)]
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

    /// A line's row, or why it is skipped before the duplicate check.
    fn parse(line: &str) -> std::result::Result<SourceRow, Skipped> {
        parse_feature(trim_record(line.as_bytes())).and_then(|(_, _, row)| row)
    }

    /// The rows kept, and the report, when `lines` are one chunk of a file taken as the import
    /// takes it (`take_chunk`), with the objects seen in chunks before.
    fn take(lines: &[&str], seen: &mut Seen) -> (Vec<SourceRow>, ImportReport) {
        let parsed = lines.iter().enumerate().map(|(i, l)| (i as u32, parse_feature(trim_record(l.as_bytes())))).collect();
        let (mut report, mut rows) = (ImportReport::new(storemap_core::SourceType::Osm), Vec::new());
        {
            let mut sink = |batch: Vec<SourceRow>| rows.extend(batch);
            let mut out = Batcher::new(&mut sink);
            take_chunk(parsed, 1, "f", &mut report, seen, &mut out);
            out.flush();
        }
        (rows, report)
    }

    #[test]
    fn parses_an_osmium_line() {
        let line = "\u{1e}{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":[-87.63,41.88]},\"properties\":{\"@type\":\"node\",\"@id\":42,\"amenity\":\"cafe\",\"brand\":\"Starbucks\",\"brand:wikidata\":\"Q37158\",\"name\":\"Starbucks\",\"addr:housenumber\":\"1\",\"addr:street\":\"Main St\",\"addr:country\":\"us\"}}";
        let row = parse(line).unwrap();
        assert_eq!(row.source_id, "n42");
        assert_eq!((row.lat, row.lng), (41.88, -87.63));
        assert_eq!(row.category.as_deref(), Some("amenity/cafe"));
        assert_eq!(row.address.as_deref().map(|a| crate::house_number::line(a, "US").into_owned()).as_deref(), Some("1 Main St"));
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

    /// Every row and every skip (with its line number) of a file read in chunks of `bytes`.
    fn read_with(file: &Path, bytes: u64) -> (Vec<String>, ImportReport) {
        let (mut report, mut seen, mut rows) = (ImportReport::new(storemap_core::SourceType::Osm), Seen::default(), Vec::new());
        let mut sink = |batch: Vec<SourceRow>| rows.extend(batch.into_iter().map(|r| r.source_id));
        let mut out = Batcher::new(&mut sink);
        read_in_chunks(file, bytes, "f", &mut report, &mut seen, &mut out).unwrap();
        out.flush();
        (rows, report)
    }

    #[test]
    fn any_chunk_size_reads_every_line_once_with_its_number() {
        let node = |id: u32, name: &str| {
            format!(
                r#"{{"type":"Feature","geometry":{{"type":"Point","coordinates":[8.{id},47.0]}},"properties":{{"@type":"node","@id":{id},"shop":"bakery","name":"{name}"}}}}"#
            )
        };
        // Record separators, blank lines, CRLF, a duplicate, a broken line, a line far longer
        // than the small chunks, and no line end at the end of the file.
        let long = "x".repeat(300);
        let lines = [
            format!("\u{1e}{}", node(1, "A")),
            String::new(),
            node(2, "B") + "\r",
            "{\"type\":\"Feat".to_string(),
            node(3, &long),
            node(1, "A again"),
            "   ".to_string(),
            node(4, "D"),
            node(5, "E"),
        ];
        let text = lines.join("\n");
        let dir = crate::test_dir::TestDir::new("geojsonseq");
        let file = dir.join("chunks.geojsonseq");
        std::fs::write(&file, &text).unwrap();
        // What a line-by-line reading gives: ids 1-5 once each, the broken line 4 reported.
        let expected: Vec<String> = ["n1", "n2", "n3", "n4", "n5"].map(String::from).to_vec();
        for bytes in (1..=text.len() as u64 + 1).chain([1 << 20]) {
            let (rows, report) = read_with(&file, bytes);
            assert_eq!(rows, expected, "chunks of {bytes} bytes");
            assert_eq!((report.rows_read, report.rows_kept), (7, 5), "chunks of {bytes} bytes");
            assert_eq!(report.errors.len(), 1, "chunks of {bytes} bytes");
            assert!(report.errors[0].starts_with("f: row 4: invalid JSON"), "chunks of {bytes} bytes: {:?}", report.errors);
        }
        // The same with a line end at the very end.
        std::fs::write(&file, text.clone() + "\n").unwrap();
        for bytes in [1, 7, 64, text.len() as u64, text.len() as u64 + 1] {
            assert_eq!(read_with(&file, bytes).0, expected, "chunks of {bytes} bytes, final line end");
        }
    }

    #[test]
    fn a_closed_way_exported_twice_is_one_row() {
        let ring = "[[8.0,47.0],[8.001,47.0],[8.001,47.001],[8.0,47.001],[8.0,47.0]]";
        let as_line = format!(
            r#"{{"type":"Feature","geometry":{{"type":"LineString","coordinates":{ring}}},"properties":{{"@type":"way","@id":7,"shop":"supermarket","name":"Denner"}}}}"#
        );
        let as_area = format!(
            r#"{{"type":"Feature","geometry":{{"type":"MultiPolygon","coordinates":[[{ring}]]}},"properties":{{"@type":"way","@id":7,"shop":"supermarket","name":"Denner area"}}}}"#
        );
        // A node with the same number is another object.
        let node =
            r#"{"type":"Feature","geometry":{"type":"Point","coordinates":[8.0,47.0]},"properties":{"@type":"node","@id":7,"shop":"bakery","name":"B"}}"#;
        let ids = |rows: &[SourceRow]| rows.iter().map(|r| r.source_id.clone()).collect::<Vec<_>>();
        let duplicates = |report: &ImportReport| report.skipped.get(Skip::DuplicateId.as_str()).copied().unwrap_or(0);

        // In one chunk.
        let (rows, report) = take(&[&as_line, &as_area, node], &mut Seen::default());
        assert_eq!(ids(&rows), ["w7", "n7"]);
        assert_eq!(rows[0].name, "Denner", "the first copy is the one kept");
        assert!(rows[0].lng > 8.0 && rows[0].lng < 8.001 && rows[0].lat > 47.0 && rows[0].lat < 47.001);
        assert_eq!((report.rows_read, report.rows_kept, duplicates(&report)), (3, 2, 1));

        // The two copies in two chunks: the first chunk's objects are remembered.
        let mut seen = Seen::default();
        assert_eq!(ids(&take(&[&as_line], &mut seen).0), ["w7"]);
        let (rows, report) = take(&[&as_area, node], &mut seen);
        assert_eq!(ids(&rows), ["n7"]);
        assert_eq!(duplicates(&report), 1);
    }
}
