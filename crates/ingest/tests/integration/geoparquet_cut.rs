//! A worldwide Overture file made from the real Boulder one (`spread_overture`: copies moved to
//! every continent, five row groups a copy), cut to an area by storemap-geoparquet from its
//! footer and the ranges it names, and the cut imported by the Overture importer. Which rows
//! belong to the area is decided here from the rows' own coordinates in the whole file.

use std::path::Path;

use storemap_geoparquet::{footer_len, Cut, TAIL_BYTES};
use storemap_ingest::import::import_overture;
use storemap_ingest::world::{spread_overture, Spread, WORLD};
use storemap_ingest::SourceRow;

use crate::common::{fixtures_dir, TempDir};

fn world(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("world.parquet");
    let sample = fixtures_dir().join("real/overture/boulder_places_2026-04-15.0.parquet");
    let s = spread_overture(&sample, &out, &Spread { places: WORLD, groups_per_copy: 5, statistics: true }).expect("the world file is written");
    assert_eq!(s.boxes.len(), WORLD.len());
    out
}

/// Reads the cut's ranges out of the file, one after another, and writes the cut.
fn cut(file: &Path, area: &[[f64; 4]], dir: &Path) -> (std::path::PathBuf, storemap_geoparquet::Summary) {
    let bytes = std::fs::read(file).unwrap();
    // A first read of the tail, then as much more as the footer says it needs.
    let first = &bytes[bytes.len().saturating_sub(TAIL_BYTES as usize)..];
    let need = footer_len(first, bytes.len() as u64).unwrap() as usize;
    let tail = &bytes[bytes.len() - need.max(first.len())..];
    let plan = Cut::plan(tail, bytes.len() as u64, area).expect("the footer plans");
    let ranges: Vec<u8> = plan.ranges().iter().flat_map(|r| bytes[r.offset as usize..(r.offset + r.length) as usize].iter().copied()).collect();
    let (part, out) = (dir.join("cut.ranges"), dir.join("cut.parquet"));
    std::fs::write(&part, ranges).unwrap();
    let summary = plan.write(&part, &out).expect("the cut is written");
    (out, summary)
}

fn inside(r: &SourceRow, b: &[f64; 4]) -> bool {
    let (w, s, e, n) = (b[0], b[1], b[2], b[3]);
    let lng_in = if w <= e { r.lng >= w && r.lng <= e } else { r.lng >= w || r.lng <= e };
    lng_in && r.lat >= s && r.lat <= n
}

fn ids(rows: &[SourceRow], area: &[[f64; 4]]) -> Vec<String> {
    let mut v: Vec<String> = rows.iter().filter(|r| area.iter().any(|b| inside(r, b))).map(|r| r.source_id.clone()).collect();
    v.sort();
    v
}

#[test]
fn a_cut_to_one_country_reads_a_twentieth_and_imports_exactly_its_rows() {
    let dir = TempDir::new("geoparquet-cut");
    let file = world(dir.path());
    let (all, all_report) = import_overture(&file).expect("the world file imports");
    assert_eq!(all_report.rows_read, 3545 * WORLD.len() as u64);

    // Switzerland's box (roughly): the Zurich copy and nothing else.
    let ch = [[5.9, 45.8, 10.5, 47.9]];
    let (out, summary) = cut(&file, &ch, dir.path());
    assert_eq!((summary.row_groups, summary.kept_row_groups), (100, 5));
    assert!(summary.range_bytes * 10 < summary.file_size, "{summary:?}");
    let (rows, report) = import_overture(&out).expect("the cut imports");
    assert_eq!(report.rows_read, 3545);
    assert_eq!(ids(&rows, &ch), ids(&all, &ch), "every Swiss row of the whole file, and only those");
    assert_eq!(rows.len(), ids(&all, &ch).len());
}

#[test]
fn a_cut_across_the_antimeridian_and_over_three_parts_of_a_country() {
    let dir = TempDir::new("geoparquet-cut-am");
    let file = world(dir.path());
    let (all, _) = import_overture(&file).unwrap();
    // Fiji either side of 180° as one box whose west is east of its east, and the US as its
    // mainland, Alaska and Hawaii.
    let area = [[176.0, -21.0, -178.0, -12.0], [-125.0, 24.0, -66.0, 50.0], [-170.0, 51.0, -130.0, 72.0], [-161.0, 18.5, -154.5, 22.5]];
    let (out, summary) = cut(&file, &area, dir.path());
    // A cut is by boxes, not borders: Toronto lies in the mainland's box (the import's
    // --country then drops it).
    assert_eq!(summary.kept_row_groups, 5 * 5, "Fiji, Boulder, Anchorage, Honolulu, Toronto");
    let (rows, _) = import_overture(&out).unwrap();
    let want = ids(&all, &area);
    assert_eq!(want.len(), 5 * 3545);
    let mut got: Vec<String> = rows.iter().map(|r| r.source_id.clone()).collect();
    got.sort();
    assert_eq!(got, want);
}
