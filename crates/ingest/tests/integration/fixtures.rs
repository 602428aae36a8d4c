//! The importers against `test/fixtures` (written by `test/fixtures/make_fixtures.py`) and its
//! ground truth `expected.json`.
//!
//! Row numbers in importer messages count from 1: for OSM the line of the file, for ATP the
//! feature's position in `features`, for Parquet the row (expected.json's `row` is the 0-based
//! row *index*, as its README says, so index 1 is reported as "row 2").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;
use storemap_core::{offset_m, parse_iso, SourceType};
use storemap_ingest::import::{import_atp, import_fsq, import_osm, import_overture};
use storemap_ingest::{ImportReport, SourceRow};

use crate::common::{expected, expected_rows, fixtures_dir, member_id, members, row_key};

type Importer = fn(&Path) -> storemap_ingest::Result<(Vec<SourceRow>, ImportReport)>;

fn importer(source: &str) -> Importer {
    match source {
        "osm" => import_osm,
        "atp" => import_atp,
        "overture" => import_overture,
        "fsq" => import_fsq,
        other => panic!("expected.json names an unknown source {other:?}"),
    }
}

const SOURCES: [SourceType; 4] = [SourceType::Osm, SourceType::Atp, SourceType::Overture, SourceType::Fsq];

/// Whether `msg` contains `row <n>` not followed by another digit ("row 2" is not "row 20").
fn names_row(msg: &str, n: u64) -> bool {
    let needle = format!("row {n}");
    msg.match_indices(&needle).any(|(i, _)| !msg[i + needle.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Words one of which a message for this expected.json reason must contain (lower case).
fn reason_words(reason: &str) -> Option<&'static [&'static str]> {
    Some(match reason {
        "invalid_json" => &["json"],
        "coordinates_out_of_range" => &["out of range"],
        "non_point_geometry" => &["not a point"],
        "coordinates_not_numeric" => &["number", "numeric"],
        "invalid_wkb" => &["wkb"],
        "null_coordinate" => &["null"],
        "geometry_null" => &["null geometry", "no geometry", "geometry is null"],
        _ => return None,
    })
}

/// The 1-based position of the ATP feature with this id in a FeatureCollection file.
fn atp_feature_number(file: &Path, id: &str) -> Option<u64> {
    let v: Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    v["features"].as_array()?.iter().position(|f| f["id"] == id).map(|i| i as u64 + 1)
}

/// Checks that one message in `report.errors` names `file`, row `row` and (when known) the
/// reason. Returns a description of the problem, if any.
fn check_error_message(report: &ImportReport, file: &Path, row: u64, reason: &str) -> Option<String> {
    let file_name = file.file_name().unwrap().to_string_lossy().to_string();
    let hit = report.errors.iter().find(|m| m.contains(&file_name) && names_row(m, row));
    match hit {
        None => Some(format!("no error message names {file_name} and row {row} (reason {reason}); errors: {:#?}", report.errors)),
        Some(m) => match reason_words(reason) {
            Some(words) if !words.iter().any(|w| m.to_lowercase().contains(w)) => {
                Some(format!("message for {file_name} row {row} does not say why ({reason}, expected one of {words:?}): {m}"))
            }
            _ => None,
        },
    }
}

#[test]
fn malformed_inputs_match_expected_json() {
    let malformed = expected()["malformed"].as_object().expect("expected.json: malformed is an object");
    assert!(!malformed.is_empty());

    // Every file in malformed/ has an expectation (a new broken input must not go untested).
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures_dir().join("malformed"))
        .expect("test/fixtures/malformed exists")
        .map(|e| format!("malformed/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    let listed: BTreeSet<String> = malformed.keys().cloned().collect();
    assert_eq!(on_disk, listed, "files in test/fixtures/malformed vs entries of expected.json malformed");

    let mut problems: Vec<String> = Vec::new();
    for (rel, e) in malformed {
        let file = fixtures_dir().join(rel);
        let source = e["source"].as_str().expect("source");
        let result = importer(source)(&file);
        let file_name = file.file_name().unwrap().to_string_lossy().to_string();

        if e["file_error"].as_bool().expect("file_error") {
            match result {
                Ok((rows, report)) => problems.push(format!("{rel}: expected a file-level error, got Ok with {} rows, report {report:?}", rows.len())),
                Err(err) if !err.to_string().contains(&file_name) => problems.push(format!("{rel}: the error does not name the file: {err}")),
                Err(_) => {}
            }
            continue;
        }

        let (rows, report) = match result {
            Ok(r) => r,
            Err(err) => {
                problems.push(format!("{rel}: expected row-level rejections, got a file-level error: {err}"));
                continue;
            }
        };
        let kept: BTreeSet<String> = rows.iter().map(row_key).collect();
        let accepted: BTreeSet<String> = e["accepted"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
        if kept != accepted {
            problems.push(format!("{rel}: kept rows {kept:?}, expected {accepted:?}"));
        }
        if report.rows_kept != rows.len() as u64 {
            problems.push(format!("{rel}: report.rows_kept {} but {} rows returned", report.rows_kept, rows.len()));
        }
        let rejected = e["rejected"].as_array().unwrap();
        if report.rows_skipped != rejected.len() as u64 {
            problems.push(format!("{rel}: rows_skipped {}, expected {} rejected; errors {:?}", report.rows_skipped, rejected.len(), report.errors));
        }
        for r in rejected {
            let reason = r["reason"].as_str().unwrap_or("");
            let row = if let Some(line) = r["line"].as_u64() {
                line
            } else if let Some(index) = r["row"].as_u64() {
                index + 1
            } else {
                let member = r["member"].as_str().expect("a rejected entry has line, row or member");
                let id = member.split_once(':').unwrap().1;
                match atp_feature_number(&file, id) {
                    Some(n) => n,
                    None => {
                        problems.push(format!("{rel}: cannot find {member} in the file to number it"));
                        continue;
                    }
                }
            };
            if let Some(p) = check_error_message(&report, &file, row, reason) {
                problems.push(format!("{rel}: {p}"));
            }
        }
    }
    assert!(problems.is_empty(), "malformed fixtures:\n  {}", problems.join("\n  "));
}

/// expected.json members of one source, split into open rows (kept) and closed ones.
fn expected_members(source: SourceType) -> (BTreeSet<String>, BTreeSet<String>) {
    let prefix = format!("{}:", source.as_str());
    let (mut open, mut closed) = (BTreeSet::new(), BTreeSet::new());
    for row in expected_rows() {
        let is_closed = row["status"] == "closed";
        for m in members(row).into_iter().filter(|m| m.starts_with(&prefix)) {
            if is_closed {
                closed.insert(m);
            } else {
                open.insert(m);
            }
        }
    }
    (open, closed)
}

fn source_dir(source: SourceType) -> PathBuf {
    fixtures_dir().join(source.as_str())
}

#[test]
fn good_fixtures_import_every_open_row() {
    let counts = &expected()["counts"]["source_rows"];
    let dropped: Vec<&Value> = expected()["dropped"].as_array().unwrap().iter().collect();
    // The closed rows are those of scenario 8 (ATP end_date, FSQ date_closed, Overture
    // permanently_closed): make sure that is still what expected.json says.
    let closed_rows: Vec<&Value> = expected_rows().iter().filter(|r| r["status"] == "closed").collect();
    assert!(closed_rows.iter().all(|r| r["scenario"] == "8"), "closed rows outside scenario 8: {closed_rows:?}");
    assert!(!closed_rows.is_empty());

    let mut problems = Vec::new();
    for source in SOURCES {
        let s = source.as_str();
        let dir = source_dir(source);
        let (rows, report) = importer(s)(&dir).unwrap_or_else(|e| panic!("{s}: importing {}: {e}", dir.display()));
        let (open, closed) = expected_members(source);
        let prefix = format!("{s}:");
        let dropped_here: Vec<&Value> = dropped.iter().copied().filter(|d| d["member"].as_str().unwrap().starts_with(&prefix)).collect();
        let total = counts[s].as_u64().unwrap_or_else(|| panic!("counts.source_rows.{s}"));

        // The scene is consistent: every source row is open, closed or dropped.
        assert_eq!(total, (open.len() + closed.len() + dropped_here.len()) as u64, "{s}: expected.json is inconsistent");

        let kept: BTreeSet<String> = rows.iter().map(row_key).collect();
        if kept != open {
            problems.push(format!("{s}: kept {kept:?}\n     expected {open:?}"));
        }
        if rows.len() as u64 != total - closed.len() as u64 - dropped_here.len() as u64 {
            problems.push(format!("{s}: {} rows, expected {total} - {} closed - {} dropped", rows.len(), closed.len(), dropped_here.len()));
        }
        if report.rows_read != total {
            problems.push(format!("{s}: rows_read {} != counts.source_rows {total}", report.rows_read));
        }
        if report.rows_kept != rows.len() as u64 {
            problems.push(format!("{s}: rows_kept {} != {} rows returned", report.rows_kept, rows.len()));
        }
        if report.rows_closed != closed.len() as u64 {
            problems.push(format!("{s}: rows_closed {}, expected {} ({closed:?})", report.rows_closed, closed.len()));
        }
        if report.rows_skipped != dropped_here.len() as u64 {
            problems.push(format!(
                "{s}: rows_skipped {}, expected {} ({:?}); errors {:?}",
                report.rows_skipped,
                dropped_here.len(),
                dropped_here,
                report.errors
            ));
        }
        if rows.iter().any(|r| r.closed) {
            problems.push(format!("{s}: a kept row is marked closed"));
        }
        // Each dropped row is reported with its file and row number.
        for d in dropped_here {
            let id = d["member"].as_str().unwrap().split_once(':').unwrap().1;
            let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
            let Some((file, n)) = files.iter().find_map(|f| atp_feature_number(f, id).map(|n| (f.clone(), n))) else {
                problems.push(format!("{s}: dropped {id} not found in any file of {}", dir.display()));
                continue;
            };
            if let Some(p) = check_error_message(&report, &file, n, d["reason"].as_str().unwrap_or("")) {
                problems.push(format!("{s}: {p}"));
            }
        }
    }
    assert!(problems.is_empty(), "good fixtures:\n  {}", problems.join("\n  "));
}

// ---------------------------------------------------------------------------------------------
// One fully populated row per source, field by field, against what make_fixtures.py writes.

/// Base points of make_fixtures.py (`B`).
const MCD_A: (f64, f64) = (41.88275, -87.62960);
const SBUX_3A: (f64, f64) = (41.88460, -87.62620);

fn import_one(source: SourceType, id: &str) -> SourceRow {
    let (rows, _) = importer(source.as_str())(&source_dir(source)).unwrap();
    rows.into_iter().find(|r| r.source_id == id).unwrap_or_else(|| panic!("{}:{id} not imported", source.as_str()))
}

fn assert_point(row: &SourceRow, want: (f64, f64), tol_deg: f64) {
    assert!(
        (row.lat - want.0).abs() <= tol_deg && (row.lng - want.1).abs() <= tol_deg,
        "{}: point ({}, {}), expected ({}, {}) within {tol_deg} deg",
        row_key(row),
        row.lat,
        row.lng,
        want.0,
        want.1
    );
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// Six-decimal rounding as written by make_fixtures.py (`rnd(p, 6)`): within half a unit.
const ROUNDED_6: f64 = 5.01e-7;

/// The row's address as a US row's line reads: a number and street given apart (OpenStreetMap's
/// tags) wait for the row's country to be joined ([`storemap_ingest::house_number`]).
fn us_line(r: &SourceRow) -> Option<String> {
    r.address.as_deref().map(|a| storemap_ingest::house_number::line(a, "US").into_owned())
}

#[test]
fn osm_row_field_by_field() {
    let id = member_id("mcdonalds-madison-dearborn", SourceType::Osm);
    let r = import_one(SourceType::Osm, &id);
    assert_eq!(r.source, Some(SourceType::Osm));
    assert!(id.starts_with('n'), "a node id: {id}");
    assert_point(&r, MCD_A, 1e-9);
    assert_eq!(r.name, "McDonald's");
    assert_eq!(r.brand, s("McDonald's"));
    assert_eq!(r.brand_wikidata, s("Q38076"));
    assert_eq!(r.category, s("amenity/fast_food"));
    assert_eq!(us_line(&r), s("35 West Madison Street"));
    assert_eq!(r.city, s("Chicago"));
    assert_eq!(r.state, s("IL"));
    assert_eq!(r.postcode, s("60602"));
    assert_eq!(r.country, s("US"));
    assert_eq!(r.phone, s("+1 312-555-0142"));
    assert!(!r.closed);
    assert!(r.derived_from.is_empty());
}

#[test]
fn atp_row_field_by_field() {
    let id = member_id("mcdonalds-madison-dearborn", SourceType::Atp);
    let r = import_one(SourceType::Atp, &id);
    assert_eq!(r.source, Some(SourceType::Atp));
    // ATP_MCD_ROWS: mcd_a at 18 m N, 16 m E of the base point, rounded to 6 decimals.
    assert_point(&r, offset_m(MCD_A.0, MCD_A.1, 18.0, 16.0), ROUNDED_6);
    assert_eq!(r.name, "McDonald's");
    assert_eq!(r.brand, s("McDonald's"));
    assert_eq!(r.brand_wikidata, s("Q38076"));
    assert_eq!(r.category, s("amenity/fast_food"));
    assert_eq!(us_line(&r), s("35 W Madison St"));
    assert_eq!(r.city, s("Chicago"));
    assert_eq!(r.state, s("IL"));
    assert_eq!(r.postcode, s("60602"));
    assert_eq!(r.country, s("US"));
    assert_eq!(r.phone, s("+1 312-555-0142"));
    assert!(r.other_ids.iter().any(|o| o == "mcdonalds_us/195500284011"), "other_ids {:?}", r.other_ids);
    // spider:collection_time 2025-09-27T14:03:21.482913 (no zone: UTC).
    let t = parse_iso("2025-09-27T14:03:21Z").unwrap();
    assert!(r.seen_at.is_some_and(|s| (t..=t + 1).contains(&s)), "seen_at {:?}", r.seen_at);
    assert!(!r.closed);
}

#[test]
fn overture_row_field_by_field() {
    let id = member_id("mcdonalds-madison-dearborn", SourceType::Overture);
    let r = import_one(SourceType::Overture, &id);
    assert_eq!(r.source, Some(SourceType::Overture));
    // OV_ROWS: mcd_a at 19 m N, 15 m E, written at full precision (WKB).
    assert_point(&r, offset_m(MCD_A.0, MCD_A.1, 19.0, 15.0), 1e-9);
    assert_eq!(r.name, "McDonald's");
    assert_eq!(r.brand, s("McDonald's"));
    assert_eq!(r.brand_wikidata, s("Q38076"));
    assert_eq!(r.category, s("fast_food_restaurant"));
    assert_eq!(us_line(&r), s("35 W Madison St"));
    assert_eq!(r.city, s("Chicago"));
    assert_eq!(r.state, s("IL"), "region US-IL");
    assert_eq!(r.postcode, s("60602"));
    assert_eq!(r.country, s("US"));
    assert_eq!(r.phone, s("+13125550142"));
    // sources[0] = AllThePlaces, record_id = the ATP feature id.
    let atp_id = member_id("mcdonalds-madison-dearborn", SourceType::Atp);
    assert_eq!(r.derived_from, vec![(SourceType::Atp, atp_id)]);
    assert_eq!(r.seen_at, parse_iso("2025-09-29T00:00:00Z"));
    assert!(!r.closed);
}

#[test]
fn fsq_row_field_by_field() {
    let id = member_id("starbucks-randolph-80m-east", SourceType::Fsq);
    let r = import_one(SourceType::Fsq, &id);
    assert_eq!(r.source, Some(SourceType::Fsq));
    // FSQ_PTS["sbux_3b"]: 3 m N, 2 m W of sbux_3b, itself 80 m E of sbux_3a; 6 decimals.
    let b = offset_m(SBUX_3A.0, SBUX_3A.1, 0.0, 80.0);
    assert_point(&r, offset_m(b.0, b.1, 3.0, -2.0), ROUNDED_6);
    assert_eq!(r.name, "Starbucks Coffee");
    // Foursquare has no brand column: brand comes later, from the name.
    assert_eq!(r.brand, None);
    assert_eq!(r.brand_wikidata, None);
    assert_eq!(r.category, s("Dining and Drinking > Cafe, Coffee, and Tea House > Coffee Shop"));
    assert_eq!(us_line(&r), s("151 N Michigan Ave"));
    assert_eq!(r.city, s("Chicago"));
    assert_eq!(r.state, s("IL"));
    assert_eq!(r.postcode, s("60601"));
    assert_eq!(r.country, s("US"));
    assert_eq!(r.phone, s("(312) 555-0122"));
    assert_eq!(r.seen_at, parse_iso("2025-07-30"));
    assert!(r.derived_from.is_empty());
    assert!(!r.closed);
}
