//! The offline basemap: country shapes (Natural Earth, as the reference step extracts them)
//! drawn as land over water with country borders, US state lines, and major city labels from
//! the gazetteer. Rings are kept at several levels of detail in zoom-0 world pixels, so a world
//! map walks a few thousand points and a city map the full shapes of only the places in view.
//! The same shapes, by ISO code and in degrees, feed focus maps.

use tiny_skia::{Color, FillRule, Paint, Path, PathBuilder, PixmapMut, Stroke, Transform};

use crate::camera::{world, Camera};
use crate::error::{RenderError, Result};
use crate::text::Font;
use crate::theme::Theme;

/// Simplification tolerances, in zoom-0 world pixels, for each level of detail; the last level
/// keeps every point. A view uses the coarsest level whose tolerance stays under
/// `MAX_ERROR_PX` image pixels.
const LOD_TOLERANCE: [f64; 9] = [0.3, 0.15, 0.07, 0.035, 0.017, 0.008, 0.004, 0.002, 0.0];
const LEVELS: usize = LOD_TOLERANCE.len();
const MAX_ERROR_PX: f64 = 1.0;

/// State lines appear from this zoom: below it they would be a grey smudge over the US.
const STATE_LINES_MIN_ZOOM: f64 = 3.0;

/// Cities smaller than this never get a label ("major city labels").
pub const LABEL_MIN_POPULATION: u64 = 100_000;

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

/// One polygon of a shape, in degrees: the outer ring first, then holes.
#[derive(Debug, Clone)]
pub struct Polygon {
    /// (lng, lat)
    pub rings: Vec<Vec<(f64, f64)>>,
    /// lng0, lat0, lng1, lat1
    pub bbox: [f64; 4],
    /// Outer ring area in square degrees scaled by cos(latitude): only compared, never shown.
    pub area: f64,
}

/// A country or an admin-1 region, by code.
#[derive(Debug, Clone)]
pub struct Shape {
    pub code: String,
    pub polygons: Vec<Polygon>,
}

#[derive(Debug, Clone)]
pub struct City {
    pub name: String,
    pub lat: f64,
    pub lng: f64,
    pub population: u64,
}

pub struct Basemap {
    land: Layer,
    states: Layer,
    pub(crate) countries: Vec<Shape>,
    pub(crate) us_states: Vec<Shape>,
    /// Largest first.
    pub(crate) cities: Vec<City>,
    pub(crate) font: Option<Font>,
    /// Focus-map shapes projected on first use.
    pub(crate) focus_cache: crate::focus::FocusCache,
}

/// Douglas-Peucker: the fewest points that keep the ring within `tol` of the original. Far
/// fewer points than evenly spaced thinning for the same error, which is what the rasterizer
/// pays for (every edge is sorted and scanned).
pub(crate) fn simplify(points: &[(f64, f64)], tol: f64) -> Vec<(f32, f32)> {
    let n = points.len();
    if tol == 0.0 || n < 4 {
        return points.iter().map(|&(x, y)| (x as f32, y as f32)).collect();
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut stack = vec![(0usize, n - 1)];
    let tol2 = tol * tol;
    while let Some((a, b)) = stack.pop() {
        if b <= a + 1 {
            continue;
        }
        let (ax, ay) = points[a];
        let (bx, by) = points[b];
        let (dx, dy) = (bx - ax, by - ay);
        let len2 = dx * dx + dy * dy;
        let (mut worst, mut at) = (0.0, a);
        for (i, &(px, py)) in points.iter().enumerate().take(b).skip(a + 1) {
            // Squared distance to the segment (to the point a when the ring closes on itself).
            let d2 = if len2 == 0.0 {
                (px - ax).powi(2) + (py - ay).powi(2)
            } else {
                let t = (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0);
                (px - ax - t * dx).powi(2) + (py - ay - t * dy).powi(2)
            };
            if d2 > worst {
                worst = d2;
                at = i;
            }
        }
        if worst > tol2 {
            keep[at] = true;
            stack.push((a, at));
            stack.push((at, b));
        }
    }
    points.iter().zip(&keep).filter(|(_, &k)| k).map(|(&(x, y), _)| (x as f32, y as f32)).collect()
}

/// Polygon/MultiPolygon features as shapes, coded by the first of `code_keys` present.
fn parse_shapes(text: &str, code_keys: &[&str]) -> Result<Vec<Shape>> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| RenderError::Shapes(e.to_string()))?;
    let features = v.get("features").and_then(|f| f.as_array()).ok_or_else(|| RenderError::Shapes("no features".into()))?;
    let mut shapes = Vec::new();
    for f in features {
        let code = code_keys.iter().find_map(|k| f.get("properties").and_then(|p| p.get(*k)).and_then(|c| c.as_str())).unwrap_or("").to_ascii_uppercase();
        let Some(g) = f.get("geometry") else { continue };
        let Some(coords) = g.get("coordinates").and_then(|c| c.as_array()) else { continue };
        let polygons: Vec<&serde_json::Value> = match g.get("type").and_then(|t| t.as_str()) {
            Some("Polygon") => vec![g.get("coordinates").unwrap()],
            Some("MultiPolygon") => coords.iter().collect(),
            _ => continue,
        };
        let mut shape = Shape { code, polygons: Vec::new() };
        for poly in polygons {
            let rings: Vec<Vec<(f64, f64)>> = poly
                .as_array()
                .into_iter()
                .flatten()
                .map(|ring| ring.as_array().into_iter().flatten().filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?))).collect::<Vec<_>>())
                .filter(|r: &Vec<(f64, f64)>| r.len() >= 3)
                .collect();
            if rings.is_empty() {
                continue;
            }
            let mut bbox = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
            for &(x, y) in &rings[0] {
                bbox = [bbox[0].min(x), bbox[1].min(y), bbox[2].max(x), bbox[3].max(y)];
            }
            let k = ((bbox[1] + bbox[3]) / 2.0).to_radians().cos();
            let outer = &rings[0];
            let area = (0..outer.len()).map(|i| {
                let (a, b) = (outer[i], outer[(i + 1) % outer.len()]);
                a.0 * b.1 - b.0 * a.1
            });
            let area = (area.sum::<f64>() / 2.0).abs() * k;
            shape.polygons.push(Polygon { rings, bbox, area });
        }
        if !shape.polygons.is_empty() {
            shapes.push(shape);
        }
    }
    Ok(shapes)
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
    /// From a GeoJSON FeatureCollection of country Polygon/MultiPolygon features (coded by
    /// `iso_a2`).
    pub fn from_geojson(text: &str) -> Result<Basemap> {
        let countries = parse_shapes(text, &["iso_a2", "ISO_A2", "code"])?;
        if countries.is_empty() {
            return Err(RenderError::Shapes("no polygon rings".into()));
        }
        Ok(Basemap {
            land: Layer::from_shapes(&countries),
            states: Layer::default(),
            countries,
            us_states: Vec::new(),
            cities: Vec::new(),
            font: None,
            focus_cache: Default::default(),
        })
    }

    /// US state shapes (coded by USPS code): state lines on the basemap, `regions` and `conus`
    /// on focus maps.
    pub fn with_us_states(mut self, text: &str) -> Result<Basemap> {
        self.us_states = parse_shapes(text, &["usps", "code"])?;
        self.states = Layer::from_shapes(&self.us_states);
        Ok(self)
    }

    /// City labels from the gazetteer CSV (`name`, `population`, `lat`, `lng` columns).
    pub fn with_cities_csv(mut self, text: &str) -> Result<Basemap> {
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let headers = rd.headers().map_err(|e| RenderError::Shapes(format!("cities: {e}")))?.clone();
        let col = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| RenderError::Shapes(format!("cities: no {name} column")));
        let (ni, pi, lai, lni) = (col("name")?, col("population")?, col("lat")?, col("lng")?);
        let mut cities = Vec::new();
        for rec in rd.records() {
            let rec = rec.map_err(|e| RenderError::Shapes(format!("cities: {e}")))?;
            let population: u64 = rec.get(pi).and_then(|p| p.parse().ok()).unwrap_or(0);
            if population < LABEL_MIN_POPULATION {
                continue;
            }
            let (Some(lat), Some(lng)) = (rec.get(lai).and_then(|v| v.parse().ok()), rec.get(lni).and_then(|v| v.parse().ok())) else { continue };
            cities.push(City { name: rec.get(ni).unwrap_or("").to_string(), lat, lng, population });
        }
        cities.sort_by(|a, b| b.population.cmp(&a.population).then_with(|| a.name.cmp(&b.name)));
        self.cities = cities;
        Ok(self)
    }

    /// The font for labels and legends; without one, maps carry no text.
    pub fn with_font(mut self, bytes: &[u8]) -> Result<Basemap> {
        self.font = Some(Font::from_bytes(bytes)?);
        Ok(self)
    }

    pub fn has_font(&self) -> bool {
        self.font.is_some()
    }

    pub fn country(&self, code: &str) -> Option<&Shape> {
        self.countries.iter().find(|s| s.code.eq_ignore_ascii_case(code))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simplify_keeps_corners_and_drops_collinear_points() {
        let square: Vec<(f64, f64)> = vec![(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (1.0, 0.5), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)];
        let s = simplify(&square, 0.01);
        assert_eq!(s, vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.0, 0.0)]);
        assert_eq!(simplify(&square, 0.0).len(), square.len());
    }
}
