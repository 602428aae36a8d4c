//! A street map from vector tiles: the tiles a view needs (at the view's zoom, or the archive's
//! deepest one stretched), sorted into areas and lines, turned into outlines (lines stroked) and
//! drawn in a fixed order: the tile's own ground, land use, water, rivers, buildings, borders,
//! road casings, roads. They are drawn in cells of 512 pixels on the world's pixel grid, kept in
//! a cache bounded in bytes and copied into each image over the Natural Earth map: where the
//! archive has no tile, the cell is transparent and Natural Earth shows through, so a view across
//! the archive's edge has no seam of background colour.

use std::sync::Arc;

use tiny_skia::{FillRule, LineCap, LineJoin, Mask, Paint, Path, PathBuilder, Pixmap, PixmapMut, Stroke, StrokeDash, Transform};

use crate::cells::{Cell, CellCache, Cover};

use crate::camera::Camera;
use crate::theme::Theme;
use crate::tiles::classify::{Area, Line, Schema};
use crate::tiles::source::{TileShapes, VectorTiles};

/// The most tiles one image draws from: a 4096-pixel square at a tile's natural size of 512
/// pixels needs 81.
const MAX_TILES: usize = 100;

/// Roads of each class appear from these zooms (the service's 256-pixel zoom), as on common web
/// maps: streets at 12, paths and buildings at 14.
fn min_zoom(line: Line) -> f64 {
    match line {
        Line::Highway | Line::Major | Line::Boundary => 0.0,
        Line::Rail | Line::Waterway => 11.0,
        Line::Minor => 12.0,
        Line::Path => 14.0,
    }
}

const BUILDINGS_MIN_ZOOM: f64 = 14.0;

/// Paths are dashed from this zoom; thinner, further out, a dash pattern is noise (and costly).
const DASH_MIN_ZOOM: f64 = 16.0;

/// The smallest step between two points kept, in image pixels (Manhattan distance).
const MIN_STEP: f32 = 0.35;

/// Lines at least this wide get round joins and caps; thinner ones look the same with bevels
/// and butts, which stroke into far fewer edges.
const ROUND_MIN_WIDTH: f32 = 2.5;

/// A line's width in pixels at zoom 15 and scale 1; it grows by 2^0.7 a zoom level, so streets
/// widen as the map closes in, though slower than the ground does.
fn width_at_15(line: Line) -> f32 {
    match line {
        Line::Highway => 6.5,
        Line::Major => 5.0,
        Line::Minor => 3.0,
        Line::Path => 1.2,
        Line::Rail => 1.6,
        Line::Waterway => 2.5,
        Line::Boundary => 1.2,
    }
}

fn width(line: Line, zoom: f64, scale: f32) -> f32 {
    let w = match line {
        // Borders and paths keep a fine, steady line.
        Line::Boundary | Line::Path => width_at_15(line),
        _ => width_at_15(line) * 2f32.powf(0.7 * (zoom as f32 - 15.0)),
    };
    w.max(0.5) * scale
}

/// The zoom of the tiles a view draws from: vector tiles are drawn at 512 pixels, a zoom level
/// deeper than the 256-pixel zoom the service speaks (Mapbox and MapLibre do the same), capped
/// at the archive's deepest and stretched past it. None below the archive's shallowest.
pub fn tile_zoom(cam: &Camera, min: u8, max: u8) -> Option<u8> {
    let z = (cam.zoom + cam.scale.log2() - 1.0).floor().max(0.0);
    (z >= f64::from(min)).then(|| (z as u8).min(max))
}

/// The side of a cell, in image pixels: a street map is drawn in squares of the world's pixel
/// grid at the view's zoom, kept as images, so the next view over the same streets at the same
/// zoom (a store locator's pan, another brand in the same city) copies them instead of drawing
/// them again. 512 is a zoom-14 tile at zoom 15: a cell is then exactly one tile.
pub const CELL: u32 = 512;

/// A basemap archive with the cells drawn from it.
pub struct Streets {
    pub tiles: Arc<VectorTiles>,
    cells: CellCache,
}

impl Streets {
    /// The cells get a bound of their own as large as the decoded tiles': 64 MiB keeps 64
    /// cells, five 1200 x 800 views.
    pub fn new(tiles: Arc<VectorTiles>) -> Streets {
        let bytes = tiles.cache_bytes();
        Streets { tiles, cells: CellCache::new(CELL, bytes) }
    }
}

/// Draws one cell (its own camera) from the tiles under it; None when there are none.
fn draw_cell(source: &VectorTiles, cell_cam: &Camera, theme: &Theme) -> Option<Cell> {
    let (tiles, ts, whole) = view_tiles(source, cell_cam)?;
    let placed = place_tiles(&tiles, ts);
    let mut pixmap = Pixmap::new(CELL, CELL)?;
    // Features reach past their tile into a buffer; where the archive stops inside the cell they
    // are cut at the last tile's edge, so the Natural Earth map beside it is untouched.
    let mask = if whole {
        None
    } else {
        let mut pb = PathBuilder::new();
        for p in &placed {
            pb.push_rect(tiny_skia::Rect::from_xywh(p.ox as f32, p.oy as f32, ts as f32, ts as f32)?);
        }
        let mut m = Mask::new(CELL, CELL)?;
        m.fill_path(&pb.finish()?, FillRule::Winding, false, Transform::identity());
        Some(m)
    };
    let mut paint = Paint { anti_alias: true, ..Paint::default() };
    for (path, [r, g, b], a) in layers(source.schema, &placed, cell_cam, theme, ts) {
        paint.set_color_rgba8(r, g, b, a);
        pixmap.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), mask.as_ref());
    }
    Some(Cell::from_pixmap(pixmap))
}

/// The tiles a view needs that the archive has, each with the image pixel of its top-left
/// corner; the tile size in image pixels; and whether they cover the whole view. None when it
/// has none there (outside its bounds, below its shallowest zoom).
#[allow(clippy::type_complexity)]
fn view_tiles(source: &VectorTiles, cam: &Camera) -> Option<(Vec<(Arc<TileShapes>, f64, f64)>, f64, bool)> {
    let tz = tile_zoom(cam, source.min_zoom(), source.max_zoom())?;
    let n = 1u64 << tz;
    // Image pixels per tile.
    let ts = cam.k() * 256.0 / n as f64;
    // The last pixel's tile, not the one past the edge.
    let (vx0, vy0, vx1, vy1) = (cam.left / ts, cam.top / ts, (cam.left + cam.width as f64 - 0.5) / ts, (cam.top + cam.height as f64 - 0.5) / ts);
    // The archive's bounds, in tiles of this zoom.
    let [w, s, e, nth] = source.bounds();
    let (bx0, by0) = crate::camera::world(nth, w);
    let (bx1, by1) = crate::camera::world(s, e);
    let t = n as f64 / 256.0;
    // West past east is a box across the antimeridian (written so by some tools): outside it is
    // the gap between its east and west edges.
    let outside = |wx: f64| {
        let (west_of, east_of) = (wx + 1.0 < bx0 * t, wx > bx1 * t);
        if bx0 <= bx1 {
            west_of || east_of
        } else {
            west_of && east_of
        }
    };
    let ys = (vy0.floor().max((by0 * t).floor()).max(0.0) as i64)..=(vy1.floor().min((by1 * t).floor()).min(n as f64 - 1.0) as i64);
    let xs = vx0.floor() as i64..=vx1.floor() as i64;
    let mut tiles = Vec::new();
    let mut whole = (vy0.floor() as i64..=vy1.floor() as i64).all(|y| ys.contains(&y));
    for ty in ys {
        for tx in xs.clone() {
            let wx = tx.rem_euclid(n as i64);
            // Outside the archive's bounds (on this copy of the world): no tile to look for.
            let tile = if outside(wx as f64) || tiles.len() >= MAX_TILES { None } else { source.get(tz, wx as u32, ty as u32) };
            match tile {
                Some(tile) => tiles.push((tile, tx as f64 * ts - cam.left, ty as f64 * ts - cam.top)),
                None => whole = false,
            }
        }
    }
    (!tiles.is_empty()).then_some((tiles, ts, whole))
}

fn place_tiles(tiles: &[(Arc<TileShapes>, f64, f64)], ts: f64) -> Vec<Placed<'_>> {
    tiles.iter().map(|(t, ox, oy)| Placed { tile: t, ox: *ox, oy: *oy, f: ts / f64::from(t.extent.max(1)) }).collect()
}

/// One image's street map: its cells, ready to copy band by band, and the place names in view.
pub struct StreetPlan {
    cells: Cover,
    /// Place names from the tiles: name, rank (larger first), image pixel.
    pub places: Vec<(String, u32, (f32, f32))>,
}

/// One tile placed in the image: its shapes, the image pixel of its top-left corner and image
/// pixels per tile unit.
struct Placed<'a> {
    tile: &'a TileShapes,
    ox: f64,
    oy: f64,
    f: f64,
}

impl Placed<'_> {
    /// Adds parts to a path, skipping those wholly outside the image (grown by `margin`).
    fn push(&self, pb: &mut PathBuilder, parts: &[Vec<(i32, i32)>], close: bool, cam: &Camera, margin: f64) {
        let (w, h) = (cam.width as f64 + margin, cam.height as f64 + margin);
        for p in parts {
            let (mut x0, mut y0, mut x1, mut y1) = (i32::MAX, i32::MAX, i32::MIN, i32::MIN);
            for &(x, y) in p {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x);
                y1 = y1.max(y);
            }
            let (px0, py0) = (self.ox + f64::from(x0) * self.f, self.oy + f64::from(y0) * self.f);
            let (px1, py1) = (self.ox + f64::from(x1) * self.f, self.oy + f64::from(y1) * self.f);
            if px1 < -margin || py1 < -margin || px0 > w || py0 > h {
                continue;
            }
            // Points closer than a third of a pixel to the last one kept add edges to rasterize
            // and nothing to see: at zoom 15 a zoom-14 tile has eight units to the pixel.
            let mut last = (f32::NAN, f32::NAN);
            for (i, &(x, y)) in p.iter().enumerate() {
                let (px, py) = ((self.ox + f64::from(x) * self.f) as f32, (self.oy + f64::from(y) * self.f) as f32);
                if i == 0 {
                    pb.move_to(px, py);
                } else if i + 1 == p.len() || (px - last.0).abs() + (py - last.1).abs() >= MIN_STEP {
                    pb.line_to(px, py);
                } else {
                    continue;
                }
                last = (px, py);
            }
            if close {
                pb.close();
            }
        }
    }
}

impl StreetPlan {
    /// The street map of a view, or None when the archive has nothing for it. The camera's
    /// corner must be on a whole pixel (the renderer rounds it), so cells land on whole pixels
    /// and are copied, never resampled.
    pub fn new(streets: &Streets, cam: &Camera, theme: &Theme) -> Option<StreetPlan> {
        let (tiles, ts, _) = view_tiles(&streets.tiles, cam)?;
        let places = places(&place_tiles(&tiles, ts), cam);
        let cells = streets.cells.cover(cam, theme, &|cell_cam| draw_cell(&streets.tiles, cell_cam, theme));
        Some(StreetPlan { cells, places })
    }

    /// Copies the cells onto a band whose top row is row `y0` of the image: opaque cells row by
    /// row, others blended over the Natural Earth map beneath.
    pub fn draw(&self, band: &mut PixmapMut, y0: u32) {
        self.cells.draw(band, y0);
    }
}

fn area_color(a: Area, theme: &Theme) -> [u8; 3] {
    let s = &theme.streets;
    match a {
        Area::Earth => theme.land,
        Area::Urban => s.urban,
        Area::Park => s.park,
        Area::Wood => s.wood,
        Area::Water => theme.water,
        Area::Building => s.building,
    }
}

fn line_color(l: Line, theme: &Theme) -> [u8; 3] {
    let s = &theme.streets;
    match l {
        Line::Waterway => theme.water,
        Line::Boundary => theme.border,
        Line::Path => s.path,
        Line::Rail => s.rail,
        Line::Minor => s.road,
        Line::Major => s.major,
        Line::Highway => s.highway,
    }
}

fn has_casing(l: Line) -> bool {
    matches!(l, Line::Minor | Line::Major | Line::Highway)
}

fn lines_of(placed: &[Placed], l: Line, tunnel: bool, cam: &Camera, margin: f64) -> Option<Path> {
    let at = Line::ALL.iter().position(|&k| k == l).expect("every line is in ALL");
    let mut pb = PathBuilder::new();
    for p in placed {
        p.push(&mut pb, &p.tile.lines[at][usize::from(tunnel)], false, cam, margin);
    }
    pb.finish()
}

/// How a line is stroked: width in pixels, an on/off dash pattern, round joins and caps (else
/// bevels and butts).
#[derive(Debug, Clone, PartialEq)]
pub struct Pen {
    pub width: f32,
    pub dash: Option<[f32; 2]>,
    pub round: bool,
}

/// One drawing operation of a street map: a path filled (non-zero winding), or stroked with a
/// pen, in one colour and alpha. The order of a plan's operations is the drawing order.
#[derive(Debug, Clone)]
pub struct Op {
    pub path: Path,
    pub color: [u8; 3],
    pub alpha: u8,
    pub pen: Option<Pen>,
}

impl Op {
    /// The outline to fill: the path itself, or the stroke's outline.
    fn outline(self) -> Option<(Path, [u8; 3], u8)> {
        let path = match &self.pen {
            None => self.path,
            Some(pen) => {
                let (line_cap, line_join) = if pen.round { (LineCap::Round, LineJoin::Round) } else { (LineCap::Butt, LineJoin::Bevel) };
                let dash = pen.dash.and_then(|[on, off]| StrokeDash::new(vec![on, off], 0.0));
                self.path.stroke(&Stroke { width: pen.width, line_cap, line_join, dash, ..Stroke::default() }, 1.0)?
            }
        };
        Some((path, self.color, self.alpha))
    }
}

fn pen(width: f32) -> Option<Pen> {
    Some(Pen { width, dash: None, round: width >= ROUND_MIN_WIDTH })
}

fn layers(schema: Schema, placed: &[Placed], cam: &Camera, theme: &Theme, ts: f64) -> Vec<(Path, [u8; 3], u8)> {
    ops(schema, placed, cam, theme, ts).into_iter().filter_map(Op::outline).collect()
}

/// A street map's operations for a whole view, before stroking, in image pixels: what a peer
/// renderer is handed in the benchmark (`bench/streets.ts`), so that it draws exactly our
/// geometry. None where the archive has nothing for the view.
pub fn view_ops(streets: &Streets, cam: &Camera, theme: &Theme) -> Option<Vec<Op>> {
    let (tiles, ts, _) = view_tiles(&streets.tiles, cam)?;
    Some(ops(streets.tiles.schema, &place_tiles(&tiles, ts), cam, theme, ts))
}

fn ops(schema: Schema, placed: &[Placed], cam: &Camera, theme: &Theme, ts: f64) -> Vec<Op> {
    let z = cam.zoom;
    let s = cam.scale as f32;
    let mut out = Vec::new();
    let fill = |path: Path, color: [u8; 3]| Op { path, color, alpha: 255, pen: None };
    // The ground under the tile's own shapes: Protomaps tiles draw land (`earth`) over water;
    // OpenMapTiles tiles that carry the ocean draw everything over land. Tiles of an extract
    // made without the ocean (tilemaker without coastline files) leave the ground to Natural
    // Earth beneath.
    let ground = match schema {
        Schema::Protomaps => Some(theme.water),
        Schema::OpenMapTiles if placed.iter().any(|p| p.tile.ocean) => Some(theme.land),
        Schema::OpenMapTiles => None,
    };
    if let Some(color) = ground {
        let mut pb = PathBuilder::new();
        for p in placed.iter().filter(|p| schema == Schema::Protomaps || p.tile.ocean) {
            if let Some(r) = tiny_skia::Rect::from_xywh(p.ox as f32, p.oy as f32, ts as f32, ts as f32) {
                pb.push_rect(r);
            }
        }
        out.extend(pb.finish().map(|p| fill(p, color)));
    }
    for (i, &a) in Area::ALL.iter().enumerate() {
        if a == Area::Building && z < BUILDINGS_MIN_ZOOM {
            continue;
        }
        if a == Area::Building {
            // Rivers go under buildings and bridges: they are drawn here, after water.
            push_lines(&mut out, placed, &[Line::Waterway], cam, theme);
        }
        let mut pb = PathBuilder::new();
        for p in placed {
            p.push(&mut pb, &p.tile.areas[i], true, cam, 0.0);
        }
        out.extend(pb.finish().map(|p| fill(p, area_color(a, theme))));
    }
    if z < BUILDINGS_MIN_ZOOM {
        push_lines(&mut out, placed, &[Line::Waterway], cam, theme);
    }
    push_lines(&mut out, placed, &[Line::Boundary], cam, theme);
    // Tunnels faint and under everything else on the road.
    for &l in &[Line::Minor, Line::Major, Line::Highway, Line::Rail] {
        if z < min_zoom(l) {
            continue;
        }
        let w = width(l, z, s);
        if let Some(path) = lines_of(placed, l, true, cam, f64::from(w)) {
            out.push(Op { path, color: line_color(l, theme), alpha: 90, pen: pen(w) });
        }
    }
    // Every road's casing first, then the roads from the least to the most important, so a
    // junction of two streets shows no edge across it and a highway passes over a street.
    let roads = [Line::Path, Line::Rail, Line::Minor, Line::Major, Line::Highway];
    let open: Vec<(Line, Path)> =
        roads.iter().filter(|&&l| z >= min_zoom(l)).filter_map(|&l| lines_of(placed, l, false, cam, f64::from(width(l, z, s)) + 2.0).map(|p| (l, p))).collect();
    for (l, path) in &open {
        if has_casing(*l) {
            let w = width(*l, z, s);
            let edge = (0.12 * w).max(0.6 * s);
            out.push(Op { path: path.clone(), color: theme.streets.road_casing, alpha: 255, pen: pen(w + 2.0 * edge) });
        }
    }
    for (l, path) in open {
        let w = width(l, z, s);
        let mut p = pen(w);
        if l == Line::Path && z >= DASH_MIN_ZOOM {
            p = p.map(|p| Pen { dash: Some([3.0 * s, 2.0 * s]), ..p });
        }
        out.push(Op { path, color: line_color(l, theme), alpha: 255, pen: p });
    }
    out
}

fn push_lines(out: &mut Vec<Op>, placed: &[Placed], lines: &[Line], cam: &Camera, theme: &Theme) {
    let s = cam.scale as f32;
    for &l in lines {
        if cam.zoom < min_zoom(l) {
            continue;
        }
        let w = width(l, cam.zoom, s);
        if let Some(path) = lines_of(placed, l, false, cam, f64::from(w)) {
            out.push(Op { path, color: line_color(l, theme), alpha: 255, pen: pen(w) });
        }
    }
}

/// Place names in view, each once (a place near a tile's edge is in its neighbours' buffers
/// too), largest first.
fn places(placed: &[Placed], cam: &Camera) -> Vec<(String, u32, (f32, f32))> {
    let mut out: Vec<(String, u32, (f32, f32))> = Vec::new();
    for p in placed {
        for (name, rank, (x, y)) in &p.tile.places {
            let (px, py) = ((p.ox + f64::from(*x) * p.f) as f32, (p.oy + f64::from(*y) * p.f) as f32);
            if px < 0.0 || py < 0.0 || px > cam.width as f32 || py > cam.height as f32 {
                continue;
            }
            if out.iter().any(|(n, _, (qx, qy))| n == name && (qx - px).abs() < 64.0 && (qy - py).abs() < 64.0) {
                continue;
            }
            out.push((name.clone(), *rank, (px, py)));
        }
    }
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
