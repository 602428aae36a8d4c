//! Focus maps: one country drawn alone as a filled, outlined shape (no basemap), in an
//! equal-area conic projection fitted to it — Albers with the USGS parameters for the US,
//! otherwise standard parallels at one sixth and five sixths of the country's latitude span.
//! `mainland_only` keeps the largest landmass and what lies within 250 km of it; `conus` is
//! that for the US (the 48 contiguous states); `regions` outlines US states.

use tiny_skia::{FillRule, Paint, PathBuilder, Pixmap, Stroke, Transform};

use crate::basemap::{Basemap, Polygon};
use crate::error::{RenderError, Result};

/// Polygons farther than this from the largest one are "far-flung" for `mainland_only`.
const MAINLAND_KM: f64 = 250.0;

#[derive(Debug, Clone, PartialEq)]
pub struct FocusSpec {
    /// ISO 3166-1 alpha-2 (resolved already when the request said "auto").
    pub country: String,
    pub mainland_only: bool,
    pub conus: bool,
    /// US state codes to outline.
    pub regions: Vec<String>,
    pub fill: [u8; 3],
    pub outline: [u8; 3],
    /// At scale 1, in pixels.
    pub outline_width: f32,
    /// None: transparent (PNG); JPEG encodes it over white.
    pub background: Option<[u8; 3]>,
}

/// Longitude difference folded into [-180, 180).
fn wrap(d: f64) -> f64 {
    (d + 180.0).rem_euclid(360.0) - 180.0
}

/// Albers equal-area conic (or, when the standard parallels straddle the equator evenly, its
/// limit, the cylindrical equal-area projection). Output y grows northwards, in radians.
#[derive(Debug, Clone, Copy)]
struct Conic {
    lng0: f64,
    n: f64,
    c: f64,
    rho0: f64,
}

impl Conic {
    fn new(phi1: f64, phi2: f64, phi0: f64, lng0: f64) -> Conic {
        let (s1, s2) = (phi1.to_radians().sin(), phi2.to_radians().sin());
        let n = (s1 + s2) / 2.0;
        let c = phi1.to_radians().cos().powi(2) + 2.0 * n * s1;
        let rho0 = if n.abs() < 1e-3 { 0.0 } else { (c - 2.0 * n * phi0.to_radians().sin()).max(0.0).sqrt() / n };
        Conic { lng0, n, c, rho0 }
    }

    fn project(&self, lat: f64, lng: f64) -> (f64, f64) {
        let dl = wrap(lng - self.lng0).to_radians();
        let phi = lat.to_radians();
        if self.n.abs() < 1e-3 {
            return (dl, phi.sin());
        }
        let rho = (self.c - 2.0 * self.n * phi.sin()).max(0.0).sqrt() / self.n;
        let theta = self.n * dl;
        (rho * theta.sin(), self.rho0 - rho * theta.cos())
    }
}

/// The projection fitted to a shape and an image.
#[derive(Debug, Clone, Copy)]
pub struct FocusCamera {
    conic: Conic,
    k: f64,
    tx: f64,
    ty: f64,
    /// Markers outside this box (lng0, lat0, lng1, lat1 around `conic.lng0`, unwrapped) are
    /// off the shape: left out when the shape was cut to its mainland.
    keep: Option<[f64; 4]>,
}

impl FocusCamera {
    pub fn pixel(&self, lat: f64, lng: f64) -> Option<(f64, f64)> {
        if let Some([x0, y0, x1, y1]) = self.keep {
            let l = self.conic.lng0 + wrap(lng - self.conic.lng0);
            if l < x0 || l > x1 || lat < y0 || lat > y1 {
                return None;
            }
        }
        let (x, y) = self.conic.project(lat, lng);
        Some((self.tx + x * self.k, self.ty - y * self.k))
    }
}

/// Distance in km between two lng/lat boxes (0 when they overlap), with longitudes compared
/// across the antimeridian.
fn box_gap_km(a: [f64; 4], b: [f64; 4]) -> f64 {
    let lat_gap = (b[1] - a[3]).max(a[1] - b[3]).max(0.0);
    let (ca, cb) = ((a[0] + a[2]) / 2.0, (b[0] + b[2]) / 2.0);
    let centre_gap = wrap(cb - ca).abs();
    let lng_gap = (centre_gap - (a[2] - a[0]) / 2.0 - (b[2] - b[0]) / 2.0).max(0.0);
    let lat_mid = ((a[1] + a[3]) / 2.0 + (b[1] + b[3]) / 2.0) / 2.0;
    (lat_gap * 111.2).hypot(lng_gap * 111.2 * lat_mid.to_radians().cos())
}

/// The polygons a focus map draws.
fn select<'a>(basemap: &'a Basemap, spec: &FocusSpec) -> Result<Vec<&'a Polygon>> {
    let shape = basemap.country(&spec.country).ok_or_else(|| RenderError::UnknownCountry(spec.country.clone()))?;
    let is_us = spec.country.eq_ignore_ascii_case("US");
    if spec.conus && !is_us {
        return Err(RenderError::InvalidFocus("conus applies to the US only".into()));
    }
    let all: Vec<&Polygon> = shape.polygons.iter().collect();
    if !(spec.mainland_only || spec.conus) {
        return Ok(all);
    }
    let largest = all.iter().copied().fold(None::<&Polygon>, |m, p| if m.is_none_or(|m| p.area > m.area) { Some(p) } else { m });
    let Some(main) = largest else { return Ok(all) };
    Ok(all.into_iter().filter(|p| std::ptr::eq(*p, main) || box_gap_km(main.bbox, p.bbox) <= MAINLAND_KM).collect())
}

/// Draws the focus map; returns the camera that places markers on it.
pub fn draw(pixmap: &mut Pixmap, basemap: &Basemap, spec: &FocusSpec, scale: f32) -> Result<FocusCamera> {
    let polygons = select(basemap, spec)?;
    let regions = regions(basemap, spec)?;

    // Centre meridian: the middle of the shape's longitudes, unwrapped around the largest part.
    let base = polygons.iter().max_by(|a, b| a.area.total_cmp(&b.area)).map_or(0.0, |p| (p.bbox[0] + p.bbox[2]) / 2.0);
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in &polygons {
        let (a, b) = (base + wrap(p.bbox[0] - base), base + wrap(p.bbox[2] - base));
        let (a, b) = if b < a { (a, a + (p.bbox[2] - p.bbox[0])) } else { (a, b) };
        x0 = x0.min(a);
        x1 = x1.max(b);
        y0 = y0.min(p.bbox[1]);
        y1 = y1.max(p.bbox[3]);
    }
    let conic = if spec.country.eq_ignore_ascii_case("US") {
        // USGS Albers for the US: standard parallels 29.5 and 45.5 N, central meridian 96 W.
        Conic::new(29.5, 45.5, 37.5, -96.0)
    } else {
        let span = y1 - y0;
        Conic::new(y0 + span / 6.0, y1 - span / 6.0, (y0 + y1) / 2.0, (x0 + x1) / 2.0)
    };

    let projected: Vec<Vec<Vec<(f64, f64)>>> =
        polygons.iter().map(|p| p.rings.iter().map(|r| r.iter().map(|&(lng, lat)| conic.project(lat, lng)).collect()).collect()).collect();
    let (mut px0, mut py0, mut px1, mut py1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in projected.iter().flatten().flatten() {
        px0 = px0.min(x);
        px1 = px1.max(x);
        py0 = py0.min(y);
        py1 = py1.max(y);
    }
    let (w, h) = (pixmap.width() as f64, pixmap.height() as f64);
    let pad = 0.05 * w.min(h) + (spec.outline_width * scale) as f64;
    let k = ((w - 2.0 * pad).max(1.0) / (px1 - px0).max(1e-9)).min((h - 2.0 * pad).max(1.0) / (py1 - py0).max(1e-9));
    let (tx, ty) = (w / 2.0 - (px0 + px1) / 2.0 * k, h / 2.0 + (py0 + py1) / 2.0 * k);
    let cut = spec.mainland_only || spec.conus;
    let cam = FocusCamera { conic, k, tx, ty, keep: cut.then_some([x0 - 0.5, y0 - 0.5, x1 + 0.5, y1 + 0.5]) };

    if let Some(bg) = spec.background {
        pixmap.fill(tiny_skia::Color::from_rgba8(bg[0], bg[1], bg[2], 255));
    }
    let to_px = |(x, y): (f64, f64)| ((tx + x * k) as f32, (ty - y * k) as f32);
    let mut pb = PathBuilder::new();
    for ring in projected.iter().flatten() {
        push_ring(&mut pb, ring.iter().map(|&p| to_px(p)));
    }
    let mut paint = Paint::default();
    paint.anti_alias = true;
    let stroke = Stroke { width: spec.outline_width * scale, ..Stroke::default() };
    if let Some(path) = pb.finish() {
        paint.set_color_rgba8(spec.fill[0], spec.fill[1], spec.fill[2], 255);
        pixmap.fill_path(&path, &paint, FillRule::EvenOdd, Transform::identity(), None);
        if spec.outline_width > 0.0 {
            paint.set_color_rgba8(spec.outline[0], spec.outline[1], spec.outline[2], 255);
            pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
    }
    let mut rb = PathBuilder::new();
    for ring in regions.iter().flat_map(|p| &p.rings) {
        push_ring(&mut rb, ring.iter().map(|&(lng, lat)| to_px(conic.project(lat, lng))));
    }
    if let Some(path) = rb.finish() {
        paint.set_color_rgba8(spec.outline[0], spec.outline[1], spec.outline[2], 255);
        let width = (spec.outline_width * scale).max(0.75 * scale);
        pixmap.stroke_path(&path, &paint, &Stroke { width, ..Stroke::default() }, Transform::identity(), None);
    }
    Ok(cam)
}

/// Adds a closed ring, dropping points within a third of a pixel of the last one kept.
fn push_ring(pb: &mut PathBuilder, pts: impl Iterator<Item = (f32, f32)>) {
    let mut last: Option<(f32, f32)> = None;
    let mut n = 0;
    for p in pts {
        match last {
            None => pb.move_to(p.0, p.1),
            Some(l) if (p.0 - l.0).hypot(p.1 - l.1) < 0.33 => continue,
            Some(_) => pb.line_to(p.0, p.1),
        }
        last = Some(p);
        n += 1;
    }
    if n > 0 {
        pb.close();
    }
}

/// The admin-1 shapes `regions` names (US states only: the one admin-1 set the reference data
/// carries).
fn regions<'a>(basemap: &'a Basemap, spec: &FocusSpec) -> Result<Vec<&'a Polygon>> {
    if spec.regions.is_empty() {
        return Ok(Vec::new());
    }
    if !spec.country.eq_ignore_ascii_case("US") {
        return Err(RenderError::InvalidFocus("regions are available for US states only".into()));
    }
    let mut out = Vec::new();
    for code in &spec.regions {
        let s = basemap.us_states.iter().find(|s| s.code.eq_ignore_ascii_case(code)).ok_or_else(|| RenderError::InvalidFocus(format!("unknown US state {code:?}")))?;
        out.extend(s.polygons.iter());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn albers_matches_published_values() {
        // USGS Albers (29.5, 45.5, origin 23 N, 96 W) on the unit sphere: the origin maps to 0.
        let c = Conic::new(29.5, 45.5, 23.0, -96.0);
        let (x, y) = c.project(23.0, -96.0);
        assert!(x.abs() < 1e-12 && y.abs() < 1e-12);
        // Equal area: a 1-degree cell at 30 N and at 45 N keeps the sphere's area ratio.
        let cell = |lat: f64| {
            let (a, b) = (c.project(lat, -96.0), c.project(lat + 1.0, -95.0));
            let (d, e) = (c.project(lat, -95.0), c.project(lat + 1.0, -96.0));
            // Shoelace over the four corners.
            let pts = [a, d, b, e];
            (0..4).map(|i| pts[i].0 * pts[(i + 1) % 4].1 - pts[(i + 1) % 4].0 * pts[i].1).sum::<f64>().abs() / 2.0
        };
        let sphere = |lat: f64| (lat + 1.0f64).to_radians().sin() - lat.to_radians().sin();
        assert!((cell(30.0) / cell(45.0) - sphere(30.0) / sphere(45.0)).abs() < 1e-3);
    }

    #[test]
    fn box_gaps() {
        assert_eq!(box_gap_km([0.0, 0.0, 10.0, 10.0], [5.0, 5.0, 15.0, 15.0]), 0.0);
        let g = box_gap_km([0.0, 0.0, 1.0, 1.0], [0.0, 2.0, 1.0, 3.0]);
        assert!((g - 111.2).abs() < 0.1);
        // Across the antimeridian: 179 E and 179 W are 2 degrees apart, not 358.
        assert!(box_gap_km([178.0, 0.0, 179.0, 1.0], [-179.0, 0.0, -178.0, 1.0]) < 223.0);
    }
}
