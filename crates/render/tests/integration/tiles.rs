//! The PMTiles reader and the vector tile decoder against archives other tools wrote and what
//! other tools read from them (tests/data/tiles/make-fixtures.sh: tilemaker over the real
//! Zugerland extract, the `pmtiles` Python package's converter and writer, the
//! `mapbox-vector-tile` package's decoder), and against damaged archives made from them here.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use storemap_render::tiles::mvt::{self, GeomType, Value};
use storemap_render::tiles::pmtiles::{tile_id, Archive, Compression, PmtilesError, TileType};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiles").join(name)
}

fn expected() -> Json {
    serde_json::from_str(&std::fs::read_to_string(data("expected.json")).unwrap()).unwrap()
}

fn int(v: &Json) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("{v} is not a whole number"))
}

fn zxy(t: &Json) -> (u8, u32, u32) {
    (int(&t["z"]) as u8, int(&t["x"]) as u32, int(&t["y"]) as u32)
}

#[test]
fn the_header_and_metadata_read_as_the_pmtiles_package_reads_them() {
    let e = expected();
    for (name, file) in [("zug", "zug-openmaptiles.pmtiles"), ("leaves", "leaves.pmtiles")] {
        let want = &e[name]["header"];
        let a = Archive::open(&data(file)).unwrap();
        let h = &a.header;
        assert_eq!(h.root_offset, int(&want["root_offset"]), "{name}");
        assert_eq!(h.root_length, int(&want["root_length"]), "{name}");
        assert_eq!(h.metadata_offset, int(&want["metadata_offset"]), "{name}");
        assert_eq!(h.metadata_length, int(&want["metadata_length"]), "{name}");
        assert_eq!(h.leaf_offset, int(&want["leaf_directory_offset"]), "{name}");
        assert_eq!(h.leaf_length, int(&want["leaf_directory_length"]), "{name}");
        assert_eq!(h.data_offset, int(&want["tile_data_offset"]), "{name}");
        assert_eq!(h.data_length, int(&want["tile_data_length"]), "{name}");
        assert_eq!(h.addressed_tiles, int(&want["addressed_tiles_count"]), "{name}");
        assert_eq!(h.tile_entries, int(&want["tile_entries_count"]), "{name}");
        assert_eq!(h.tile_contents, int(&want["tile_contents_count"]), "{name}");
        assert_eq!(h.clustered, want["clustered"].as_bool().unwrap(), "{name}");
        assert_eq!(h.internal_compression.name(), want["internal_compression"].as_str().unwrap().to_lowercase(), "{name}");
        assert_eq!(h.tile_compression.name(), want["tile_compression"].as_str().unwrap().to_lowercase(), "{name}");
        assert_eq!(h.tile_type.name(), want["tile_type"].as_str().unwrap().to_lowercase(), "{name}");
        assert_eq!((h.min_zoom, h.max_zoom), (int(&want["min_zoom"]) as u8, int(&want["max_zoom"]) as u8), "{name}");
        let e7 = |k: &str| want[k].as_i64().unwrap() as f64 / 1e7;
        assert_eq!(h.bounds, [e7("min_lon_e7"), e7("min_lat_e7"), e7("max_lon_e7"), e7("max_lat_e7")], "{name}");
        assert_eq!(h.center, [e7("center_lon_e7"), e7("center_lat_e7")], "{name}");
        assert_eq!(a.metadata().unwrap(), e[name]["metadata"], "{name}");
    }
    // What the fixture is for: the Zugerland tiles are gzip-compressed vector tiles.
    let zug = Archive::open(&data("zug-openmaptiles.pmtiles")).unwrap();
    assert_eq!((zug.header.tile_type, zug.header.tile_compression), (TileType::Mvt, Compression::Gzip));
}

#[test]
fn tile_ids_are_the_pmtiles_packages_at_every_zoom() {
    let e = expected();
    let listed = e["leaves"]["sample"].as_array().unwrap().iter().chain(e["leaves"]["ids"].as_array().unwrap()).chain(e["zug"]["tiles"].as_array().unwrap());
    let mut n = 0;
    for t in listed {
        let (z, x, y) = zxy(t);
        assert_eq!(tile_id(z, x, y), Some(int(&t["tile_id"])), "{z}/{x}/{y}");
        n += 1;
    }
    assert!(n > 200);
    assert_eq!(tile_id(3, 8, 0), None, "x past the zoom's width");
    assert_eq!(tile_id(32, 0, 0), None);
}

#[test]
fn tiles_behind_leaf_directories_are_found_and_missing_ones_are_none() {
    let e = expected();
    let a = Archive::open(&data("leaves.pmtiles")).unwrap();
    assert!(a.header.leaf_length > 0, "the fixture must use leaf directories");
    for t in e["leaves"]["sample"].as_array().unwrap() {
        let (z, x, y) = zxy(t);
        // Each tile holds its own id, as the writer was given it.
        let bytes = a.tile(z, x, y).unwrap().unwrap_or_else(|| panic!("{z}/{x}/{y} missing"));
        assert_eq!(bytes, int(&t["tile_id"]).to_le_bytes(), "{z}/{x}/{y}");
    }
    for t in e["leaves"]["ids"].as_array().unwrap() {
        let (z, x, y) = zxy(t);
        assert_eq!(a.tile(z, x, y).unwrap(), None, "{z}/{x}/{y} is past the archive's zooms");
    }
}

/// A point or a line or ring of the `mapbox-vector-tile` package's GeoJSON-like output.
fn first_points(geometry: &Json) -> Vec<(i32, i32)> {
    let pair = |p: &Json| (p[0].as_i64().unwrap() as i32, p[1].as_i64().unwrap() as i32);
    let c = &geometry["coordinates"];
    match geometry["type"].as_str().unwrap() {
        "Point" => vec![pair(c)],
        "LineString" => c.as_array().unwrap().iter().map(pair).collect(),
        "Polygon" => c[0].as_array().unwrap().iter().map(pair).collect(),
        "MultiPoint" => vec![pair(&c[0])],
        "MultiLineString" => c[0].as_array().unwrap().iter().map(pair).collect(),
        "MultiPolygon" => c[0][0].as_array().unwrap().iter().map(pair).collect(),
        other => panic!("geometry type {other}"),
    }
}

fn kind_name(k: GeomType) -> &'static str {
    match k {
        GeomType::Point => "Point",
        GeomType::LineString => "LineString",
        GeomType::Polygon => "Polygon",
        GeomType::Unknown => "Unknown",
    }
}

#[test]
fn every_zugerland_tile_decodes_as_mapbox_vector_tile_decodes_it() {
    let e = expected();
    let a = Archive::open(&data("zug-openmaptiles.pmtiles")).unwrap();
    let mut features = 0;
    for t in e["zug"]["tiles"].as_array().unwrap() {
        let (z, x, y) = zxy(t);
        let bytes = a.tile(z, x, y).unwrap().unwrap();
        assert_eq!(bytes.len() as u64, int(&t["bytes"]), "{z}/{x}/{y}: inflated size");
        let mut layers = mvt::decode(&bytes).unwrap();
        layers.sort_by(|p, q| p.name.cmp(&q.name));
        let want = t["layers"].as_array().unwrap();
        assert_eq!(
            layers.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
            want.iter().map(|l| l["name"].as_str().unwrap()).collect::<Vec<_>>(),
            "{z}/{x}/{y}"
        );
        for (l, w) in layers.iter().zip(want) {
            assert_eq!(u64::from(l.extent), int(&w["extent"]), "{}", l.name);
            assert_eq!(l.features.len() as u64, int(&w["features"]), "{z}/{x}/{y} {}", l.name);
            features += l.features.len();
            // The package names a feature of several parts Multi*; its base type is ours.
            let mut types: Vec<&str> = l.features.iter().map(|f| kind_name(f.kind)).collect();
            types.sort_unstable();
            types.dedup();
            let want_types: Vec<String> = w["types"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().trim_start_matches("Multi").to_string()).collect();
            let mut want_types: Vec<&str> = want_types.iter().map(String::as_str).collect();
            want_types.sort_unstable();
            want_types.dedup();
            assert_eq!(types, want_types, "{z}/{x}/{y} {}", l.name);
            let Some(first) = l.features.first() else { continue };
            let want_points = first_points(&w["first"]);
            let ours: Vec<(i32, i32)> = first.parts[0].clone();
            assert_eq!(&ours[..want_points.len().min(ours.len())], &want_points[..want_points.len().min(ours.len())], "{z}/{x}/{y} {}", l.name);
            for (k, v) in w["first_properties"].as_object().unwrap() {
                let got = l.tag(first, k).unwrap_or_else(|| panic!("{} lacks tag {k}", l.name));
                match (got, v) {
                    (Value::String(s), Json::String(w)) => assert_eq!(s, w),
                    (Value::Bool(b), Json::Bool(w)) => assert_eq!(b, w),
                    (g, Json::Number(n)) => assert_eq!(g.as_f64(), n.as_f64(), "{k}"),
                    (g, w) => panic!("tag {k}: {g:?} against {w}"),
                }
            }
        }
    }
    assert!(features > 400, "{features} features in all");
}

fn damaged(t: &str, change: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(data("leaves.pmtiles")).unwrap();
    change(&mut bytes);
    let path = std::env::temp_dir().join(format!("storemap-tiles-{}-{t}.pmtiles", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn damaged_archives_are_refused_with_a_reason_never_a_panic() {
    let not = damaged("magic", |b| b[0] = b'X');
    assert!(matches!(Archive::open(&not), Err(PmtilesError::NotPmtiles(_))));
    let v2 = damaged("version", |b| b[7] = 2);
    assert!(matches!(Archive::open(&v2), Err(PmtilesError::NotPmtiles(m)) if m.contains("version 2")));
    let cut = damaged("truncated", |b| b.truncate(40_000));
    assert!(matches!(Archive::open(&cut), Err(PmtilesError::Damaged(m)) if m.contains("runs past the end")));
    let short = damaged("short", |b| b.truncate(100));
    assert!(matches!(Archive::open(&short), Err(PmtilesError::NotPmtiles(_))));
    // An absurd root offset.
    let far = damaged("offset", |b| b[8..16].copy_from_slice(&u64::MAX.to_le_bytes()));
    assert!(matches!(Archive::open(&far), Err(PmtilesError::Damaged(_))));
    // The root directory's gzip stream with its bytes scrambled.
    let scrambled = damaged("gzip", |b| {
        for x in &mut b[140..160] {
            *x ^= 0x5a;
        }
    });
    assert!(matches!(Archive::open(&scrambled), Err(PmtilesError::Damaged(_))));
    for p in [not, v2, cut, short, far, scrambled] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn a_damaged_tile_is_an_error_for_that_tile() {
    let a = Archive::open(&data("zug-openmaptiles.pmtiles")).unwrap();
    let bytes = a.tile(14, 8577, 5749).unwrap().unwrap();
    assert!(mvt::decode(&bytes[..bytes.len() / 2]).is_err(), "cut in half");
    let mut lying = bytes.clone();
    // The first layer's length claims more bytes than the tile has.
    lying[1] = 0xff;
    lying.insert(2, 0x7f);
    assert!(mvt::decode(&lying).is_err());
    // Geometry commands that run past their data end the feature with an error.
    assert!(mvt::decode_geometry(GeomType::LineString, &[(2 << 3) | 1, 2, 2]).is_err());
    assert!(mvt::decode_geometry(GeomType::LineString, &[(1 << 3) | 2, 2, 2]).is_err(), "LineTo before MoveTo");
}

/// An archive (uncompressed directories) whose root names a leaf directory that names itself.
fn looping_archive() -> Vec<u8> {
    // One entry: tile id 0, run length 0 (a leaf), length 5, offset 0 (encoded as 1).
    let dir = [1u8, 0, 0, 5, 1];
    let mut b = vec![0u8; 127];
    b[..7].copy_from_slice(b"PMTiles");
    b[7] = 3;
    let mut put = |at: usize, v: u64| b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    put(8, 127); // root
    put(16, 5);
    put(24, 132); // metadata: none
    put(32, 0);
    put(40, 132); // leaves: the same five bytes
    put(48, 5);
    put(56, 137); // tile data: none
    put(64, 0);
    b[97] = 1; // directories uncompressed
    b[98] = 1;
    b[99] = 1;
    b.extend_from_slice(&dir);
    b.extend_from_slice(&dir);
    b
}

#[test]
fn a_leaf_directory_that_names_itself_is_refused_not_followed_forever() {
    let path = std::env::temp_dir().join(format!("storemap-tiles-{}-loop.pmtiles", std::process::id()));
    std::fs::write(&path, looping_archive()).unwrap();
    let a = Archive::open(&path).unwrap();
    let err = a.tile(0, 0, 0).unwrap_err();
    assert!(matches!(&err, PmtilesError::Damaged(m) if m.contains("nest more than")), "{err}");
    let _ = std::fs::remove_file(path);
}
