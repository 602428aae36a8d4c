//! AllThePlaces spider output: one GeoJSON FeatureCollection per spider, with the run's
//! `dataset_attributes` (`@spider`, `spider:collection_time`, licence keys) at the top.

use std::ops::ControlFlow;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;
use storemap_core::{parse_iso, SourceType};

use super::fields::{opt_string, Geometry, Tags};
use crate::error::{IngestError, Result};
use crate::source_row::{clean, Skip, Skipped};
use crate::{ImportReport, SourceRow};

/// A spider's FeatureCollection, its features left as their text in the file's bytes: each is
/// read on its own into a [`Feature`]. (Read whole into a tree of values, a big brand's 14 MB
/// spider took several times that, on every core at once, and set a scale-1 import's peak.)
#[derive(Deserialize)]
struct Collection<'a> {
    #[serde(default, deserialize_with = "null_as_empty")]
    dataset_attributes: serde_json::Map<String, serde_json::Value>,
    #[serde(borrow)]
    features: Vec<&'a RawValue>,
}

/// A feature line's run attributes (the rest of the line is read as a [`Feature`]).
#[derive(Deserialize)]
struct LineAttributes {
    dataset_attributes: Option<serde_json::Value>,
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<serde_json::Map<String, serde_json::Value>, D::Error> {
    Ok(Option::deserialize(d)?.unwrap_or_default())
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

/// The spider output kinds: a FeatureCollection per spider (`.geojson`), or one Feature per
/// line (`.ndgeojson`, as the run's newline-delimited build writes them).
const SPIDER_EXTS: [&str; 4] = [".geojson", ".json", ".ndgeojson", ".geojsonl"];

/// Streams the rows to `sink`, one spider at a time, from a spider file, a folder of them, or
/// the run's published `output.zip` (read in place, no unzip step).
///
/// A 0-byte spider file (ATP writes one for every spider that found nothing) is counted in
/// `files_empty`. A spider file that is not JSON fails a single-file import; inside a folder
/// or a zip of thousands it is counted in `files_failed`, named in `errors`, and the rest go on.
pub fn import_atp_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    let mut report = ImportReport::new(SourceType::Atp);
    let exts: Vec<&str> = SPIDER_EXTS.iter().copied().chain([".zip"]).collect();
    let files = super::input_files(path, &exts)?;
    let many = files.len() > 1 || path.is_dir();
    // A run is thousands of spider files, each parsed on its own on every core, their reports
    // and rows taken in file order as one at a time would, and the rows handed on in batches.
    // (Blocks of 256 files held a third of a scale-1 run's rows at once, which set the build's
    // peak.)
    let is_zip = |f: &std::path::PathBuf| f.to_string_lossy().ends_with(".zip");
    let ahead = FILES_AHEAD_PER_CORE * crate::parallel::threads();
    let mut rest = files.as_slice();
    let mut out = super::Batcher::new(sink);
    while let Some(first) = rest.first() {
        if is_zip(first) {
            read_zip(first, &first.display().to_string(), many, &mut report, &mut |rows| out.extend(rows))?;
            rest = &rest[1..];
            continue;
        }
        let n = rest.iter().take_while(|f| !is_zip(f)).count();
        let (run, tail) = rest.split_at(n);
        rest = tail;
        // Bytes of the run's files before each one, for the window's cap.
        let before = crate::parallel::running_totals(run.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())));
        let cap = (before[run.len()] / FILES_AHEAD_BYTES_SHARE).clamp(FILES_AHEAD_BYTES.0, FILES_AHEAD_BYTES.1);
        let mut failed = None;
        crate::parallel::parallel_stream(
            run,
            |next, i| i < next + ahead && crate::parallel::ahead_within(&before, next, i, cap),
            |file| {
                let name = file.display().to_string();
                let mut part = ImportReport::new(SourceType::Atp);
                let mut rows = Vec::new();
                let bytes = std::fs::read(file).map_err(|e| IngestError::io(&name, e))?;
                spider_file(&name, &bytes, many, &mut part, &mut |r| rows.extend(r))?;
                Ok::<_, IngestError>((part, rows))
            },
            |parsed| match parsed {
                Ok((part, rows)) => {
                    report.merge(part);
                    out.extend(rows);
                    ControlFlow::Continue(())
                }
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            },
        );
        if let Some(e) = failed {
            return Err(e);
        }
    }
    out.flush();
    Ok(report)
}

/// Spider files parsed or waiting to be taken at once, per core: every core busy past a big
/// spider, and few rows held.
const FILES_AHEAD_PER_CORE: usize = 4;

/// ... and, however many cores there are, at most this share of the run's bytes: a big brand's
/// spider is tens of megabytes, parsed several times that, and 16 cores with four files each
/// took in the biggest ones together.
const FILES_AHEAD_BYTES_SHARE: u64 = 32;

/// ... within these bounds: a small run (a few spiders, a country's) still spreads over every
/// core, and a whole AllThePlaces run (tens of gigabytes) holds no more than 64 MiB of files
/// ahead, about a hundred spiders.
const FILES_AHEAD_BYTES: (u64, u64) = (4 << 20, 64 << 20);

/// The most a spider file may unpack to from a zip: the biggest spiders are tens of megabytes,
/// and a member that claims less and inflates to gigabytes (a zip bomb: 4 MB unpacked to 8.6 GB
/// held in memory) is one broken spider, named and skipped, not the end of the machine.
const ZIP_ENTRY_MAX_BYTES: u64 = 1 << 30;

fn read_zip(file: &Path, name: &str, many: bool, report: &mut ImportReport, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<()> {
    read_zip_within(file, name, many, report, sink, ZIP_ENTRY_MAX_BYTES)
}

/// `read_zip` with the cap on a member's unpacked size as a parameter (tests use a small one).
fn read_zip_within(file: &Path, name: &str, many: bool, report: &mut ImportReport, sink: &mut dyn FnMut(Vec<SourceRow>), max_bytes: u64) -> Result<()> {
    let failed_before = report.files_failed;
    let f = std::fs::File::open(file).map_err(|e| IngestError::io(name, e))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(f)).map_err(|e| IngestError::file(name, format!("not a readable zip: {e}")))?;
    // Listed from the central directory alone: a member whose local header is damaged is still
    // listed, and fails below as damaged (read through its local header, it was dropped from
    // the list without a word).
    let mut entries = Vec::new();
    let mut nested = Vec::new();
    for i in 0..zip.len() {
        match zip.name_for_index(i) {
            Some(Ok(n)) if SPIDER_EXTS.iter().any(|x| n.ends_with(x)) => entries.push((n.into_owned(), i)),
            Some(Ok(n)) if n.ends_with(".zip") => nested.push(n.into_owned()),
            Some(Ok(_)) | None => {}
            Some(Err(e)) => {
                report.files += 1;
                report.files_failed += 1;
                report.note(format!("{name}: member {i}: its name cannot be read, skipped: {e}"));
            }
        }
    }
    // No spider output in it at all (an empty zip, a readme alone, a zip of zips) is no ATP
    // run: imported alone, it would replace the snapshot's AllThePlaces rows with nothing.
    // Beside other spider files (a stray zip in a folder of them) it is one failed file.
    if entries.is_empty() && report.files_failed == failed_before {
        let hint = match nested.first() {
            Some(inner) => format!("; it holds zips ({inner}{}): unzip it and import the one inside", if nested.len() > 1 { ", …" } else { "" }),
            None => String::new(),
        };
        let why = format!("holds no spider files ({}){hint}", SPIDER_EXTS.join(", "));
        if !many {
            return Err(IngestError::file(name, why));
        }
        report.files += 1;
        report.files_failed += 1;
        report.note(format!("{name}: {why}; skipped"));
        return Ok(());
    }
    entries.sort();
    for (entry_name, i) in entries {
        let full = format!("{name}!{entry_name}");
        // A member damaged in the archive (its compressed bytes or their checksum, its local
        // header) is one broken spider file, named and skipped as one that is not JSON is. A
        // failing disk or share is not damage: it stops the import, as before, rather than
        // skip every spider after it and replace the snapshot without them.
        let damaged =
            |e: &std::io::Error| matches!(e.kind(), std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput | std::io::ErrorKind::UnexpectedEof);
        let read = match zip.by_index(i) {
            Ok(entry) => {
                // The size the header declares is the zip's word, not a fact: at most 64 MiB
                // is set aside before the bytes come.
                let mut bytes = Vec::with_capacity(entry.size().min(max_bytes).min(64 << 20) as usize);
                match std::io::Read::read_to_end(&mut std::io::Read::take(entry, max_bytes + 1), &mut bytes) {
                    Ok(_) if bytes.len() as u64 > max_bytes => Err(format!("unpacks to more than {max_bytes} bytes (a zip bomb?)")),
                    Ok(_) => Ok(bytes),
                    Err(e) if damaged(&e) => Err(e.to_string()),
                    Err(e) => return Err(IngestError::io(&full, e)),
                }
            }
            Err(zip::result::ZipError::Io(e)) if !damaged(&e) => return Err(IngestError::io(&full, e)),
            Err(e @ (zip::result::ZipError::Io(_) | zip::result::ZipError::InvalidArchive(_) | zip::result::ZipError::UnsupportedArchive(_))) => {
                Err(e.to_string())
            }
            Err(e) => return Err(IngestError::file(&full, e)),
        };
        match read {
            Ok(bytes) => spider_file(&full, &bytes, true, report, sink)?,
            Err(e) => {
                report.files += 1;
                report.files_failed += 1;
                report.note(format!("{full}: damaged in the zip, skipped: {e}"));
            }
        }
    }
    Ok(())
}

/// One spider's output, whichever of the two shapes it has.
fn spider_file(name: &str, bytes: &[u8], many: bool, report: &mut ImportReport, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<()> {
    report.files += 1;
    // A byte-order mark, as Windows tools save JSON: JSON's RFC lets a reader ignore it.
    let bytes = bytes.strip_prefix(crate::import::UTF8_BOM).unwrap_or(bytes);
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        report.files_empty += 1;
        return Ok(());
    }
    let parsed = if name.ends_with(".ndgeojson") || name.ends_with(".geojsonl") { Ok(line_features(bytes)) } else { collection(bytes) };
    let (attributes, features) = match parsed {
        Ok(p) => p,
        Err(e) if many => {
            report.files_failed += 1;
            report.note(format!("{name}: not a GeoJSON FeatureCollection, skipped: {e}"));
            return Ok(());
        }
        Err(e) => return Err(IngestError::file(name, format!("not a GeoJSON FeatureCollection: {e}"))),
    };
    let attr = |k: &str| attributes.get(k).and_then(|v| v.as_str()).map(str::to_string);
    // The spider's name: the run's attributes, else (pre-2023 layout, .ndgeojson) the file's.
    let file_spider = attr("@spider").or_else(|| {
        let base = name.rsplit(['/', '!']).next().unwrap_or(name);
        SPIDER_EXTS.iter().find_map(|x| base.strip_suffix(x)).map(str::to_string)
    });
    let collected = attr("spider:collection_time").and_then(|t| parse_iso(&t));
    // Only brands' store locators are in scope; ATP also runs infrastructure spiders (parks,
    // benches, public toilets), which say so in their lineage.
    let lineage = attr("spider:lineage");
    if let Some(l) = lineage.as_deref().filter(|l| *l != "S_ATP_BRANDS") {
        report.rows_read += features.len() as u64;
        report.count(Skip::NotStorefront, features.len() as u64);
        report.note(format!("{name}: spider lineage {l} is not a brand's store locator: {} features skipped", features.len()));
        return Ok(());
    }
    // A spider may declare the terms of the site it scrapes; they are reported in the
    // snapshot so /ATTRIBUTION.txt can name them.
    if let (Some(licence), Some(s)) = (attr("license").or_else(|| attr("license:wikidata")), &file_spider) {
        report.declared_licences.entry(licence).or_default().push(s.clone());
    }
    let mut rows = Vec::new();
    for (i, value) in features.into_iter().enumerate() {
        report.rows_read += 1;
        match value.and_then(|v| parse_feature(v, file_spider.as_deref(), collected)) {
            Ok(row) => rows.push(row),
            Err(skipped) => report.skip(name, i as u64 + 1, skipped),
        }
    }
    report.rows_kept += rows.len() as u64;
    rows.iter().for_each(|r| report.count_hours(r));
    sink(rows);
    Ok(())
}

/// Each feature's JSON text, or why it is not JSON.
type Features<'a> = Vec<std::result::Result<&'a RawValue, Skipped>>;

fn collection(bytes: &[u8]) -> std::result::Result<(serde_json::Map<String, serde_json::Value>, Features<'_>), serde_json::Error> {
    let coll: Collection = serde_json::from_slice(bytes)?;
    Ok((coll.dataset_attributes, coll.features.into_iter().map(Ok).collect()))
}

/// One Feature per line, each carrying the run's `dataset_attributes` (the first line's are
/// the file's); a broken line costs that line only.
fn line_features(bytes: &[u8]) -> (serde_json::Map<String, serde_json::Value>, Features<'_>) {
    let features: Features = bytes
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<&RawValue>(l).map_err(|e| Skipped::new(Skip::Invalid, format!("invalid JSON: {e}"))))
        .collect();
    let attributes = features
        .iter()
        // An object's only: a struct reads from an array as well.
        .filter_map(|f| f.as_ref().ok().map(|r| r.get()).filter(|t| t.starts_with('{')))
        .find_map(|t| serde_json::from_str::<LineAttributes>(t).ok()?.dataset_attributes?.as_object().cloned())
        .unwrap_or_default();
    (attributes, features)
}

/// When an `end_date` ends: a full date or time as written; a year (`2027`) or a month
/// (`2027-03`) at its last day's end. None for text that is no date.
fn end_of(end: &str) -> Option<i64> {
    if let Some(t) = parse_iso(end) {
        return Some(t);
    }
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let next = match end.split_once('-') {
        None if digits(end, 4) => format!("{}-01-01", end.parse::<u32>().ok()? + 1),
        Some((y, m)) if digits(y, 4) && digits(m, 2) => match m.parse::<u32>().ok()? {
            12 => format!("{}-01-01", y.parse::<u32>().ok()? + 1),
            m @ 1..=11 => format!("{y}-{:02}-01", m + 1),
            _ => return None,
        },
        _ => return None,
    };
    parse_iso(&next).map(|t| t - 1)
}

/// A row, or why not (a store the spider reports as closed: `end_date` of `yes`, a date not
/// after the collection, or text that is no date).
fn parse_feature(text: &RawValue, file_spider: Option<&str>, collected: Option<i64>) -> std::result::Result<SourceRow, Skipped> {
    let invalid = |why: String| Skipped::new(Skip::Invalid, why);
    let f: Feature = serde_json::from_str(text.get()).map_err(|e| invalid(format!("invalid feature: {e}")))?;
    // ATP allows a null geometry (DATA_FORMAT.md); such a store cannot be placed.
    let (lng, lat) = f.geometry.as_ref().ok_or_else(|| Skipped::new(Skip::BadGeometry, "null geometry"))?.position()?;
    let p = f.properties;
    let spider = p.spider.clone().or(file_spider.map(str::to_string)).ok_or_else(|| invalid("no @spider".into()))?;
    let reference = clean(p.reference.as_deref()).ok_or_else(|| invalid("no ref".into()))?;
    if let Some(end) = p.end_date.as_deref().map(str::trim).filter(|e| !e.is_empty() && !matches!(e.to_ascii_lowercase().as_str(), "no" | "false")) {
        // A spider sets end_date only for a store that has ended or is about to; a date that
        // is no date (2023-06-31) still says so, and serving it as open would be the worse error.
        // A year or a month ends with it (2027-03: open until April). A readable date without a
        // collection time to compare is left open, as before.
        let ended = end == "yes"
            || match (end_of(end), collected) {
                (Some(e), Some(c)) => e <= c,
                (Some(_), None) => false,
                (None, _) => true,
            };
        if ended {
            return Err(Skipped::new(Skip::Closed, "end_date"));
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
        return Err(Skipped::new(Skip::NoBrandMatch, "no name, brand or branch"));
    }
    Ok(row)
}

#[cfg(test)]
mod licence_tests {
    use super::*;

    #[test]
    fn spider_declared_licences_are_reported_by_licence() {
        let dir = crate::test_dir::TestDir::new("atp-licences");
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
        let got: Vec<(String, Vec<String>)> = report.declared_licences.into_iter().collect();
        assert_eq!(
            got,
            vec![("CC-BY-4.0".to_string(), vec!["a_spider".to_string(), "b_spider".to_string()]), ("Q6938433".to_string(), vec!["c_spider".to_string()]),]
        );
    }

    #[test]
    fn a_byte_order_mark_before_the_json_is_ignored() {
        let dir = crate::test_dir::TestDir::new("atp-bom");
        let feature = r#"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[2.35,48.85]},"properties":{"ref":"1","name":"Shop"}}"#;
        let collection = format!(r#"{{"type":"FeatureCollection","dataset_attributes":{{"@spider":"s"}},"features":[{feature}]}}"#);
        std::fs::write(dir.join("s.geojson"), [b"\xEF\xBB\xBF".as_slice(), collection.as_bytes()].concat()).unwrap();
        std::fs::write(dir.join("t.ndgeojson"), [b"\xEF\xBB\xBF".as_slice(), feature.as_bytes(), b"\n"].concat()).unwrap();
        let (rows, report) = import_atp(&dir).unwrap();
        assert_eq!((rows.len(), report.files_failed, report.rows_skipped), (2, 0, 0), "{:?}", report.errors);
    }
}

#[cfg(test)]
mod line_tests {
    use super::*;

    #[test]
    fn an_end_date_closes_the_store_unless_it_is_a_readable_date_after_the_collection() {
        let feature = |end: &str| {
            let text = format!(
                r#"{{"type":"Feature","id":"x","geometry":{{"type":"Point","coordinates":[8.5,47.2]}},"properties":{{"ref":"1","@spider":"s","end_date":"{end}"}}}}"#
            );
            serde_json::value::RawValue::from_string(text).unwrap()
        };
        let collected = parse_iso("2026-10-01T00:00:00Z");
        let closed = |end: &str, at: Option<i64>| match parse_feature(&feature(end), None, at) {
            Err(s) => s.reason == Skip::Closed,
            Ok(_) => false,
        };
        assert!(closed("yes", collected));
        assert!(closed("2026-09-30", collected), "before the collection");
        assert!(!closed("2026-12-31", collected), "closing after it: open now");
        // Not a date: 2023-06-31 has no such day, and parse_iso no longer rolls it into July.
        assert!(closed("2023-06-31", collected));
        assert!(closed("soon", collected));
        assert!(!closed("2020-01-01", None), "no collection time to compare with: left open");
        assert!(!closed("  ", collected), "an empty end_date is no end_date");
        assert!(!closed("no", collected) && !closed("False", collected), "a spider's no is no end");
        // A year or a month: open until it ends.
        assert!(!closed("2026", collected) && !closed("2026-10", collected) && !closed("2027-03", collected));
        assert!(closed("2026-09", collected) && closed("2025", collected));
        assert!(closed("2026-13", collected), "no such month: no date");
    }

    #[test]
    fn a_feature_per_line_takes_the_first_lines_run_attributes_and_skips_broken_lines() {
        // The run's attributes ride on each line; the first line that has them (as an object)
        // names the spider and the collection time for every feature of the file.
        let dir = crate::test_dir::TestDir::new("atp-lines");
        let feature = |r: &str, attrs: &str| {
            format!(
                r#"{{"type":"Feature","id":"id-{r}","geometry":{{"type":"Point","coordinates":[8.5,47.2]}},"properties":{{"ref":"{r}","name":"Shop {r}"}}{attrs}}}"#
            )
        };
        let lines = [
            "{not json".to_string(),
            r#"[{"dataset_attributes":{"@spider":"from_an_array"}}]"#.to_string(),
            feature("1", r#","dataset_attributes":null"#),
            feature("2", r#","dataset_attributes":{"@spider":"line_spider","spider:collection_time":"2026-10-01T00:00:00Z"}"#),
            feature("3", r#","dataset_attributes":{"@spider":"later_spider"}"#),
        ];
        let file = dir.join("whatever.ndgeojson");
        std::fs::write(&file, lines.join("\n")).unwrap();
        let (rows, report) = import_atp(&file).unwrap();
        assert_eq!(report.rows_read, 5);
        assert_eq!(rows.iter().map(|r| r.source_id.as_str()).collect::<Vec<_>>(), ["id-1", "id-2", "id-3"]);
        assert_eq!(rows[0].other_ids, ["line_spider/1", "1"]);
        assert_eq!(rows[2].seen_at, parse_iso("2026-10-01T00:00:00Z"));
        // The broken line and the array are each skipped as invalid, the rest go on.
        assert_eq!(report.rows_kept, 3);
        assert_eq!(report.rows_read - report.rows_kept, 2);
    }
}

#[cfg(test)]
mod zip_tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    /// A zip of `members` (name, bytes), deflated.
    fn write_zip(path: &Path, members: &[(&str, Vec<u8>)]) {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
        for (name, bytes) in members {
            zip.start_file(*name, SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated)).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
    }

    fn spider(name: &str) -> Vec<u8> {
        format!(
            r#"{{"type":"FeatureCollection","dataset_attributes":{{"@spider":"{name}"}},"features":[{{"type":"Feature","id":"{name}-1","geometry":{{"type":"Point","coordinates":[8.5,47.2]}},"properties":{{"ref":"1","name":"Shop"}}}}]}}"#
        )
        .into_bytes()
    }

    /// A member that inflates past the cap (here 64 KiB of spaces, over a 4 KiB cap; the real
    /// cap is 1 GiB) is named and skipped; the others are read.
    #[test]
    fn a_member_that_unpacks_past_the_cap_is_skipped_by_name() {
        let dir = crate::test_dir::TestDir::new("atp-zip-bomb");
        let file = dir.join("output.zip");
        write_zip(&file, &[("bomb.geojson", vec![b' '; 64 << 10]), ("good.geojson", spider("good"))]);
        let (mut report, mut rows) = (ImportReport::new(SourceType::Atp), Vec::new());
        read_zip_within(&file, "output.zip", false, &mut report, &mut |r| rows.extend(r), 4 << 10).unwrap();
        assert_eq!((report.files, report.files_failed, rows.len()), (2, 1, 1));
        assert!(report.errors.iter().any(|e| e.contains("output.zip!bomb.geojson") && e.contains("zip bomb")), "{:?}", report.errors);
    }

    /// A member whose local header is damaged (its signature overwritten) is counted failed and
    /// named; it used to be dropped from the list without a word.
    #[test]
    fn a_member_with_a_damaged_local_header_is_named() {
        let dir = crate::test_dir::TestDir::new("atp-zip-header");
        let file = dir.join("output.zip");
        write_zip(&file, &[("a.geojson", spider("a")), ("b.geojson", spider("b"))]);
        let mut bytes = std::fs::read(&file).unwrap();
        let header = zip::ZipArchive::new(std::io::Cursor::new(bytes.clone())).unwrap().by_index(1).unwrap().header_start() as usize;
        assert_eq!(&bytes[header..header + 4], b"PK\x03\x04");
        bytes[header + 2] = 0xff;
        std::fs::write(&file, &bytes).unwrap();
        let (rows, report) = import_atp(&file).unwrap();
        assert_eq!((report.files, report.files_failed, rows.len()), (2, 1, 1));
        assert!(report.errors.iter().any(|e| e.contains("output.zip!b.geojson") && e.contains("damaged")), "{:?}", report.errors);
    }

    /// A zip with no spider output (empty, a readme alone, a zip of zips) is no ATP run: refused
    /// by name, the nested zip named with the way out, rather than imported as no stores.
    #[test]
    fn a_zip_without_spider_files_is_refused() {
        let dir = crate::test_dir::TestDir::new("atp-zip-none");
        type Members = Vec<(&'static str, Vec<u8>)>;
        let cases: [(&str, Members); 3] = [
            ("empty.zip", vec![]),
            ("readme.zip", vec![("README.txt", b"AllThePlaces run".to_vec())]),
            ("outer.zip", vec![("output.zip", b"PK\x05\x06".to_vec())]),
        ];
        for (name, members) in cases {
            let file = dir.join(name);
            write_zip(&file, &members);
            let refused = import_atp(&file).unwrap_err().to_string();
            assert!(refused.contains(name) && refused.contains("holds no spider files"), "{refused}");
            assert_eq!(refused.contains("unzip it"), name == "outer.zip", "{refused}");
        }
        // Beside spider files (a stray zip in a folder of them), and after a file that failed,
        // it is one more failed file, named.
        let folder = dir.join("folder");
        std::fs::create_dir_all(&folder).unwrap();
        let feature = r#"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[2.35,48.85]},"properties":{"ref":"1","name":"Shop"}}"#;
        std::fs::write(folder.join("a.geojson"), "{not json").unwrap();
        std::fs::write(folder.join("s.geojson"), format!(r#"{{"type":"FeatureCollection","features":[{feature}]}}"#)).unwrap();
        write_zip(&folder.join("z.zip"), &[("README.txt", b"AllThePlaces run".to_vec())]);
        let (rows, report) = import_atp(&folder).expect("a stray zip among spider files");
        assert_eq!((rows.len(), report.files, report.files_failed), (1, 3, 2));
        assert!(report.errors.iter().any(|e| e.contains("z.zip") && e.contains("holds no spider files")), "{:?}", report.errors);
    }
}
