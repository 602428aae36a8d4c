//! The legend of a multi-company map: a panel in a corner (the lower-left, unless a focus
//! map's insets are there) with one row per company, its marker colour, canonical name and
//! location count. Laid out before anything is drawn, so city labels can keep clear of it, and
//! drawn last, over the markers.

use tiny_skia::{FillRule, Paint, PathBuilder, PixmapMut, Rect as SkRect, Stroke, Transform};

use crate::labels::Rect;
use crate::text::{thousands, Font, Line};
use crate::theme::Theme;

#[derive(Debug, Clone)]
pub struct LegendEntry {
    pub color: [u8; 3],
    pub name: String,
    pub count: u64,
}

const TEXT_PX: f32 = 13.0;
const ROW: f32 = 22.0;
const PAD: f32 = 10.0;
const SWATCH: f32 = 6.0;
const MARGIN: f32 = 12.0;
/// The most of an image a legend may cover: a bigger one (five companies on a 300 x 200 map)
/// would hide the map it explains, and is left out (`Legend::layout` says so).
pub const MAX_LEGEND_SHARE: f32 = 0.3;

pub struct Legend {
    pub rect: Rect,
    rows: Vec<([u8; 3], Line, Line)>,
    scale: f32,
    count_x: f32,
}

impl Legend {
    /// The legend in the first corner (lower-left, lower-right, upper-left, upper-right) where
    /// it covers none of `avoid` (a focus map's inset frames), else where it covers least of
    /// them; None when there is no legend to draw or the image is too small for one.
    pub fn layout(font: &Font, entries: &[LegendEntry], width: u32, height: u32, scale: f32, avoid: &[Rect]) -> Option<Legend> {
        if entries.is_empty() {
            return None;
        }
        let s = scale;
        let rows: Vec<([u8; 3], Line, Line)> =
            entries.iter().map(|e| (e.color, font.layout(&e.name, TEXT_PX * s), font.layout(&thousands(e.count), TEXT_PX * s))).collect();
        let name_w = rows.iter().map(|r| r.1.width).fold(0.0, f32::max);
        let count_w = rows.iter().map(|r| r.2.width).fold(0.0, f32::max);
        let w = PAD * s + 2.0 * SWATCH * s + 8.0 * s + name_w + 16.0 * s + count_w + PAD * s;
        let h = 2.0 * PAD * s + ROW * s * rows.len() as f32 - (ROW - TEXT_PX) * s;
        let (iw, ih) = (width as f32, height as f32);
        if h + 2.0 * MARGIN * s > ih || w + 2.0 * MARGIN * s > iw || w * h > MAX_LEGEND_SHARE * iw * ih {
            // Too small an image for a legend: the map matters more.
            return None;
        }
        let (left, right, top, bottom) = (MARGIN * s, iw - MARGIN * s - w, MARGIN * s, ih - MARGIN * s - h);
        let corners = [(left, bottom), (right, bottom), (left, top), (right, top)].map(|(x0, y0)| Rect { x0, y0, x1: x0 + w, y1: y0 + h });
        let covered =
            |r: &Rect| -> f32 { avoid.iter().map(|a| ((r.x1.min(a.x1) - r.x0.max(a.x0)).max(0.0)) * ((r.y1.min(a.y1) - r.y0.max(a.y0)).max(0.0))).sum() };
        // The first corner that covers nothing, else the least covered (the first of equals).
        let rect = corners.iter().copied().min_by(|a, b| covered(a).total_cmp(&covered(b))).unwrap_or(corners[0]);
        let count_x = rect.x1 - PAD * s - count_w;
        Some(Legend { rect, rows, scale: s, count_x })
    }

    pub fn draw(&self, pixmap: &mut PixmapMut, theme: &Theme) {
        let s = self.scale;
        let r = self.rect;
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        if let Some(bg) = SkRect::from_ltrb(r.x0, r.y0, r.x1, r.y1) {
            let path = PathBuilder::from_rect(bg);
            paint.set_color_rgba8(theme.panel[0], theme.panel[1], theme.panel[2], 240);
            pixmap.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), None);
            paint.set_color_rgba8(theme.border[0], theme.border[1], theme.border[2], 255);
            pixmap.stroke_path(&path, &paint, &Stroke { width: s, ..Stroke::default() }, Transform::identity(), None);
        }
        for (i, (color, name, count)) in self.rows.iter().enumerate() {
            let baseline = r.y0 + PAD * s + TEXT_PX * s * 0.8 + ROW * s * i as f32;
            let cx = r.x0 + PAD * s + SWATCH * s;
            let cy = baseline - TEXT_PX * s * 0.35;
            if let Some(dot) = PathBuilder::from_circle(cx, cy, SWATCH * s) {
                paint.set_color_rgba8(color[0], color[1], color[2], 255);
                pixmap.fill_path(&dot, &paint, FillRule::Winding, Transform::identity(), None);
            }
            name.draw(pixmap, cx + SWATCH * s + 8.0 * s, baseline, theme.text, None);
            count.draw(pixmap, self.count_x, baseline, theme.text, None);
        }
    }
}
