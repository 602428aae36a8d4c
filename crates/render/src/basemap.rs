//! The offline basemap: country shapes drawn as land over water with country borders, the big
//! lakes as water again, and US state lines. Rings are kept at several levels of detail in
//! zoom-0 world pixels, so a world map walks a few thousand points and a city map the full
//! shapes of only the places in view.
//! City labels are `labels`'s; the shapes themselves, in degrees, are `shapes`'s.
//!
//! None of it changes between requests, so a Web Mercator map's background is copied from cells
//! drawn once per zoom, scale and theme (`cells`): only a view at a zoom nothing was drawn at
//! yet rasterizes paths.

use tiny_skia::{Color, FillRule, Paint, Path, PathBuilder, Pixmap, PixmapMut, Stroke, Transform};

use crate::camera::{world, Camera};
use crate::cells::{Cell, CellCache, Cover};
use crate::shapes::{open_at, simplify, Polygon, Shape, Shapes};
use crate::theme::Theme;

/// Simplification tolerances, in zoom-0 world pixels, for each level of detail; the last level
/// keeps every point. A view uses the coarsest level whose tolerance stays under
/// `MAX_ERROR_PX` image pixels.
const LOD_TOLERANCE: [f64; 9] = [0.3, 0.15, 0.07, 0.035, 0.017, 0.008, 0.004, 0.002, 0.0];
const LEVELS: usize = LOD_TOLERANCE.len();
const MAX_ERROR_PX: f64 = 1.0;

/// State lines appear from this zoom: below it they would be a grey smudge over the US.
const STATE_LINES_MIN_ZOOM: f64 = 3.0;

struct Ring {
    /// Bounding box in zoom-0 world pixels: x0, y0, x1, y1.
    bbox: (f64, f64, f64, f64),
    /// Whether a point lies on the antimeridian (a multiple of 256 world pixels): the
    /// reference borders cut shapes there (Russia at Chukotka, Fiji), and edges along the cut
    /// are no coast or border, so the stroke leaves them out (`push_outline`).
    seam: bool,
    /// The world-pixel row of the pole a ring that goes round the world is closed along (0 for
    /// the north, 256 for the south): no coast either, so not outlined.
    pole: Option<f32>,
    /// The ring at each level of detail, zoom-0 world pixels.
    lod: [Vec<(f32, f32)>; LEVELS],
}

/// Rings drawn as one path.
#[derive(Default)]
struct Layer {
    rings: Vec<Ring>,
}

/// The side of a basemap cell, in image pixels. Smaller cells waste less drawing on the parts of
/// edge cells outside a view the first time a zoom is drawn (a 1200 x 800 view covers 20 to 30
/// of them, 1.6 to 2 times its own pixels); larger ones cost fewer path walks per view.
pub const BASEMAP_CELL: u32 = 256;

/// Pixels drawn around a cell and cut away (see `Basemap::cover`).
const CELL_MARGIN: u32 = 4;

/// The basemap cells' bound when the operator gives none: 32 MiB, 128 cells of land, about five
/// 1200 x 800 views at different zooms (open water is kept in a few bytes a cell).
pub const DEFAULT_BASEMAP_CELL_BYTES: u64 = 32 << 20;

/// The drawing layers: land (with country borders) and US state lines, and the cells drawn
/// from them.
pub struct Basemap {
    land: Layer,
    /// Filled with the water's colour over the land, not outlined: the Caspian, which no
    /// country's land covers, has Natural Earth's coast already.
    lakes: Layer,
    states: Layer,
    cells: CellCache,
}

impl Layer {
    fn from_shapes(shapes: &[Shape]) -> Layer {
        Layer::from_polygons(shapes.iter().flat_map(|s| &s.polygons))
    }

    fn from_polygons<'a>(polygons: impl Iterator<Item = &'a Polygon>) -> Layer {
        let mut rings = Vec::new();
        for ring in polygons.flat_map(|p| &p.rings) {
            // A ring that crosses the antimeridian (Fiji, Chukotka) would draw an edge across the
            // whole world: its longitudes are made continuous instead, and the part that then
            // lies beyond ±180 is drawn a second time one world-width over.
            let mut pts: Vec<(f64, f64)> = Vec::with_capacity(ring.len());
            let mut shift = 0.0;
            for (i, &(lng, lat)) in ring.iter().enumerate() {
                if i > 0 {
                    let d = lng - ring[i - 1].0;
                    if d > 180.0 {
                        shift -= 360.0;
                    } else if d < -180.0 {
                        shift += 360.0;
                    }
                }
                pts.push(world(lat, lng + shift));
            }
            // A ring that goes once round the world (Antarctica's: the reference's coast runs from
            // -180 to 180 and back to its start) encloses a pole; closed straight back along its
            // start's latitude it left the land between there and the pole as sea (84.35 S to
            // the map's edge). It is closed round the pole instead, along the map's edge, where
            // its outline is left out with the antimeridian's (so only a ring that starts on the
            // antimeridian, as the reference's are cut, is closed so).
            let mut pole = None;
            if let (Some(&(x0, y0)), Some(&(x1, _))) = (pts.first(), pts.last()) {
                if (x1 - x0).abs() > 255.0 && on_antimeridian(x0) {
                    let y = if y0 > 128.0 { 256.0 } else { 0.0 };
                    pts.extend([(x1, y), (x0, y)]);
                    pole = Some(y as f32);
                }
            }
            let mut bbox = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
            for &(x, y) in &pts {
                bbox = (bbox.0.min(x), bbox.1.min(y), bbox.2.max(x), bbox.3.max(y));
            }
            let copies = [(bbox.2 > 256.0).then_some(-256.0), (bbox.0 < 0.0).then_some(256.0)];
            let seam = pts.iter().any(|&(x, _)| on_antimeridian(x));
            for dx in std::iter::once(0.0).chain(copies.into_iter().flatten()) {
                let moved: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x + dx, y)).collect();
                let b = (bbox.0 + dx, bbox.1, bbox.2 + dx, bbox.3);
                rings.push(Ring { bbox: b, seam, pole, lod: LOD_TOLERANCE.map(|t| simplify(&moved, t)) });
            }
        }
        Layer { rings }
    }

    /// The rings in view, in image pixels, at the coarsest level that looks the same, as the
    /// path to fill and, when a ring in view is cut at the antimeridian, the path to stroke
    /// (None: stroke the fill's). Rings up to a pixel outside the view are kept: their
    /// border's anti-aliased edge reaches in.
    fn path(&self, cam: &Camera) -> Option<(Path, Option<Path>)> {
        let k = cam.k();
        let level = LOD_TOLERANCE.iter().position(|&t| t * k <= MAX_ERROR_PX).unwrap_or(LEVELS - 1);
        let (vx0, vy0, vx1, vy1) = cam.world_box();
        let m = 1.0 / k;
        let (vx0, vy0, vx1, vy1) = (vx0 - m, vy0 - m, vx1 + m, vy1 + m);
        // Rings smaller than this on screen would cover no more than a pixel: skipped.
        let min_side = 0.8 / k;
        // A view past the world's edge (across the antimeridian) shows the rings of the world's
        // own range again one world over; rings drawn across the seam already have their copy.
        // A view a world wide or more draws the world once, as it always has.
        let shifts: &[f64] = match (vx0 < 0.0, vx1 > 256.0) {
            _ if vx1 - vx0 >= 256.0 => &[0.0],
            (false, false) => &[0.0],
            (true, false) => &[0.0, -256.0],
            (false, true) => &[0.0, 256.0],
            (true, true) => &[0.0, -256.0, 256.0],
        };
        // Rings reaching past the image are cut to a box this far around it: the rasterizer
        // then sees only the edges it draws (a country's whole coast for each cell of a city
        // view, before), and the box's own sides, where the cut adds edges, stay out of sight
        // under any border width.
        let m = (CLIP_MARGIN * cam.scale) as f32;
        let clip = [-m, -m, cam.width as f32 + m, cam.height as f32 + m];
        let visible = |r: &Ring, dx: f64| {
            !(dx != 0.0 && (r.bbox.0 < 0.0 || r.bbox.2 > 256.0))
                && !(r.bbox.2 + dx < vx0 || r.bbox.0 + dx > vx1 || r.bbox.3 < vy0 || r.bbox.1 > vy1)
                && !(r.bbox.2 - r.bbox.0 < min_side && r.bbox.3 - r.bbox.1 < min_side)
        };
        // The antimeridian's image columns: where a world-pixel x that is a multiple of 256 lands.
        let world_px = 256.0 * k;
        let on_seam = |x: f32| {
            let w = x as f64 + cam.left;
            ((w / world_px).round() * world_px - w).abs() < 0.02
        };
        let seams = shifts.iter().any(|&dx| self.rings.iter().any(|r| r.seam && visible(r, dx)));
        let mut pb = PathBuilder::new();
        let mut sb = PathBuilder::new();
        let mut bufs = (Vec::new(), Vec::new());
        let mut drawn: Vec<(f32, f32)> = Vec::new();
        for &dx in shifts {
            for r in &self.rings {
                if !visible(r, dx) {
                    continue;
                }
                let px = |(x, y): (f32, f32)| (((x as f64 + dx) * k - cam.left) as f32, (y as f64 * k - cam.top) as f32);
                let inside = {
                    let ((x0, y0), (x1, y1)) = (px((r.bbox.0 as f32, r.bbox.1 as f32)), px((r.bbox.2 as f32, r.bbox.3 as f32)));
                    x0 >= clip[0] && y0 >= clip[1] && x1 <= clip[2] && y1 <= clip[3]
                };
                let pts = &r.lod[level];
                drawn.clear();
                if inside {
                    drawn.extend(pts.iter().map(|&p| px(p)));
                } else {
                    drawn.extend_from_slice(clip_ring(pts.iter().map(|&p| px(p)), clip, &mut bufs));
                }
                push_ring(&mut pb, drawn.iter().copied());
                if seams {
                    // The pole's row in image pixels: edges along it close the ring, as the
                    // antimeridian's do, and the clipping above may have moved their ends off
                    // the antimeridian's columns.
                    let pole = r.pole.map(|y| (y as f64 * k - cam.top) as f32);
                    let on_pole = |y: f32| pole.is_some_and(|p| (p - y).abs() < 0.02);
                    let cut = |a: (f32, f32), b: (f32, f32)| r.seam && ((on_seam(a.0) && on_seam(b.0)) || (on_pole(a.1) && on_pole(b.1)));
                    push_outline(&mut sb, &drawn, &cut);
                }
            }
        }
        Some((pb.finish()?, if seams { sb.finish() } else { None }))
    }
}

/// Whether a zoom-0 world-pixel x is on the antimeridian (a multiple of 256).
fn on_antimeridian(x: f64) -> bool {
    ((x / 256.0).round() * 256.0 - x).abs() < 1e-6
}

/// One ring's outline into the path: the ring, less the edges `cut` names (those along the
/// antimeridian and the pole, see `Ring::seam` and `Ring::pole`).
fn push_outline(pb: &mut PathBuilder, pts: &[(f32, f32)], cut: &dyn Fn((f32, f32), (f32, f32)) -> bool) {
    if pts.len() < 3 {
        return;
    }
    let Some(runs) = open_at(pts, cut) else {
        push_ring(pb, pts.iter().copied());
        return;
    };
    for run in runs {
        pb.move_to(run[0].0, run[0].1);
        for &(x, y) in &run[1..] {
            pb.line_to(x, y);
        }
    }
}

/// Image pixels around the view (at scale 1) that rings are cut to: past any border's width
/// and its anti-aliased edge.
const CLIP_MARGIN: f64 = 4.0;

/// One ring into the path.
fn push_ring(pb: &mut PathBuilder, pts: impl ExactSizeIterator<Item = (f32, f32)>) {
    if pts.len() < 3 {
        return;
    }
    for (i, (x, y)) in pts.enumerate() {
        if i == 0 {
            pb.move_to(x, y);
        } else {
            pb.line_to(x, y);
        }
    }
    pb.close();
}

/// The two point lists a ring is cut between, kept from ring to ring.
type ClipBuffers = (Vec<(f32, f32)>, Vec<(f32, f32)>);

/// A ring cut to a box [x0, y0, x1, y1] (Sutherland-Hodgman, one side at a time): inside the
/// box it is the same ring, so it fills the same pixels there under either fill rule; where it
/// left the box it runs along the box's sides instead.
fn clip_ring(pts: impl Iterator<Item = (f32, f32)>, [x0, y0, x1, y1]: [f32; 4], (a, b): &mut ClipBuffers) -> &[(f32, f32)] {
    a.clear();
    a.extend(pts);
    for side in 0..4 {
        if a.is_empty() {
            break;
        }
        b.clear();
        let inside = |(x, y): (f32, f32)| match side {
            0 => x >= x0,
            1 => x <= x1,
            2 => y >= y0,
            _ => y <= y1,
        };
        // Where the segment p-q crosses this side's line.
        let cross = |(px, py): (f32, f32), (qx, qy): (f32, f32)| {
            let (px, py, qx, qy) = (px as f64, py as f64, qx as f64, qy as f64);
            let at = |v: f64, p: f64, q: f64| ((v - p) / (q - p)).clamp(0.0, 1.0);
            match side {
                0 | 1 => {
                    let v = if side == 0 { x0 } else { x1 } as f64;
                    (v as f32, (py + (qy - py) * at(v, px, qx)) as f32)
                }
                _ => {
                    let v = if side == 2 { y0 } else { y1 } as f64;
                    ((px + (qx - px) * at(v, py, qy)) as f32, v as f32)
                }
            }
        };
        let mut prev = a[a.len() - 1];
        for &cur in a.iter() {
            match (inside(prev), inside(cur)) {
                (true, true) => b.push(cur),
                (true, false) => b.push(cross(prev, cur)),
                (false, true) => {
                    b.push(cross(prev, cur));
                    b.push(cur);
                }
                (false, false) => {}
            }
            prev = cur;
        }
        std::mem::swap(a, b);
    }
    a
}

impl Basemap {
    /// The layers of these shapes, at every level of detail.
    pub fn new(shapes: &Shapes, cell_bytes: u64) -> Basemap {
        Basemap {
            land: Layer::from_shapes(&shapes.countries),
            lakes: Layer::from_polygons(shapes.lakes.iter()),
            states: Layer::from_shapes(&shapes.us_states),
            cells: CellCache::new(BASEMAP_CELL, cell_bytes),
        }
    }

    /// The background of a view (its corner on whole pixels): water, land, state lines and
    /// borders, from the cells already drawn at its zoom, scale and theme and those drawn now.
    pub fn cover(&self, cam: &Camera, theme: &Theme) -> Cover {
        self.cells.cover(cam, theme, &|cell_cam| {
            // Drawn with a margin and cut out of it: a border crossing a cell's edge is clipped
            // there with an anti-aliased end of its own, which a border drawn through would not
            // have, and pixels along the cells' seams would show it.
            let m = CELL_MARGIN;
            let (w, h) = (cell_cam.width + 2 * m, cell_cam.height + 2 * m);
            let big = Camera { left: cell_cam.left - f64::from(m), top: cell_cam.top - f64::from(m), width: w, height: h, ..*cell_cam };
            let mut p = Pixmap::new(w, h)?;
            p.fill(Color::from_rgba8(theme.water[0], theme.water[1], theme.water[2], 255));
            self.draw(&mut p.as_mut(), &big, theme);
            let mut cell = Pixmap::new(cell_cam.width, cell_cam.height)?;
            let (row, from) = (cell_cam.width as usize * 4, w as usize * 4);
            for (y, out) in cell.data_mut().chunks_exact_mut(row).enumerate() {
                let s = (y + m as usize) * from + m as usize * 4;
                out.copy_from_slice(&p.data()[s..s + row]);
            }
            Some(Cell::from_pixmap(cell))
        })
    }

    /// The US state lines from these shapes, the rest as it is (the drawn cells forgotten).
    pub fn set_us_states(&mut self, states: &[Shape]) {
        self.states = Layer::from_shapes(states);
        self.set_cell_bytes(self.cells.bound());
    }

    /// The lakes from these polygons, the rest as it is (the drawn cells forgotten).
    pub fn set_lakes(&mut self, lakes: &[Polygon]) {
        self.lakes = Layer::from_polygons(lakes.iter());
        self.set_cell_bytes(self.cells.bound());
    }

    /// Bytes the drawn cells hold, and their bound.
    pub fn cell_bytes(&self) -> (u64, u64) {
        (self.cells.weight(), self.cells.bound())
    }

    /// Forgets every drawn cell and keeps at most `bytes` from now on (0: none).
    pub fn set_cell_bytes(&mut self, bytes: u64) {
        self.cells = CellCache::new(BASEMAP_CELL, bytes);
    }

    /// Draws land, state lines and country borders over the water colour the pixmap was
    /// filled with.
    pub fn draw(&self, pixmap: &mut PixmapMut, cam: &Camera, theme: &Theme) {
        let Some((land, coasts)) = self.land.path(cam) else { return };
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        paint.set_color_rgba8(theme.land[0], theme.land[1], theme.land[2], 255);
        pixmap.fill_path(&land, &paint, FillRule::EvenOdd, Transform::identity(), None);
        if let Some((lakes, _)) = self.lakes.path(cam) {
            paint.set_color_rgba8(theme.water[0], theme.water[1], theme.water[2], 255);
            pixmap.fill_path(&lakes, &paint, FillRule::EvenOdd, Transform::identity(), None);
        }
        if cam.zoom >= STATE_LINES_MIN_ZOOM {
            if let Some((states, lines)) = self.states.path(cam) {
                let [r, g, b] = theme.border;
                paint.set_color(Color::from_rgba8(r, g, b, 150));
                let stroke = Stroke { width: (0.5 * cam.scale) as f32, ..Stroke::default() };
                pixmap.stroke_path(lines.as_ref().unwrap_or(&states), &paint, &stroke, Transform::identity(), None);
            }
        }
        paint.set_color_rgba8(theme.border[0], theme.border[1], theme.border[2], 255);
        let stroke = Stroke { width: (0.6 * cam.scale) as f32, ..Stroke::default() };
        pixmap.stroke_path(coasts.as_ref().unwrap_or(&land), &paint, &stroke, Transform::identity(), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Viewport;
    use crate::shapes::test_shapes as shapes;
    use tiny_skia::Pixmap;

    fn theme() -> Theme {
        let themes = crate::theme::Themes::from_json(include_str!("../../../data/themes.json")).unwrap();
        *themes.get("light").unwrap()
    }

    /// Antarctica is land to the map's southern edge: its ring runs once round the world and
    /// is closed round the pole, not back along 84.35 S; and the pole's edge is not outlined.
    #[test]
    fn antarctica_is_land_to_the_edge_of_the_map() {
        let theme = theme();
        let map = Basemap::new(&shapes(), 0);
        let cam = Camera::new(Viewport::CenterZoom([0.0, 0.0], 2.0), &[], 1024, 1024, 1.0);
        assert_eq!((cam.left, cam.top), (0.0, 0.0), "the whole world, top to bottom");
        let mut p = Pixmap::new(1024, 1024).unwrap();
        p.fill(Color::from_rgba8(theme.water[0], theme.water[1], theme.water[2], 255));
        map.draw(&mut p.as_mut(), &cam, &theme);
        // 84.35 S lies at row 1002 at zoom 2 (Web Mercator worked out here); the rows from 84.6 S
        // to the last are land (but where the Ross Sea's grounding line dips past it, 170-155
        // W: columns 20-79 are left out), with no outline along the edge.
        let y = |lat: f64| (1.0 - (lat.to_radians().tan() + 1.0 / lat.to_radians().cos()).ln() / std::f64::consts::PI) / 2.0 * 1024.0;
        assert_eq!(y(-84.35).floor(), 1002.0);
        assert_eq!(y(-84.6).floor(), 1009.0);
        for row in 1010..1024 {
            for x in (2..1022).step_by(17).filter(|x| !(20..80).contains(x)) {
                let px = p.pixel(x, row).unwrap();
                assert_eq!([px.red(), px.green(), px.blue()], theme.land, "({x}, {row}) is not land");
            }
        }
        // A served map is drawn in cells, each cutting the ring to its box, which moves the
        // pole edge's ends off the antimeridian: at zoom 1 the world's bottom (row 512) lies
        // inside a 1200 x 800 image, and the row above it is land, not outlined, there too.
        let mut cam = Camera::new(Viewport::CenterZoom([-60.0, 0.0], 1.0), &[], 1200, 800, 1.0);
        // On whole pixels, as render.rs places a served map.
        (cam.left, cam.top) = (cam.left.round(), cam.top.round());
        let bottom = 512.0 - cam.top;
        assert!(bottom > 400.0 && bottom < 790.0 && bottom.fract() == 0.0, "the world's bottom at row {bottom}");
        let mut p = Pixmap::new(1200, 800).unwrap();
        map.cover(&cam, &theme).draw(&mut p.as_mut(), 0);
        let row = bottom as u32 - 1;
        let mut checked = 0;
        for x in (0..1200).step_by(7) {
            // Longitude of the column (the world repeats across 1200 pixels); the Ross Sea's
            // dip, 175-150 W, left out.
            let lng = ((x as f64 + cam.left) / 512.0).rem_euclid(1.0) * 360.0 - 180.0;
            if (-175.0..-150.0).contains(&lng) {
                continue;
            }
            let px = p.pixel(x, row).unwrap();
            assert_eq!([px.red(), px.green(), px.blue()], theme.land, "({x}, {row}), {lng:.1} E, is not land");
            checked += 1;
        }
        assert!(checked > 150);
    }

    /// A background copied from cells is the background drawn whole, but for the rounding of
    /// f32 coordinates at other offsets (a few pixels in ten thousand, anywhere): a cell is drawn
    /// on the image's own pixel grid, rings just outside it still lay their anti-aliased border
    /// into it, and borders crossing its edge are drawn through it, so its seams show nothing.
    /// Cells copied from the cache and cells drawn with none kept give the same bytes. Views at
    /// odd zooms, across the antimeridian, at scale 2.
    #[test]
    fn cells_give_the_background_drawn_whole() {
        let (shapes, theme) = (shapes(), theme());
        let views = [
            (Viewport::CenterZoom([20.0, 0.0], 2.637), 1200, 800, 1.0),
            (Viewport::CenterZoom([39.0, -97.0], 4.31), 1200, 800, 1.0),
            (Viewport::CenterZoom([48.0, 9.0], 5.77), 640, 480, 2.0),
            (Viewport::Bounds([50.0, 170.0, 72.0, -130.0]), 900, 500, 1.0),
            (Viewport::CenterZoom([-45.0, -120.0], 3.0), 300, 200, 1.0),
        ];
        let (kept, none) = (Basemap::new(&shapes, DEFAULT_BASEMAP_CELL_BYTES), Basemap::new(&shapes, 0));
        for (vp, w, h, scale) in views {
            let mut cam = Camera::new(vp, &[], w, h, scale);
            (cam.left, cam.top) = (cam.left.round(), cam.top.round());
            let (w, h) = (cam.width as usize, cam.height as usize);
            let mut whole = Pixmap::new(cam.width, cam.height).unwrap();
            whole.fill(Color::from_rgba8(theme.water[0], theme.water[1], theme.water[2], 255));
            kept.draw(&mut whole.as_mut(), &cam, &theme);
            let from_cells = |map: &Basemap| {
                let mut p = Pixmap::new(cam.width, cam.height).unwrap();
                let cover = map.cover(&cam, &theme);
                cover.draw(&mut p.as_mut(), 0);
                // The image made of the cells row by row is the cells drawn onto an empty one.
                assert!(cover.image(cam.width, cam.height) == p.data(), "{vp:?}: the cells' image differs from the cells drawn");
                p
            };
            // Drawn into the cache, then copied from it; and drawn with nothing kept.
            let (first, again, uncached) = (from_cells(&kept), from_cells(&kept), from_cells(&none));
            assert!(first.data() == again.data() && first.data() == uncached.data(), "{vp:?}: cached cells differ from drawn ones");
            let side = BASEMAP_CELL as i64;
            let on_seam = |i: usize| {
                let (gx, gy) = (((i % w) as i64 + cam.left as i64).rem_euclid(side), ((i / w) as i64 + cam.top as i64).rem_euclid(side));
                gx <= 1 || gx >= side - 2 || gy <= 1 || gy >= side - 2
            };
            let off: Vec<usize> = (0..w * h).filter(|&i| (0..4).any(|c| whole.data()[i * 4 + c].abs_diff(first.data()[i * 4 + c]) > 1)).collect();
            let seam = (0..w * h).filter(|&i| on_seam(i)).count();
            let off_seam = off.iter().filter(|&&i| on_seam(i)).count();
            assert!(off.len() * 2500 <= w * h, "{vp:?}: {} of {} pixels differ", off.len(), w * h);
            assert!(off_seam * 330 <= seam, "{vp:?}: {off_seam} of {seam} pixels along the cells' seams differ");
        }
    }

    /// Under a bound of a few cells, a run of views at several zooms and two themes keeps within
    /// it (evicting), and every map is still the one drawn with nothing kept: no cell of another
    /// theme, zoom or place is ever copied in.
    #[test]
    fn cells_stay_within_their_bound_and_are_never_another_maps() {
        let shapes = shapes();
        let themes = crate::theme::Themes::from_json(include_str!("../../../data/themes.json")).unwrap();
        let (light, dark) = (*themes.get("light").unwrap(), *themes.get("dark").unwrap());
        assert_ne!(light.land, dark.land);
        let bound = 6 * u64::from(BASEMAP_CELL * BASEMAP_CELL * 4);
        let (kept, none) = (Basemap::new(&shapes, bound), Basemap::new(&shapes, 0));
        let mut most = 0;
        for round in 0..2 {
            for (i, zoom) in [3.0, 3.0625, 4.5, 3.0].into_iter().enumerate() {
                for theme in [light, dark] {
                    let mut cam = Camera::new(Viewport::CenterZoom([45.0, 10.0 + i as f64], zoom), &[], 600, 400, 1.0);
                    (cam.left, cam.top) = (cam.left.round(), cam.top.round());
                    let draw = |map: &Basemap| {
                        let mut p = Pixmap::new(600, 400).unwrap();
                        map.cover(&cam, &theme).draw(&mut p.as_mut(), 0);
                        p
                    };
                    assert!(draw(&kept).data() == draw(&none).data(), "round {round}, zoom {zoom}: a kept cell is not this map's");
                    let (held, max) = kept.cell_bytes();
                    assert_eq!(max, bound);
                    assert!(held <= bound, "{held} bytes held over a bound of {bound}");
                    most = most.max(held);
                }
            }
        }
        // A 600 x 400 view covers 6 to 12 cells: the cache filled up and had to let cells go.
        assert!(most > bound / 2, "the cache never filled: {most} bytes");
        assert_eq!(none.cell_bytes().0, 0);
    }

    /// A ring cut to a box around the image fills and outlines the same pixels as the whole
    /// ring: a star leaving the image on every side, a comb whose teeth leave and come back, a
    /// ring around the whole image, one wholly outside; even-odd as land is filled, and stroked
    /// as borders are.
    #[test]
    fn rings_cut_to_the_view_draw_what_the_whole_rings_draw() {
        let (w, h) = (160u32, 120u32);
        let star: Vec<(f32, f32)> = (0..14)
            .map(|i| {
                let (a, r) = (i as f32 * std::f32::consts::PI / 7.0, if i % 2 == 0 { 150.0 } else { 35.0 });
                (80.3 + r * a.cos(), 60.7 + r * a.sin())
            })
            .collect();
        let mut comb = vec![(-50.0, 100.0)];
        for i in 0..8 {
            let x = 10.0 + i as f32 * 19.3;
            comb.extend([(x, 100.0), (x, -40.0), (x + 9.1, -40.0), (x + 9.1, 100.0)]);
        }
        comb.extend([(230.0, 100.0), (230.0, 140.0), (-50.0, 140.0)]);
        let around = vec![(-500.0, -400.0), (700.0, -420.0), (650.0, 500.0), (-480.0, 520.0)];
        let outside = vec![(200.0, 10.0), (260.0, 15.0), (230.0, 90.0)];
        let m = CLIP_MARGIN as f32;
        let clip = [-m, -m, w as f32 + m, h as f32 + m];
        for (name, ring) in [("star", star), ("comb", comb), ("around", around), ("outside", outside)] {
            let draw = |pts: &[(f32, f32)]| {
                let mut p = Pixmap::new(w, h).unwrap();
                p.fill(Color::WHITE);
                let mut pb = PathBuilder::new();
                push_ring(&mut pb, pts.iter().copied());
                if let Some(path) = pb.finish() {
                    let mut paint = Paint { anti_alias: true, ..Paint::default() };
                    paint.set_color_rgba8(40, 90, 160, 255);
                    p.fill_path(&path, &paint, FillRule::EvenOdd, Transform::identity(), None);
                    paint.set_color_rgba8(200, 30, 30, 255);
                    p.stroke_path(&path, &paint, &Stroke { width: 0.6, ..Stroke::default() }, Transform::identity(), None);
                }
                p
            };
            let mut bufs = (Vec::new(), Vec::new());
            let cut = clip_ring(ring.iter().copied(), clip, &mut bufs).to_vec();
            let (whole, part) = (draw(&ring), draw(&cut));
            let worst = whole.data().iter().zip(part.data()).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            assert!(worst <= 2, "{name}: a channel off by {worst}");
            if name == "outside" {
                assert!(cut.is_empty(), "a ring outside the box leaves nothing: {cut:?}");
            }
        }
    }
}
