//! The offline basemap: country shapes (Natural Earth, as the reference step extracts them)
//! drawn as land over water with country borders. Rings are kept at several levels of detail
//! in zoom-0 world pixels, so a world map walks a few thousand points and a city map the full
//! shapes of only the countries in view.

use tiny_skia::{FillRule, Paint, PathBuilder, Pixmap, Stroke, Transform};

use crate::camera::{world, Camera};
use crate::error::{RenderError, Result};
use crate::theme::Theme;

/// Simplification tolerances, in zoom-0 world pixels, for each level of detail; the last level
/// keeps every point.
const LOD_TOLERANCE: [f64; 4] = [0.15, 0.04, 0.008, 0.0];

struct Ring {
    /// Bounding box in zoom-0 world pixels: x0, y0, x1, y1.
    bbox: (f64, f64, f64, f64),
    /// The ring at each level of detail, zoom-0 world pixels.
    lod: [Vec<(f32, f32)>; 4],
}

pub struct Basemap {
    rings: Vec<Ring>,
}

/// Radial-distance thinning: drops points closer than `tol` to the last kept one.
fn thin(points: &[(f64, f64)], tol: f64) -> Vec<(f32, f32)> {
    let mut out: Vec<(f32, f32)> = Vec::with_capacity(if tol == 0.0 { points.len() } else { 16 });
    let mut last: Option<(f64, f64)> = None;
    for (i, &p) in points.iter().enumerate() {
        let keep = i == 0 || i + 1 == points.len() || last.is_none_or(|l| (p.0 - l.0).hypot(p.1 - l.1) >= tol);
        if keep {
            out.push((p.0 as f32, p.1 as f32));
            last = Some(p);
        }
    }
    out
}

impl Basemap {
    /// From a GeoJSON FeatureCollection of Polygon/MultiPolygon features.
    pub fn from_geojson(text: &str) -> Result<Basemap> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| RenderError::Shapes(e.to_string()))?;
        let features = v.get("features").and_then(|f| f.as_array()).ok_or_else(|| RenderError::Shapes("no features".into()))?;
        let mut rings = Vec::new();
        for f in features {
            let Some(g) = f.get("geometry") else { continue };
            let Some(coords) = g.get("coordinates").and_then(|c| c.as_array()) else { continue };
            let polygons: Vec<&serde_json::Value> = match g.get("type").and_then(|t| t.as_str()) {
                Some("Polygon") => vec![g.get("coordinates").unwrap()],
                Some("MultiPolygon") => coords.iter().collect(),
                _ => continue,
            };
            for poly in polygons {
                for ring in poly.as_array().into_iter().flatten() {
                    let pts: Vec<(f64, f64)> = ring
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|p| Some(world(p.get(1)?.as_f64()?, p.get(0)?.as_f64()?)))
                        .collect();
                    if pts.len() < 3 {
                        continue;
                    }
                    let mut bbox = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
                    for &(x, y) in &pts {
                        bbox = (bbox.0.min(x), bbox.1.min(y), bbox.2.max(x), bbox.3.max(y));
                    }
                    let lod = LOD_TOLERANCE.map(|t| thin(&pts, t));
                    rings.push(Ring { bbox, lod });
                }
            }
        }
        if rings.is_empty() {
            return Err(RenderError::Shapes("no polygon rings".into()));
        }
        Ok(Basemap { rings })
    }

    /// Draws land and borders over the water colour the pixmap was filled with.
    pub fn draw(&self, pixmap: &mut Pixmap, cam: &Camera, theme: &Theme) {
        let k = cam.k();
        // The level whose tolerance is under about half an image pixel.
        let level = LOD_TOLERANCE.iter().position(|&t| t * k <= 0.5).unwrap_or(LOD_TOLERANCE.len() - 1);
        let (vx0, vy0, vx1, vy1) = cam.world_box();
        let mut pb = PathBuilder::new();
        for r in &self.rings {
            if r.bbox.2 < vx0 || r.bbox.0 > vx1 || r.bbox.3 < vy0 || r.bbox.1 > vy1 {
                continue;
            }
            let pts = &r.lod[level];
            if pts.len() < 3 {
                continue;
            }
            for (i, &(x, y)) in pts.iter().enumerate() {
                let (px, py) = ((x as f64 * k - cam.left) as f32, (y as f64 * k - cam.top) as f32);
                if i == 0 {
                    pb.move_to(px, py);
                } else {
                    pb.line_to(px, py);
                }
            }
            pb.close();
        }
        let Some(path) = pb.finish() else { return };
        let mut paint = Paint::default();
        paint.anti_alias = true;
        paint.set_color_rgba8(theme.land[0], theme.land[1], theme.land[2], 255);
        pixmap.fill_path(&path, &paint, FillRule::EvenOdd, Transform::identity(), None);
        paint.set_color_rgba8(theme.border[0], theme.border[1], theme.border[2], 255);
        let stroke = Stroke { width: (0.6 * cam.scale) as f32, ..Stroke::default() };
        pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
    }
}
