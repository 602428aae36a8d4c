//! Cutting a region out of an archive by ranges (`tiles::extract`), read from a local file here
//! as the service reads a remote one: what comes out must be a valid archive holding exactly the
//! source's tiles in the region (tile columns and rows worked out here with Web Mercator
//! arithmetic of its own), byte for byte, after reading a fraction of the source.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use storemap_render::tiles::extract::{Extract, Region, HEAD_BYTES};
use storemap_render::tiles::pmtiles::{tile_id, Archive, Compression};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiles").join(name)
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs an extract against a local file; returns the bytes it asked for.
fn run(source: &Path, region: Region, out: &Path) -> storemap_render::tiles::pmtiles::Result<u64> {
    let f = std::fs::File::open(source).unwrap();
    let len = f.metadata().unwrap().len();
    let read = |offset: u64, length: u64| {
        let mut b = vec![0u8; length.min(len.saturating_sub(offset)) as usize];
        f.read_exact_at(&mut b, offset).unwrap();
        b
    };
    let (mut ex, mut want) = Extract::new(&read(0, HEAD_BYTES), region, &out.with_extension("data"))?;
    while !want.is_empty() {
        want = ex.feed(want.iter().map(|r| read(r.offset, r.length)).collect())?;
    }
    let asked = ex.bytes_asked;
    ex.finish(out)?;
    Ok(asked)
}

/// The tile columns and rows of a box at zoom z.
fn span(bbox: [f64; 4], z: u8) -> ((u32, u32), (u32, u32)) {
    let n = f64::from(1u32 << z);
    let x = |lng: f64| ((lng + 180.0) / 360.0 * n).floor().clamp(0.0, n - 1.0) as u32;
    let y = |lat: f64| {
        let r = lat.to_radians();
        ((1.0 - (r.tan() + 1.0 / r.cos()).ln() / std::f64::consts::PI) / 2.0 * n).floor().clamp(0.0, n - 1.0) as u32
    };
    ((x(bbox[0]), x(bbox[2])), (y(bbox[3]), y(bbox[1])))
}

#[test]
fn an_extract_holds_exactly_the_sources_tiles_in_the_box_after_reading_a_fraction_of_it() {
    // 21,845 tiles (zooms 0-7) in leaf directories, each holding its own id.
    let source = data("leaves.pmtiles");
    let size = std::fs::metadata(&source).unwrap().len();
    let bbox = [5.9, 45.8, 10.5, 47.8];
    let out = out_dir("extract-leaves").join("ch.pmtiles");
    let asked = run(&source, Region { bbox, min_zoom: 0, max_zoom: 7 }, &out).unwrap();
    assert!(asked * 4 < size, "read {asked} of {size} bytes");
    let a = Archive::open(&out).unwrap();
    let b = Archive::open(&source).unwrap();
    let mut inside = 0;
    for z in 0..=7u8 {
        let ((x0, x1), (y0, y1)) = span(bbox, z);
        for x in 0..(1u32 << z) {
            for y in 0..(1u32 << z) {
                let got = a.tile(z, x, y).unwrap();
                if (x0..=x1).contains(&x) && (y0..=y1).contains(&y) {
                    inside += 1;
                    assert_eq!(got, b.tile(z, x, y).unwrap(), "{z}/{x}/{y}");
                    assert_eq!(got.unwrap(), tile_id(z, x, y).unwrap().to_le_bytes());
                } else {
                    assert_eq!(got, None, "{z}/{x}/{y} is outside the box");
                }
            }
        }
    }
    assert_eq!(a.header.addressed_tiles, inside);
    assert_eq!((a.header.min_zoom, a.header.max_zoom), (0, 7));
    assert_eq!(a.header.internal_compression, Compression::Gzip);
    assert!(a.header.clustered);
}

#[test]
fn a_real_basemap_extract_keeps_the_tiles_byte_for_byte_and_the_metadata() {
    let source = data("monaco-openmaptiles.pmtiles");
    // The eastern half of Monaco, to zoom 13 only.
    let bbox = [7.42, 43.72, 7.45, 43.76];
    let out = out_dir("extract-monaco").join("east.pmtiles");
    run(&source, Region { bbox, min_zoom: 0, max_zoom: 13 }, &out).unwrap();
    let (a, b) = (Archive::open(&out).unwrap(), Archive::open(&source).unwrap());
    assert_eq!(a.metadata().unwrap(), b.metadata().unwrap());
    assert_eq!(a.header.max_zoom, 13);
    assert_eq!((a.header.tile_compression, a.header.tile_type), (b.header.tile_compression, b.header.tile_type));
    for z in 0..=14u8 {
        let ((x0, x1), (y0, y1)) = span(bbox, z);
        for x in x0..=x1 {
            for y in y0..=y1 {
                let want = if z <= 13 { b.tile_raw(z, x, y).unwrap() } else { None };
                assert_eq!(a.tile_raw(z, x, y).unwrap(), want, "{z}/{x}/{y}");
            }
        }
    }
    // Bounds: the box within the source's.
    let sb = b.header.bounds;
    let want = [bbox[0].max(sb[0]), bbox[1].max(sb[1]), bbox[2].min(sb[2]), bbox[3].min(sb[3])];
    assert!(a.header.bounds.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-6), "{:?} vs {want:?}", a.header.bounds);
}

#[test]
fn an_extract_across_the_antimeridian_holds_both_sides_under_bounds_readers_take() {
    let source = data("leaves.pmtiles");
    // Fiji and Tonga: from 170 E east to 170 W.
    let bbox = [170.0, -20.0, -170.0, -10.0];
    let out = out_dir("extract-antimeridian").join("fiji.pmtiles");
    run(&source, Region { bbox, min_zoom: 0, max_zoom: 7 }, &out).unwrap();
    let (a, b) = (Archive::open(&out).unwrap(), Archive::open(&source).unwrap());
    let mut inside = 0;
    for z in 0..=7u8 {
        // West of the antimeridian, the columns from 170 E to the world's east edge; east of
        // it, from the west edge to 170 W.
        let ((west, _), (y0, y1)) = span([170.0, -20.0, 180.0, -10.0], z);
        let ((_, east), _) = span([-180.0, -20.0, -170.0, -10.0], z);
        for x in 0..(1u32 << z) {
            for y in 0..(1u32 << z) {
                let got = a.tile(z, x, y).unwrap();
                if (x >= west || x <= east) && (y0..=y1).contains(&y) {
                    inside += 1;
                    assert_eq!(got, b.tile(z, x, y).unwrap(), "{z}/{x}/{y}");
                } else {
                    assert_eq!(got, None, "{z}/{x}/{y} is outside the box");
                }
            }
        }
    }
    assert_eq!(a.header.addressed_tiles, inside);
    // The format cannot say "across the antimeridian": every longitude between the box's
    // latitudes, and the center where the box's is.
    assert_eq!(a.header.bounds, [-180.0, -20.0, 180.0, -10.0]);
    assert_eq!(a.header.center, [180.0, -15.0]);
}

#[test]
fn bad_sources_and_regions_are_refused() {
    let dir = out_dir("extract-bad");
    let not = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let region = Region { bbox: [7.42, 43.72, 7.45, 43.76], min_zoom: 0, max_zoom: 14 };
    assert!(Extract::new(&not, region, &dir.join("a.data")).is_err(), "not an archive");
    let head = std::fs::read(data("monaco-openmaptiles.pmtiles")).unwrap();
    assert!(Extract::new(&head[..16_384], Region { bbox: [7.0, 44.0, 8.0, 43.0], ..region }, &dir.join("b.data")).is_err(), "south of north");
    assert!(Extract::new(&head[..16_384], Region { bbox: [7.0, 43.0, 200.0, 44.0], ..region }, &dir.join("c.data")).is_err(), "past 180");
    // The Pacific from zoom 8: no tile there (the archive's shallow tiles cover the world).
    let pacific = Region { bbox: [-150.0, -10.0, -140.0, 0.0], min_zoom: 8, max_zoom: 14 };
    let e = run(&data("monaco-openmaptiles.pmtiles"), pacific, &dir.join("d.pmtiles")).unwrap_err();
    assert!(e.to_string().contains("no tile"), "{e}");
    // Fed the wrong number of ranges.
    let (mut ex, want) = Extract::new(&head[..16_384], region, &dir.join("e.data")).unwrap();
    assert!(!want.is_empty());
    assert!(ex.feed(vec![]).is_err());
}

/// Directory bytes, uncompressed (the spec's layout: count, tile id deltas, run lengths,
/// lengths, offsets plus one): one (tile id, run length, length, offset) per entry.
fn directory(entries: &[(u64, u32, u32, u64)]) -> Vec<u8> {
    fn varint(b: &mut Vec<u8>, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                b.push(byte);
                return;
            }
            b.push(byte | 0x80);
        }
    }
    let mut b = Vec::new();
    varint(&mut b, entries.len() as u64);
    let mut last = 0;
    for e in entries {
        varint(&mut b, e.0 - last);
        last = e.0;
    }
    for e in entries {
        varint(&mut b, e.1.into());
    }
    for e in entries {
        varint(&mut b, e.2.into());
    }
    for e in entries {
        varint(&mut b, e.3 + 1);
    }
    b
}

/// An archive of the world at zooms 0-3 (tile ids 0-84) with uncompressed directories: the
/// header, the root, metadata `{}`, the leaf section and the tile data, in that order.
fn archive(root: &[u8], leaves: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; 127];
    b[..7].copy_from_slice(b"PMTiles");
    b[7] = 3;
    let meta = b"{}";
    let root_at = 127u64;
    let meta_at = root_at + root.len() as u64;
    let leaf_at = meta_at + meta.len() as u64;
    let data_at = leaf_at + leaves.len() as u64;
    for (at, v) in
        [(8, root_at), (16, root.len() as u64), (24, meta_at), (32, 2), (40, leaf_at), (48, leaves.len() as u64), (56, data_at), (64, data.len() as u64)]
    {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    b[96] = 1; // clustered
    b[97] = 1; // directories uncompressed
    b[98] = 1; // tiles uncompressed
    b[99] = 1; // vector tiles
    b[101] = 3; // zooms 0-3
    for (at, deg) in [(102, -180.0), (106, -85.0), (110, 180.0), (114, 85.0)] {
        b[at..at + 4].copy_from_slice(&((deg * 1e7) as i32).to_le_bytes());
    }
    for part in [root, meta.as_slice(), leaves, data] {
        b.extend_from_slice(part);
    }
    b
}

fn world_extract(name: &str, bytes: &[u8]) -> storemap_render::tiles::pmtiles::Result<u64> {
    let dir = out_dir("extract-trees");
    let source = dir.join(format!("{name}.pmtiles"));
    std::fs::write(&source, bytes).unwrap();
    run(&source, Region { bbox: [-180.0, -85.0, 180.0, 85.0], min_zoom: 0, max_zoom: 3 }, &dir.join(format!("{name}.out.pmtiles")))
}

#[test]
fn leaf_directories_must_form_a_tree_a_leaf_named_twice_or_holding_ids_outside_its_span_is_refused() {
    // The well-formed tree first, so that the refusals below are about the tree alone: the root
    // names two leaves, for ids 0-20 and 21-84; each holds one run of its ids, one 4-byte tile.
    let low = directory(&[(0, 21, 4, 0)]);
    let high = directory(&[(21, 64, 4, 0)]);
    let leaves = [low.clone(), high.clone()].concat();
    let root = directory(&[(0, 0, low.len() as u32, 0), (21, 0, high.len() as u32, low.len() as u64)]);
    world_extract("tree", &archive(&root, &leaves, b"tile")).unwrap();

    // Eight entries of the root name one leaf, which names itself eight times: four levels of
    // that were 4,680 leaf reads (64 entries, 270,000 reads, from 215 bytes).
    let fan = |n: u64, len: u32| (0..n).map(|i| (i, 0, len, 0)).collect::<Vec<_>>();
    let leaf = directory(&fan(8, 0));
    let leaf = directory(&fan(8, leaf.len() as u32));
    let root = directory(&fan(8, leaf.len() as u32));
    let e = world_extract("fan", &archive(&root, &leaf, b"")).unwrap_err();
    assert!(e.to_string().contains("is named twice"), "{e}");

    // A leaf for ids 0-20 that holds id 30 (in the other leaf's span too).
    let stray = directory(&[(0, 21, 4, 0), (30, 1, 4, 0)]);
    let leaves = [stray.clone(), high.clone()].concat();
    let root = directory(&[(0, 0, stray.len() as u32, 0), (21, 0, high.len() as u32, stray.len() as u64)]);
    let e = world_extract("stray", &archive(&root, &leaves, b"tile")).unwrap_err();
    assert!(e.to_string().contains("outside the span 0..21"), "{e}");
}
