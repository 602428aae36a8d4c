//! Focus maps: one country drawn alone as a filled, outlined shape (no basemap), in an
//! equal-area conic projection fitted to it — Albers with the USGS parameters for the US,
//! otherwise standard parallels at one sixth and five sixths of the country's latitude span.
//! A country's far-flung parts (Alaska and Hawaii, France's overseas regions, Svalbard, the
//! Canaries, the Azores and Madeira) are drawn as insets in a row along the bottom left of the
//! mainland, each in a projection of its own, framed, and scaled down when large (Alaska to
//! 0.35, as US atlases do), and so are territories with a code of their own where the map has
//! markers (Puerto Rico on a US map); markers go through the same composite projection.
//! `mainland_only` keeps the largest landmass and what lies within 300 km of it; `conus` is
//! that for the US (the 48 contiguous states); `regions` outlines US states.

use tiny_skia::{BlendMode, FillRule, Mask, Paint, Path, PathBuilder, Pixmap, PixmapMut, Stroke, Transform};

use crate::camera::MAX_LAT;
use crate::error::{RenderError, Result};
use crate::shapes::{open_at, simplify, Polygon, Shapes};

/// Polygons farther than this from the mainland (hop by hop from the largest polygon) are
/// "far-flung" for `mainland_only`. Kaliningrad, whose box is about 255 km from the rest of
/// Russia's across Lithuania, is part of Russia's mainland (as Russian maps draw it), and so in
/// the frame of a map filtered to Russia.
const MAINLAND_KM: f64 = 300.0;
/// Far-flung polygons within this of each other form one inset: Hawaii's main islands are one,
/// and the atolls north-west of them, a longer hop away, are left out as specks (at 300 km the
/// chain reached Kure, and the inset shrank the islands to dots).
const INSET_KM: f64 = 250.0;
/// Insets at most: the largest far-flung parts by area (a speck beyond them is left out).
const MAX_INSETS: usize = 5;
/// Far-flung parts smaller than this share of the mainland's area get no inset.
const MIN_INSET_AREA_SHARE: f64 = 1e-4;
/// An inset larger than this share of the mainland's larger side is scaled down to it.
const INSET_SHARE: f64 = 0.3;

/// A focus map's country fill when the request gives none.
pub const FOCUS_FILL: &str = "#E5E7EB";
/// A focus map's outline colour when the request gives none.
pub const FOCUS_OUTLINE: &str = "#9CA3AF";
/// A focus map's outline width at scale 1, in pixels, when the request gives none.
pub const FOCUS_OUTLINE_WIDTH: f32 = 1.5;

#[derive(Debug, Clone, PartialEq)]
pub struct FocusSpec {
    /// ISO 3166-1 alpha-2 (resolved already when the request said "auto").
    pub country: String,
    pub mainland_only: bool,
    pub conus: bool,
    /// US state codes to outline.
    pub regions: Vec<String>,
    /// Other countries drawn as insets of this one (see [`territories_of`]): those of its
    /// territories the map has markers in.
    pub territories: Vec<String>,
    pub fill: [u8; 3],
    pub outline: [u8; 3],
    /// At scale 1, in pixels.
    pub outline_width: f32,
    /// None: transparent (PNG); JPEG encodes it over white.
    pub background: Option<[u8; 3]>,
}

/// Territories with an ISO 3166-1 code of their own that a country's composite map draws as
/// insets, as US atlases draw Puerto Rico.
const COMPOSITE_TERRITORIES: &[(&str, &[&str])] = &[("US", &["PR"])];

/// The territories a country's composite focus map may carry as insets (none for most).
pub fn territories_of(country: &str) -> &'static [&'static str] {
    COMPOSITE_TERRITORIES.iter().find(|(c, _)| c.eq_ignore_ascii_case(country)).map_or(&[], |(_, t)| t)
}

/// Longitude difference folded into [-180, 180).
pub(crate) fn wrap(d: f64) -> f64 {
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

/// One part of a (possibly composite) focus map: its own projection, placed in the map's
/// plane by a scale and an offset.
#[derive(Debug, Clone, Copy)]
struct Part {
    conic: Conic,
    scale: f64,
    offset: (f64, f64),
    /// The part's lng/lat box (around `conic.lng0`, unwrapped, half a degree of margin): a
    /// marker is drawn in the part whose box holds it. None: every marker (a lone part).
    keep: Option<[f64; 4]>,
}

impl Part {
    fn holds(&self, lat: f64, lng: f64) -> bool {
        let Some([x0, y0, x1, y1]) = self.keep else { return true };
        let l = self.conic.lng0 + wrap(lng - self.conic.lng0);
        (x0..=x1).contains(&l) && (y0..=y1).contains(&lat)
    }

    /// A lat/lng in the map's plane.
    fn place(&self, lat: f64, lng: f64) -> (f64, f64) {
        let (x, y) = self.conic.project(lat, lng);
        (x * self.scale + self.offset.0, y * self.scale + self.offset.1)
    }
}

/// The projection fitted to a shape and an image.
#[derive(Debug, Clone)]
pub struct FocusCamera {
    /// The mainland first, then the insets.
    parts: std::sync::Arc<[Part]>,
    k: f64,
    tx: f64,
    ty: f64,
}

impl FocusCamera {
    /// Where a marker lands: through the inset that holds it, else the mainland; None when it
    /// is in no part (off a shape cut to its mainland, or in a speck left out).
    pub fn pixel(&self, lat: f64, lng: f64) -> Option<(f64, f64)> {
        let part = self.parts[1..].iter().find(|p| p.holds(lat, lng)).or_else(|| self.parts.first().filter(|p| p.holds(lat, lng)))?;
        let (x, y) = part.place(lat, lng);
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

/// A country's mainland as a focus map cuts it (the largest polygon and those hop by hop within
/// `MAINLAND_KM`), as [south, west, north, east] degrees; west is east of east when it crosses
/// the antimeridian. None for a code with no shape.
pub fn mainland_bounds(shapes: &Shapes, code: &str) -> Option<[f64; 4]> {
    let spec = FocusSpec {
        country: code.to_ascii_uppercase(),
        mainland_only: true,
        conus: false,
        regions: Vec::new(),
        territories: Vec::new(),
        fill: [0; 3],
        outline: [0; 3],
        outline_width: 0.0,
        background: None,
    };
    let parts = select(shapes, &spec).ok()?;
    let mainland = parts.first()?;
    let (mut south, mut north) = (f64::MAX, f64::MIN);
    let mut lngs: Vec<f64> = Vec::new();
    for p in mainland {
        south = south.min(p.bbox[1]);
        north = north.max(p.bbox[3]);
        lngs.extend(p.rings.iter().flatten().map(|&(lng, _)| lng));
    }
    // Russia's runs from the Baltic east past 180 to Chukotka, though its shapes are cut at
    // the antimeridian.
    let (west, east) = shortest_arc(lngs)?;
    Some([south, west, north, east])
}

/// A country's frame with room around it (`COUNTRY_MARGIN` of its span on each side): fitted
/// exactly, its farthest coast lay on the image's edge (Tasmania's south on a map of
/// Australia), and a marker there was cut in half.
pub fn with_margin([s, w, n, e]: [f64; 4]) -> [f64; 4] {
    let lng_span = if w > e { e + 360.0 - w } else { e - w };
    let (dy, dx) = ((n - s) * COUNTRY_MARGIN, lng_span * COUNTRY_MARGIN);
    let (s, n) = ((s - dy).max(-MAX_LAT), (n + dy).min(MAX_LAT));
    // A frame that would go round the world (Antarctica's) is the world.
    if lng_span + 2.0 * dx >= 360.0 {
        return [s, -180.0, n, 180.0];
    }
    [s, wrap(w - dx), n, wrap(e + dx)]
}

/// The share of a country's span left around it on a map framed to it.
const COUNTRY_MARGIN: f64 = 0.05;

#[cfg(test)]
mod frame_tests {
    use super::*;

    #[test]
    fn a_frame_gets_its_margin_across_the_antimeridian_and_round_the_world() {
        let close = |a: [f64; 4], b: [f64; 4]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
        // Germany: 5 % of 8 degrees of latitude and of 10 of longitude on each side.
        assert!(close(with_margin([47.0, 5.0, 55.0, 15.0]), [46.6, 4.5, 55.4, 15.5]));
        // Fiji, across 180 (west east of east): the margin keeps it so.
        assert!(close(with_margin([-21.0, 177.0, -12.0, -178.0]), [-21.45, 176.75, -11.55, -177.75]));
        // Antarctica's 359 degrees plus margins would wrap round: the whole world instead.
        let aq = with_margin([-90.0, -179.5, -60.0, 179.5]);
        assert!(close(aq, [-MAX_LAT, -180.0, -58.5, 180.0]), "{aq:?}");
    }
}

/// The shortest arc of longitude holding every one of `lngs`: the circle less its widest
/// stretch with none, as (west, east) in [-180, 180), east west of west when the arc crosses
/// the antimeridian. None for no longitudes.
fn shortest_arc(mut lngs: Vec<f64>) -> Option<(f64, f64)> {
    for l in &mut lngs {
        *l = wrap(*l);
    }
    lngs.sort_by(f64::total_cmp);
    let (first, last) = (*lngs.first()?, *lngs.last()?);
    let (mut gap, mut west, mut east) = (first + 360.0 - last, first, last);
    for w in lngs.windows(2) {
        if w[1] - w[0] > gap {
            (gap, west, east) = (w[1] - w[0], w[1], w[0]);
        }
    }
    Some((west, east))
}

/// A polygon's lng/lat box with its longitudes as the shortest arc over its outer ring: east
/// past 180 when it crosses the antimeridian. The reference borders cut most shapes there, but
/// some rings run along it or across it (mainland Russia touches -180 at Chukotka, Wrangel
/// Island and three of Fiji's islands span it), and their plain boxes read -180 to 180: a
/// focus map centred on those was turned a quarter round, with Chukotka drawn as a band
/// across the world.
fn arc_box(p: &Polygon) -> [f64; 4] {
    if p.bbox[2] - p.bbox[0] <= 180.0 {
        return p.bbox;
    }
    let Some((west, east)) = shortest_arc(p.rings.first().map_or_else(Vec::new, |r| r.iter().map(|&(lng, _)| lng).collect())) else {
        return p.bbox;
    };
    [west, p.bbox[1], if east < west { east + 360.0 } else { east }, p.bbox[3]]
}

/// The polygons a focus map draws, in parts: the mainland (the largest polygon and those
/// within `MAINLAND_KM` of it, hop by hop) first, then the far-flung ones grouped by nearness, largest
/// first, at most `MAX_INSETS` (none when the map is cut to its mainland).
fn select<'a>(shapes: &'a Shapes, spec: &FocusSpec) -> Result<Vec<Vec<&'a Polygon>>> {
    let shape = shapes.country(&spec.country).ok_or_else(|| RenderError::UnknownCountry(spec.country.clone()))?;
    let is_us = spec.country.eq_ignore_ascii_case("US");
    if spec.conus && !is_us {
        return Err(RenderError::InvalidFocus { field: "conus", message: "conus applies to the US only".into() });
    }
    let all: Vec<&Polygon> = shape.polygons.iter().collect();
    let boxes: Vec<[f64; 4]> = all.iter().map(|p| arc_box(p)).collect();
    let largest = all.iter().copied().fold(None::<&Polygon>, |m, p| if m.is_none_or(|m| p.area > m.area) { Some(p) } else { m });
    let Some(main) = largest else { return Ok(vec![all]) };
    // The mainland is the largest polygon and every polygon a chain of short hops away from
    // it: Canada's Arctic islands reach its mainland island by island, and stay in place.
    let mut reached = vec![false; all.len()];
    let mut queue: Vec<usize> = all.iter().position(|p| std::ptr::eq(*p, main)).into_iter().collect();
    for &i in &queue {
        reached[i] = true;
    }
    while let Some(i) = queue.pop() {
        for j in 0..all.len() {
            if !reached[j] && box_gap_km(boxes[i], boxes[j]) <= MAINLAND_KM {
                reached[j] = true;
                queue.push(j);
            }
        }
    }
    // In the shape's own order, so a lone mainland draws as before.
    let (mut mainland, mut far) = (Vec::new(), Vec::new());
    for ((p, b), r) in all.into_iter().zip(boxes).zip(reached) {
        if r {
            mainland.push(p);
        } else {
            far.push((p, b));
        }
    }
    if spec.mainland_only || spec.conus {
        return Ok(vec![mainland]);
    }
    // Single-linkage groups: an island chain (the Aleutians) stays one inset.
    let mut groups: Vec<Vec<&Polygon>> = Vec::new();
    while let Some(seed) = far.pop() {
        let mut group = vec![seed];
        let mut i = 0;
        while i < group.len() {
            let near: Vec<usize> = (0..far.len()).filter(|&j| box_gap_km(group[i].1, far[j].1) <= INSET_KM).collect();
            for j in near.into_iter().rev() {
                group.push(far.swap_remove(j));
            }
            i += 1;
        }
        groups.push(group.into_iter().map(|(p, _)| p).collect());
    }
    let area = |g: &Vec<&Polygon>| g.iter().map(|p| p.area).sum::<f64>();
    groups.sort_by(|a, b| area(b).total_cmp(&area(a)));
    // Specks (an atoll, a rock) are left out: an inset for them would be an empty box.
    let floor = MIN_INSET_AREA_SHARE * area(&mainland);
    groups.retain(|g| area(g) >= floor);
    groups.truncate(MAX_INSETS);
    // Territories go last, whatever their size: they are drawn because they have markers.
    for code in spec.territories.iter().filter(|t| territories_of(&spec.country).iter().any(|c| c.eq_ignore_ascii_case(t))) {
        if let Some(t) = shapes.country(code) {
            groups.push(t.polygons.iter().collect());
        }
    }
    Ok(std::iter::once(mainland).chain(groups).collect())
}

/// A focus map worked out for one image: the camera and the shapes as paths in image pixels,
/// drawn afterwards band by band.
pub struct FocusPlan {
    pub cam: FocusCamera,
    land: Option<Path>,
    /// The lakes, cut out of the land.
    lakes: Option<Path>,
    /// What the outline strokes where it is not `land` (see `Projected::outlines`).
    outline_path: Option<Path>,
    regions: Option<Path>,
    /// Thin boxes around the insets.
    frames: Option<Path>,
    /// The same boxes in image pixels (left, top, right, bottom), largest inset first.
    pub inset_frames: Vec<[f32; 4]>,
    fill: [u8; 3],
    outline: [u8; 3],
    outline_width: f32,
    region_width: f32,
    background: Option<[u8; 3]>,
}

impl FocusCamera {
    /// The camera of an image band whose top row is row `y0` of the whole.
    pub fn band(&self, y0: u32) -> FocusCamera {
        FocusCamera { ty: self.ty - y0 as f64, ..self.clone() }
    }
}

impl FocusPlan {
    /// Draws the background and the shapes into a band whose top row is row `y0`.
    pub fn draw(&self, band: &mut PixmapMut, y0: u32) {
        if let Some(bg) = self.background {
            band.fill(tiny_skia::Color::from_rgba8(bg[0], bg[1], bg[2], 255));
        }
        let shift = Transform::from_translate(0.0, -(y0 as f32));
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        if let Some(path) = &self.land {
            paint.set_color_rgba8(self.fill[0], self.fill[1], self.fill[2], 255);
            band.fill_path(path, &paint, FillRule::EvenOdd, shift, None);
            // The lakes as the background again, inside the land only.
            if let (Some(lakes), Some(mut mask)) = (&self.lakes, Mask::new(band.width(), band.height())) {
                mask.fill_path(path, FillRule::EvenOdd, true, shift);
                let mut water = Paint { anti_alias: true, ..Paint::default() };
                match self.background {
                    Some(bg) => water.set_color_rgba8(bg[0], bg[1], bg[2], 255),
                    None => water.blend_mode = BlendMode::DestinationOut,
                }
                band.fill_path(lakes, &water, FillRule::EvenOdd, shift, Some(&mask));
            }
            if self.outline_width > 0.0 {
                paint.set_color_rgba8(self.outline[0], self.outline[1], self.outline[2], 255);
                band.stroke_path(self.outline_path.as_ref().unwrap_or(path), &paint, &Stroke { width: self.outline_width, ..Stroke::default() }, shift, None);
            }
        }
        if let Some(path) = &self.regions {
            paint.set_color_rgba8(self.outline[0], self.outline[1], self.outline[2], 255);
            band.stroke_path(path, &paint, &Stroke { width: self.region_width, ..Stroke::default() }, shift, None);
        }
        if let Some(path) = &self.frames {
            paint.set_color_rgba8(self.outline[0], self.outline[1], self.outline[2], 255);
            band.stroke_path(path, &paint, &Stroke { width: self.region_width, ..Stroke::default() }, shift, None);
        }
    }
}

/// A country's shape projected and simplified, kept per (country, mainland cut): the costly
/// part of a focus map, the same for every image size.
struct Projected {
    /// The mainland, then the insets.
    parts: std::sync::Arc<[Part]>,
    /// Every part's rings, placed in the map's plane.
    rings: Vec<Vec<(f32, f32)>>,
    /// The lines the outline strokes, where they are not `rings`: a shape cut at the
    /// antimeridian (Russia's, Fiji's) has edges along it that are no coast or border, so its
    /// rings are stroked as open lines broken there. None: stroke the rings.
    outlines: Option<Vec<Vec<(f32, f32)>>>,
    /// The rings of the lakes within the parts, placed in the map's plane.
    lakes: Vec<Vec<(f32, f32)>>,
    /// The insets' frames in the map's plane: x0, y0, x1, y1.
    frames: Vec<[f64; 4]>,
    /// Extent of the rings and frames: x0, y0, x1, y1.
    extent: [f64; 4],
}

/// Focus maps of one set of shapes: each country's projected shape is worked out on first use
/// and kept (every image size and band reuses it), and so are the last backgrounds drawn (the
/// country, its regions and inset frames at one size and scale), which every map of that
/// country at that size shares: only its markers differ.
pub struct FocusMaps {
    cache: std::sync::Mutex<std::collections::HashMap<FocusKey, std::sync::Arc<Projected>>>,
    backgrounds: quick_cache::sync::Cache<String, std::sync::Arc<Pixmap>, BackgroundWeigh>,
}

/// The focus backgrounds' bound: four 1200 x 800 maps.
pub const FOCUS_BACKGROUND_BYTES: u64 = 16 << 20;

#[derive(Clone)]
struct BackgroundWeigh;

impl quick_cache::Weighter<String, std::sync::Arc<Pixmap>> for BackgroundWeigh {
    fn weight(&self, k: &String, v: &std::sync::Arc<Pixmap>) -> u64 {
        (k.len() + v.data().len()) as u64
    }
}

impl Default for FocusMaps {
    fn default() -> FocusMaps {
        FocusMaps { cache: Default::default(), backgrounds: quick_cache::sync::Cache::with_weighter(16, FOCUS_BACKGROUND_BYTES, BackgroundWeigh) }
    }
}

/// A projected focus shape's identity: the country, whether it is cut to its mainland, and the
/// territories drawn with it.
type FocusKey = (String, bool, Vec<String>);

/// One part of a focus shape in its own projection, before placement: the projection, its
/// lng/lat box, its rings and their projected extent.
type OwnPart = (Conic, [f64; 4], Vec<Vec<(f64, f64)>>, [f64; 4]);

/// Simplification tolerance as a share of the projected shape's diagonal: under half a pixel
/// even at 4096 pixels.
const SIMPLIFY_SHARE: f64 = 1.0 / 10_000.0;

/// A part's lng/lat box, unwrapped around the middle of its largest polygon.
fn lnglat_box(polygons: &[&Polygon]) -> [f64; 4] {
    let boxes: Vec<([f64; 4], f64)> = polygons.iter().map(|p| (arc_box(p), p.area)).collect();
    let base = boxes.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map_or(0.0, |(b, _)| (b[0] + b[2]) / 2.0);
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for (bbox, _) in &boxes {
        let (a, b) = (base + wrap(bbox[0] - base), base + wrap(bbox[2] - base));
        let (a, b) = if b < a { (a, a + (bbox[2] - bbox[0])) } else { (a, b) };
        x0 = x0.min(a);
        x1 = x1.max(b);
        y0 = y0.min(bbox[1]);
        y1 = y1.max(bbox[3]);
    }
    [x0, y0, x1, y1]
}

/// The projection of one part: the published ones for the US's three parts, else parallels at
/// a sixth and five sixths of the part's latitude span.
fn conic_for(country: &str, index: usize, [x0, y0, x1, y1]: [f64; 4]) -> Conic {
    let us = country.eq_ignore_ascii_case("US");
    let centre = (x0 + x1) / 2.0;
    match (us, index) {
        // USGS Albers for the lower 48: standard parallels 29.5 and 45.5 N, 96 W.
        (true, 0) => Conic::new(29.5, 45.5, 37.5, -96.0),
        // USGS Albers for Alaska (55 and 65 N, 154 W) and for Hawaii (8 and 18 N, 157 W).
        (true, _) if y1 > 50.0 => Conic::new(55.0, 65.0, 50.0, -154.0),
        (true, _) if y0 < 25.0 && centre < -150.0 => Conic::new(8.0, 18.0, 13.0, -157.0),
        _ => {
            let span = y1 - y0;
            Conic::new(y0 + span / 6.0, y1 - span / 6.0, (y0 + y1) / 2.0, centre)
        }
    }
}

/// Whether a box would cover any of the land drawn by `rings` (even-odd polygons): a ring
/// point inside it, or its centre or a corner inside the land.
fn covers_land(f: &[f64; 4], rings: &[Vec<(f64, f64)>]) -> bool {
    let inside_box = |&(x, y): &(f64, f64)| x > f[0] && x < f[2] && y > f[1] && y < f[3];
    if rings.iter().flatten().any(inside_box) {
        return true;
    }
    [((f[0] + f[2]) / 2.0, (f[1] + f[3]) / 2.0), (f[0], f[1]), (f[2], f[1]), (f[0], f[3]), (f[2], f[3])].iter().any(|&p| inside_rings(rings, p))
}

/// Whether a point is inside `rings`, even-odd (holes are rings too): a ray cast to the right.
fn inside_rings<'a>(rings: impl IntoIterator<Item = &'a Vec<(f64, f64)>>, (x, y): (f64, f64)) -> bool {
    let mut inside = false;
    for r in rings {
        for (a, b) in r.iter().zip(r.iter().cycle().skip(1)) {
            if (a.1 > y) != (b.1 > y) && x < a.0 + (y - a.1) / (b.1 - a.1) * (b.0 - a.0) {
                inside = !inside;
            }
        }
    }
    inside
}

fn extent_of(rings: &[Vec<(f64, f64)>]) -> [f64; 4] {
    let mut e = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for &(x, y) in rings.iter().flatten() {
        e = [e[0].min(x), e[1].min(y), e[2].max(x), e[3].max(y)];
    }
    e
}

impl FocusMaps {
    fn projected(&self, shapes: &Shapes, spec: &FocusSpec) -> Result<std::sync::Arc<Projected>> {
        let key = (spec.country.to_ascii_uppercase(), spec.mainland_only || spec.conus, spec.territories.iter().map(|t| t.to_ascii_uppercase()).collect());
        if let Some(p) = self.cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let p = std::sync::Arc::new(project(shapes, spec)?);
        self.cache.lock().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
        Ok(p)
    }

    /// A plan's background as a whole image: from the last ones drawn when one was drawn for the
    /// same request fields, size and scale (`plan` is a function of them), else drawn now and
    /// kept while it fits.
    pub fn background(&self, plan: &FocusPlan, spec: &FocusSpec, width: u32, height: u32, scale: f32, marker_reach: f32) -> Option<Pixmap> {
        let key = format!("{spec:?}|{width}|{height}|{scale:?}|{marker_reach:?}");
        let draw = || -> std::result::Result<std::sync::Arc<Pixmap>, ()> {
            let mut p = Pixmap::new(width, height).ok_or(())?;
            plan.draw(&mut p.as_mut(), 0);
            Ok(std::sync::Arc::new(p))
        };
        self.backgrounds.get_or_insert_with(&key, draw).ok().map(|p| (*p).clone())
    }

    /// The inset frames a focus map of this size draws, in image pixels (left, top, right,
    /// bottom), largest inset first: none for a country without far-flung parts or a map cut
    /// to its mainland. For tests and for clients that label the insets.
    pub fn inset_frames(&self, shapes: &Shapes, spec: &FocusSpec, width: u32, height: u32, scale: f32, marker_radius: f32) -> Result<Vec<[f32; 4]>> {
        Ok(self.plan(shapes, spec, width * scale as u32, height * scale as u32, scale, (marker_radius + 1.2) * scale)?.inset_frames)
    }

    /// Fits the focus map to a `width` x `height` image, leaving `marker_reach` pixels beyond
    /// the padding so a marker on the outermost coast is not cut by the image edge.
    pub fn plan(&self, shapes: &Shapes, spec: &FocusSpec, width: u32, height: u32, scale: f32, marker_reach: f32) -> Result<FocusPlan> {
        plan(self.projected(shapes, spec)?, regions(shapes, spec)?, spec, width, height, scale, marker_reach)
    }
}

/// A country's shape projected, its parts placed and simplified: the costly part of a focus map.
fn project(shapes: &Shapes, spec: &FocusSpec) -> Result<Projected> {
    let groups = select(shapes, spec)?;
    let composite = groups.len() > 1;
    let mainland_cut = spec.mainland_only || spec.conus;
    // Each part in its own projection, unplaced.
    let mut own: Vec<OwnPart> = Vec::new();
    // Each part's outline lines, unplaced; kept only when some ring has an edge on the
    // antimeridian.
    let mut own_lines: Vec<Vec<Vec<(f64, f64)>>> = Vec::new();
    let cut = groups.iter().flatten().flat_map(|p| &p.rings).any(|r| open_at(r, along_antimeridian).is_some());
    for (i, group) in groups.iter().enumerate() {
        let bbox = lnglat_box(group);
        let conic = conic_for(&spec.country, i, bbox);
        let rings: Vec<Vec<(f64, f64)>> =
            group.iter().flat_map(|p| p.rings.iter()).map(|r| r.iter().map(|&(lng, lat)| conic.project(lat, lng)).collect()).collect();
        if cut {
            let lines = group.iter().flat_map(|p| p.rings.iter()).flat_map(|r| outline_pieces(r));
            own_lines.push(lines.map(|l| l.iter().map(|&(lng, lat)| conic.project(lat, lng)).collect()).collect());
        }
        let e = extent_of(&rings);
        own.push((conic, bbox, rings, e));
    }
    let main = own[0].3;
    let main_side = (main[2] - main[0]).max(main[3] - main[1]);
    let gap = 0.02 * main_side;
    // Insets scaled: Alaska to 0.35 as US atlases draw it, others down to a share of the
    // mainland when larger, never up.
    let scales: Vec<f64> = own
        .iter()
        .enumerate()
        .map(|(i, (_, bbox, _, e))| {
            if i == 0 {
                1.0
            } else if spec.country.eq_ignore_ascii_case("US") && bbox[3] > 50.0 {
                0.35
            } else {
                (INSET_SHARE * main_side / (e[2] - e[0]).max(e[3] - e[1]).max(1e-9)).min(1.0)
            }
        })
        .collect();
    // The row of insets from the mainland's left edge, as low inside its box as it can go
    // without covering any of the mainland's land; below the box when it must.
    let row_h = own[1..].iter().zip(&scales[1..]).map(|((.., e), s)| (e[3] - e[1]) * s).fold(0.0, f64::max) + 2.0 * gap;
    let frames_at = |bottom: f64| -> Vec<[f64; 4]> {
        let mut x = main[0];
        own[1..]
            .iter()
            .zip(&scales[1..])
            .map(|((.., e), s)| {
                let f = [x, bottom, x + (e[2] - e[0]) * s + 2.0 * gap, bottom + (e[3] - e[1]) * s + 2.0 * gap];
                x = f[2] + gap;
                f
            })
            .collect()
    };
    // A frame keeps a gap from the land as well as off it: one touching the coast (Texas on
    // Hawaii's, Norway on Svalbard's) read as part of the country.
    let clear = |f: &[f64; 4]| !covers_land(&[f[0] - gap, f[1] - gap, f[2] + gap, f[3] + gap], &own[0].2);
    let mut frames = frames_at(main[1] - row_h - gap);
    for step in 0..=10 {
        let candidate = frames_at(main[1] - row_h * step as f64 / 10.0);
        if candidate.iter().all(clear) {
            frames = candidate;
            break;
        }
    }
    let mut parts: Vec<Part> = Vec::new();
    let mut rings: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut lines: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut boxes: Vec<[f64; 4]> = Vec::new();
    for (i, (conic, bbox, own_rings, e)) in own.into_iter().enumerate() {
        boxes.push(bbox);
        let scale = scales[i];
        // An inset's lower-left corner sits a gap inside its frame's.
        let offset = if i == 0 { (0.0, 0.0) } else { (frames[i - 1][0] + gap - e[0] * scale, frames[i - 1][1] + gap - e[1] * scale) };
        if let Some(own) = own_lines.get_mut(i) {
            lines.extend(std::mem::take(own).into_iter().map(|l| l.into_iter().map(|(x, y)| (x * scale + offset.0, y * scale + offset.1)).collect::<Vec<_>>()));
        }
        let keep = (composite || mainland_cut).then_some([bbox[0] - 0.5, bbox[1] - 0.5, bbox[2] + 0.5, bbox[3] + 0.5]);
        rings.extend(own_rings.into_iter().map(|r| r.into_iter().map(|(x, y)| (x * scale + offset.0, y * scale + offset.1)).collect::<Vec<_>>()));
        parts.push(Part { conic, scale, offset, keep });
    }
    let mut extent = extent_of(&rings);
    for f in &frames {
        extent = [extent[0].min(f[0]), extent[1].min(f[1]), extent[2].max(f[2]), extent[3].max(f[3])];
    }
    let tol = (extent[2] - extent[0]).hypot(extent[3] - extent[1]) * SIMPLIFY_SHARE;
    let rings = rings.iter().map(|r| simplify(r, tol)).collect();
    let outlines = cut.then(|| lines.iter().map(|l| simplify(l, tol)).collect());
    // The lakes on a part's own land, in its projection: drawn as holes in the land (the
    // country's land masks them, so a lake over a border shows on this side only). A lake in
    // a part's box but on another country's land (Sweden's Vänern in Norway's) is left out:
    // placed in that part's projection it could fall on an inset's land.
    let mut lakes = Vec::new();
    for lake in &shapes.lakes {
        let b = arc_box(lake);
        let within = |p: &[f64; 4]| {
            let l = p[0] + wrap(b[0] - p[0]);
            l <= p[2] && l + (b[2] - b[0]) >= p[0] && b[1] <= p[3] && b[3] >= p[1]
        };
        let Some(i) = (0..groups.len()).find(|&i| within(&boxes[i]) && on_land(lake, &groups[i])) else { continue };
        let part = &parts[i];
        lakes.extend(lake.rings.iter().map(|r| simplify(&r.iter().map(|&(lng, lat)| part.place(lat, lng)).collect::<Vec<_>>(), tol)));
    }
    Ok(Projected { parts: parts.into(), rings, outlines, lakes, frames, extent })
}

/// Whether some point of the lake's shore lies on the land of `polygons` (even-odd over their
/// rings, holes included). A lake on a border has shore on both sides; one across it only
/// on the other. The first point found on the land settles it.
fn on_land(lake: &Polygon, polygons: &[&Polygon]) -> bool {
    let holds =
        |(x, y): (f64, f64)| polygons.iter().filter(move |p| x >= p.bbox[0] && x <= p.bbox[2] && y >= p.bbox[1] && y <= p.bbox[3]).flat_map(|p| &p.rings);
    lake.rings.first().is_some_and(|shore| shore.iter().any(|&p| inside_rings(holds(p), p)))
}

/// Whether a longitude is the antimeridian, where the reference borders cut shapes.
fn on_antimeridian(lng: f64) -> bool {
    lng.abs() >= 180.0 - 1e-9
}

/// An edge that runs along the antimeridian: both ends on it.
fn along_antimeridian(a: (f64, f64), b: (f64, f64)) -> bool {
    on_antimeridian(a.0) && on_antimeridian(b.0)
}

/// A closed ring as the open lines its outline is: the ring itself, closed, when no edge runs
/// along the antimeridian; else the runs between such edges.
fn outline_pieces(ring: &[(f64, f64)]) -> Vec<Vec<(f64, f64)>> {
    open_at(ring, along_antimeridian).unwrap_or_else(|| vec![ring.iter().copied().chain(ring.first().copied()).collect()])
}

fn plan(
    shape: std::sync::Arc<Projected>,
    regions: Vec<&Polygon>,
    spec: &FocusSpec,
    width: u32,
    height: u32,
    scale: f32,
    marker_reach: f32,
) -> Result<FocusPlan> {
    let [px0, py0, px1, py1] = shape.extent;
    let (w, h) = (width as f64, height as f64);
    let pad = 0.05 * w.min(h) + (spec.outline_width * scale) as f64 + marker_reach as f64;
    let k = ((w - 2.0 * pad).max(1.0) / (px1 - px0).max(1e-9)).min((h - 2.0 * pad).max(1.0) / (py1 - py0).max(1e-9));
    let (tx, ty) = (w / 2.0 - (px0 + px1) / 2.0 * k, h / 2.0 + (py0 + py1) / 2.0 * k);
    let cam = FocusCamera { parts: shape.parts.clone(), k, tx, ty };
    let main = shape.parts[0];

    let to_px = |(x, y): (f64, f64)| ((tx + x * k) as f32, (ty - y * k) as f32);
    let mut pb = PathBuilder::new();
    for ring in &shape.rings {
        push_ring(&mut pb, ring.iter().map(|&(x, y)| to_px((x as f64, y as f64))));
    }
    let mut lb = PathBuilder::new();
    for ring in &shape.lakes {
        push_ring(&mut lb, ring.iter().map(|&(x, y)| to_px((x as f64, y as f64))));
    }
    let mut ob = PathBuilder::new();
    for line in shape.outlines.iter().flatten() {
        push_line(&mut ob, line.iter().map(|&(x, y)| to_px((x as f64, y as f64))));
    }
    let mut rb = PathBuilder::new();
    for ring in regions.iter().flat_map(|p| &p.rings) {
        // State outlines are drawn in the part they lie in (Alaska's in its inset).
        let part = ring.first().and_then(|&(lng, lat)| shape.parts[1..].iter().find(|p| p.holds(lat, lng))).unwrap_or(&main);
        push_ring(&mut rb, ring.iter().map(|&(lng, lat)| to_px(part.place(lat, lng))));
    }
    let mut fb = PathBuilder::new();
    let mut frames = Vec::new();
    for f in &shape.frames {
        let (a, b) = (to_px((f[0], f[1])), to_px((f[2], f[3])));
        frames.push([a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1)]);
        if let Some(r) = tiny_skia::Rect::from_ltrb(a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1)) {
            fb.push_rect(r);
        }
    }
    Ok(FocusPlan {
        cam,
        land: pb.finish(),
        lakes: lb.finish(),
        outline_path: shape.outlines.as_ref().and_then(|_| ob.finish()),
        regions: rb.finish(),
        frames: fb.finish(),
        inset_frames: frames,
        fill: spec.fill,
        outline: spec.outline,
        outline_width: spec.outline_width * scale,
        region_width: (spec.outline_width * scale).max(0.75 * scale),
        background: spec.background,
    })
}

/// Adds an open line, dropping points within a third of a pixel of the last one kept; the
/// points kept.
fn push_line(pb: &mut PathBuilder, pts: impl Iterator<Item = (f32, f32)>) -> usize {
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
    n
}

/// Adds a closed ring, as `push_line` does its points.
fn push_ring(pb: &mut PathBuilder, pts: impl Iterator<Item = (f32, f32)>) {
    if push_line(pb, pts) > 0 {
        pb.close();
    }
}

/// The admin-1 shapes `regions` names (US states only: the one admin-1 set the reference data
/// carries).
fn regions<'a>(shapes: &'a Shapes, spec: &FocusSpec) -> Result<Vec<&'a Polygon>> {
    if spec.regions.is_empty() {
        return Ok(Vec::new());
    }
    if !spec.country.eq_ignore_ascii_case("US") {
        return Err(RenderError::InvalidFocus { field: "regions", message: "regions are available for US states only".into() });
    }
    let mut out = Vec::new();
    for code in &spec.regions {
        let s = shapes.us_state(code).ok_or_else(|| RenderError::InvalidFocus { field: "regions", message: format!("unknown US state {code:?}") })?;
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

#[cfg(test)]
mod background_tests {
    use super::*;
    use crate::shapes::test_shapes as shapes;

    fn spec(country: &str, fill: [u8; 3]) -> FocusSpec {
        FocusSpec {
            country: country.into(),
            mainland_only: false,
            conus: false,
            regions: Vec::new(),
            territories: Vec::new(),
            fill,
            outline: [156, 163, 175],
            outline_width: FOCUS_OUTLINE_WIDTH,
            background: None,
        }
    }

    /// A kept background is the plan drawn afresh, for its own fields only: another fill, country
    /// or size never gets it; and the kept ones stay within their bound.
    #[test]
    fn focus_backgrounds_are_their_own_and_bounded() {
        let (shapes, maps) = (shapes(), FocusMaps::default());
        let drawn = |spec: &FocusSpec, w: u32, h: u32| {
            let plan = maps.plan(&shapes, spec, w, h, 1.0, 6.2).unwrap();
            let mut fresh = Pixmap::new(w, h).unwrap();
            plan.draw(&mut fresh.as_mut(), 0);
            (maps.background(&plan, spec, w, h, 1.0, 6.2).unwrap(), fresh)
        };
        for round in 0..2 {
            for (country, fill) in [("FR", [10, 120, 200]), ("FR", [200, 40, 40]), ("DE", [10, 120, 200])] {
                for (w, h) in [(600, 400), (640, 400), (1200, 800), (900, 900)] {
                    let (kept, fresh) = drawn(&spec(country, fill), w, h);
                    assert!(kept.data() == fresh.data(), "round {round}, {country} {fill:?} {w}x{h}: not this map's background");
                    assert!(maps.backgrounds.weight() <= FOCUS_BACKGROUND_BYTES);
                }
            }
        }
        // Twelve backgrounds of up to 3.8 MB were drawn into 16 MiB: some were let go.
        assert!(maps.backgrounds.len() < 12);
    }
}
