//! The offline basemap: country shapes drawn as land over water with country borders, and US
//! state lines. Rings are kept at several levels of detail in zoom-0 world pixels, so a world
//! map walks a few thousand points and a city map the full shapes of only the places in view.
//! City labels are `labels`'s; the shapes themselves, in degrees, are `shapes`'s.

use tiny_skia::{Color, FillRule, Paint, Path, PathBuilder, PixmapMut, Stroke, Transform};

use crate::camera::{world, Camera};
use crate::shapes::{simplify, Shape, Shapes};
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
    /// The ring at each level of detail, zoom-0 world pixels.
    lod: [Vec<(f32, f32)>; LEVELS],
}

/// Rings drawn as one path.
#[derive(Default)]
struct Layer {
    rings: Vec<Ring>,
}

/// The drawing layers: land (with country borders) and US state lines.
pub struct Basemap {
    land: Layer,
    states: Layer,
}

impl Layer {
    fn from_shapes(shapes: &[Shape]) -> Layer {
        let mut rings = Vec::new();
        for ring in shapes.iter().flat_map(|s| &s.polygons).flat_map(|p| &p.rings) {
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
            let mut bbox = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
            for &(x, y) in &pts {
                bbox = (bbox.0.min(x), bbox.1.min(y), bbox.2.max(x), bbox.3.max(y));
            }
            let copies = [(bbox.2 > 256.0).then_some(-256.0), (bbox.0 < 0.0).then_some(256.0)];
            for dx in std::iter::once(0.0).chain(copies.into_iter().flatten()) {
                let moved: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x + dx, y)).collect();
                let b = (bbox.0 + dx, bbox.1, bbox.2 + dx, bbox.3);
                rings.push(Ring { bbox: b, lod: LOD_TOLERANCE.map(|t| simplify(&moved, t)) });
            }
        }
        Layer { rings }
    }

    /// The rings in view, in image pixels, at the coarsest level that looks the same.
    fn path(&self, cam: &Camera) -> Option<Path> {
        let k = cam.k();
        let level = LOD_TOLERANCE.iter().position(|&t| t * k <= MAX_ERROR_PX).unwrap_or(LEVELS - 1);
        let (vx0, vy0, vx1, vy1) = cam.world_box();
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
        let mut pb = PathBuilder::new();
        for &dx in shifts {
            for r in &self.rings {
                if dx != 0.0 && (r.bbox.0 < 0.0 || r.bbox.2 > 256.0) {
                    continue;
                }
                if r.bbox.2 + dx < vx0 || r.bbox.0 + dx > vx1 || r.bbox.3 < vy0 || r.bbox.1 > vy1 {
                    continue;
                }
                if r.bbox.2 - r.bbox.0 < min_side && r.bbox.3 - r.bbox.1 < min_side {
                    continue;
                }
                push_ring(&mut pb, &r.lod[level], dx, k, cam);
            }
        }
        pb.finish()
    }
}

/// One ring into the path, `dx` zoom-0 pixels over.
fn push_ring(pb: &mut PathBuilder, pts: &[(f32, f32)], dx: f64, k: f64, cam: &Camera) {
    if pts.len() < 3 {
        return;
    }
    for (i, &(x, y)) in pts.iter().enumerate() {
        let (px, py) = (((x as f64 + dx) * k - cam.left) as f32, (y as f64 * k - cam.top) as f32);
        if i == 0 {
            pb.move_to(px, py);
        } else {
            pb.line_to(px, py);
        }
    }
    pb.close();
}

impl Basemap {
    /// The layers of these shapes, at every level of detail.
    pub fn new(shapes: &Shapes) -> Basemap {
        Basemap { land: Layer::from_shapes(&shapes.countries), states: Layer::from_shapes(&shapes.us_states) }
    }

    /// Draws land, state lines and country borders over the water colour the pixmap was
    /// filled with.
    pub fn draw(&self, pixmap: &mut PixmapMut, cam: &Camera, theme: &Theme) {
        let Some(land) = self.land.path(cam) else { return };
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        paint.set_color_rgba8(theme.land[0], theme.land[1], theme.land[2], 255);
        pixmap.fill_path(&land, &paint, FillRule::EvenOdd, Transform::identity(), None);
        if cam.zoom >= STATE_LINES_MIN_ZOOM {
            if let Some(states) = self.states.path(cam) {
                let [r, g, b] = theme.border;
                paint.set_color(Color::from_rgba8(r, g, b, 150));
                let stroke = Stroke { width: (0.5 * cam.scale) as f32, ..Stroke::default() };
                pixmap.stroke_path(&states, &paint, &stroke, Transform::identity(), None);
            }
        }
        paint.set_color_rgba8(theme.border[0], theme.border[1], theme.border[2], 255);
        let stroke = Stroke { width: (0.6 * cam.scale) as f32, ..Stroke::default() };
        pixmap.stroke_path(&land, &paint, &stroke, Transform::identity(), None);
    }
}
