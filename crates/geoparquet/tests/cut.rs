//! Cuts of the real Overture file `overturemaps download` wrote (test/fixtures/real/overture,
//! two row groups of Boulder, Colorado). What each row group holds and where is read here with
//! the format's own Thrift structs, independently of the cut; reading the rows back is the
//! ingest crate's test (`geoparquet_cut.rs`), which has a Parquet decoder.

use std::path::{Path, PathBuf};

use polars_parquet_format::thrift::protocol::{TCompactInputProtocol, TCompactOutputProtocol};
use polars_parquet_format::FileMetaData;
use storemap_geoparquet::{footer_len, Cut, GeoParquetError, Range, TAIL_BYTES};

fn sample() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test/fixtures/real/overture/boulder_places_2026-04-15.0.parquet");
    std::fs::read(p).expect("the real Overture sample")
}

/// A file of this test run in the temporary folder, removed when dropped (each CI run left its
/// files behind).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    Scratch(std::env::temp_dir().join(format!("storemap-geoparquet-{}-{name}", std::process::id())))
}

fn metadata(file: &[u8]) -> FileMetaData {
    let n = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as usize;
    let bytes = &file[file.len() - 8 - n..file.len() - 8];
    FileMetaData::read_from_in_protocol(&mut TCompactInputProtocol::new(bytes, usize::MAX)).unwrap()
}

/// The file's data with `meta` as its footer.
fn with_metadata(file: &[u8], meta: &FileMetaData) -> Vec<u8> {
    let data_end = file.len() - footer_len(&file[file.len() - 8..], file.len() as u64).unwrap() as usize;
    let mut footer = Vec::new();
    meta.write_to_out_protocol(&mut TCompactOutputProtocol::new(&mut footer)).unwrap();
    let mut out = file[..data_end].to_vec();
    out.extend_from_slice(&footer);
    out.extend_from_slice(&(footer.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PAR1");
    out
}

fn tail(file: &[u8]) -> &[u8] {
    &file[file.len().saturating_sub(TAIL_BYTES as usize)..]
}

/// The bytes of the ranges, one after another, as the caller stores them.
fn read_ranges(file: &[u8], ranges: &[Range], to: &Path) {
    let mut out = Vec::new();
    for r in ranges {
        out.extend_from_slice(&file[r.offset as usize..(r.offset + r.length) as usize]);
    }
    std::fs::write(to, out).unwrap();
}

const BOULDER: [f64; 4] = [-105.3, 39.9, -105.2, 40.1];
const ZUG: [f64; 4] = [8.4, 47.1, 8.6, 47.2];

#[test]
fn the_footer_length_is_read_from_the_last_eight_bytes() {
    let file = sample();
    let n = footer_len(&file[file.len() - 8..], file.len() as u64).unwrap();
    let declared = u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as u64;
    assert_eq!(n, declared + 8);
}

#[test]
fn an_area_that_holds_the_file_keeps_every_row_group_byte_for_byte() {
    let file = sample();
    let source = metadata(&file);
    let cut = Cut::plan(tail(&file), file.len() as u64, &[BOULDER]).unwrap();
    assert!(cut.filterable());
    let s = cut.summary();
    assert_eq!((s.row_groups, s.kept_row_groups), (2, 2));
    assert_eq!(s.kept_rows, source.num_rows as u64);
    assert_eq!(s.rows, 3545, "the realdata README's count");
    // The two row groups are adjacent: one range, from the first chunk to the last.
    assert_eq!(cut.ranges().len(), 1);

    let (part, out) = (tmp("all.ranges"), tmp("all.parquet"));
    read_ranges(&file, cut.ranges(), &part);
    cut.write(&part, &out).unwrap();
    let written = std::fs::read(&out).unwrap();
    assert_eq!(&written[..4], b"PAR1");
    assert_eq!(&written[written.len() - 4..], b"PAR1");
    let meta = metadata(&written);
    assert_eq!(meta.schema, source.schema, "the same schema");
    assert_eq!(meta.num_rows, source.num_rows);
    let kv = |m: &FileMetaData, k: &str| m.key_value_metadata.iter().flatten().find(|kv| kv.key == k).and_then(|kv| kv.value.clone());
    assert_eq!(kv(&meta, "geo"), kv(&source, "geo"), "geo metadata kept (the sample has no file bbox to narrow)");
    assert_eq!(kv(&meta, "ARROW:schema"), kv(&source, "ARROW:schema"));
    // Every column chunk's bytes are where the new footer says, and equal the source's.
    for (new_rg, old_rg) in meta.row_groups.iter().zip(&source.row_groups) {
        assert_eq!(new_rg.num_rows, old_rg.num_rows);
        for (n, o) in new_rg.columns.iter().zip(&old_rg.columns) {
            let (n, o) = (n.meta_data.as_ref().unwrap(), o.meta_data.as_ref().unwrap());
            let len = n.total_compressed_size as usize;
            let start = |m: &polars_parquet_format::ColumnMetaData| m.dictionary_page_offset.filter(|&d| d > 0).unwrap_or(m.data_page_offset) as usize;
            assert_eq!(&written[start(n)..start(n) + len], &file[start(o)..start(o) + len], "{:?}", n.path_in_schema);
            assert_eq!(n.data_page_offset - start(n) as i64, o.data_page_offset - start(o) as i64);
        }
    }
}

#[test]
fn an_area_elsewhere_keeps_nothing_and_still_writes_a_valid_file() {
    let file = sample();
    let cut = Cut::plan(tail(&file), file.len() as u64, &[ZUG]).unwrap();
    let s = cut.summary();
    assert_eq!((s.kept_row_groups, s.kept_rows, s.range_bytes), (0, 0, 0));
    assert!(cut.ranges().is_empty());
    let (part, out) = (tmp("none.ranges"), tmp("none.parquet"));
    std::fs::write(&part, b"").unwrap();
    cut.write(&part, &out).unwrap();
    let meta = metadata(&std::fs::read(&out).unwrap());
    assert_eq!((meta.num_rows, meta.row_groups.len()), (0, 0));
    assert_eq!(meta.schema, metadata(&file).schema);
}

#[test]
fn a_row_group_is_kept_by_its_own_bounds_only() {
    let file = sample();
    let source = metadata(&file);
    // The second row group's bounds, read here from its bbox.ymax statistics: a thin box just
    // north of the first group's top keeps the second alone when the groups do not overlap.
    let stat = |rg: usize, col: &str, max: bool| -> f64 {
        let c = source.row_groups[rg].columns.iter().filter_map(|c| c.meta_data.as_ref()).find(|m| m.path_in_schema == ["bbox", col]).unwrap();
        let s = c.statistics.as_ref().unwrap();
        f64::from_le_bytes(if max { s.max_value.clone() } else { s.min_value.clone() }.unwrap().try_into().unwrap())
    };
    let (top0, bottom1, top1) = (stat(0, "ymax", true), stat(1, "ymin", false), stat(1, "ymax", true));
    if bottom1 > top0 + 0.001 {
        let cut = Cut::plan(tail(&file), file.len() as u64, &[[-106.0, top0 + 0.0005, -104.0, top1]]).unwrap();
        assert_eq!(cut.summary().kept_row_groups, 1);
    }
    // The groups of the real file overlap (Overture sorts by a space-filling curve, not by
    // latitude), so check the rule on any box: a group is kept exactly when its bounds meet it.
    for rg in 0..2 {
        let e = [stat(rg, "xmin", false), stat(rg, "ymin", false), stat(rg, "xmax", true), stat(rg, "ymax", true)];
        let far_west = [e[0] - 1.0, e[1], e[0] - 0.5, e[3]];
        let cut = Cut::plan(tail(&file), file.len() as u64, &[far_west]).unwrap();
        assert_eq!(cut.summary().kept_row_groups, 0, "a box west of both groups");
    }
}

#[test]
fn a_box_across_the_antimeridian_is_read_as_its_two_halves() {
    let file = sample();
    // West 170, east -100: everything from 170°E eastward over 180 to 100°W, Boulder included.
    let cut = Cut::plan(tail(&file), file.len() as u64, &[[170.0, 30.0, -100.0, 50.0]]).unwrap();
    assert_eq!(cut.summary().kept_row_groups, 2);
    let cut = Cut::plan(tail(&file), file.len() as u64, &[[170.0, 30.0, -110.0, 50.0]]).unwrap();
    assert_eq!(cut.summary().kept_row_groups, 0);
}

#[test]
fn damaged_and_foreign_files_are_refused_with_the_reason() {
    let file = sample();
    let len = file.len() as u64;
    // Not Parquet at all.
    assert!(matches!(Cut::plan(b"{\"type\":\"FeatureCollection\"}", 30, &[BOULDER]), Err(GeoParquetError::NotParquet(_))));
    // A footer shorter than it claims (a tail cut too short by the caller).
    let short = &file[file.len() - 100..];
    assert!(matches!(Cut::plan(short, len, &[BOULDER]), Err(GeoParquetError::Damaged(_))));
    // A column chunk that claims to reach past the data into the footer.
    let mut meta = metadata(&file);
    let data_end = file.len() - footer_len(&file[file.len() - 8..], len).unwrap() as usize;
    meta.row_groups[1].columns[3].meta_data.as_mut().unwrap().total_compressed_size = data_end as i64;
    let bad = with_metadata(&file, &meta);
    match Cut::plan(tail(&bad), bad.len() as u64, &[BOULDER]) {
        Err(GeoParquetError::Damaged(m)) => assert!(m.contains("row group 1"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The ranges file must hold exactly the ranges' bytes.
    let cut = Cut::plan(tail(&file), len, &[BOULDER]).unwrap();
    let part = tmp("short.ranges");
    std::fs::write(&part, &file[..100]).unwrap();
    assert!(matches!(cut.write(&part, &tmp("short.parquet")), Err(GeoParquetError::Damaged(_))));
}

#[test]
fn the_geo_metadata_bbox_is_narrowed_to_the_kept_row_groups() {
    // The sample with a file-level bbox in its geo metadata (GeoParquet's optional `bbox`),
    // set to the whole world as a release's would be.
    let file = sample();
    let mut meta = metadata(&file);
    let geo = meta.key_value_metadata.as_mut().unwrap().iter_mut().find(|kv| kv.key == "geo").unwrap();
    let mut v: serde_json::Value = serde_json::from_str(geo.value.as_ref().unwrap()).unwrap();
    v["columns"]["geometry"]["bbox"] = serde_json::json!([-180.0, -90.0, 180.0, 90.0]);
    geo.value = Some(v.to_string());
    let world = with_metadata(&file, &meta);

    // The union of both row groups' statistics, read here from the footer.
    let stat = |col: &str, max: bool| -> f64 {
        let vals = meta.row_groups.iter().map(|rg| {
            let c = rg.columns.iter().filter_map(|c| c.meta_data.as_ref()).find(|m| m.path_in_schema == ["bbox", col]).unwrap();
            let s = c.statistics.as_ref().unwrap();
            f64::from_le_bytes(if max { s.max_value.clone() } else { s.min_value.clone() }.unwrap().try_into().unwrap())
        });
        if max {
            vals.fold(f64::MIN, f64::max)
        } else {
            vals.fold(f64::MAX, f64::min)
        }
    };
    let want = [stat("xmin", false), stat("ymin", false), stat("xmax", true), stat("ymax", true)];

    let cut = Cut::plan(tail(&world), world.len() as u64, &[BOULDER]).unwrap();
    let (part, out) = (tmp("geo.ranges"), tmp("geo.parquet"));
    read_ranges(&world, cut.ranges(), &part);
    cut.write(&part, &out).unwrap();
    let written = metadata(&std::fs::read(&out).unwrap());
    let geo = written.key_value_metadata.unwrap().into_iter().find(|kv| kv.key == "geo").unwrap();
    let v: serde_json::Value = serde_json::from_str(&geo.value.unwrap()).unwrap();
    let got: Vec<f64> = v["columns"]["geometry"]["bbox"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert_eq!(got, want.to_vec());
    assert_eq!(
        v["columns"]["geometry"]["covering"],
        serde_json::json!({"bbox": {"xmin": ["bbox", "xmin"], "ymin": ["bbox", "ymin"], "xmax": ["bbox", "xmax"], "ymax": ["bbox", "ymax"]}})
    );
}
