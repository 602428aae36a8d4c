//! One map, in drawing order: the background (a Web Mercator basemap, or a focus country
//! alone), the data (markers or a heatmap), city labels, the legend, then the encoder.

use std::time::Instant;

use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, PixmapMut, Stroke, Transform};

use crate::atlas::Atlas;
use crate::blend::over;
use crate::camera::{Camera, Viewport};
use crate::cells::Cover;
use crate::credit::Credit;
use crate::encode::{encode, ImageFormat};
use crate::error::{RenderError, Result};
use crate::focus::{FocusCamera, FocusPlan, FocusSpec};
use crate::labels::{self, Rect};
use crate::legend::{Legend, LegendEntry};
use crate::streets::StreetPlan;
use crate::theme::Themes;
use crate::{heatmap, parse_hex};

/// The largest side, in final pixels (after scale), the contract allows.
pub const MAX_SIDE: u32 = 4096;

/// Colours for companies on a multi-company map when the request gives none: a qualitative
/// palette whose neighbours stay apart for colour-blind readers.
pub const COMPANY_PALETTE: [&str; 5] = ["#2563EB", "#DC2626", "#16A34A", "#D97706", "#7C3AED"];

/// The resolution written into an image's metadata when the request gives none (the CSS
/// reference pixel's 96 per inch).
pub const DEFAULT_DPI: u32 = 96;

/// The theme of `data/themes.json` a map is drawn in when the request names none.
pub const DEFAULT_STYLE: &str = "light";

/// Marker radius at scale 1, in pixels, when the request gives none.
pub const DEFAULT_MARKER_RADIUS: f32 = 5.0;

/// Heatmap kernel radius at scale 1, in pixels.
const HEAT_RADIUS: f32 = 24.0;

/// The most pixels one map's markers (or heatmap kernels) may cover, summed over every point:
/// about half a second of stamping on one core. It bounds what a single request can cost, so
/// 43,000 markers at radius 64 and scale 4 (four minutes of drawing) are refused up front.
/// The default marker (radius 5, scale 1) covers 225 px, so over a million points fit.
pub const MAX_MARKER_PIXELS: u64 = 1 << 28;

/// The width of a line between two stores (an overlap map's pair), at scale 1.
const LINK_WIDTH: f32 = 1.5;

/// One company's markers (a single group for a brand; one per ticker).
#[derive(Debug, Clone, Default)]
pub struct MarkerGroup {
    /// The theme's marker colour (one brand) or the company palette (several) when None.
    pub color: Option<[u8; 3]>,
    /// The canonical name, for the legend.
    pub name: String,
    /// (lat, lng)
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct MapRequest {
    pub width: u32,
    pub height: u32,
    pub scale: u32,
    pub dpi: u32,
    pub style: String,
    pub format: ImageFormat,
    pub viewport: Viewport,
    /// Marker radius at scale 1, in pixels.
    pub marker_radius: f32,
    pub groups: Vec<MarkerGroup>,
    /// Lines between two points ((lat, lng) each), drawn under the markers: an overlap map's
    /// pairs.
    pub links: Vec<[(f64, f64); 2]>,
    /// Each later group's markers smaller than the one before, so stores of several groups on
    /// one spot (an overlap map's pairs) show as rings around each other instead of the last
    /// group's marker hiding the rest.
    pub rings: bool,
    pub heatmap: bool,
    pub legend: bool,
    /// Draw one country alone instead of the basemap (the viewport is then the country's).
    pub focus: Option<FocusSpec>,
    /// Give up (`DeadlinePassed`) when this passes: checked before each costly step (planning,
    /// drawing, encoding), so a request its client stopped waiting for stops using a core.
    pub deadline: Option<Instant>,
}

impl MapRequest {
    /// A plain map of one group with the contract's defaults.
    pub fn new(width: u32, height: u32, groups: Vec<MarkerGroup>) -> MapRequest {
        MapRequest {
            width,
            height,
            scale: 1,
            dpi: DEFAULT_DPI,
            style: DEFAULT_STYLE.into(),
            format: ImageFormat::Png,
            viewport: Viewport::Auto,
            marker_radius: DEFAULT_MARKER_RADIUS,
            groups,
            links: Vec::new(),
            rings: false,
            heatmap: false,
            legend: false,
            focus: None,
            deadline: None,
        }
    }
}

/// Where a lat/lng lands in the image.
enum Projection {
    Mercator(Camera),
    Focus(FocusCamera),
}

impl Projection {
    fn pixel(&self, lat: f64, lng: f64) -> Option<(f64, f64)> {
        match self {
            Projection::Mercator(c) => Some(c.pixel(lat, lng)),
            Projection::Focus(f) => f.pixel(lat, lng),
        }
    }
}

/// A filled, outlined circle, rendered once and stamped for every marker: one small blit per
/// marker instead of one path fill.
fn sprite(radius: f32, stroke: f32, fill: [u8; 3], edge: [u8; 3]) -> Option<(Pixmap, f32)> {
    let size = (2.0 * (radius + stroke)).ceil() as u32 + 2;
    let c = size as f32 / 2.0;
    let mut p = Pixmap::new(size, size)?;
    draw_marker(&mut p.as_mut(), (c, c), radius, stroke, fill, edge)?;
    Some((p, c))
}

/// One marker drawn with paths: a filled circle at `centre` and its rim.
fn draw_marker(p: &mut PixmapMut, centre: (f32, f32), radius: f32, stroke: f32, fill: [u8; 3], edge: [u8; 3]) -> Option<()> {
    let path = PathBuilder::from_circle(centre.0, centre.1, radius)?;
    let mut paint = Paint { anti_alias: true, ..Paint::default() };
    paint.set_color_rgba8(fill[0], fill[1], fill[2], 255);
    p.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), None);
    if stroke > 0.0 {
        paint.set_color_rgba8(edge[0], edge[1], edge[2], 255);
        p.stroke_path(&path, &paint, &Stroke { width: stroke, ..Stroke::default() }, Transform::identity(), None);
    }
    Some(())
}

/// A sprite prepared for stamping: per row, its covered span split into the opaque middle
/// (copied whole) and the anti-aliased rim (blended), premultiplied RGBA bytes.
struct Stamp {
    size: i32,
    /// Per row: (first x, opaque first x, opaque end x, end x); empty rows have first == end.
    rows: Vec<(i32, i32, i32, i32)>,
    rgba: Vec<u8>,
}

impl Stamp {
    fn new(p: &Pixmap) -> Stamp {
        let size = p.width() as i32;
        let rgba = p.data().to_vec();
        let alpha = |x: i32, y: i32| rgba[((y * size + x) * 4 + 3) as usize];
        let rows = (0..size)
            .map(|y| {
                let covered: Vec<i32> = (0..size).filter(|&x| alpha(x, y) > 0).collect();
                let (Some(&first), Some(&last)) = (covered.first(), covered.last()) else { return (0, 0, 0, 0) };
                let opaque: Vec<i32> = (first..=last).filter(|&x| alpha(x, y) == 255).collect();
                // The opaque run is used only when it is one contiguous run.
                match (opaque.first(), opaque.last()) {
                    (Some(&a), Some(&b)) if (b - a + 1) as usize == opaque.len() => (first, a, b + 1, last + 1),
                    _ => (first, first, first, last + 1),
                }
            })
            .collect();
        Stamp { size, rows, rgba }
    }

    /// Source-over at an integer offset, clipped to the image. Writing bytes directly, with
    /// the opaque middle of each row copied whole, costs a fraction of a pattern fill.
    fn draw(&self, dst: &mut PixmapMut, ox: i32, oy: i32) {
        let (dw, dh) = (dst.width() as i32, dst.height() as i32);
        if ox >= dw || oy >= dh || ox + self.size <= 0 || oy + self.size <= 0 {
            return;
        }
        let data = dst.data_mut();
        for (sy, &(first, o0, o1, end)) in self.rows.iter().enumerate() {
            let y = oy + sy as i32;
            if y < 0 || y >= dh || first == end {
                continue;
            }
            let row = (y * dw) as usize * 4;
            let srow = sy * self.size as usize * 4;
            let clip = |x: i32| x.clamp(-ox, dw - ox);
            let blend = |data: &mut [u8], a: i32, b: i32| {
                let (a, b) = (clip(a), clip(b));
                if a >= b {
                    return;
                }
                let src = &self.rgba[srow + a as usize * 4..srow + b as usize * 4];
                let dst = &mut data[row + (ox + a) as usize * 4..row + (ox + b) as usize * 4];
                for (s, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(4)) {
                    over([s[0], s[1], s[2], s[3]], d);
                }
            };
            blend(data, first, o0);
            let (a, b) = (clip(o0), clip(o1));
            if a < b {
                let di = row + (ox + a) as usize * 4;
                let si = srow + a as usize * 4;
                data[di..di + (b - a) as usize * 4].copy_from_slice(&self.rgba[si..si + (b - a) as usize * 4]);
            }
            blend(data, o1, end);
        }
    }
}

/// Pixels one point's marker (or heatmap kernel) covers: the side of its square, squared.
fn point_pixels(req: &MapRequest) -> u64 {
    let scale = req.scale as f32;
    let side = if req.heatmap { (2.0 * HEAT_RADIUS * scale).ceil() } else { (2.0 * (req.marker_radius * scale + 1.2 * scale)).ceil() + 2.0 };
    (side as u64).pow(2)
}

/// Whether the request may be drawn at all: its size, viewport and the work its points cost
/// (see [`MAX_MARKER_PIXELS`]). Cheap: nothing is allocated. `render` checks it again.
pub fn admit(req: &MapRequest) -> Result<(u32, u32)> {
    let size = check(req)?;
    let points: u64 = req.groups.iter().map(|g| g.points.len() as u64).sum();
    let each = point_pixels(req);
    if points.saturating_mul(each) > MAX_MARKER_PIXELS {
        return Err(RenderError::TooMuchWork { points, each, max: MAX_MARKER_PIXELS });
    }
    Ok(size)
}

fn on_time(req: &MapRequest) -> Result<()> {
    match req.deadline {
        Some(d) if Instant::now() >= d => Err(RenderError::DeadlinePassed),
        _ => Ok(()),
    }
}

fn check(req: &MapRequest) -> Result<(u32, u32)> {
    let (w, h) = (req.width.saturating_mul(req.scale), req.height.saturating_mul(req.scale));
    if req.width == 0 || req.height == 0 || req.scale == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(RenderError::InvalidSize { width: w, height: h, max: MAX_SIDE });
    }
    if let Viewport::CenterZoom(_, z) = req.viewport {
        if !(0.0..=18.0).contains(&z) {
            return Err(RenderError::InvalidViewport(format!("zoom {z} is outside 0-18")));
        }
    }
    Ok((w, h))
}

/// A drawn map: the encoded image, and the attribution of the street map's tiles when the
/// image shows them.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub body: Vec<u8>,
    pub attribution: Option<String>,
    /// A basemap tile failed to read or decode for the first time (it was skipped): why, for the
    /// service's log.
    pub warning: Option<String>,
    /// A legend was asked for and is not drawn: the image is too small for it (see
    /// `legend::MAX_LEGEND_SHARE`), or no font was loaded.
    pub legend_omitted: bool,
}

/// Draws and encodes a map.
pub fn render(atlas: &Atlas, themes: &Themes, req: &MapRequest) -> Result<Vec<u8>> {
    render_map(atlas, themes, req).map(|r| r.body)
}

/// Draws and encodes a map, saying whose tiles it shows.
pub fn render_map(atlas: &Atlas, themes: &Themes, req: &MapRequest) -> Result<Rendered> {
    // Sizes and work are checked before any pixel buffer exists.
    let (w, h) = admit(req)?;
    on_time(req)?;
    let theme = themes.get(&req.style)?;
    let scale = req.scale as f32;
    let colors: Vec<[u8; 3]> = req
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| match g.color {
            Some(c) => Ok(c),
            None if req.groups.len() == 1 => Ok(theme.marker),
            None => parse_hex(COMPANY_PALETTE[i % COMPANY_PALETTE.len()]),
        })
        .collect::<Result<_>>()?;
    // One prepared sprite per company, shared by every band.
    let stamps: Vec<(Stamp, f32)> = colors
        .iter()
        .enumerate()
        .filter_map(|(i, &fill)| {
            // At least a pixel (a smaller circle is a faint smudge), its rim at most a third of
            // it: a full-width rim on a marker of a pixel or so covered its fill, and such
            // markers drew in the rim's colour (or not at all).
            let radius = (req.marker_radius * ring_factor(req, i) * scale).max(1.0);
            sprite(radius, (1.2 * scale).min(radius / 3.0), fill, theme.marker_stroke).map(|(p, c)| (Stamp::new(&p), c))
        })
        .collect();
    // Lines in the theme's text colour: it stands out from land and water in every theme (the
    // markers' rim colour is the land's in several).
    let link_paint = {
        let mut p = Paint { anti_alias: true, ..Paint::default() };
        let e = theme.text;
        p.set_color_rgba8(e[0], e[1], e[2], 255);
        p
    };
    let link_stroke = Stroke { width: LINK_WIDTH * scale, ..Stroke::default() };
    let draw_markers = |target: &mut PixmapMut, projection: &Projection| {
        // Links first, so that markers sit on their ends.
        for &[a, b] in &req.links {
            let (Some(p), Some(q)) = (projection.pixel(a.0, a.1), projection.pixel(b.0, b.1)) else { continue };
            let mut path = PathBuilder::new();
            path.move_to(p.0 as f32, p.1 as f32);
            path.line_to(q.0 as f32, q.1 as f32);
            if let Some(path) = path.finish() {
                target.stroke_path(&path, &link_paint, &link_stroke, Transform::identity(), None);
            }
        }
        for (g, (stamp, c)) in req.groups.iter().zip(&stamps) {
            let reach = stamp.size as f64;
            let (tw, th) = (target.width() as f64, target.height() as f64);
            for &(lat, lng) in &g.points {
                let Some((x, y)) = projection.pixel(lat, lng) else { continue };
                if x < -reach || y < -reach || x > tw + reach || y > th + reach {
                    continue;
                }
                stamp.draw(target, (x - *c as f64).round() as i32, (y - *c as f64).round() as i32);
            }
        }
    };

    // The legend, kept clear of what `avoid` covers.
    let legend_for = |avoid: &[Rect]| match (&atlas.font, req.legend) {
        (Some(font), true) => {
            let entries: Vec<LegendEntry> =
                req.groups.iter().zip(&colors).map(|(g, &color)| LegendEntry { color, name: g.name.clone(), count: g.points.len() as u64 }).collect();
            Legend::layout(font, &entries, w, h, scale, avoid)
        }
        _ => None,
    };
    // Everything worked out for the whole image before any drawing: the background (a Web
    // Mercator basemap with its city labels placed, or one country fitted by a conic
    // projection), the legend and, for a heatmap, the density.
    let (mut scene, legend) = match &req.focus {
        // Markers overhang their point by their radius and rim: the fit leaves room for them.
        Some(spec) => {
            let reach = (req.marker_radius + 1.2) * scale;
            let plan = atlas.focus.plan(&atlas.shapes, spec, w, h, scale, reach)?;
            let background = atlas.focus.background(&plan, spec, w, h, scale, reach);
            // Not over an inset (the US's Alaska is in the lower-left corner).
            let frames: Vec<Rect> = plan.inset_frames.iter().map(|f| Rect { x0: f[0], y0: f[1], x1: f[2], y1: f[3] }).collect();
            let legend = legend_for(&frames);
            (Scene::Focus(plan, background), legend)
        }
        None => {
            let legend = legend_for(&[]);
            let all: Vec<(f64, f64)> = req.groups.iter().flat_map(|g| g.points.iter().copied()).collect();
            let cam = mercator_camera(req, &all, w, h);
            let ground = atlas.basemap.cover(&cam, theme);
            let streets = atlas.streets.as_ref().and_then(|t| StreetPlan::new(t, &cam, theme));
            let credit = match (&streets, &atlas.font, &atlas.streets) {
                (Some(_), Some(font), Some(s)) => Credit::layout(font, &s.tiles.attribution, w, h, scale),
                _ => None,
            };
            let mut occupied: Vec<Rect> = legend.iter().map(|l| l.rect).chain(credit.iter().map(|c| c.rect)).collect();
            // A street map names the places its tiles name; elsewhere the gazetteer's cities.
            let labels = match &streets {
                Some(plan) if !plan.places.is_empty() => labels::place_names(&plan.places, atlas.font.as_ref(), &cam, &mut occupied),
                _ => labels::place(&atlas.cities, atlas.font.as_ref(), &cam, &mut occupied),
            };
            (Scene::Mercator(cam, labels, ground, streets, credit), legend)
        }
    };
    let legend_omitted = req.legend && legend.is_none();
    let attribution = match (&scene, &atlas.streets) {
        (Scene::Mercator(_, _, _, Some(_), _), Some(s)) => Some(s.tiles.attribution.clone()),
        _ => None,
    };
    on_time(req)?;
    let density = if req.heatmap { heatmap::Density::new(&heat_points(req, &scene.projection(0)), w, h, HEAT_RADIUS * scale) } else { None };
    on_time(req)?;

    // The image is cut into horizontal bands drawn at once on as many threads, each band a
    // picture of its own with its own camera: the background, the data (markers or a heatmap),
    // then the city labels on top, as map label layers go: under a dense cluster of markers a
    // label would be cut to pieces. Rasterizing is per row, so the bands join without a
    // visible seam.
    // A Web Mercator map starts as its basemap's cells, copied once.
    let size_error = RenderError::InvalidSize { width: w, height: h, max: MAX_SIDE };
    let mut pixmap = match &mut scene {
        Scene::Mercator(_, _, ground, ..) => tiny_skia::IntSize::from_wh(w, h).and_then(|size| Pixmap::from_vec(ground.image(w, h), size)),
        // A focus map starts as its background, drawn once per request fields, size and scale.
        Scene::Focus(_, background) => background.take(),
    }
    .ok_or(size_error)?;
    let row_bytes = w as usize * 4;
    let band_rows = h.div_ceil(bands_for(h)) as usize;
    let (scene, density, draw_markers) = (&scene, &density, &draw_markers);
    std::thread::scope(|s| {
        let mut jobs: Vec<_> = pixmap
            .data_mut()
            .chunks_mut(band_rows * row_bytes)
            .enumerate()
            .map(|(i, chunk)| {
                let (y0, rows) = ((i * band_rows) as u32, (chunk.len() / row_bytes) as u32);
                move || {
                    let Some(mut band) = PixmapMut::from_bytes(chunk, w, rows) else { return };
                    scene.background(&mut band, y0);
                    match density {
                        Some(d) => d.blend(&mut band, y0),
                        None if req.heatmap => {}
                        None => draw_markers(&mut band, &scene.projection(y0)),
                    }
                    scene.labels(&mut band, y0, theme);
                }
            })
            .collect();
        // The first band is drawn on this thread while the others run on theirs.
        let mut first = jobs.remove(0);
        for job in jobs {
            s.spawn(job);
        }
        first();
    });
    if let Some(l) = &legend {
        l.draw(&mut pixmap.as_mut(), theme);
    }
    if let Scene::Mercator(_, _, _, _, Some(credit)) = &scene {
        credit.draw(&mut pixmap.as_mut(), theme);
    }
    on_time(req)?;
    let warning = atlas.streets.as_ref().and_then(|s| s.tiles.take_first_error());
    // Only a focus map leaves pixels transparent: a Web Mercator map is drawn over opaque cells.
    let opaque = matches!(scene, Scene::Mercator(..));
    Ok(Rendered { body: encode(pixmap, req.format, req.dpi, opaque)?, attribution, warning, legend_omitted })
}

/// A Web Mercator map's camera, its corner on whole pixels so the basemap's and the street
/// map's cells are copied, never resampled: the map moves by less than half a pixel.
fn mercator_camera(req: &MapRequest, points: &[(f64, f64)], w: u32, h: u32) -> Camera {
    let mut cam = Camera::new(req.viewport, points, w, h, req.scale as f64);
    (cam.left, cam.top) = (cam.left.round(), cam.top.round());
    cam
}

/// The street map's drawing operations for a request's view, as `render` would draw them, before
/// stroking: what the benchmark hands its peer renderer. None without a basemap archive or where
/// it has nothing for the view.
pub fn street_ops(atlas: &Atlas, themes: &Themes, req: &MapRequest) -> Result<Option<Vec<crate::streets::Op>>> {
    let (w, h) = check(req)?;
    let theme = themes.get(&req.style)?;
    let all: Vec<(f64, f64)> = req.groups.iter().flat_map(|g| g.points.iter().copied()).collect();
    let cam = mercator_camera(req, &all, w, h);
    Ok(atlas.streets.as_ref().and_then(|s| crate::streets::view_ops(s, &cam, theme)))
}

/// Group `i`'s marker radius as a share of the request's: 1 for every group, or with `rings`
/// shrinking group by group (two groups: 1 and 0.5; five: 1 down to 0.2).
fn ring_factor(req: &MapRequest, i: usize) -> f32 {
    let n = req.groups.len();
    if !req.rings || n < 2 {
        return 1.0;
    }
    1.0 - i as f32 * (0.8 / (n - 1) as f32).min(0.5)
}

/// Bands to draw a map of `height` rows in: two (the cores of the machine this serves from),
/// none thinner than 128 rows. A fixed count rather than one per core keeps the picture the
/// same on every machine: a band edge moves anti-aliased lines by a fraction of a level.
fn bands_for(height: u32) -> u32 {
    (height / 128).clamp(1, 2)
}

fn heat_points(req: &MapRequest, projection: &Projection) -> Vec<(f32, f32)> {
    req.groups.iter().flat_map(|g| g.points.iter()).filter_map(|&(lat, lng)| projection.pixel(lat, lng)).map(|(x, y)| (x as f32, y as f32)).collect()
}

/// What a map is drawn over.
enum Scene {
    /// The camera, the labels placed, the basemap's cells, the street map when the basemap
    /// archive covers the view, and its credit.
    Mercator(Camera, labels::Placed, Cover, Option<StreetPlan>, Option<Credit>),
    /// The plan and its background (None when it could not be allocated, or once it is in the
    /// image).
    Focus(FocusPlan, Option<Pixmap>),
}

impl Scene {
    /// Where a lat/lng lands in a band whose top row is row `y0` of the image.
    fn projection(&self, y0: u32) -> Projection {
        match self {
            Scene::Mercator(cam, ..) => Projection::Mercator(cam.band(y0, cam.height.saturating_sub(y0))),
            Scene::Focus(plan, _) => Projection::Focus(plan.cam.band(y0)),
        }
    }

    fn background(&self, band: &mut PixmapMut, y0: u32) {
        match self {
            // The basemap's cells are in the image already.
            Scene::Mercator(_, _, _, streets, _) => {
                if let Some(plan) = streets {
                    plan.draw(band, y0);
                }
            }
            // The background is in the image already.
            Scene::Focus(..) => {}
        }
    }

    /// City labels (Web Mercator maps only: a focus map shows the country alone).
    fn labels(&self, band: &mut PixmapMut, y0: u32, theme: &crate::theme::Theme) {
        if let Scene::Mercator(_, placed, ..) = self {
            placed.draw(band, theme, y0 as f32);
        }
    }
}

/// PNG- or JPEG-encodes an untouched opaque buffer of the given size with the same encoder and
/// settings as a map: the floor under any render time, for benchmarks.
pub fn encode_blank(width: u32, height: u32, format: ImageFormat) -> Result<Vec<u8>> {
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(RenderError::InvalidSize { width, height, max: MAX_SIDE });
    }
    let mut p = Pixmap::new(width, height).ok_or(RenderError::InvalidSize { width, height, max: MAX_SIDE })?;
    p.fill(Color::WHITE);
    encode(p, format, DEFAULT_DPI, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stamp must give exactly what tiny-skia's own source-over gives.
    #[test]
    fn stamp_matches_a_pixmap_draw() {
        let (sprite, _) = sprite(5.0, 1.2, [37, 99, 235], [255, 255, 255]).unwrap();
        let stamp = Stamp::new(&sprite);
        for (ox, oy) in [(3, 4), (-4, -2), (30, 17), (0, 0)] {
            let mut a = Pixmap::new(36, 24).unwrap();
            a.fill(Color::from_rgba8(200, 180, 160, 255));
            let mut b = a.clone();
            stamp.draw(&mut a.as_mut(), ox, oy);
            stamp.draw(&mut a.as_mut(), ox + 2, oy + 1);
            for (dx, dy) in [(0, 0), (2, 1)] {
                b.draw_pixmap(ox + dx, oy + dy, sprite.as_ref(), &tiny_skia::PixmapPaint::default(), Transform::identity(), None);
            }
            for (p, q) in a.data().iter().zip(b.data()) {
                assert!(p.abs_diff(*q) <= 1, "offset ({ox}, {oy}): {p} vs {q}");
            }
        }
    }

    /// A stamped marker is the marker drawn with paths where it lands: for a spread of radii,
    /// rim widths, colours, backgrounds and offsets, stamping the sprite at its rounded corner
    /// gives what filling and stroking the circle at that spot on the image gives: within 1 a
    /// channel but for at most 1 % of them, by 16 at most. Those are a few pixels on the rim
    /// (1 to 3 in most cases), where tiny-skia covers the rim's anti-aliased edge differently on
    /// the sprite's transparent canvas than over an opaque fill; the rest is the rounding of the
    /// two orders of source-over. (Cut by the image's edge, the stamp is the
    /// sprite drawn by tiny-skia there: `stamp_matches_a_pixmap_draw`; a path cut by the edge is
    /// rasterized a little differently in tiny-skia's last row.)
    #[test]
    fn a_stamped_marker_is_the_marker_drawn_with_paths() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(n)) as u32
        };
        for case in 0..300 {
            let radius = 1.0 + next(190) as f32 / 10.0;
            let rim = [0.0, 0.6, 1.2, 2.4, 3.6][next(5) as usize];
            let fill = [next(256) as u8, next(256) as u8, next(256) as u8];
            let edge = [next(256) as u8, next(256) as u8, next(256) as u8];
            let bg = Color::from_rgba8(next(256) as u8, next(256) as u8, next(256) as u8, 255);
            let (sprite_px, c) = sprite(radius, rim, fill, edge).unwrap();
            let side = sprite_px.width();
            let (w, h) = (side + 12, side + 9);
            let (ox, oy) = (next(w - side + 1) as i32, next(h - side + 1) as i32);
            let mut stamped = Pixmap::new(w, h).unwrap();
            stamped.fill(bg);
            Stamp::new(&sprite_px).draw(&mut stamped.as_mut(), ox, oy);
            let mut drawn = Pixmap::new(w, h).unwrap();
            drawn.fill(bg);
            draw_marker(&mut drawn.as_mut(), (ox as f32 + c, oy as f32 + c), radius, rim, fill, edge).unwrap();
            let off = stamped.data().iter().zip(drawn.data()).map(|(a, b)| a.abs_diff(*b)).max().unwrap();
            let n = stamped.data().iter().zip(drawn.data()).filter(|(a, b)| a.abs_diff(**b) > 1).count();
            assert!(
                n * 100 <= stamped.data().len() && off <= 16,
                "case {case}: radius {radius}, rim {rim}, at ({ox}, {oy}): {n} channels off by more than 1, one by {off}"
            );
        }
    }
}
