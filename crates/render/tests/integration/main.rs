//! Renderer integration tests: real encodes decoded again, pixels checked against arithmetic
//! done here independently of the renderer's own projection code.

use storemap_render::{render, Atlas, ImageFormat, MapRequest, MarkerGroup, RenderError, Themes, Viewport};

mod extract;
mod references;
mod streets;
mod tiles;

const THEMES: &str = include_str!("../../../../data/themes.json");

/// A 20-degree square "country" centred on (10, 10), far from the markers used below.
fn atlas() -> Atlas {
    Atlas::from_geojson(
        r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"iso_a2":"AA"},
        "geometry":{"type":"Polygon","coordinates":[[[0,0],[20,0],[20,20],[0,20],[0,0]]]}}]}"#,
    )
    .unwrap()
}

fn request(style: &str, viewport: Viewport, points: Vec<(f64, f64)>) -> MapRequest {
    MapRequest { style: style.into(), viewport, ..MapRequest::new(400, 300, vec![MarkerGroup { color: Some([255, 0, 0]), name: "Test".into(), points }]) }
}

/// Decodes a PNG: (width, height, RGB(A) bytes, channels, pixels per metre).
fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>, usize, Option<u32>) {
    let mut d = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0; d.output_buffer_size()];
    let info = d.next_frame(&mut buf).unwrap();
    let ppm = d.info().pixel_dims.map(|p| p.xppu);
    (info.width, info.height, buf[..info.buffer_size()].to_vec(), info.color_type.samples(), ppm)
}

fn pixel(img: &(u32, u32, Vec<u8>, usize, Option<u32>), x: u32, y: u32) -> [u8; 3] {
    let i = (y * img.0 + x) as usize * img.3;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

/// Independent Web Mercator: image pixel of (lat, lng) at `zoom`, centred on (clat, clng).
fn expected_pixel(lat: f64, lng: f64, clat: f64, clng: f64, zoom: f64, w: f64, h: f64) -> (f64, f64) {
    let size = 256.0 * 2f64.powf(zoom);
    let mx = |lng: f64| (lng + 180.0) / 360.0 * size;
    let my = |lat: f64| {
        let s = lat.to_radians().sin();
        (0.5 - ((1.0 + s) / (1.0 - s)).ln() / (4.0 * std::f64::consts::PI)) * size
    };
    (mx(lng) - mx(clng) + w / 2.0, my(lat) - my(clat) + h / 2.0)
}

#[test]
fn a_marker_lands_where_mercator_arithmetic_puts_it() {
    let themes = Themes::from_json(THEMES).unwrap();
    let (clat, clng, zoom) = (-30.0, -60.0, 5.0);
    let (plat, plng) = (-29.2, -58.9);
    let png = render(&atlas(), &themes, &request("light", Viewport::CenterZoom([clat, clng], zoom), vec![(plat, plng)])).unwrap();
    let img = decode(&png);
    let (ex, ey) = expected_pixel(plat, plng, clat, clng, zoom, 400.0, 300.0);
    // The red centre of the marker is within 1 px of the prediction.
    let red = (0..300u32)
        .flat_map(|y| (0..400u32).map(move |x| (x, y)))
        .filter(|&(x, y)| pixel(&img, x, y) == [255, 0, 0])
        .fold((0.0, 0.0, 0.0), |(sx, sy, n), (x, y)| (sx + x as f64 + 0.5, sy + y as f64 + 0.5, n + 1.0));
    assert!(red.2 > 10.0, "marker drawn");
    let (cx, cy) = (red.0 / red.2, red.1 / red.2);
    assert!((cx - ex).abs() <= 1.0 && (cy - ey).abs() <= 1.0, "marker at ({cx:.2},{cy:.2}), expected ({ex:.2},{ey:.2})");
}

#[test]
fn each_theme_paints_its_water_and_land() {
    let themes = Themes::from_json(THEMES).unwrap();
    for style in ["light", "dark", "voyager", "pitchbook", "slate", "warm"] {
        let t = *themes.get(style).unwrap();
        // Centre on the square country: the middle is land, a corner far outside is water.
        let png = render(&atlas(), &themes, &request(style, Viewport::CenterZoom([10.0, 10.0], 3.0), vec![])).unwrap();
        let img = decode(&png);
        assert_eq!(pixel(&img, 200, 150), t.land, "{style} land");
        assert_eq!(pixel(&img, 2, 2), t.water, "{style} water");
    }
    assert!(render(&atlas(), &themes, &request("neon", Viewport::Auto, vec![])).is_err());
}

/// The reference borders cut shapes at the antimeridian, so a country across it is two rings
/// meeting there (here two squares, 170 E to 180 and 180 to 170 W). The cut is no border:
/// the column where they meet is land, with no border line down it.
#[test]
fn a_shape_cut_at_the_antimeridian_has_no_border_down_the_cut() {
    let themes = Themes::from_json(THEMES).unwrap();
    let atlas = Atlas::from_geojson(
        r#"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"iso_a2":"AA"},
        "geometry":{"type":"MultiPolygon","coordinates":[[[[170,60],[180,60],[180,70],[170,70],[170,60]]],
        [[[-180,60],[-170,60],[-170,70],[-180,70],[-180,60]]]]}}]}"#,
    )
    .unwrap();
    for style in ["light", "dark"] {
        let t = *themes.get(style).unwrap();
        // Centred on 180: the cut is the image's middle column.
        let img = decode(&render(&atlas, &themes, &request(style, Viewport::CenterZoom([65.0, 180.0], 4.0), vec![])).unwrap());
        for y in 130..170 {
            for x in 197..=203 {
                assert_eq!(pixel(&img, x, y), t.land, "{style}: ({x}, {y}) on the cut");
            }
        }
        // The squares' real edges keep their border: 10 degrees either side of the middle.
        let edge = expected_pixel(65.0, 170.0, 65.0, 180.0, 4.0, 400.0, 300.0).0.round() as u32;
        assert!((edge - 1..=edge + 1).any(|x| ![t.land, t.water].contains(&pixel(&img, x, 150))), "{style}: the border at 170 E");
    }
}

/// A marker of a pixel or so still shows its colour: its white rim is at most a third of its
/// radius (a full 1.2 px rim covered the fill of a radius-0.5 or radius-1 marker).
#[test]
fn tiny_markers_show_their_colour() {
    let themes = Themes::from_json(THEMES).unwrap();
    let points = [(10.0, 10.0), (11.0, 12.0)];
    for radius in [0.5, 1.0, 2.0] {
        let req = MapRequest { marker_radius: radius, ..request("light", Viewport::CenterZoom([10.0, 10.0], 4.0), points.to_vec()) };
        let img = decode(&render(&atlas(), &themes, &req).unwrap());
        for (lat, lng) in points {
            // Within a pixel of where Web Mercator puts it, worked out here.
            let (ex, ey) = expected_pixel(lat, lng, 10.0, 10.0, 4.0, 400.0, 300.0);
            let near = (ey as u32 - 1..=ey as u32 + 1).flat_map(|y| (ex as u32 - 1..=ex as u32 + 1).map(move |x| (x, y)));
            let red = near.filter(|&(x, y)| {
                let [r, g, b] = pixel(&img, x, y);
                r > 200 && g < 130 && b < 130
            });
            assert!(red.count() >= 1, "radius {radius}: the marker at ({lat}, {lng}) shows red");
        }
    }
}

#[test]
fn viewport_priority_bounds_then_center_zoom_then_auto_fit() {
    let themes = Themes::from_json(THEMES).unwrap();
    let points = vec![(-20.0, -50.0), (-25.0, -45.0)];
    let red_box = |png: &[u8]| {
        let img = decode(png);
        let reds: Vec<(u32, u32)> = (0..img.1).flat_map(|y| (0..img.0).map(move |x| (x, y))).filter(|&(x, y)| pixel(&img, x, y) == [255, 0, 0]).collect();
        let xs: Vec<u32> = reds.iter().map(|p| p.0).collect();
        (xs.iter().min().copied(), xs.iter().max().copied())
    };
    // Auto-fit: both markers inside, spread over most of the width.
    let (min, max) = red_box(&render(&atlas(), &themes, &request("light", Viewport::Auto, points.clone())).unwrap());
    assert!(min.unwrap() > 5 && max.unwrap() < 395 && max.unwrap() - min.unwrap() > 150);
    // Bounds far away: no marker is drawn, but the image still renders.
    let (min, _) = red_box(&render(&atlas(), &themes, &request("light", Viewport::Bounds([40.0, 100.0, 50.0, 120.0]), points.clone())).unwrap());
    assert_eq!(min, None);
    // Center + zoom on one marker: it sits in the middle.
    let (min, max) = red_box(&render(&atlas(), &themes, &request("light", Viewport::CenterZoom([-20.0, -50.0], 6.0), points)).unwrap());
    let mid = (min.unwrap() + max.unwrap()) / 2;
    assert!((mid as i32 - 200).abs() <= 1, "{mid}");
}

#[test]
fn png_and_jpeg_carry_size_and_dpi() {
    let themes = Themes::from_json(THEMES).unwrap();
    let mut req = request("light", Viewport::Auto, vec![(1.0, 1.0)]);
    req.scale = 2;
    req.dpi = 300;
    let img = decode(&render(&atlas(), &themes, &req).unwrap());
    assert_eq!((img.0, img.1), (800, 600));
    assert_eq!(img.4, Some((300.0f64 / 0.0254).round() as u32));
    req.format = ImageFormat::Jpeg(85);
    let jpg = render(&atlas(), &themes, &req).unwrap();
    assert_eq!(&jpg[..2], &[0xFF, 0xD8]);
    // JFIF APP0: units 1 (dpi), then x and y density, big-endian.
    let app0 = jpg.windows(5).position(|w| w == b"JFIF\0").unwrap();
    assert_eq!(jpg[app0 + 7], 1);
    assert_eq!(u16::from_be_bytes([jpg[app0 + 8], jpg[app0 + 9]]), 300);
    assert_eq!(u16::from_be_bytes([jpg[app0 + 10], jpg[app0 + 11]]), 300);
}

#[test]
fn oversized_requests_fail_before_any_pixel_buffer() {
    let themes = Themes::from_json(THEMES).unwrap();
    let mut req = request("light", Viewport::Auto, vec![]);
    req.width = 4097;
    assert!(matches!(render(&atlas(), &themes, &req), Err(storemap_render::RenderError::InvalidSize { .. })));
    req.width = 2000;
    req.scale = 3;
    assert!(matches!(render(&atlas(), &themes, &req), Err(storemap_render::RenderError::InvalidSize { .. })));
    req.width = 4096;
    req.height = 1;
    req.scale = 1;
    assert!(render(&atlas(), &themes, &req).is_ok());
}

/// A marker of radius 64 at scale 4 covers a 524 px square (2 x (256 + 4.8) rounded up, plus
/// 2 px of rim): 274,576 px. 2^28 px of marker work then admits 977 points and refuses 978.
#[test]
fn marker_work_is_bounded_before_drawing() {
    let big = |n: usize| MapRequest { marker_radius: 64.0, scale: 4, ..request("light", Viewport::Auto, vec![(40.0, -100.0); n]) };
    assert!(storemap_render::admit(&big(977)).is_ok());
    let err = storemap_render::admit(&big(978)).unwrap_err();
    assert_eq!(err.code(), "INVALID_REQUEST");
    assert!(matches!(err, RenderError::TooMuchWork { points: 978, each: 274_576, max: 268_435_456 }), "{err:?}");
    // render() refuses the same request before it allocates the image.
    assert!(matches!(render(&atlas(), &Themes::from_json(THEMES).unwrap(), &big(978)), Err(RenderError::TooMuchWork { .. })));
    // The default marker fits a million points.
    assert!(storemap_render::admit(&request("light", Viewport::Auto, vec![(40.0, -100.0); 1_000_000])).is_ok());
}

#[test]
fn a_passed_deadline_stops_the_render() {
    let req = MapRequest { deadline: Some(std::time::Instant::now()), ..request("light", Viewport::Auto, vec![(40.0, -100.0)]) };
    let err = render(&atlas(), &Themes::from_json(THEMES).unwrap(), &req).unwrap_err();
    assert_eq!(err.code(), "TIMEOUT");
    let later = MapRequest { deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(3600)), ..req };
    assert!(render(&atlas(), &Themes::from_json(THEMES).unwrap(), &later).is_ok());
}

#[test]
fn a_link_is_a_line_between_its_two_points_across_both_bands() {
    let themes = Themes::from_json(THEMES).unwrap();
    let stroke = themes.get("light").unwrap().text;
    let (clat, clng, zoom) = (-30.0, -60.0, 5.0);
    let (a, b) = ((-28.6, -61.5), (-31.4, -58.5));
    let with = MapRequest { links: vec![[a, b]], ..request("light", Viewport::CenterZoom([clat, clng], zoom), vec![a, b]) };
    let without = request("light", Viewport::CenterZoom([clat, clng], zoom), vec![a, b]);
    let (img, plain) = (decode(&render(&atlas(), &themes, &with).unwrap()), decode(&render(&atlas(), &themes, &without).unwrap()));
    let (ax, ay) = expected_pixel(a.0, a.1, clat, clng, zoom, 400.0, 300.0);
    let (bx, by) = expected_pixel(b.0, b.1, clat, clng, zoom, 400.0, 300.0);
    assert!(ay < 150.0 && by > 150.0, "the line crosses the band boundary at row 150");
    let near = |p: [u8; 3], c: [u8; 3]| p.iter().zip(c).all(|(x, y)| (*x as i32 - y as i32).abs() <= 40);
    // Along the line, between the markers: the stroke colour, where the plain map has none.
    for t in [0.3, 0.5, 0.7] {
        let (x, y) = ((ax + (bx - ax) * t).round() as u32, (ay + (by - ay) * t).round() as u32);
        let on = (0..3).flat_map(|dx| (0..3).map(move |dy| (x + dx - 1, y + dy - 1))).any(|(x, y)| near(pixel(&img, x, y), stroke));
        assert!(on, "the line at t = {t} ({x}, {y})");
        assert!(!near(pixel(&plain, x, y), stroke), "no line without links at ({x}, {y})");
    }
    // Off the line: untouched.
    let (mx, my) = (((ax + bx) / 2.0) as u32 + 30, ((ay + by) / 2.0) as u32);
    assert_eq!(pixel(&img, mx, my), pixel(&plain, mx, my));
}

#[test]
fn rings_keep_every_group_visible_on_one_spot() {
    let themes = Themes::from_json(THEMES).unwrap();
    let spot = (-30.0, -60.0);
    let groups = || {
        vec![
            MarkerGroup { color: Some([255, 0, 0]), name: "A".into(), points: vec![spot] },
            MarkerGroup { color: Some([0, 0, 255]), name: "B".into(), points: vec![spot] },
        ]
    };
    let count = |rings: bool, c: [u8; 3]| {
        let req = MapRequest { rings, viewport: Viewport::CenterZoom([spot.0, spot.1], 5.0), ..MapRequest::new(400, 300, groups()) };
        let img = decode(&render(&atlas(), &themes, &req).unwrap());
        let near = |p: [u8; 3]| p.iter().zip(c).all(|(x, y)| (*x as i32 - y as i32).abs() <= 60);
        (0..300u32).flat_map(|y| (0..400u32).map(move |x| (x, y))).filter(|&(x, y)| near(pixel(&img, x, y))).count()
    };
    // Without rings the second group's marker covers the first's; with them both show.
    assert_eq!(count(false, [255, 0, 0]), 0);
    let (a, b) = (count(true, [255, 0, 0]), count(true, [0, 0, 255]));
    assert!(a >= 4 && b >= 4, "{a} red and {b} blue pixels");
}
