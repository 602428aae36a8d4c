//! Draws one map over and over and prints the time per image, for profiling the renderer alone
//! (under `perf record --call-graph dwarf`, say):
//! `cargo run --release -p storemap-render --example scene -- REFERENCE_DIR data/themes.json
//! FONT POINTS_CSV [N] [WxH]`, the points as `lat,lng` lines. The first image is written to the
//! temporary folder, to look at. `SCENE_CELL_BYTES=0` keeps no basemap cells;
//! `SCENE_HEATMAP=1` draws a heatmap; `SCENE_FOCUS=US` a focus map of that country's contiguous
//! part (transparent, the default colours).
use std::time::Instant;

use storemap_render::{parse_hex, render, Atlas, FocusSpec, MapRequest, MarkerGroup, Themes, FOCUS_FILL, FOCUS_OUTLINE, FOCUS_OUTLINE_WIDTH};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let dir = std::path::Path::new(&a[1]);
    let text = |p: &std::path::Path| std::fs::read_to_string(p).unwrap();
    let atlas = Atlas::from_geojson(&text(&dir.join("countries.geojson")))
        .unwrap()
        .with_us_states(&text(&dir.join("us_states.geojson")))
        .unwrap()
        .with_lakes(&text(&dir.join("lakes.geojson")))
        .unwrap()
        .with_cities_csv(&text(&dir.join("cities.csv")))
        .unwrap()
        .with_font(&std::fs::read(&a[3]).unwrap())
        .unwrap()
        // SCENE_CELL_BYTES=0: every background drawn afresh, as the first map at a zoom is.
        .with_basemap_cell_bytes(std::env::var("SCENE_CELL_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(storemap_render::DEFAULT_BASEMAP_CELL_BYTES));
    let themes = Themes::from_json(&text(std::path::Path::new(&a[2]))).unwrap();
    let points: Vec<(f64, f64)> =
        text(std::path::Path::new(&a[4])).lines().filter_map(|l| l.split_once(',').map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))).collect();
    let n: usize = a.get(5).map_or(100, |s| s.parse().unwrap());
    let (w, h) = a.get(6).and_then(|s| s.split_once('x')).map_or((1200, 800), |(w, h)| (w.parse().unwrap(), h.parse().unwrap()));
    let mut req = MapRequest::new(w, h, vec![MarkerGroup { color: None, name: "x".into(), points }]);
    req.heatmap = std::env::var("SCENE_HEATMAP").is_ok();
    let rgb = |hex: &str| parse_hex(hex).unwrap();
    req.focus = std::env::var("SCENE_FOCUS").ok().map(|country| FocusSpec {
        country,
        mainland_only: false,
        conus: true,
        regions: Vec::new(),
        territories: Vec::new(),
        fill: rgb(FOCUS_FILL),
        outline: rgb(FOCUS_OUTLINE),
        outline_width: FOCUS_OUTLINE_WIDTH,
        background: None,
    });
    let bytes = render(&atlas, &themes, &req).unwrap();
    let out = std::env::temp_dir().join("storemap-scene.png");
    std::fs::write(&out, &bytes).unwrap();
    println!("{}", out.display());
    let t = Instant::now();
    for _ in 0..n {
        render(&atlas, &themes, &req).unwrap();
    }
    println!("{:.2} ms per image, {} bytes", t.elapsed().as_secs_f64() * 1000.0 / n as f64, bytes.len());
    let (held, bound) = atlas.basemap_cell_bytes();
    println!("basemap cells: {:.1} of {:.0} MiB", held as f64 / 1048576.0, bound as f64 / 1048576.0);
}
