//! The basemap's attribution in the image's lower-right corner, as the licence of the tiles
//! asks (OpenStreetMap's: "© OpenStreetMap contributors"): small text on a pale panel.

use tiny_skia::{FillRule, Paint, PathBuilder, PixmapMut, Rect as SkRect, Transform};

use crate::labels::Rect;
use crate::text::{Font, Line};
use crate::theme::Theme;

/// Text size at scale 1, in pixels.
const TEXT_PX: f32 = 10.0;
const PAD: f32 = 3.0;

pub struct Credit {
    pub rect: Rect,
    line: Line,
    scale: f32,
}

impl Credit {
    /// The credit laid out in the corner; None when the image is too narrow for it (then the
    /// X-Attribution header still carries it).
    pub fn layout(font: &Font, text: &str, width: u32, height: u32, scale: f32) -> Option<Credit> {
        let s = scale;
        let line = font.layout(text, TEXT_PX * s);
        let (w, h) = (line.width + 2.0 * PAD * s, TEXT_PX * s + 2.0 * PAD * s);
        let (x1, y1) = (width as f32, height as f32);
        if w > x1 || h > y1 / 4.0 {
            return None;
        }
        Some(Credit { rect: Rect { x0: x1 - w, y0: y1 - h, x1, y1 }, line, scale: s })
    }

    pub fn draw(&self, pixmap: &mut PixmapMut, theme: &Theme) {
        let r = self.rect;
        if let Some(bg) = SkRect::from_ltrb(r.x0, r.y0, r.x1, r.y1) {
            let mut paint = Paint { anti_alias: false, ..Paint::default() };
            paint.set_color_rgba8(theme.panel[0], theme.panel[1], theme.panel[2], 200);
            pixmap.fill_path(&PathBuilder::from_rect(bg), &paint, FillRule::Winding, Transform::identity(), None);
        }
        let s = self.scale;
        self.line.draw(pixmap, r.x0 + PAD * s, r.y1 - PAD * s - 0.2 * TEXT_PX * s, theme.text, None);
    }
}
