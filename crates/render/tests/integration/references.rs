//! Reference images, in the manner of resvg's test suite: a handful of fixed scenes (one per
//! theme, a focus map, a heatmap, a multi-company map with its legend) drawn with the real
//! basemap, gazetteer and font, decoded, and compared with the PNGs in `tests/references`
//! pixel by pixel in straight (demultiplied) RGBA with a tolerance of 1 per channel. On a
//! mismatch the actual image and a diff (differing pixels red) are written next to the test
//! binary and named in the failure. References are rewritten only when asked:
//!
//!   STOREMAP_UPDATE_REFERENCES=1 cargo test -p storemap-render --release references

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use storemap_render::{render, Basemap, FocusSpec, MapRequest, MarkerGroup, Themes, Viewport};

use super::THEMES;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The full basemap, as the service loads it: shapes and gazetteer from the reference step
/// (`npm test` writes them; STOREMAP_REFERENCE_DIR says where), DejaVu Sans from npm.
fn basemap() -> &'static Basemap {
    static B: OnceLock<Basemap> = OnceLock::new();
    B.get_or_init(|| {
        let dir = std::env::var_os("STOREMAP_REFERENCE_DIR").map(PathBuf::from).unwrap_or_else(|| root().join("data/generated/reference"));
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {e} (run `npm test`, which writes the reference data)", dir.join(name).display()))
        };
        let font = std::fs::read(root().join("node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf")).expect("DejaVu Sans from npm (run npm install)");
        Basemap::from_geojson(&read("countries.geojson"))
            .and_then(|b| b.with_us_states(&read("us_states.geojson")))
            .and_then(|b| b.with_cities_csv(&read("cities.csv")))
            .and_then(|b| b.with_font(&font))
            .unwrap()
    })
}

/// Deterministic scattered points around a centre (an LCG, so no dependency decides them).
fn scatter(seed: u64, n: usize, lat: f64, lng: f64, spread: f64) -> Vec<(f64, f64)> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    (0..n).map(|_| (lat + next() * spread * next().abs(), lng + next() * spread * 1.5)).collect()
}

fn group(name: &str, points: Vec<(f64, f64)>) -> MarkerGroup {
    MarkerGroup { color: None, name: name.into(), points }
}

/// Straight RGBA pixels of a PNG.
fn rgba(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut d = png::Decoder::new(std::io::Cursor::new(bytes));
    d.set_transformations(png::Transformations::EXPAND);
    let mut r = d.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r.next_frame(&mut buf).unwrap();
    let px = &buf[..info.buffer_size()];
    let out = match info.color_type {
        png::ColorType::Rgba => px.to_vec(),
        png::ColorType::Rgb => px.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (info.width, info.height, out)
}

fn write_png(path: &Path, w: u32, h: u32, rgba: &[u8]) {
    let f = std::fs::File::create(path).unwrap();
    let mut e = png::Encoder::new(std::io::BufWriter::new(f), w, h);
    e.set_color(png::ColorType::Rgba);
    e.set_depth(png::BitDepth::Eight);
    e.write_header().unwrap().write_image_data(rgba).unwrap();
}

fn check(name: &str, png_bytes: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/references").join(format!("{name}.png"));
    if std::env::var("STOREMAP_UPDATE_REFERENCES").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, png_bytes).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}; create it with STOREMAP_UPDATE_REFERENCES=1", path.display()));
    let (ew, eh, e) = rgba(&expected);
    let (aw, ah, a) = rgba(png_bytes);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"));
    if (ew, eh) != (aw, ah) {
        std::fs::write(out.join(format!("{name}.actual.png")), png_bytes).unwrap();
        panic!("{name}: {aw}x{ah}, the reference is {ew}x{eh}");
    }
    let mut diff = vec![0u8; a.len()];
    let mut bad = 0;
    for (i, (p, q)) in a.chunks_exact(4).zip(e.chunks_exact(4)).enumerate() {
        // Fully transparent pixels have no colour to compare.
        let same = (p[3] == 0 && q[3] == 0) || p.iter().zip(q).all(|(x, y)| x.abs_diff(*y) <= 1);
        let d = &mut diff[i * 4..i * 4 + 4];
        if same {
            // The reference, faded, so the differences stand out.
            d.copy_from_slice(&[q[0] / 4 + 191, q[1] / 4 + 191, q[2] / 4 + 191, 255]);
        } else {
            bad += 1;
            d.copy_from_slice(&[255, 0, 0, 255]);
        }
    }
    if bad > 0 {
        let (actual, diff_path) = (out.join(format!("{name}.actual.png")), out.join(format!("{name}.diff.png")));
        std::fs::write(&actual, png_bytes).unwrap();
        write_png(&diff_path, aw, ah, &diff);
        panic!("{name}: {bad} pixels differ by more than 1 from {}; see {} and {}", path.display(), actual.display(), diff_path.display());
    }
}

fn draw(req: &MapRequest) -> Vec<u8> {
    render(basemap(), &Themes::from_json(THEMES).unwrap(), req).unwrap()
}

#[test]
fn reference_one_scene_per_theme() {
    // Western Europe at zoom 4: coasts, borders, capitals' labels and a scatter of markers.
    let points = scatter(1, 60, 48.8, 2.3, 6.0);
    for style in ["light", "dark", "voyager", "pitchbook", "slate", "warm"] {
        let req = MapRequest {
            style: style.into(),
            viewport: Viewport::CenterZoom([48.5, 5.0], 4.0),
            ..MapRequest::new(360, 240, vec![group("Scatter", points.clone())])
        };
        check(&format!("theme-{style}"), &draw(&req));
    }
}

#[test]
fn reference_focus_map() {
    let spec = FocusSpec {
        country: "US".into(),
        mainland_only: false,
        conus: true,
        regions: vec!["TX".into(), "CO".into()],
        fill: [0xE5, 0xE7, 0xEB],
        outline: [0x9C, 0xA3, 0xAF],
        outline_width: 1.5,
        background: None,
    };
    let points = scatter(2, 40, 38.0, -95.0, 9.0);
    let req = MapRequest { focus: Some(spec), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("focus-us-conus", &draw(&req));
}

#[test]
fn reference_heatmap() {
    let mut points = scatter(3, 400, 40.7, -74.0, 1.5);
    points.extend(scatter(4, 150, 41.9, -87.6, 1.2));
    points.extend(scatter(5, 60, 34.0, -118.2, 2.0));
    let req = MapRequest { heatmap: true, viewport: Viewport::Bounds([25.0, -125.0, 49.0, -66.0]), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("heatmap-us", &draw(&req));
}

#[test]
fn reference_multi_company_legend() {
    let groups = vec![
        group("McDonald's", scatter(6, 50, 39.0, -95.0, 8.0)),
        group("Starbucks", scatter(7, 40, 40.0, -100.0, 8.0)),
        group("Yum! Brands", scatter(8, 30, 36.0, -90.0, 8.0)),
    ];
    let req = MapRequest { legend: true, style: "pitchbook".into(), viewport: Viewport::Bounds([24.0, -125.0, 50.0, -66.0]), ..MapRequest::new(420, 280, groups) };
    check("legend-three-companies", &draw(&req));
}
