//! The .osm.pbf reader on the same real objects in other block layouts (`test/fixtures/osm-order`,
//! made by its `make.sh` with osmium): padded to many blocks of each type, where each pass reads
//! only its own blocks; and in two orders no sorted file has, which the reader must notice and
//! read by passes over every block. The rows must be the sorted real file's, every time.

use storemap_ingest::import::import_osm;
use storemap_ingest::{ImportReport, SourceRow};

use crate::common::{fixtures_dir, row_key};

fn import(rel: &str) -> (Vec<SourceRow>, ImportReport) {
    import_osm(&fixtures_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Each kept row as its key and position, sorted.
fn rows(rows: &[SourceRow]) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = rows.iter().map(|r| (row_key(r), format!("{:.7}", r.lng), format!("{:.7}", r.lat))).collect();
    v.sort();
    v
}

#[test]
fn a_padded_extract_read_by_block_type_finds_the_real_extracts_stores() {
    let (real, real_report) = import("real/osm/zugerland.osm.pbf");
    let (padded, report) = import("osm-order/padded.osm.pbf");
    assert!(!real.is_empty());
    assert_eq!(rows(&padded), rows(&real));
    assert_eq!(report.rows_kept, real_report.rows_kept);
    // Every place object of the real file was read again; the padding is no place.
    assert_eq!(report.skipped.get("no_brand_match"), real_report.skipped.get("no_brand_match"));
    assert_eq!(report.skipped.get("bad_geometry"), real_report.skipped.get("bad_geometry"));
}

#[test]
fn files_not_sorted_by_type_are_read_all_the_same() {
    let (real, real_report) = import("real/osm/zugerland.osm.pbf");
    for rel in ["osm-order/relations-first.osm.pbf", "osm-order/ways-first.osm.pbf"] {
        let (got, report) = import(rel);
        assert_eq!(rows(&got), rows(&real), "{rel}");
        let strip = |r: &ImportReport| ImportReport { errors: Vec::new(), ..r.clone() };
        assert_eq!(strip(&report), strip(&real_report), "{rel}: the same report, each object counted once");
    }
}
