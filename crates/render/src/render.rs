//! One map: water, land and borders, then the markers, then the encoder.

use tiny_skia::{Color, FillRule, Paint, PathBuilder, Pixmap, PixmapPaint, Stroke, Transform};

use crate::basemap::Basemap;
use crate::camera::{Camera, Viewport};
use crate::encode::{encode, ImageFormat};
use crate::error::{RenderError, Result};
use crate::theme::Themes;

/// The largest side, in final pixels (after scale), the contract allows.
pub const MAX_SIDE: u32 = 4096;

/// One company's markers (a single group for a brand; one per ticker).
#[derive(Debug, Clone, Default)]
pub struct MarkerGroup {
    /// The theme's marker colour when None.
    pub color: Option<[u8; 3]>,
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

pub fn render(basemap: &Basemap, themes: &Themes, req: &MapRequest) -> Result<Vec<u8>> {
    // Sizes are checked before any pixel buffer exists.
    let (w, h) = (req.width.saturating_mul(req.scale), req.height.saturating_mul(req.scale));
    if req.width == 0 || req.height == 0 || req.scale == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(RenderError::InvalidSize { width: w, height: h, max: MAX_SIDE });
    }
    if let Viewport::CenterZoom(_, z) = req.viewport {
        if !(0.0..=18.0).contains(&z) {
            return Err(RenderError::InvalidViewport(format!("zoom {z} is outside 0-18")));
        }
    }
    let theme = themes.get(&req.style)?;
    let all: Vec<(f64, f64)> = req.groups.iter().flat_map(|g| g.points.iter().copied()).collect();
    let cam = Camera::new(req.viewport, &all, w, h, req.scale as f64);

    let mut pixmap = Pixmap::new(w, h).ok_or(RenderError::InvalidSize { width: w, height: h, max: MAX_SIDE })?;
    pixmap.fill(Color::from_rgba8(theme.water[0], theme.water[1], theme.water[2], 255));
    basemap.draw(&mut pixmap, &cam, theme);

    let scale = req.scale as f32;
    for g in &req.groups {
        let fill = g.color.unwrap_or(theme.marker);
        let Some((stamp, c)) = sprite(req.marker_radius * scale, 1.2 * scale, fill, theme.marker_stroke) else { continue };
        let reach = stamp.width() as f64;
        for &(lat, lng) in &g.points {
            let (x, y) = cam.pixel(lat, lng);
            if x < -reach || y < -reach || x > w as f64 + reach || y > h as f64 + reach {
                continue;
            }
            let (ox, oy) = ((x - c as f64).round() as i32, (y - c as f64).round() as i32);
            pixmap.draw_pixmap(ox, oy, stamp.as_ref(), &PixmapPaint::default(), Transform::identity(), None);
        }
    }
    encode(pixmap, req.format, req.dpi)
}
