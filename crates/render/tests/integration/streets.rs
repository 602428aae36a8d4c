//! Street maps drawn from vector tiles, checked against probes worked out by other tools
//! (`tests/data/tiles/make-streets.py`: shapely over tiles decoded by `mapbox-vector-tile`, Web
//! Mercator written there): at each probe one kind of feature shows with nothing drawn over it,
//! so the pixel there must be that kind's colour in `data/themes.json`, read here as plain JSON.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use storemap_render::tiles::source::VectorTiles;
use storemap_render::{render, render_map, Atlas, MapRequest, Themes, Viewport};

use super::THEMES;

fn tiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiles")
}

/// A "country" covering western Europe, so Zug and Monaco stand on land, and nothing else:
/// no font (no labels, no credit), so what differs between two maps is the street map.
fn land() -> Atlas {
    Atlas::from_geojson(
        r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"iso_a2":"EU"},
        "geometry":{"type":"Polygon","coordinates":[[[-10,35],[30,35],[30,60],[-10,60],[-10,35]]]}}]}"#,
    )
    .unwrap()
}

fn open(name: &str) -> Arc<VectorTiles> {
    Arc::new(VectorTiles::open(&tiles_dir().join(format!("{name}.pmtiles")), 64 << 20).unwrap())
}

fn map(style: &str, lat: f64, lng: f64, zoom: f64, w: u32, h: u32) -> MapRequest {
    MapRequest { style: style.into(), viewport: Viewport::CenterZoom([lat, lng], zoom), ..MapRequest::new(w, h, vec![]) }
}

fn rgb(png_bytes: &[u8]) -> (u32, Vec<u8>) {
    let mut d = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
    let mut buf = vec![0; d.output_buffer_size()];
    let info = d.next_frame(&mut buf).unwrap();
    let n = info.color_type.samples();
    (info.width, buf[..info.buffer_size()].chunks_exact(n).flat_map(|p| [p[0], p[1], p[2]]).collect())
}

fn hex(s: &str) -> [u8; 3] {
    let v = u32::from_str_radix(s.trim_start_matches('#'), 16).unwrap();
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// The probes of one archive: (kind, lat, lng).
fn probes(archive: &str) -> Vec<(String, f64, f64)> {
    let all: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(tiles_dir().join("streets.json")).unwrap()).unwrap();
    all[archive].as_array().unwrap().iter().map(|p| (p["kind"].as_str().unwrap().to_string(), p["lat"].as_f64().unwrap(), p["lng"].as_f64().unwrap())).collect()
}

#[test]
fn each_kind_shows_its_theme_colour_at_the_probes() {
    let themes = Themes::from_json(THEMES).unwrap();
    let table: serde_json::Value = serde_json::from_str(THEMES).unwrap();
    for archive in ["zug-openmaptiles", "zug-protomaps", "monaco-openmaptiles"] {
        let atlas = land().with_streets(open(archive));
        let probes = probes(archive);
        assert!(probes.len() >= 6, "{archive}: {} probes", probes.len());
        for (kind, lat, lng) in probes {
            // Land shows through an OpenMapTiles archive made without the ocean: Natural Earth's
            // then, not the tiles'; checked on the Protomaps archive, which draws its own.
            if kind == "land" && archive.contains("openmaptiles") {
                continue;
            }
            let key = match kind.as_str() {
                "minor" => "road",
                k => k,
            };
            // Zoom 18 is the archive's zoom-14 tiles stretched sixteen times.
            for (style, zoom) in [("light", 17.0), ("dark", 17.0), ("voyager", 18.0)] {
                let (w, px) = rgb(&render(&atlas, &themes, &map(style, lat, lng, zoom, 64, 64)).unwrap());
                let i = ((32 * w + 32) * 3) as usize;
                let got = [px[i], px[i + 1], px[i + 2]];
                let want = hex(table[style][key].as_str().unwrap());
                assert!(
                    got.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= 2),
                    "{archive} {kind} at ({lat}, {lng}) zoom {zoom} {style}: {got:?}, want {want:?}"
                );
            }
        }
    }
}

/// The corners of the zoom-`z` tile under the centre of a map centred on (clat, clng), as image
/// pixels: Web Mercator written out here.
fn tile_square(z: u32, clat: f64, clng: f64, zoom: f64, w: f64, h: f64) -> [f64; 4] {
    let (lat, lng) = (clat, clng);
    let size = 256.0 * 2f64.powf(zoom);
    let mx = |lng: f64| (lng + 180.0) / 360.0;
    let my = |lat: f64| 0.5 - (lat.to_radians().tan() + 1.0 / lat.to_radians().cos()).ln() / (2.0 * std::f64::consts::PI);
    let n = f64::from(1u32 << z);
    let (tx, ty) = ((mx(lng) * n).floor(), (my(lat) * n).floor());
    let (ox, oy) = (mx(clng) * size - w / 2.0, my(clat) * size - h / 2.0);
    [tx / n * size - ox, ty / n * size - oy, (tx + 1.0) / n * size - ox, (ty + 1.0) / n * size - oy]
}

#[test]
fn past_the_archive_the_map_is_natural_earths_with_no_seam() {
    let themes = Themes::from_json(THEMES).unwrap();
    let (with, without) = (land().with_streets(open("zug-openmaptiles")), land());
    // Zoom 15 over Zugerland: the archive is one zoom-14 tile, a 512-pixel square in the middle.
    let (lat, lng, zoom, w, h) = (47.1918, 8.4777, 15.0, 1200u32, 800u32);
    let (_, a) = rgb(&render(&with, &themes, &map("voyager", lat, lng, zoom, w, h)).unwrap());
    let (_, b) = rgb(&render(&without, &themes, &map("voyager", lat, lng, zoom, w, h)).unwrap());
    let [x0, y0, x1, y1] = tile_square(14, lat, lng, zoom, w as f64, h as f64);
    assert!(x1 - x0 > 500.0 && x1 - x0 < 524.0, "the tile is {} pixels wide", x1 - x0);
    let (mut inside_differs, mut outside_differs) = (0, 0);
    for y in 0..h {
        for x in 0..w {
            let i = ((y * w + x) * 3) as usize;
            let same = a[i..i + 3] == b[i..i + 3];
            let (fx, fy) = (x as f64 + 0.5, y as f64 + 0.5);
            // Two pixels either side of the tile's edge are the anti-aliased seam of the tile.
            if fx < x0 - 2.0 || fx > x1 + 2.0 || fy < y0 - 2.0 || fy > y1 + 2.0 {
                outside_differs += usize::from(!same);
            } else if fx > x0 + 2.0 && fx < x1 - 2.0 && fy > y0 + 2.0 && fy < y1 - 2.0 {
                inside_differs += usize::from(!same);
            }
        }
    }
    // Features reach into a tile's buffer, past its square; drawn there they must still be
    // within a few pixels of it.
    assert_eq!(outside_differs, 0, "pixels outside the archive's tile changed");
    assert!(inside_differs > 10_000, "the street map drew {inside_differs} pixels");
}

#[test]
fn views_the_archive_does_not_cover_are_natural_earths() {
    let themes = Themes::from_json(THEMES).unwrap();
    let (with, without) = (land().with_streets(open("zug-protomaps")), land());
    // Paris at zoom 15 (outside the bounds) and Zug at zoom 0 (a world map: still drawn from
    // the archive's zoom-0 tile is fine, but Zug is all it has, so check Paris and a zoom the
    // archive lacks instead).
    for (lat, lng, zoom) in [(48.8566, 2.3522, 15.0), (47.1918, 8.4777, 15.0)] {
        let req = map("light", lat, lng, zoom, 300, 200);
        let (a, b) = (render_map(&with, &themes, &req).unwrap(), render_map(&without, &themes, &req).unwrap());
        if lat > 48.0 {
            assert_eq!(a.body, b.body, "Paris is outside the archive");
            assert_eq!(a.attribution, None);
        } else {
            assert_ne!(a.body, b.body, "Zug is inside it");
            assert_eq!(a.attribution.as_deref(), Some("Protomaps © OpenStreetMap"), "the HTML attribution as plain text");
        }
    }
}

#[test]
fn the_credit_is_drawn_in_the_corner_and_named() {
    let themes = Themes::from_json(THEMES).unwrap();
    let font = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/DejaVuSans.ttf")).unwrap();
    let atlas = land().with_font(&font).unwrap().with_streets(open("zug-openmaptiles"));
    let plain = land().with_font(&font).unwrap();
    let req = map("light", 47.1918, 8.4777, 16.0, 400, 300);
    let drawn = render_map(&atlas, &themes, &req).unwrap();
    // tilemaker's archive names no attribution: OpenStreetMap's own words stand in.
    assert_eq!(drawn.attribution.as_deref(), Some("© OpenStreetMap contributors"));
    let (w, a) = rgb(&drawn.body);
    let text = hex("#1F2937");
    let dark = |x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        a[i..i + 3].iter().zip(text).all(|(p, t)| p.abs_diff(t) < 60)
    };
    // Text in the lower-right corner, where the map without tiles has none.
    let corner = (w - 170..w).flat_map(|x| (300 - 16..300).map(move |y| (x, y))).filter(|&(x, y)| dark(x, y)).count();
    assert!(corner > 40, "{corner} dark pixels in the credit's corner");
    let (_, b) = rgb(&render(&plain, &themes, &req).unwrap());
    let i = |x: u32, y: u32| ((y * w + x) * 3) as usize;
    assert!((w - 170..w)
        .flat_map(|x| (300 - 16..300).map(move |y| (x, y)))
        .all(|(x, y)| b[i(x, y)..i(x, y) + 3].iter().zip(text).any(|(p, t)| p.abs_diff(t) >= 60)));
}

#[test]
fn damaged_tiles_are_skipped_counted_and_reported_once() {
    let themes = Themes::from_json(THEMES).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("streets-damaged");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zug.pmtiles");
    let mut bytes = std::fs::read(tiles_dir().join("zug-openmaptiles.pmtiles")).unwrap();
    // Every byte of the tile data section (offset and length from the header, per the spec)
    // scrambled: each tile's gzip stream is garbage.
    let (off, len) = (u64::from_le_bytes(bytes[56..64].try_into().unwrap()) as usize, u64::from_le_bytes(bytes[64..72].try_into().unwrap()) as usize);
    for b in &mut bytes[off..off + len] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let tiles = Arc::new(VectorTiles::open(&path, 64 << 20).unwrap());
    let atlas = land().with_streets(tiles.clone());
    let req = map("light", 47.1918, 8.4777, 15.0, 300, 200);
    let first = render(&atlas, &themes, &req).unwrap();
    assert_eq!(first, render(&land(), &themes, &req).unwrap(), "nothing drawn from damaged tiles");
    let stats = tiles.stats();
    assert!(stats.failed >= 1, "{stats:?}");
    assert!(stats.first_error.as_deref().is_some_and(|e| e.starts_with("tile 14/") && e.contains("gzip")), "{stats:?}");
    render(&atlas, &themes, &req).unwrap();
    assert_eq!(tiles.stats().failed, stats.failed, "a damaged tile is read and reported once");
}

#[test]
fn the_tile_cache_stays_within_its_bound() {
    let themes = Themes::from_json(THEMES).unwrap();
    let bound = 1 << 20;
    let tiles = Arc::new(VectorTiles::open(&tiles_dir().join("monaco-openmaptiles.pmtiles"), bound).unwrap());
    let atlas = land().with_streets(tiles.clone());
    for (i, zoom) in [13.0, 14.0, 15.0, 16.0, 17.0].into_iter().enumerate() {
        render(&atlas, &themes, &map("light", 43.735 + i as f64 * 0.002, 7.42, zoom, 600, 400)).unwrap();
        let s = tiles.stats();
        assert!(s.cached_bytes <= bound, "{s:?}");
    }
    assert!(tiles.stats().decoded >= 3);
}

#[test]
fn an_archive_whose_bounds_cross_the_antimeridian_is_drawn_inside_them() {
    // Zug's archive with its header's bounds rewritten (degrees times 10^7, little-endian i32s at
    // bytes 102 and 110 of the PMTiles v3 header, per the spec): from 170 E east across the
    // antimeridian to 9 E, which holds Zug, and to 170 W, which does not.
    let themes = Themes::from_json(THEMES).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("streets-antimeridian");
    std::fs::create_dir_all(&dir).unwrap();
    let req = map("light", 47.1918, 8.4777, 15.0, 300, 200);
    let drawn = render(&land().with_streets(open("zug-openmaptiles")), &themes, &req).unwrap();
    let bare = render(&land(), &themes, &req).unwrap();
    assert_ne!(drawn, bare);
    for (east, holds_zug) in [(9.0, true), (-170.0, false)] {
        let mut bytes = std::fs::read(tiles_dir().join("zug-openmaptiles.pmtiles")).unwrap();
        bytes[102..106].copy_from_slice(&(170 * 10_000_000i32).to_le_bytes());
        bytes[110..114].copy_from_slice(&((east * 1e7) as i32).to_le_bytes());
        let path = dir.join(format!("zug-to-{east}.pmtiles"));
        std::fs::write(&path, &bytes).unwrap();
        let tiles = Arc::new(VectorTiles::open(&path, 64 << 20).unwrap());
        assert_eq!(tiles.bounds()[0], 170.0);
        let got = render(&land().with_streets(tiles), &themes, &req).unwrap();
        // Compared whole, not printed: a PNG in a failure message is thousands of numbers.
        assert!(&got == if holds_zug { &drawn } else { &bare }, "bounds from 170 to {east}: the street map {}", if holds_zug { "missing" } else { "drawn" });
    }
}

#[test]
fn archives_that_are_not_street_tiles_are_refused_at_open() {
    // The leaf-directory fixture holds raw ids, not vector tiles of either schema.
    let e = VectorTiles::open(&tiles_dir().join("leaves.pmtiles"), 1 << 20).err().expect("refused");
    assert!(e.to_string().contains("neither"), "{e}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("streets-truncated");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut.pmtiles");
    let bytes = std::fs::read(tiles_dir().join("zug-openmaptiles.pmtiles")).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    assert!(VectorTiles::open(&path, 1 << 20).is_err());
}

#[test]
fn a_panned_view_shows_the_same_streets_where_the_two_overlap() {
    // The street map is drawn in cells on the world's pixel grid and copied into each image: a
    // view 100 pixels further east must show the first view's pixels 100 pixels to the left.
    let themes = Themes::from_json(THEMES).unwrap();
    let atlas = land().with_streets(open("monaco-openmaptiles"));
    let (lat, lng, zoom, w, h) = (43.7366, 7.4214, 16.0, 500u32, 300u32);
    let dx = 100.0;
    let east = lng + dx / (256.0 * 2f64.powf(zoom)) * 360.0;
    let (_, a) = rgb(&render(&atlas, &themes, &map("voyager", lat, lng, zoom, w, h)).unwrap());
    let (_, b) = rgb(&render(&atlas, &themes, &map("voyager", lat, east, zoom, w, h)).unwrap());
    let at = |img: &[u8], x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        [img[i], img[i + 1], img[i + 2]]
    };
    let mut differ = 0;
    for y in 0..h {
        for x in 0..w - 100 {
            differ += usize::from(at(&a, x + 100, y) != at(&b, x, y));
        }
    }
    assert_eq!(differ, 0);
    // And the view is a street map, not a blank: many colours.
    let colours: std::collections::BTreeSet<[u8; 3]> = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).map(|(x, y)| at(&a, x, y)).collect();
    assert!(colours.len() > 50, "{} colours", colours.len());
}
