//! The importers on files the publishers' own tools wrote (`test/fixtures/real/`, see its
//! README) and on the shapes of other releases (`test/fixtures/variants/`, written by
//! `make_variants.py` after the publishers' schemas and code). Expected counts are taken from
//! the files themselves (parsed here with serde_json and the zip reader, or given by the
//! fixtures' READMEs), never from the importers.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
use storemap_core::{haversine_m, SourceType};
use storemap_ingest::import::{import_atp, import_fsq, import_osm, import_overture};
use storemap_ingest::{ImportReport, SourceRow};

use crate::common::{fixtures_dir, row_key};

fn real(rel: &str) -> PathBuf {
    fixtures_dir().join("real").join(rel)
}

fn variant(rel: &str) -> PathBuf {
    fixtures_dir().join("variants").join(rel)
}

/// Every record is kept or skipped for one reason, and the report's fields agree.
fn assert_accounted(report: &ImportReport) {
    let skipped: u64 = report.skipped.values().sum();
    assert_eq!(report.rows_read, report.rows_kept + skipped, "rows_read = kept + skipped by reason: {report:?}");
    assert_eq!(report.rows_closed, report.skipped.get("closed").copied().unwrap_or(0));
    assert_eq!(report.rows_skipped + report.rows_closed, skipped);
}

fn skipped(report: &ImportReport, reason: &str) -> u64 {
    report.skipped.get(reason).copied().unwrap_or(0)
}

fn keys(rows: &[SourceRow]) -> BTreeSet<String> {
    rows.iter().map(row_key).collect()
}

/// The osmium export's lines as (type letter, id, properties), read here independently.
fn geojsonseq_objects(path: &Path) -> Vec<(char, i64, serde_json::Map<String, Value>, Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.trim_start_matches('\u{1e}').trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let p = v["properties"].as_object().unwrap().clone();
            let t = p["@type"].as_str().unwrap().chars().next().unwrap();
            (t, p["@id"].as_i64().unwrap(), p, v["geometry"].clone())
        })
        .collect()
}

#[test]
fn osm_pbf_and_its_osmium_export_give_the_same_stores_each_object_once() {
    let (pbf, pbf_report) = import_osm(&real("osm/zugerland.osm.pbf")).expect("the PBF imports");
    let (seq, seq_report) = import_osm(&real("osm/zugerland_poi.geojsonseq")).expect("the export imports");
    assert_accounted(&pbf_report);
    assert_accounted(&seq_report);

    // Each OSM object once, in each.
    for rows in [&pbf, &seq] {
        let ids: HashSet<&str> = rows.iter().map(|r| r.source_id.as_str()).collect();
        assert_eq!(ids.len(), rows.len(), "an OSM object became two rows");
    }
    // The same stores at the same places (the export's areas and the PBF's node positions
    // give the same point on the surface, to well under a metre).
    assert_eq!(keys(&pbf), keys(&seq));
    let by_id: BTreeMap<&str, &SourceRow> = seq.iter().map(|r| (r.source_id.as_str(), r)).collect();
    for r in &pbf {
        let s = by_id[r.source_id.as_str()];
        let d = haversine_m(r.lat, r.lng, s.lat, s.lng);
        assert!(d < 1.0, "{}: PBF and export positions {d:.2} m apart", r.source_id);
        assert_eq!((&r.name, &r.brand, &r.category), (&s.name, &s.brand, &s.category));
    }

    // The export writes every closed way twice: the second is the one duplicate per way.
    let objects = geojsonseq_objects(&real("osm/zugerland_poi.geojsonseq"));
    let distinct: HashSet<(char, i64)> = objects.iter().map(|o| (o.0, o.1)).collect();
    assert_eq!(seq_report.rows_read, objects.len() as u64);
    assert_eq!(skipped(&seq_report, "duplicate_id"), (objects.len() - distinct.len()) as u64);

    // The branded shops (a `brand` tag), counted from the export: at least 30 of them, areas
    // included, come out as rows.
    let branded: BTreeSet<String> = objects.iter().filter(|o| o.2.contains_key("brand")).map(|o| format!("osm:{}{}", o.0, o.1)).collect();
    assert_eq!(branded.len(), 36, "the README's 36 branded shops");
    let ways = branded.iter().filter(|k| k.starts_with("osm:w")).count();
    assert!(ways >= 27, "27 of them are building areas, got {ways}");
    let kept = keys(&pbf);
    let found = branded.iter().filter(|k| kept.contains(*k)).count();
    assert!(found >= 30, "only {found} of the 36 branded shops became rows: missing {:?}", branded.difference(&kept).collect::<Vec<_>>());
}

#[test]
fn osm_area_points_lie_inside_the_area() {
    let objects = geojsonseq_objects(&real("osm/zugerland_poi.geojsonseq"));
    let (rows, _) = import_osm(&real("osm/zugerland.osm.pbf")).unwrap();
    let by_id: BTreeMap<&str, &SourceRow> = rows.iter().map(|r| (r.source_id.as_str(), r)).collect();
    let mut checked = 0;
    for (t, id, _, geometry) in &objects {
        if geometry["type"] != "MultiPolygon" {
            continue;
        }
        let Some(r) = by_id.get(format!("{t}{id}").as_str()) else { continue };
        let polys = geometry["coordinates"].as_array().unwrap();
        let inside = polys.iter().any(|p| {
            let rings = p.as_array().unwrap();
            let ring = |k: usize| rings[k].as_array().unwrap().iter().map(|c| (c[0].as_f64().unwrap(), c[1].as_f64().unwrap())).collect::<Vec<_>>();
            point_in_ring(r.lng, r.lat, &ring(0)) && (1..rings.len()).all(|k| !point_in_ring(r.lng, r.lat, &ring(k)))
        });
        assert!(inside, "{t}{id}: ({}, {}) is not inside its area", r.lat, r.lng);
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} areas checked");
}

/// Even-odd ray casting, written here apart from the importer's geometry.
fn point_in_ring(x: f64, y: f64, ring: &[(f64, f64)]) -> bool {
    let mut inside = false;
    for w in ring.windows(2) {
        let ((x1, y1), (x2, y2)) = (w[0], w[1]);
        if (y1 > y) != (y2 > y) && x < x1 + (y - y1) * (x2 - x1) / (y2 - y1) {
            inside = !inside;
        }
    }
    inside
}

#[test]
fn atp_output_zip_is_read_in_place_with_its_empty_spider() {
    let zip_path = real("atp/output.zip");
    // The archive's spider files and features, read here with the zip reader and serde_json.
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&zip_path).unwrap()).unwrap();
    let (mut files, mut empty, mut features, mut infrastructure) = (0, 0, 0u64, 0u64);
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        if !f.name().unwrap().ends_with(".geojson") {
            continue;
        }
        files += 1;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).unwrap();
        if text.is_empty() {
            empty += 1;
            continue;
        }
        let v: Value = serde_json::from_str(&text).unwrap();
        let n = v["features"].as_array().unwrap().len() as u64;
        features += n;
        if v["dataset_attributes"]["spider:lineage"] != "S_ATP_BRANDS" {
            infrastructure += n;
        }
    }
    assert_eq!((files, empty), (6, 1), "the README's five spiders plus one 0-byte file");

    let (rows, report) = import_atp(&zip_path).expect("output.zip imports, its 0-byte spider included");
    assert_accounted(&report);
    assert_eq!((report.files, report.files_empty, report.files_failed), (files, empty, 0));
    assert_eq!(report.rows_read, features);
    assert_eq!(skipped(&report, "not_storefront"), infrastructure, "the infrastructure spider's features");
    let names: BTreeSet<&str> = rows.iter().filter_map(|r| r.brand.as_deref()).collect();
    for b in ["Denner", "MediaMarkt", "Tchibo", "Misenso"] {
        assert!(names.contains(b), "{b} missing from {names:?}");
    }
    // The one spider that declares a licence is the infrastructure one, whose rows are not
    // imported: nothing of it is owed an attribution.
    assert!(report.declared_licences.is_empty(), "{:?}", report.declared_licences);
}

/// One spider damaged inside output.zip (a byte of its compressed data changed): it is named
/// and skipped, the others read as from the whole archive.
#[test]
fn a_spider_damaged_inside_the_zip_is_skipped_and_the_rest_go_on() {
    let zip_path = real("atp/output.zip");
    let mut bytes = std::fs::read(&zip_path).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.clone())).unwrap();
    // The biggest spider, so that its loss shows in the rows read.
    let (name, start, len) = (0..archive.len())
        .map(|i| {
            let f = archive.by_index(i).unwrap();
            (f.name().unwrap().to_string(), f.data_start().unwrap(), f.compressed_size())
        })
        .max_by_key(|e| e.2)
        .unwrap();
    bytes[(start + len / 2) as usize] ^= 0x55;
    let damaged = Path::new(env!("CARGO_TARGET_TMPDIR")).join("atp-damaged-output.zip");
    std::fs::write(&damaged, &bytes).unwrap();
    let result = import_atp(&damaged);
    std::fs::remove_file(&damaged).unwrap();
    let (rows, report) = result.expect("a damaged spider does not abort the archive");
    let (whole_rows, whole) = import_atp(&zip_path).unwrap();
    assert_eq!((report.files, report.files_failed), (whole.files, 1));
    assert!(report.errors.iter().any(|e| e.contains(&name) && e.contains("damaged in the zip")), "{name}: {:?}", report.errors);
    assert!(report.rows_read > 0 && report.rows_read < whole.rows_read, "{} rows read of {}", report.rows_read, whole.rows_read);
    assert!(rows.len() <= whole_rows.len());
}

#[test]
fn atp_folders_skip_what_cannot_be_read_and_go_on() {
    // Cargo's folder for integration tests' files (under target/): one a failed run leaves
    // behind is not in the system's temp folder.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("atp-folder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("empty.geojson"), b"").unwrap();
    std::fs::write(dir.join("broken.geojson"), b"<html>502 Bad Gateway</html>").unwrap();
    std::fs::copy(variant("atp_legacy/starbucks_us.geojson"), dir.join("starbucks_us.geojson")).unwrap();
    let result = import_atp(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let (rows, report) = result.expect("a broken spider file does not abort a folder");
    assert_eq!((report.files, report.files_empty, report.files_failed), (3, 1, 1));
    assert!(report.errors.iter().any(|e| e.contains("broken.geojson")), "{:?}", report.errors);
    assert_eq!(rows.len(), 2);
}

#[test]
fn atp_legacy_layout_and_line_delimited_spiders() {
    let (rows, report) = import_atp(&variant("atp_legacy")).expect("the legacy folder imports");
    assert_accounted(&report);
    assert_eq!(report.rows_read, 3 + 4);
    assert_eq!(
        keys(&rows),
        ["atp:Qd5JU86l-0PbscfQtyw8_1XH7JI=", "atp:s392p7GOKnC8uV53gxXeFfj0ZZ4=", "atp:GbBNbhTE1L07NZdYYxvaU-p8G0c=", "atp:9XMnnABHansrl7GhADyk9EKjTOw=",]
            .into_iter()
            .map(String::from)
            .collect()
    );
    assert_eq!(skipped(&report, "bad_geometry"), 2, "a feature with no geometry member, one with null");
    assert_eq!(skipped(&report, "closed"), 1, "an end_date before the collection time");
    assert!(rows.iter().all(|r| r.other_ids[0].starts_with("starbucks_us/") || r.other_ids[0].starts_with("mcdonalds_us/")));
}

#[test]
fn overture_cli_file_with_its_foursquare_and_atp_rows_linked() {
    let (rows, report) = import_overture(&real("overture/boulder_places_2026-04-15.0.parquet")).expect("the overturemaps download file imports");
    assert_accounted(&report);
    // The realdata README: 3,545 places, every one open; 555 from Foursquare, 43 from ATP.
    assert_eq!(report.rows_read, 3545);
    assert_eq!(skipped(&report, "closed"), 0);
    let from = |s: SourceType| rows.iter().filter(|r| r.derived_from.iter().any(|(d, _)| *d == s)).count();
    assert_eq!(from(SourceType::Fsq), 555);
    assert_eq!(from(SourceType::Atp), 43);
    // Foursquare record ids are fsq_place_ids (24 hex); ATP's are feature ids (base64 SHA-1).
    for r in &rows {
        for (s, id) in &r.derived_from {
            match s {
                SourceType::Fsq => assert!(id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}"),
                SourceType::Atp => assert!(id.len() == 28 && id.ends_with('='), "{id}"),
                _ => panic!("unexpected derived source {s:?}"),
            }
        }
    }
    // UUID ids, and the 2025-12 taxonomy gives categories.
    assert!(rows.iter().all(|r| r.source_id.len() == 36 && r.source_id.matches('-').count() == 4));
    assert!(rows.iter().filter(|r| r.category.is_some()).count() > 3000);
}

#[test]
fn overture_file_reads_the_same_under_every_parquet_codec() {
    // `test/fixtures/codecs/make_codecs.py`: the real file's first 300 rows, written by pyarrow
    // once per codec (uncompressed, Snappy, gzip, Brotli, LZ4, Zstd).
    let codec = |c: &str| fixtures_dir().join("codecs").join(format!("boulder_300_{c}.parquet"));
    let (plain, report) = import_overture(&codec("none")).expect("the uncompressed file imports");
    assert_accounted(&report);
    assert_eq!(report.rows_read, 300);
    // Each row as the whole real file gives it.
    let (whole, _) = import_overture(&real("overture/boulder_places_2026-04-15.0.parquet")).unwrap();
    let whole: BTreeMap<&str, &SourceRow> = whole.iter().map(|r| (r.source_id.as_str(), r)).collect();
    assert!(!plain.is_empty());
    for r in &plain {
        assert_eq!(Some(&r), whole.get(r.source_id.as_str()), "{}", r.source_id);
    }
    for c in ["snappy", "gzip", "brotli", "lz4", "zstd"] {
        let (rows, report) = import_overture(&codec(c)).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert_eq!(report.rows_read, 300, "{c}");
        assert!(rows == plain, "{c}: the rows differ from the uncompressed file's");
    }
}

#[test]
fn overture_release_folder_2024_schema_and_null_typed_columns() {
    // The release's hive tree, given at its root.
    let (rows, report) = import_overture(&variant("overture_release")).expect("the partitioned release imports");
    assert_accounted(&report);
    assert_eq!((report.files, report.rows_read), (2, 6));
    // Rows not open are dropped: permanently and temporarily closed alike.
    assert_eq!(skipped(&report, "closed"), 2);
    assert_eq!(rows.len(), 4);
    let mcd = rows.iter().find(|r| r.source_id == "26d7a4dc-3924-4d1b-8c91-fc5d982e182f").unwrap();
    assert_eq!(mcd.derived_from, vec![(SourceType::Fsq, "83a3db1143e2ed802d8d4ba0".to_string())]);
    let sbux = rows.iter().find(|r| r.source_id == "215fa0f1-1dcd-4c79-b57a-da8bfc852f07").unwrap();
    assert_eq!(sbux.category.as_deref(), Some("coffee_shop"), "from taxonomy.primary");
    assert_eq!(sbux.brand_wikidata.as_deref(), Some("Q37158"));

    let (rows, report) = import_overture(&variant("overture_2024/places.parquet")).expect("a 2024 file imports");
    assert_accounted(&report);
    assert_eq!((rows.len(), skipped(&report, "bad_geometry")), (4, 1));
    assert_eq!(rows.iter().find(|r| r.name == "McDonald's").unwrap().category.as_deref(), Some("fast_food_restaurant"), "from categories.main");

    let (rows, report) = import_overture(&variant("overture_null_typed/places.parquet")).expect("null-typed columns are columns with nothing in them");
    assert_accounted(&report);
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.brand.is_none() && r.phone.is_none()));

    let err = import_overture(&variant("overture_2023/places.parquet")).unwrap_err().to_string();
    assert!(err.contains("places.parquet") && err.contains("pre-2024"), "{err}");
}

#[test]
fn foursquare_parts_and_a_file_without_coordinates() {
    let (rows, report) = import_fsq(&variant("fsq_current")).expect("a folder of parts imports");
    assert_accounted(&report);
    assert_eq!((report.files, report.rows_read), (2, 6));
    assert_eq!(skipped(&report, "closed"), 1, "date_closed (a date32)");
    assert_eq!(skipped(&report, "bad_geometry"), 1, "null latitude and longitude");
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().any(|r| r.name == "Starbucks Coffee"), "an unresolved 'closed' flag is not a closure");

    // The real partial file has fsq_place_id, name, address, placemaker_url, geometry, bbox.
    let err = import_fsq(&real("fsq/partial-columns.parquet")).unwrap_err().to_string();
    assert!(err.contains("partial-columns.parquet"), "{err}");
    assert!(err.contains("latitude") && err.contains("longitude"), "the error names the missing columns: {err}");
    assert!(!err.contains("not found"), "the file is there, only its columns are not: {err}");

    // Columns the file has, with no values in them (Arrow's null type): named as such.
    let err = import_fsq(&variant("fsq_null_typed/places.parquet")).unwrap_err().to_string();
    assert!(err.contains("latitude (every value null), longitude (every value null)"), "{err}");
}

/// The same Foursquare rows after a re-write that keeps text and the longitude as Arrow
/// dictionaries (pandas categories) and the latitude as DECIMAL(9,6): the import matches the
/// plain file's, row for row, within the decimals' rounding.
#[test]
fn foursquare_dictionary_text_and_decimal_coordinates() {
    let (plain, plain_report) = import_fsq(&variant("fsq_current")).unwrap();
    let (rows, report) = import_fsq(&variant("fsq_rewritten/places.parquet")).expect("dictionary and decimal columns read");
    assert_accounted(&report);
    assert_eq!(report.rows_read, plain_report.rows_read);
    assert_eq!((skipped(&report, "closed"), skipped(&report, "bad_geometry")), (1, 1));
    assert_eq!(rows.len(), plain.len());
    for p in &plain {
        let r = rows.iter().find(|r| r.source_id == p.source_id).unwrap_or_else(|| panic!("{} is missing", p.source_id));
        assert_eq!((&r.name, &r.country, &r.city, &r.state), (&p.name, &p.country, &p.city, &p.state), "{}", p.source_id);
        assert!((r.lat - p.lat).abs() <= 5e-7 && (r.lng - p.lng).abs() <= 5e-7, "{}: ({}, {}) against ({}, {})", p.source_id, r.lat, r.lng, p.lat, p.lng);
    }
}

#[test]
fn osm_variants_areas_relations_and_export_options() {
    let (rows, report) = import_osm(&variant("osm_areas.geojsonseq")).unwrap();
    assert_accounted(&report);
    assert_eq!(report.rows_read, 6);
    assert_eq!(keys(&rows), ["osm:n11000000101", "osm:w1100000021", "osm:r16600001"].into_iter().map(String::from).collect());
    assert_eq!((skipped(&report, "duplicate_id"), skipped(&report, "not_storefront"), skipped(&report, "no_brand_match")), (1, 1, 1));
    // The relation's centroid is in its courtyard; its pin must be on the building.
    let r = rows.iter().find(|r| r.source_id == "r16600001").unwrap();
    assert!((47.6124101..=47.6125899).contains(&r.lat) && (-122.3362001..=-122.3357999).contains(&r.lng), "({}, {})", r.lat, r.lng);
    assert!(!((47.6124820..=47.6125180).contains(&r.lat) && (-122.3360400..=-122.3359600).contains(&r.lng)), "the pin is in the courtyard");

    let (rows, report) = import_osm(&variant("osm_options.geojsonseq")).unwrap();
    assert_accounted(&report);
    assert_eq!(keys(&rows), ["osm:n11000000101".to_string()].into_iter().collect());
}

/// `opening_hours` on the real samples: every kept row whose object the file gives hours for
/// has them (in the parser's normal form, which reads back as itself) or is counted as
/// invalid, the report's counts are the rows', and nearly every real value reads (the
/// reference JavaScript parser reads 99.3 % of OSM's).
#[test]
fn opening_hours_from_the_real_osm_and_atp_samples() {
    use storemap_ingest::hours::{normalize, Hours};
    let check = |rows: &[SourceRow], report: &ImportReport, raw_of: &BTreeMap<String, String>| {
        let mut given = 0;
        for r in rows {
            match raw_of.get(&r.source_id) {
                Some(raw) => {
                    given += 1;
                    assert!(r.opening_hours.is_some() != r.hours_invalid, "{}: {raw:?} is neither kept nor counted", r.source_id);
                    if let Some(h) = &r.opening_hours {
                        assert_eq!(normalize(Some(h)), Hours::Valid(h.clone()), "{}: the normal form of {raw:?} reads back as itself", r.source_id);
                    }
                }
                None => assert!(r.opening_hours.is_none() && !r.hours_invalid, "{} has no hours in the file", r.source_id),
            }
        }
        assert_eq!(report.rows_with_hours + report.hours_invalid, given);
        assert_eq!(report.rows_with_hours, rows.iter().filter(|r| r.opening_hours.is_some()).count() as u64);
        given
    };

    // OSM: the osmium export's objects, read here.
    let with_hours: Vec<(String, String)> = geojsonseq_objects(&real("osm/zugerland_poi.geojsonseq"))
        .into_iter()
        .filter_map(|(t, id, p, _)| p.get("opening_hours").and_then(Value::as_str).map(|h| (format!("{t}{id}"), h.to_string())))
        .collect();
    assert_eq!(with_hours.len(), 97, "the 97 features with opening_hours (the export writes each closed way twice)");
    let raw: BTreeMap<String, String> = with_hours.into_iter().collect();
    let (rows, report) = import_osm(&real("osm/zugerland_poi.geojsonseq")).unwrap();
    let given = check(&rows, &report, &raw);
    assert!(given >= 20, "kept rows with hours: {given}");
    assert!(report.rows_with_hours as f64 >= 0.95 * given as f64, "{} of {given} real OSM values read", report.rows_with_hours);
    // The PBF gives the same hours for the same objects.
    let (pbf, pbf_report) = import_osm(&real("osm/zugerland.osm.pbf")).unwrap();
    let by_id: BTreeMap<&str, &Option<String>> = rows.iter().map(|r| (r.source_id.as_str(), &r.opening_hours)).collect();
    for r in &pbf {
        assert_eq!(Some(&&r.opening_hours), by_id.get(r.source_id.as_str()), "{}", r.source_id);
    }
    assert_eq!(pbf_report.rows_with_hours, report.rows_with_hours);

    // AllThePlaces: the spiders' features in the zip, read here.
    let mut archive = zip::ZipArchive::new(std::fs::File::open(real("atp/output.zip")).unwrap()).unwrap();
    let mut raw = BTreeMap::new();
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut f, &mut text).unwrap();
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        for feature in v["features"].as_array().into_iter().flatten() {
            if let (Some(id), Some(h)) = (feature["id"].as_str(), feature["properties"]["opening_hours"].as_str()) {
                raw.insert(id.to_string(), h.to_string());
            }
        }
    }
    let (rows, report) = import_atp(&real("atp/output.zip")).unwrap();
    let given = check(&rows, &report, &raw);
    assert!(given >= 5, "kept ATP rows with hours: {given} of {} features with hours", raw.len());
    assert!(report.rows_with_hours as f64 >= 0.95 * given as f64, "{} of {given} real ATP values read", report.rows_with_hours);
}

#[test]
fn an_osm_file_is_known_by_its_bytes_and_one_of_neither_kind_is_refused_by_name() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("osm-sniff");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The PBF under another name reads as the PBF does.
    let renamed = dir.join("zug.txt");
    std::fs::copy(real("osm/zugerland.osm.pbf"), &renamed).unwrap();
    let (rows, _) = import_osm(&renamed).expect("a PBF named .txt imports");
    let (want, _) = import_osm(&real("osm/zugerland.osm.pbf")).unwrap();
    assert_eq!(keys(&rows), keys(&want));
    // A gzip-compressed sequence (what a download left compressed looks like: gzip's magic).
    let gz = dir.join("poi.geojsonseq");
    std::fs::write(&gz, [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 1, 2, 3]).unwrap();
    let e = import_osm(&gz).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("gzip") && e.contains("poi.geojsonseq"), "{e}");
    // Text that is not a sequence of JSON objects, and bytes named .pbf that are not one.
    let text = dir.join("notes.geojsonseq");
    std::fs::write(&text, "id,name\n1,shop\n").unwrap();
    let e = import_osm(&text).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("neither an OpenStreetMap PBF file nor a GeoJSON sequence") && e.contains("notes.geojsonseq"), "{e}");
    // A byte-order mark before the first record (a Windows editor's save) reads as without.
    let bom = dir.join("bom.geojsonseq");
    std::fs::write(&bom, [b"\xEF\xBB\xBF".as_slice(), &std::fs::read(real("osm/zugerland_poi.geojsonseq")).unwrap()].concat()).unwrap();
    let (with_bom, report) = import_osm(&bom).expect("a byte-order mark is no reason to refuse a file");
    assert_eq!(report.rows_skipped, import_osm(&real("osm/zugerland_poi.geojsonseq")).unwrap().1.rows_skipped);
    assert_eq!(keys(&with_bom), keys(&import_osm(&real("osm/zugerland_poi.geojsonseq")).unwrap().0));
    let fake = dir.join("fake.osm.pbf");
    std::fs::write(&fake, b"PK\x03\x04 not a pbf at all").unwrap();
    let e = import_osm(&fake).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("OSMHeader") && e.contains("fake.osm.pbf"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The block boundaries of a PBF, read here from its framing (a 4-byte big-endian length, a
/// BlobHeader whose field 3 is the blob's size), not by the importer's reader.
fn pbf_blocks(bytes: &[u8]) -> Vec<(usize, usize)> {
    fn varint(b: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let c = b[*at];
            *at += 1;
            v |= u64::from(c & 0x7f) << shift;
            shift += 7;
            if c < 0x80 {
                return v;
            }
        }
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let header_len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let header = &bytes[at + 4..at + 4 + header_len];
        let (mut i, mut data) = (0, None);
        while i < header.len() {
            let tag = varint(header, &mut i);
            match tag & 7 {
                0 => {
                    let v = varint(header, &mut i);
                    if tag >> 3 == 3 {
                        data = Some(v as usize);
                    }
                }
                2 => i += varint(header, &mut i) as usize,
                other => panic!("wire type {other} in a BlobHeader"),
            }
        }
        out.push((at, header_len));
        at += 4 + header_len + data.expect("a BlobHeader names its size");
    }
    assert_eq!(at, bytes.len());
    out
}

#[test]
fn a_pbf_cut_short_or_with_bytes_after_its_last_block_is_refused_by_name() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("osm-cut");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(real("osm/zugerland.osm.pbf")).unwrap();
    let blocks = pbf_blocks(&bytes);
    assert!(blocks.len() >= 3, "a header and data blocks: {blocks:?}");
    // Inside each block's length, its header and its blob, and a byte short of the file's end.
    let mut cuts = Vec::new();
    for &(at, header_len) in &blocks {
        cuts.extend([at + 1, at + 3, at + 4 + header_len / 2, at + 4 + header_len + 1]);
    }
    cuts.push(bytes.len() - 1);
    let file = dir.join("cut.osm.pbf");
    for cut in cuts {
        std::fs::write(&file, &bytes[..cut]).unwrap();
        let e = import_osm(&file).map(|_| ()).expect_err(&format!("a PBF cut at byte {cut} of {}", bytes.len())).to_string();
        assert!(e.contains("cut.osm.pbf"), "cut at {cut}: {e}");
    }
    // Two bytes after the last block: not the start of one.
    let mut longer = bytes.clone();
    longer.extend([0, 0]);
    std::fs::write(&file, &longer).unwrap();
    let e = import_osm(&file).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("2 bytes after its last block"), "{e}");
    // The header block damaged (its blob, past the 4-byte length and the BlobHeader).
    let mut damaged = bytes.clone();
    let (_, header_len) = blocks[0];
    for b in &mut damaged[4 + header_len + 3..4 + header_len + 19] {
        *b ^= 0x5a;
    }
    std::fs::write(&file, &damaged).unwrap();
    let e = import_osm(&file).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("OSMHeader") && e.contains("cut.osm.pbf"), "{e}");
    // The whole file, written here, imports as the fixture does.
    std::fs::write(&file, &bytes).unwrap();
    let (rows, _) = import_osm(&file).expect("the whole file imports");
    assert_eq!(keys(&rows), keys(&import_osm(&real("osm/zugerland.osm.pbf")).unwrap().0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Protobuf by hand, for PBF blocks the tests make: a varint, and a length-delimited field.
fn pb_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn pb_bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
    pb_varint(field << 3 | 2, out);
    pb_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

/// A PBF block framed as the format says: 4-byte length, BlobHeader (type, datasize), Blob.
fn pbf_block(blob_type: &str, blob: &[u8]) -> Vec<u8> {
    let mut blob_header = Vec::new();
    pb_bytes(1, blob_type.as_bytes(), &mut blob_header);
    pb_varint(3 << 3, &mut blob_header);
    pb_varint(blob.len() as u64, &mut blob_header);
    let mut out = (blob_header.len() as u32).to_be_bytes().to_vec();
    out.extend(blob_header);
    out.extend_from_slice(blob);
    out
}

/// A Blob: its payload in `field` (1 raw, 3 zlib, 4 lzma, 6 lz4, 7 zstd) and the size it
/// unpacks to (`raw_size`, field 2).
fn pbf_blob(field: u64, payload: &[u8], raw_size: u64) -> Vec<u8> {
    let mut blob = Vec::new();
    pb_bytes(field, payload, &mut blob);
    pb_varint(2 << 3, &mut blob);
    pb_varint(raw_size, &mut blob);
    blob
}

/// A block holding an uncompressed OSMHeader with these required features.
fn pbf_header_block(required: &[&str]) -> Vec<u8> {
    let mut header_block = Vec::new();
    for f in required {
        pb_bytes(4, f.as_bytes(), &mut header_block);
    }
    pbf_block("OSMHeader", &pbf_blob(1, &header_block, header_block.len() as u64))
}

#[test]
fn a_pbf_whose_header_requires_history_or_unknown_features_is_refused_by_name() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("osm-features");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(real("osm/zugerland.osm.pbf")).unwrap();
    let data = &bytes[pbf_blocks(&bytes)[1].0..];
    let file = dir.join("zug.osm.pbf");
    let with_header = |required: &[&str]| {
        let mut b = pbf_header_block(required);
        b.extend_from_slice(data);
        std::fs::write(&file, b).unwrap();
        import_osm(&file)
    };
    // The hand-made header with what every extract requires reads as the real one does.
    let (rows, _) = with_header(&["OsmSchema-V0.6", "DenseNodes"]).expect("the features every extract has");
    assert_eq!(keys(&rows), keys(&import_osm(&real("osm/zugerland.osm.pbf")).unwrap().0));
    let e = with_header(&["OsmSchema-V0.6", "DenseNodes", "HistoricalInformation"]).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("zug.osm.pbf") && e.contains("history file"), "{e}");
    let e = with_header(&["OsmSchema-V0.6", "DenseNodes", "Sort.Geographic", "Future-Feature"]).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("zug.osm.pbf") && e.contains("Sort.Geographic, Future-Feature"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A data block compressed in a way the reader does not read (the format allows lz4, zstd and
/// lzma beside zlib) is named with its compression, not called empty.
#[test]
fn a_pbf_block_in_another_compression_is_refused_naming_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("osm-compression");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(real("osm/zugerland.osm.pbf")).unwrap();
    let header = &bytes[..pbf_blocks(&bytes)[1].0];
    for (field, compression) in [(6u64, "lz4"), (7, "zstd"), (4, "lzma")] {
        let file = dir.join(format!("{compression}.osm.pbf"));
        let mut b = header.to_vec();
        b.extend(pbf_block("OSMData", &pbf_blob(field, b"not decompressed by anyone here", 4096)));
        std::fs::write(&file, b).unwrap();
        let e = import_osm(&file).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(&format!("{compression}.osm.pbf")) && e.contains(&format!("compressed with {compression}")) && e.contains("osmium cat"), "{e}");
    }
    // osmium compresses the header block as it does the data: an lz4 file fails there first.
    let file = dir.join("lz4-header.osm.pbf");
    let mut b = pbf_block("OSMHeader", &pbf_blob(6, b"an lz4 OSMHeader", 64));
    b.extend_from_slice(&bytes[header.len()..]);
    std::fs::write(&file, b).unwrap();
    let e = import_osm(&file).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("lz4-header.osm.pbf") && e.contains("its block at byte 0 is compressed with lz4"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_empty_pbf_or_parquet_in_a_folder_is_a_failed_download_and_an_empty_export_is_counted() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("empty-parts");
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["osm-pbf", "osm-seq", "overture", "fsq"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::copy(real("osm/zugerland.osm.pbf"), dir.join("osm-pbf/a.osm.pbf")).unwrap();
    std::fs::write(dir.join("osm-pbf/b.osm.pbf"), b"").unwrap();
    let e = import_osm(&dir.join("osm-pbf")).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("b.osm.pbf") && e.contains("0 bytes"), "{e}");
    std::fs::copy(real("osm/zugerland_poi.geojsonseq"), dir.join("osm-seq/a.geojsonseq")).unwrap();
    std::fs::write(dir.join("osm-seq/b.geojsonseq"), b"").unwrap();
    let (_, report) = import_osm(&dir.join("osm-seq")).expect("an empty export beside a full one");
    assert_eq!((report.files, report.files_empty), (2, 1));
    let overture = std::fs::read_dir(real("overture")).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|x| x == "parquet")).unwrap();
    std::fs::copy(&overture, dir.join("overture/part-0.parquet")).unwrap();
    std::fs::write(dir.join("overture/part-1.parquet"), b"").unwrap();
    let e = import_overture(&dir.join("overture")).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("part-1.parquet") && e.contains("0 bytes"), "{e}");
    std::fs::write(dir.join("fsq/part-1.parquet"), b"").unwrap();
    let e = import_fsq(&dir.join("fsq")).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("part-1.parquet") && e.contains("0 bytes"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
