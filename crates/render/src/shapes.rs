//! Shapes in degrees, by code: countries and US states as the reference step extracts them
//! from Natural Earth, and the big lakes from OpenStreetMap's water, read from GeoJSON once, and the Douglas-Peucker simplification that both
//! the basemap's levels of detail and focus maps use. The basemap draws them; focus maps
//! project them; nothing here draws.

use storemap_core::{polygon_features, PolygonGeometry};

use crate::error::{RenderError, Result};

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

/// Every shape a map can draw: countries (by ISO 3166-1 alpha-2), US states (by USPS code),
/// and the big lakes, which the countries' land runs across and maps draw as water.
#[derive(Debug, Clone, Default)]
pub struct Shapes {
    pub countries: Vec<Shape>,
    pub us_states: Vec<Shape>,
    pub lakes: Vec<Polygon>,
}

impl Shapes {
    pub fn country(&self, code: &str) -> Option<&Shape> {
        self.countries.iter().find(|s| s.code.eq_ignore_ascii_case(code))
    }

    pub fn us_state(&self, code: &str) -> Option<&Shape> {
        self.us_states.iter().find(|s| s.code.eq_ignore_ascii_case(code))
    }
}

/// Polygon/MultiPolygon features as shapes, coded by the first of `code_keys` present.
pub(crate) fn parse_shapes(text: &str, code_keys: &[&str]) -> Result<Vec<Shape>> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| RenderError::Shapes(e.to_string()))?;
    let features = polygon_features(&v, code_keys).ok_or_else(|| RenderError::Shapes("no features".into()))?;
    let mut shapes = Vec::new();
    // Features of other geometries, or without one, are not shapes: skipped.
    for f in features {
        let PolygonGeometry::Polygons(polygons) = f.geometry else { continue };
        let mut shape = Shape { code: f.code.unwrap_or_default().to_ascii_uppercase(), polygons: Vec::new() };
        for poly in polygons {
            let rings: Vec<Vec<(f64, f64)>> = poly.into_iter().filter(|r| r.len() >= 3).collect();
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

/// A closed ring opened at its cut edges (from a point to the next, the last to the first,
/// where `cut` says so): the runs between them, each at least an edge. None when no edge is
/// cut. Outlines leave out the edges along the antimeridian, where the reference borders cut
/// shapes and no coast runs (focus maps in degrees, the Web Mercator map in pixels).
pub(crate) fn open_at<T: Copy>(ring: &[T], cut: impl Fn(T, T) -> bool) -> Option<Vec<Vec<T>>> {
    let n = ring.len();
    let is_cut = |i: usize| cut(ring[i], ring[(i + 1) % n]);
    let first = (0..n).find(|&i| is_cut(i))?;
    // Once round from the end of a cut edge, a new run after each cut edge.
    let mut pieces = vec![Vec::new()];
    for step in 1..=n {
        let i = (first + step) % n;
        pieces.last_mut().expect("a run").push(ring[i]);
        if is_cut(i) {
            pieces.push(Vec::new());
        }
    }
    pieces.retain(|p| p.len() >= 2);
    Some(pieces)
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

/// The committed test data's countries and US states (`tests/data`), for the crate's unit tests.
#[cfg(test)]
pub(crate) fn test_shapes() -> Shapes {
    let read = |name: &str| std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap();
    Shapes {
        countries: parse_shapes(&read("countries.geojson"), &["iso_a2"]).unwrap(),
        us_states: parse_shapes(&read("us_states.geojson"), &["usps"]).unwrap(),
        lakes: parse_shapes(&read("lakes.geojson"), &["code"]).unwrap().into_iter().flat_map(|s| s.polygons).collect(),
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
