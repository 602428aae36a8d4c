//! Focus maps: one country drawn alone as a filled, outlined shape (no basemap), in an
//! equal-area conic projection fitted to it — Albers with the USGS parameters for the US,
//! otherwise standard parallels at one sixth and five sixths of the country's latitude span.
//! `mainland_only` keeps the largest landmass and what lies within 250 km of it; `conus` is
//! that for the US (the 48 contiguous states); `regions` outlines US states.

use tiny_skia::{FillRule, Paint, Path, PathBuilder, PixmapMut, Stroke, Transform};

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

/// A focus map worked out for one image: the camera and the shapes as paths in image pixels,
/// drawn afterwards band by band.
pub struct FocusPlan {
    pub cam: FocusCamera,
    land: Option<Path>,
    regions: Option<Path>,
    fill: [u8; 3],
    outline: [u8; 3],
    outline_width: f32,
    region_width: f32,
    background: Option<[u8; 3]>,
}

impl FocusCamera {
    /// The camera of an image band whose top row is row `y0` of the whole.
    pub fn band(&self, y0: u32) -> FocusCamera {
        FocusCamera { ty: self.ty - y0 as f64, ..*self }
    }
}

impl FocusPlan {
    /// Draws the background and the shapes into a band whose top row is row `y0`.
    pub fn draw(&self, band: &mut PixmapMut, y0: u32) {
        if let Some(bg) = self.background {
            band.fill(tiny_skia::Color::from_rgba8(bg[0], bg[1], bg[2], 255));
        }
        let shift = Transform::from_translate(0.0, -(y0 as f32));
        let mut paint = Paint::default();
        paint.anti_alias = true;
        if let Some(path) = &self.land {
            paint.set_color_rgba8(self.fill[0], self.fill[1], self.fill[2], 255);
            band.fill_path(path, &paint, FillRule::EvenOdd, shift, None);
            if self.outline_width > 0.0 {
                paint.set_color_rgba8(self.outline[0], self.outline[1], self.outline[2], 255);
                band.stroke_path(path, &paint, &Stroke { width: self.outline_width, ..Stroke::default() }, shift, None);
            }
        }
        if let Some(path) = &self.regions {
            paint.set_color_rgba8(self.outline[0], self.outline[1], self.outline[2], 255);
            band.stroke_path(path, &paint, &Stroke { width: self.region_width, ..Stroke::default() }, shift, None);
        }
    }
}

/// A country's shape projected and simplified, kept per (country, mainland cut): the costly
/// part of a focus map, the same for every image size.
struct Projected {
    conic: Conic,
    rings: Vec<Vec<(f32, f32)>>,
    /// Projected extent: x0, y0, x1, y1.
    extent: [f64; 4],
    /// The shape's lng/lat box, unwrapped around the centre meridian.
    lnglat: [f64; 4],
}

#[derive(Default)]
pub(crate) struct FocusCache(std::sync::Mutex<std::collections::HashMap<(String, bool), std::sync::Arc<Projected>>>);

/// Simplification tolerance as a share of the projected shape's diagonal: under half a pixel
/// even at 4096 pixels.
const SIMPLIFY_SHARE: f64 = 1.0 / 10_000.0;

fn projected(basemap: &Basemap, spec: &FocusSpec) -> Result<std::sync::Arc<Projected>> {
    let key = (spec.country.to_ascii_uppercase(), spec.mainland_only || spec.conus);
    if let Some(p) = basemap.focus_cache.0.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    let polygons = select(basemap, spec)?;
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
    let full: Vec<Vec<(f64, f64)>> =
        polygons.iter().flat_map(|p| p.rings.iter()).map(|r| r.iter().map(|&(lng, lat)| conic.project(lat, lng)).collect()).collect();
    let mut extent = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for &(x, y) in full.iter().flatten() {
        extent = [extent[0].min(x), extent[1].min(y), extent[2].max(x), extent[3].max(y)];
    }
    let tol = (extent[2] - extent[0]).hypot(extent[3] - extent[1]) * SIMPLIFY_SHARE;
    let rings = full.iter().map(|r| crate::basemap::simplify(r, tol)).collect();
    let p = std::sync::Arc::new(Projected { conic, rings, extent, lnglat: [x0, y0, x1, y1] });
    basemap.focus_cache.0.lock().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
    Ok(p)
}

/// Fits the focus map to a `width` x `height` image.
pub fn plan(basemap: &Basemap, spec: &FocusSpec, width: u32, height: u32, scale: f32) -> Result<FocusPlan> {
    let shape = projected(basemap, spec)?;
    let regions = regions(basemap, spec)?;
    let conic = shape.conic;
    let [px0, py0, px1, py1] = shape.extent;
    let [x0, y0, x1, y1] = shape.lnglat;
    let (w, h) = (width as f64, height as f64);
    let pad = 0.05 * w.min(h) + (spec.outline_width * scale) as f64;
    let k = ((w - 2.0 * pad).max(1.0) / (px1 - px0).max(1e-9)).min((h - 2.0 * pad).max(1.0) / (py1 - py0).max(1e-9));
    let (tx, ty) = (w / 2.0 - (px0 + px1) / 2.0 * k, h / 2.0 + (py0 + py1) / 2.0 * k);
    let cut = spec.mainland_only || spec.conus;
    let cam = FocusCamera { conic, k, tx, ty, keep: cut.then_some([x0 - 0.5, y0 - 0.5, x1 + 0.5, y1 + 0.5]) };

    let to_px = |(x, y): (f64, f64)| ((tx + x * k) as f32, (ty - y * k) as f32);
    let mut pb = PathBuilder::new();
    for ring in &shape.rings {
        push_ring(&mut pb, ring.iter().map(|&(x, y)| to_px((x as f64, y as f64))));
    }
    let mut rb = PathBuilder::new();
    for ring in regions.iter().flat_map(|p| &p.rings) {
        push_ring(&mut rb, ring.iter().map(|&(lng, lat)| to_px(conic.project(lat, lng))));
    }
    Ok(FocusPlan {
        cam,
        land: pb.finish(),
        regions: rb.finish(),
        fill: spec.fill,
        outline: spec.outline,
        outline_width: spec.outline_width * scale,
        region_width: (spec.outline_width * scale).max(0.75 * scale),
        background: spec.background,
    })
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
