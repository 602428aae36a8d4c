//! Reference images, in the manner of resvg's test suite: a handful of fixed scenes (one per
//! theme, a focus map, a heatmap, a multi-company map with its legend) drawn with the real
//! basemap, gazetteer and font (trimmed copies committed in `tests/data`, as resvg commits its
//! fonts), decoded, and compared with the PNGs in `tests/references` pixel by pixel in straight
//! (demultiplied) RGBA with a tolerance of 1 per channel. On a mismatch the actual image and a
//! three-panel diff (expected | mask | actual, the mask showing differing pixels red over the
//! faded reference) are written next to the test binary and named in the failure. References
//! are rewritten only when asked:
//!
//!   STOREMAP_UPDATE_REFERENCES=1 cargo test -p storemap-render --release references

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use storemap_render::{render, render_map, Atlas, FocusSpec, MapRequest, MarkerGroup, Themes, Viewport};

use super::THEMES;

/// The committed test data (`tests/data`, see its README.md): Natural Earth shapes and a
/// GeoNames gazetteer trimmed from the reference step's files, and DejaVu Sans with its
/// licence. Nothing generated and nothing from npm, so a fresh clone tests as it is.
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// The full basemap, as the service loads it, from the trimmed test data: countries, US
/// states, the big lakes, the largest cities and the label font.
fn atlas() -> &'static Atlas {
    static B: OnceLock<Atlas> = OnceLock::new();
    B.get_or_init(|| {
        let read = |name: &str| std::fs::read_to_string(data(name)).unwrap_or_else(|e| panic!("{}: {e}", data(name).display()));
        let font = std::fs::read(data("DejaVuSans.ttf")).unwrap_or_else(|e| panic!("{}: {e}", data("DejaVuSans.ttf").display()));
        Atlas::from_geojson(&read("countries.geojson"))
            .and_then(|b| b.with_us_states(&read("us_states.geojson")))
            .and_then(|b| b.with_lakes(&read("lakes.geojson")))
            .and_then(|b| b.with_cities_csv(&read("cities.csv")))
            .and_then(|b| b.with_font(&font))
            .unwrap()
    })
}

/// The same basemap with a street map's vector tiles over it.
fn streets_atlas(archive: &'static str) -> Atlas {
    let read = |name: &str| std::fs::read_to_string(data(name)).unwrap();
    let tiles = storemap_render::tiles::source::VectorTiles::open(&data("tiles").join(archive), 64 << 20).unwrap();
    Atlas::from_geojson(&read("countries.geojson"))
        .and_then(|b| b.with_us_states(&read("us_states.geojson")))
        .and_then(|b| b.with_lakes(&read("lakes.geojson")))
        .and_then(|b| b.with_cities_csv(&read("cities.csv")))
        .and_then(|b| b.with_font(&std::fs::read(data("DejaVuSans.ttf")).unwrap()))
        .unwrap()
        .with_streets(std::sync::Arc::new(tiles))
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

/// Expected, mask and actual side by side, each `w` x `h`, separated by a 2-pixel gap.
fn three_panels(w: u32, h: u32, panels: [&[u8]; 3]) -> (u32, Vec<u8>) {
    const GAP: u32 = 2;
    let width = 3 * w + 2 * GAP;
    let mut out = vec![255u8; (width * h * 4) as usize];
    for (k, panel) in panels.iter().enumerate() {
        let left = k as u32 * (w + GAP);
        for y in 0..h {
            let src = (y * w * 4) as usize..((y + 1) * w * 4) as usize;
            let at = ((y * width + left) * 4) as usize;
            out[at..at + (w * 4) as usize].copy_from_slice(&panel[src]);
        }
    }
    (width, out)
}

#[test]
fn a_three_panel_diff_lays_expected_mask_and_actual_side_by_side() {
    // 2x1 panels of distinct colours.
    let e = [1, 1, 1, 255, 2, 2, 2, 255];
    let m = [3, 3, 3, 255, 4, 4, 4, 255];
    let a = [5, 5, 5, 255, 6, 6, 6, 255];
    let (w, px) = three_panels(2, 1, [&e, &m, &a]);
    assert_eq!(w, 2 * 3 + 4);
    let at = |x: usize| px[x * 4];
    assert_eq!((at(0), at(1)), (1, 2), "expected on the left");
    assert_eq!((at(2), at(3)), (255, 255), "a white gap");
    assert_eq!((at(4), at(5)), (3, 4), "the mask in the middle");
    assert_eq!((at(8), at(9)), (5, 6), "actual on the right");
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
        let (pw, panels) = three_panels(aw, ah, [&e, &diff, &a]);
        write_png(&diff_path, pw, ah, &panels);
        panic!(
            "{name}: {bad} pixels differ by more than 1 from {}; see {} and {} (expected | mask | actual)",
            path.display(),
            actual.display(),
            diff_path.display()
        );
    }
}

fn draw(req: &MapRequest) -> Vec<u8> {
    render(atlas(), &Themes::from_json(THEMES).unwrap(), req).unwrap()
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
        territories: vec![],
        fill: [0xE5, 0xE7, 0xEB],
        outline: [0x9C, 0xA3, 0xAF],
        outline_width: 1.5,
        background: None,
    };
    let points = scatter(2, 40, 38.0, -95.0, 9.0);
    let req = MapRequest { focus: Some(spec), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("focus-us-conus", &draw(&req));
}

fn focus(country: &str) -> FocusSpec {
    FocusSpec {
        country: country.into(),
        mainland_only: false,
        conus: false,
        regions: vec![],
        territories: vec![],
        fill: [0xE5, 0xE7, 0xEB],
        outline: [0x9C, 0xA3, 0xAF],
        outline_width: 1.5,
        background: None,
    }
}

/// The US as atlases draw it: the lower 48, Alaska (at 0.35) and Hawaii in framed insets along
/// the bottom left, markers in all three.
#[test]
fn reference_focus_map_us_composite() {
    let mut points = scatter(3, 30, 38.0, -95.0, 9.0);
    points.extend([(61.2181, -149.9003), (64.8378, -147.7164), (21.3069, -157.8583), (19.7241, -155.0868)]);
    let req = MapRequest { focus: Some(focus("US")), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("focus-us-composite", &draw(&req));
}

/// France with its overseas regions (French Guiana, the Antilles, Réunion, Mayotte) as insets.
#[test]
fn reference_focus_map_france_overseas() {
    let mut points = scatter(4, 20, 46.5, 2.5, 3.0);
    points.extend([(4.9224, -52.3135), (16.2411, -61.5331), (-20.8823, 55.4504)]);
    let req = MapRequest { focus: Some(focus("FR")), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("focus-fr-overseas", &draw(&req));
}

/// The centre of the pure red pixels.
fn red_centroid(px: &[u8]) -> impl Fn(u32) -> Option<(f32, f32)> + '_ {
    move |w: u32| {
        let (mut n, mut sx, mut sy) = (0.0f32, 0.0f32, 0.0f32);
        for (i, p) in px.chunks_exact(4).enumerate() {
            if p[3] == 255 && p[0] > 200 && p[1] < 60 && p[2] < 60 {
                n += 1.0;
                sx += (i as u32 % w) as f32;
                sy += (i as u32 / w) as f32;
            }
        }
        (n > 0.0).then(|| (sx / n, sy / n))
    }
}

/// Each of Anchorage, Honolulu and Chicago drawn alone in red: the first two land inside the
/// Alaska and Hawaii frames, Chicago in neither, at every size; `conus` has no insets.
#[test]
fn us_insets_hold_their_own_markers() {
    let themes = Themes::from_json(THEMES).unwrap();
    for (w, h) in [(800, 500), (1200, 800), (256, 256), (4096, 1024), (600, 1200)] {
        let frames = atlas().inset_frames(&focus("US"), w, h, 1.0, 5.0).unwrap();
        assert_eq!(frames.len(), 2, "{w}x{h}: Alaska and Hawaii");
        for f in &frames {
            assert!(f[0] >= 0.0 && f[1] >= 0.0 && f[2] <= w as f32 && f[3] <= h as f32, "{w}x{h}: frame {f:?} inside the image");
        }
        assert!(frames[0][2] < frames[1][0], "{w}x{h}: the frames do not overlap: {frames:?}");
        for (name, point, inset) in
            [("Anchorage", (61.2181, -149.9003), Some(0)), ("Honolulu", (21.3069, -157.8583), Some(1)), ("Chicago", (41.8781, -87.6298), None)]
        {
            let marker = MarkerGroup { color: Some([255, 0, 0]), name: name.into(), points: vec![point] };
            let req = MapRequest { focus: Some(focus("US")), ..MapRequest::new(w, h, vec![marker]) };
            let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
            let (x, y) = red_centroid(&px)(iw).unwrap_or_else(|| panic!("{name} drawn at {w}x{h}"));
            let within = |f: &[f32; 4]| x > f[0] && x < f[2] && y > f[1] && y < f[3];
            match inset {
                Some(i) => assert!(within(&frames[i]), "{name} at ({x}, {y}) outside its frame {:?} ({w}x{h})", frames[i]),
                None => assert!(!frames.iter().any(within), "{name} at ({x}, {y}) inside an inset ({w}x{h})"),
            }
        }
    }
    let conus = FocusSpec { conus: true, ..focus("US") };
    assert!(atlas().inset_frames(&conus, 800, 500, 1.0, 5.0).unwrap().is_empty());
}

/// The mainland is reached hop by hop: Canada's Arctic islands stay in place (no inset),
/// while Svalbard, Alaska and Hawaii, far from every hop, are insets.
#[test]
fn island_chains_stay_with_their_mainland() {
    let insets = |c: &str| atlas().inset_frames(&focus(c), 800, 500, 1.0, 5.0).unwrap().len();
    assert_eq!(insets("CA"), 0, "Canada is drawn whole");
    assert!(insets("NO") >= 1, "Svalbard is an inset");
    assert_eq!(insets("US"), 2, "Alaska and Hawaii");
}

/// Puerto Rico, a country code of its own, is a third US inset when asked for (the service
/// asks when a map has markers there): San Juan lands inside it; `conus` drops it; a
/// territory of another country is ignored.
#[test]
fn puerto_rico_is_a_us_inset_where_asked() {
    assert_eq!(storemap_render::territories_of("us"), ["PR"]);
    assert!(storemap_render::territories_of("FR").is_empty());
    let themes = Themes::from_json(THEMES).unwrap();
    let with_pr = FocusSpec { territories: vec!["PR".into()], ..focus("US") };
    for (w, h) in [(800, 500), (256, 256), (4096, 1024)] {
        let frames = atlas().inset_frames(&with_pr, w, h, 1.0, 5.0).unwrap();
        assert_eq!(frames.len(), 3, "{w}x{h}: Alaska, Hawaii and Puerto Rico");
        for f in &frames {
            assert!(f[0] >= 0.0 && f[1] >= 0.0 && f[2] <= w as f32 && f[3] <= h as f32, "{w}x{h}: frame {f:?} inside the image");
        }
        let marker = MarkerGroup { color: Some([255, 0, 0]), name: "San Juan".into(), points: vec![(18.4655, -66.1057)] };
        let req = MapRequest { focus: Some(with_pr.clone()), ..MapRequest::new(w, h, vec![marker.clone()]) };
        let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
        let (x, y) = red_centroid(&px)(iw).unwrap_or_else(|| panic!("San Juan drawn at {w}x{h}"));
        let f = frames[2];
        assert!(x > f[0] && x < f[2] && y > f[1] && y < f[3], "San Juan at ({x}, {y}) outside the Puerto Rico frame {f:?} ({w}x{h})");
        // Without the territory, San Juan is in no part of the US map: nothing red is drawn.
        let req = MapRequest { focus: Some(focus("US")), ..MapRequest::new(w, h, vec![marker]) };
        let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
        assert!(red_centroid(&px)(iw).is_none(), "{w}x{h}: San Juan drawn without a Puerto Rico inset");
    }
    let conus = FocusSpec { conus: true, ..with_pr.clone() };
    assert!(atlas().inset_frames(&conus, 800, 500, 1.0, 5.0).unwrap().is_empty());
    let foreign = FocusSpec { territories: vec!["PR".into()], ..focus("FR") };
    assert_eq!(atlas().inset_frames(&foreign, 800, 500, 1.0, 5.0).unwrap().len(), atlas().inset_frames(&focus("FR"), 800, 500, 1.0, 5.0).unwrap().len());
}

/// Russia runs past the antimeridian, and the reference borders cut it there: its mainland's
/// ring touches -180 at Chukotka, so its plain box read -180 to 180, the map was centred on
/// the prime meridian and drawn a quarter turned, with Chukotka beyond 180 as a band across.
/// Now west is left and north up, Chukotka's far end (Uelen, 169.8 W) lies just east of
/// Anadyr, and the 180th meridian through Chukotka's land is drawn as land, with no outline.
#[test]
fn russia_focus_map_is_upright_with_chukotka_whole_and_no_seam() {
    let themes = Themes::from_json(THEMES).unwrap();
    let (w, h) = (1200, 800);
    let at = |name: &str, p: (f64, f64)| {
        let marker = MarkerGroup { color: Some([255, 0, 0]), name: name.into(), points: vec![p] };
        let req = MapRequest { focus: Some(focus("RU")), ..MapRequest::new(w, h, vec![marker]) };
        let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
        let centre = red_centroid(&px)(iw).unwrap_or_else(|| panic!("{name} drawn"));
        centre
    };
    let moscow = at("Moscow", (55.7558, 37.6173));
    let vladivostok = at("Vladivostok", (43.1155, 131.8855));
    let anadyr = at("Anadyr", (64.7337, 177.4968));
    let uelen = at("Uelen", (66.1594, -169.8092));
    let all = format!("Moscow {moscow:?}, Vladivostok {vladivostok:?}, Anadyr {anadyr:?}, Uelen {uelen:?}");
    assert!(moscow.0 < vladivostok.0 && vladivostok.0 < anadyr.0 && anadyr.0 < uelen.0, "west to east, left to right: {all}");
    assert!(moscow.1 < vladivostok.1 && anadyr.1 < vladivostok.1, "north up: {all}");
    assert!(uelen.0 - anadyr.0 < w as f32 / 10.0, "Chukotka beyond 180 beside the rest of it: {all}");
    let seam = at("On the antimeridian", (67.0, 180.0));
    let req = MapRequest { focus: Some(focus("RU")), ..MapRequest::new(w, h, vec![]) };
    let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
    let (cx, cy) = (seam.0.round() as u32, seam.1.round() as u32);
    for y in cy - 4..=cy + 4 {
        for x in cx - 1..=cx + 1 {
            let i = ((y * iw + x) * 4) as usize;
            assert_eq!(px[i..i + 4], [0xE5, 0xE7, 0xEB, 255], "the fill at ({x}, {y}), on the 180th meridian inside Chukotka");
        }
    }
}

/// An inset frame keeps clear of the country's land: Texas stood on Hawaii's frame, and
/// Norway's south coast on Svalbard's.
#[test]
fn inset_frames_keep_clear_of_the_land() {
    let themes = Themes::from_json(THEMES).unwrap();
    for country in ["US", "NO", "CL", "JP", "NZ"] {
        let (w, h) = (800, 500);
        let spec = FocusSpec { outline_width: 0.0, ..focus(country) };
        let frames = atlas().inset_frames(&spec, w, h, 1.0, 5.0).unwrap();
        // The land without its outline, and the frames, drawn as the service draws them.
        let req = MapRequest { focus: Some(spec), ..MapRequest::new(w, h, vec![]) };
        let (iw, ih, px) = rgba(&render(atlas(), &themes, &req).unwrap());
        for f in &frames {
            // The band from 2 to 6 pixels outside the frame (its own thin stroke's anti-aliased
            // edge reaches a pixel or so out): no land there, nor any other frame.
            let near =
                |x: i64, y: i64, g: &[f32; 4], d: f32| (x as f32) >= g[0] - d && (x as f32) <= g[2] + d && (y as f32) >= g[1] - d && (y as f32) <= g[3] + d;
            let mut land = Vec::new();
            for y in (f[1] as i64 - 6).max(0)..=(f[3] as i64 + 6).min(ih as i64 - 1) {
                for x in (f[0] as i64 - 6).max(0)..=(f[2] as i64 + 6).min(iw as i64 - 1) {
                    if frames.iter().any(|g| near(x, y, g, 2.0)) || px[((y as u32 * iw + x as u32) * 4 + 3) as usize] == 0 {
                        continue;
                    }
                    land.push((x, y));
                }
            }
            land.truncate(3);
            assert!(land.is_empty(), "{country}: land within 6 px of the frame {f:?} at {land:?}");
        }
    }
}

/// A legend goes in the first corner clear of a focus map's insets (the US's Alaska is in the
/// lower left, where a legend goes on other maps); one that would cover too much of a small
/// image is left out, and the answer says so.
#[test]
fn a_legend_keeps_clear_of_insets_and_out_of_too_small_an_image() {
    let themes = Themes::from_json(THEMES).unwrap();
    let groups = |n: usize| (0..n).map(|i| group(&format!("Restaurant Company {i}"), scatter(10 + i as u64, 20, 39.0, -95.0, 8.0))).collect::<Vec<_>>();
    // The dark theme's panel (#111827, 240 of 255 opaque) over a focus map's transparent ground.
    let panel = |p: &[u8]| p[3] >= 230 && p[3] <= 250 && p[0] < 40 && p[1] < 45 && p[2] < 60;
    let (w, h) = (800, 500);
    let req = MapRequest { legend: true, style: "dark".into(), focus: Some(focus("US")), ..MapRequest::new(w, h, groups(3)) };
    let drawn = render_map(atlas(), &themes, &req).unwrap();
    assert!(!drawn.legend_omitted);
    let (iw, _, px) = rgba(&drawn.body);
    let frames = atlas().inset_frames(&focus("US"), w, h, 1.0, req.marker_radius).unwrap();
    let at = |x: u32, y: u32| &px[((y * iw + x) * 4) as usize..((y * iw + x) * 4 + 4) as usize];
    let everywhere = (0..h).flat_map(|y| (0..w).map(move |x| (x, y))).filter(|&(x, y)| panel(at(x, y))).count();
    assert!(everywhere > 2_000, "the legend is drawn ({everywhere} panel pixels)");
    for f in &frames {
        let inside = (f[1] as u32..f[3] as u32).flat_map(|y| (f[0] as u32..f[2] as u32).map(move |x| (x, y))).filter(|&(x, y)| panel(at(x, y))).count();
        assert_eq!(inside, 0, "legend pixels inside the inset frame {f:?}");
    }
    // Five companies on a 300 x 200 map: the legend (about 180 x 120) would cover more than the
    // share allowed.
    let small = MapRequest { legend: true, style: "dark".into(), ..MapRequest::new(300, 200, groups(5)) };
    let drawn = render_map(atlas(), &themes, &small).unwrap();
    assert!(drawn.legend_omitted, "too small an image for five rows");
    let small = MapRequest { legend: true, style: "dark".into(), ..MapRequest::new(600, 400, groups(2)) };
    assert!(!render_map(atlas(), &themes, &small).unwrap().legend_omitted, "two rows fit 600 x 400");
}

/// The big lakes are water, where Natural Earth's countries draw land across them: on a Web
/// Mercator map the middle of Lake Michigan and of Lake Superior is the theme's water, and
/// Wisconsin between them its land; on a focus map of the US the lake is a hole in the country.
#[test]
fn the_great_lakes_are_water() {
    let themes = Themes::from_json(THEMES).unwrap();
    let t = *themes.get("light").unwrap();
    let (w, h) = (600, 400);
    let (clat, clng, zoom) = (44.5, -86.0, 5.0);
    let req = MapRequest { viewport: Viewport::CenterZoom([clat, clng], zoom), ..MapRequest::new(w, h, vec![]) };
    let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
    // Web Mercator, worked out here: the pixel of (lat, lng) in this view.
    let at = |lat: f64, lng: f64| {
        let size = 256.0 * 2f64.powf(zoom);
        let y = |lat: f64| (0.5 - ((1.0 + lat.to_radians().sin()) / (1.0 - lat.to_radians().sin())).ln() / (4.0 * std::f64::consts::PI)) * size;
        let x = ((lng - clng) / 360.0 * size + w as f64 / 2.0).round() as u32;
        let i = ((((y(lat) - y(clat)) + h as f64 / 2.0).round() as u32 * iw + x) * 4) as usize;
        [px[i], px[i + 1], px[i + 2]]
    };
    assert_eq!(at(43.8, -87.2), t.water, "Lake Michigan");
    assert_eq!(at(47.6, -87.6), t.water, "Lake Superior");
    assert_eq!(at(44.9, -82.3), t.water, "Lake Huron");
    assert_eq!(at(44.5, -89.8), t.land, "Wisconsin");
    // The US alone: the lake lets the (transparent) background through; Illinois is filled.
    let req = MapRequest { focus: Some(focus("US")), ..MapRequest::new(w, h, vec![]) };
    let marker = |name: &str, p: (f64, f64)| {
        let m = MarkerGroup { color: Some([255, 0, 0]), name: name.into(), points: vec![p] };
        // The same fit as the map without markers: the same marker radius, so the same margin.
        let (iw, _, px) = rgba(&render(atlas(), &themes, &MapRequest { focus: Some(focus("US")), ..MapRequest::new(w, h, vec![m]) }).unwrap());
        let centre = red_centroid(&px)(iw).unwrap_or_else(|| panic!("{name} drawn"));
        centre
    };
    let (iw, _, px) = rgba(&render(atlas(), &themes, &req).unwrap());
    let alpha = |(x, y): (f32, f32)| px[((y.round() as u32 * iw + x.round() as u32) * 4 + 3) as usize];
    assert_eq!(alpha(marker("Lake Michigan", (43.8, -87.2))), 0, "Lake Michigan is a hole in the US");
    assert_eq!(alpha(marker("Illinois", (40.0, -89.0))), 255, "Illinois is land");
}

/// Nothing is cut off at the image edge, at any size and aspect from 256x256 to 4096x1024
/// (and the tall way round), for countries with far-flung parts, across the antimeridian
/// (Russia, New Zealand) and long thin ones (Chile), with radius-8 markers at the US's
/// extreme points: every border pixel stays transparent.
#[test]
fn focus_maps_leave_the_image_border_empty() {
    let themes = Themes::from_json(THEMES).unwrap();
    let extremes = vec![
        (24.5465, -81.8101),
        (48.1633, -124.7333),
        (44.8151, -66.9497),
        (71.2906, -156.7887),
        (18.9110, -155.6811),
        (51.8800, -176.6580),
        (52.9300, 172.9200),
    ];
    for country in ["US", "FR", "NO", "ES", "PT", "RU", "NZ", "CL", "JP", "DE"] {
        for (w, h) in [(256, 256), (4096, 1024), (1024, 4096), (300, 900), (1200, 800)] {
            let points = if country == "US" { extremes.clone() } else { vec![] };
            let req = MapRequest { marker_radius: 8.0, focus: Some(focus(country)), ..MapRequest::new(w, h, vec![group("Edge", points)]) };
            let (iw, ih, px) = rgba(&render(atlas(), &themes, &req).unwrap());
            let alpha = |x: u32, y: u32| px[((y * iw + x) * 4 + 3) as usize];
            let border = (0..iw).flat_map(|x| [(x, 0), (x, ih - 1)]).chain((0..ih).flat_map(|y| [(0, y), (iw - 1, y)]));
            let touched: Vec<(u32, u32)> = border.filter(|&(x, y)| alpha(x, y) != 0).take(3).collect();
            assert!(touched.is_empty(), "{country} at {w}x{h}: drawn on the border at {touched:?}");
        }
    }
}

#[test]
fn reference_heatmap() {
    let mut points = scatter(3, 400, 40.7, -74.0, 1.5);
    points.extend(scatter(4, 150, 41.9, -87.6, 1.2));
    points.extend(scatter(5, 60, 34.0, -118.2, 2.0));
    let req =
        MapRequest { heatmap: true, viewport: Viewport::Bounds([25.0, -125.0, 49.0, -66.0]), ..MapRequest::new(360, 240, vec![group("Scatter", points)]) };
    check("heatmap-us", &draw(&req));
}

#[test]
fn reference_multi_company_legend() {
    let groups = vec![
        group("McDonald's", scatter(6, 50, 39.0, -95.0, 8.0)),
        group("Starbucks", scatter(7, 40, 40.0, -100.0, 8.0)),
        group("Yum! Brands", scatter(8, 30, 36.0, -90.0, 8.0)),
    ];
    let req =
        MapRequest { legend: true, style: "pitchbook".into(), viewport: Viewport::Bounds([24.0, -125.0, 50.0, -66.0]), ..MapRequest::new(420, 280, groups) };
    check("legend-three-companies", &draw(&req));
}

#[test]
fn reference_street_maps() {
    // Zugerland from the real extract (tilemaker's OpenMapTiles profile, one zoom-14 tile) at a
    // town's, a neighbourhood's and a street's zoom, in a pale and a warm theme: at 13 the
    // extract is a patch in the Natural Earth map, at 17 it fills most of the picture and its
    // edge runs through it. Then a whole city, Monaco, and the same extract in the Protomaps
    // schema.
    let themes = Themes::from_json(THEMES).unwrap();
    let zug = streets_atlas("zug-openmaptiles.pmtiles");
    let stores = vec![(47.1925, 8.4772), (47.1912, 8.4785), (47.1931, 8.4790)];
    for style in ["light", "voyager"] {
        for zoom in [13.0, 15.0, 17.0] {
            let req = MapRequest {
                style: style.into(),
                viewport: Viewport::CenterZoom([47.1918, 8.4777], zoom),
                ..MapRequest::new(480, 320, vec![group("Stores", stores.clone())])
            };
            check(&format!("streets-zug-z{zoom}-{style}"), &render(&zug, &themes, &req).unwrap());
        }
    }
    let monaco = streets_atlas("monaco-openmaptiles.pmtiles");
    let req = MapRequest {
        style: "voyager".into(),
        viewport: Viewport::CenterZoom([43.7366, 7.4214], 15.0),
        ..MapRequest::new(480, 320, vec![group("Stores", scatter(3, 12, 43.737, 7.422, 0.006))])
    };
    check("streets-monaco-z15-voyager", &render(&monaco, &themes, &req).unwrap());
    let pm = streets_atlas("zug-protomaps.pmtiles");
    let req = MapRequest {
        style: "dark".into(),
        viewport: Viewport::CenterZoom([47.1918, 8.4777], 17.0),
        ..MapRequest::new(480, 320, vec![group("Stores", stores.clone())])
    };
    check("streets-zug-protomaps-z17-dark", &render(&pm, &themes, &req).unwrap());
}

#[test]
fn a_country_frame_is_its_mainland() {
    // Published extremes: the contiguous US from Key West and the Florida Keys (24.5 N) to the
    // Northwest Angle (49.4 N), Cape Alava (124.7 W) to West Quoddy Head (66.9 E of W); mainland
    // France with Corsica (41.3 to 51.1 N, 4.8 W to 9.6 E); Russia from Kaliningrad's coast
    // (19.6 E; about 255 km from the rest, within focus maps' 300) east across the antimeridian
    // to the Diomedes and Cape Dezhnev (169.0 to 169.7 W).
    let near = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol;
    let us = atlas().mainland_bounds("us").unwrap();
    for (got, want) in us.iter().zip([24.5, -124.7, 49.4, -66.9]) {
        assert!(near(*got, want, 0.6), "US {us:?}");
    }
    let fr = atlas().mainland_bounds("FR").unwrap();
    for (got, want) in fr.iter().zip([41.3, -4.8, 51.1, 9.6]) {
        assert!(near(*got, want, 0.6), "FR {fr:?}");
    }
    let ru = atlas().mainland_bounds("RU").unwrap();
    assert!(ru[1] > ru[3], "Russia's frame crosses the antimeridian: {ru:?}");
    assert!(near(ru[1], 19.6, 0.5) && near(ru[3], -169.3, 0.6), "RU {ru:?}");
    assert_eq!(atlas().mainland_bounds("XX"), None);
}

#[test]
fn a_country_frame_is_its_mainland_and_a_margin() {
    // What a map filtered to a country (and `basemap extract --country`) frames: 5 % of the
    // mainland's span on each side, across the antimeridian for Russia, the world for
    // Antarctica (whose mainland spans 360 degrees less a sliver).
    let close = |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
    let fr = atlas().mainland_bounds("FR").unwrap();
    let (dy, dx) = ((fr[2] - fr[0]) * 0.05, (fr[3] - fr[1]) * 0.05);
    assert!(close(&atlas().country_frame("FR").unwrap(), &[fr[0] - dy, fr[1] - dx, fr[2] + dy, fr[3] + dx]));
    let ru = atlas().mainland_bounds("RU").unwrap();
    let span = ru[3] + 360.0 - ru[1];
    let frame = atlas().country_frame("RU").unwrap();
    assert!(close(&[frame[1], frame[3]], &[ru[1] - span * 0.05, ru[3] + span * 0.05]), "RU {frame:?}");
    let aq = atlas().country_frame("AQ").unwrap();
    assert_eq!([aq[1], aq[3]], [-180.0, 180.0], "AQ {aq:?}");
    assert_eq!(atlas().country_frame("XX"), None);
}
