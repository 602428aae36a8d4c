//! One map, in drawing order: the background (a Web Mercator basemap, or a focus country
//! alone), city labels, then the data (markers or a heatmap), then the legend, then the
//! encoder.

use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, PremultipliedColorU8, Stroke, Transform};

use crate::basemap::Basemap;
use crate::camera::{Camera, Viewport};
use crate::encode::{encode, ImageFormat};
use crate::error::{RenderError, Result};
use crate::focus::{self, FocusCamera, FocusSpec};
use crate::labels::{self, Rect};
use crate::legend::{Legend, LegendEntry};
use crate::theme::Themes;
use crate::{heatmap, parse_hex};

/// The largest side, in final pixels (after scale), the contract allows.
pub const MAX_SIDE: u32 = 4096;

/// Colours for companies on a multi-company map when the request gives none: a qualitative
/// palette whose neighbours stay apart for colour-blind readers.
pub const COMPANY_PALETTE: [&str; 5] = ["#2563EB", "#DC2626", "#16A34A", "#D97706", "#7C3AED"];

/// Heatmap kernel radius at scale 1, in pixels.
const HEAT_RADIUS: f32 = 24.0;

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
    pub heatmap: bool,
    pub legend: bool,
    /// Draw one country alone instead of the basemap (the viewport is then the country's).
    pub focus: Option<FocusSpec>,
}

impl MapRequest {
    /// A plain map of one group with the contract's defaults.
    pub fn new(width: u32, height: u32, groups: Vec<MarkerGroup>) -> MapRequest {
        MapRequest {
            width,
            height,
            scale: 1,
            dpi: 96,
            style: "light".into(),
            format: ImageFormat::Png,
            viewport: Viewport::Auto,
            marker_radius: 5.0,
            groups,
            heatmap: false,
            legend: false,
            focus: None,
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
    let path = PathBuilder::from_circle(c, c, radius)?;
    let mut paint = Paint::default();
    paint.anti_alias = true;
    paint.set_color_rgba8(fill[0], fill[1], fill[2], 255);
    p.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), None);
    if stroke > 0.0 {
        paint.set_color_rgba8(edge[0], edge[1], edge[2], 255);
        p.stroke_path(&path, &paint, &Stroke { width: stroke, ..Stroke::default() }, Transform::identity(), None);
    }
    Some((p, c))
}

/// Source-over of a premultiplied sprite at an integer offset, clipped to the image. A general
/// pattern fill per marker costs several times this for the same pixels.
fn blit(dst: &mut Pixmap, src: &Pixmap, ox: i32, oy: i32) {
    let (dw, dh) = (dst.width() as i32, dst.height() as i32);
    let (sw, sh) = (src.width() as i32, src.height() as i32);
    let (x0, y0, x1, y1) = (ox.max(0), oy.max(0), (ox + sw).min(dw), (oy + sh).min(dh));
    if x0 >= x1 || y0 >= y1 {
        return;
    }
    let s = src.pixels();
    let d = dst.pixels_mut();
    for y in y0..y1 {
        let srow = ((y - oy) * sw) as usize;
        let drow = (y * dw) as usize;
        for x in x0..x1 {
            let sp = s[srow + (x - ox) as usize];
            let a = sp.alpha() as u32;
            if a == 0 {
                continue;
            }
            let dp = &mut d[drow + x as usize];
            if a == 255 {
                *dp = sp;
                continue;
            }
            let inv = 255 - a;
            let f = |s: u8, d: u8| (s as u32 + (d as u32 * inv + 127) / 255).min(255) as u8;
            let out_a = f(sp.alpha(), dp.alpha());
            if let Some(p) = PremultipliedColorU8::from_rgba(f(sp.red(), dp.red()).min(out_a), f(sp.green(), dp.green()).min(out_a), f(sp.blue(), dp.blue()).min(out_a), out_a) {
                *dp = p;
            }
        }
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

pub fn render(basemap: &Basemap, themes: &Themes, req: &MapRequest) -> Result<Vec<u8>> {
    // Sizes are checked before any pixel buffer exists.
    let (w, h) = check(req)?;
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

    let mut pixmap = Pixmap::new(w, h).ok_or(RenderError::InvalidSize { width: w, height: h, max: MAX_SIDE })?;
    let projection = match &req.focus {
        Some(spec) => Projection::Focus(focus::draw(&mut pixmap, basemap, spec, scale)?),
        None => {
            let all: Vec<(f64, f64)> = req.groups.iter().flat_map(|g| g.points.iter().copied()).collect();
            let cam = Camera::new(req.viewport, &all, w, h, req.scale as f64);
            pixmap.fill(Color::from_rgba8(theme.water[0], theme.water[1], theme.water[2], 255));
            basemap.draw(&mut pixmap, &cam, theme);
            Projection::Mercator(cam)
        }
    };

    let legend = match (&basemap.font, req.legend) {
        (Some(font), true) => {
            let entries: Vec<LegendEntry> =
                req.groups.iter().zip(&colors).map(|(g, &color)| LegendEntry { color, name: g.name.clone(), count: g.points.len() as u64 }).collect();
            Legend::layout(font, &entries, w, h, scale)
        }
        _ => None,
    };
    if let Projection::Mercator(cam) = &projection {
        let mut occupied: Vec<Rect> = legend.iter().map(|l| l.rect).collect();
        labels::draw(&mut pixmap, basemap, cam, theme, &mut occupied);
    }

    if req.heatmap {
        let pts: Vec<(f32, f32)> = req
            .groups
            .iter()
            .flat_map(|g| g.points.iter())
            .filter_map(|&(lat, lng)| projection.pixel(lat, lng))
            .map(|(x, y)| (x as f32, y as f32))
            .collect();
        heatmap::draw(&mut pixmap, &pts, HEAT_RADIUS * scale);
    } else {
        for (g, &fill) in req.groups.iter().zip(&colors) {
            let Some((stamp, c)) = sprite(req.marker_radius * scale, 1.2 * scale, fill, theme.marker_stroke) else { continue };
            let reach = stamp.width() as f64;
            for &(lat, lng) in &g.points {
                let Some((x, y)) = projection.pixel(lat, lng) else { continue };
                if x < -reach || y < -reach || x > w as f64 + reach || y > h as f64 + reach {
                    continue;
                }
                blit(&mut pixmap, &stamp, (x - c as f64).round() as i32, (y - c as f64).round() as i32);
            }
        }
    }
    if let Some(l) = &legend {
        l.draw(&mut pixmap, theme);
    }
    encode(pixmap, req.format, req.dpi)
}

/// PNG- or JPEG-encodes an untouched opaque buffer of the given size with the same encoder and
/// settings as a map: the floor under any render time, for benchmarks.
pub fn encode_blank(width: u32, height: u32, format: ImageFormat) -> Result<Vec<u8>> {
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(RenderError::InvalidSize { width, height, max: MAX_SIDE });
    }
    let mut p = Pixmap::new(width, height).ok_or(RenderError::InvalidSize { width, height, max: MAX_SIDE })?;
    p.fill(Color::WHITE);
    encode(p, format, 96)
}
