//! Text from a real TTF font: glyphs rasterized by fontdue once per (character, size) and kept,
//! then blended into the pixmap as coverage masks. Used for city labels and the legend.

use std::collections::HashMap;
use std::sync::Mutex;

use tiny_skia::PixmapMut;

use crate::blend::{covered, over};
use crate::error::{RenderError, Result};

struct Glyph {
    xmin: i32,
    ymin: i32,
    width: usize,
    height: usize,
    advance: f32,
    coverage: Vec<u8>,
    /// The coverage grown by one pixel on every side (the 3x3 maximum), (width + 2) x
    /// (height + 2): a label's halo in one stamp instead of eight.
    halo: Vec<u8>,
}

fn dilate(coverage: &[u8], w: usize, h: usize) -> Vec<u8> {
    let (hw, hh) = (w + 2, h + 2);
    let mut out = vec![0u8; hw * hh];
    for y in 0..h {
        for x in 0..w {
            let v = coverage[y * w + x];
            if v == 0 {
                continue;
            }
            for dy in 0..3 {
                for dx in 0..3 {
                    let o = &mut out[(y + dy) * hw + x + dx];
                    *o = (*o).max(v);
                }
            }
        }
    }
    out
}

pub struct Font {
    font: fontdue::Font,
    /// Rasterized glyphs by (character, size in quarter pixels). Maps draw the same few
    /// hundred glyphs over and over; a lock held only for a lookup costs less than a raster.
    glyphs: Mutex<HashMap<(char, u32), std::sync::Arc<Glyph>>>,
}

/// A laid-out run of text: its width and the glyphs with their pen positions.
#[derive(Clone)]
pub struct Line {
    pub width: f32,
    pub ascent: f32,
    glyphs: Vec<(f32, std::sync::Arc<Glyph>)>,
}

impl Font {
    pub fn from_bytes(bytes: &[u8]) -> Result<Font> {
        let font = fontdue::Font::from_bytes(bytes, fontdue::FontSettings::default()).map_err(|e| RenderError::Shapes(format!("font: {e}")))?;
        Ok(Font { font, glyphs: Mutex::new(HashMap::new()) })
    }

    fn glyph(&self, c: char, px: f32) -> std::sync::Arc<Glyph> {
        let key = (c, (px * 4.0).round() as u32);
        if let Some(g) = self.glyphs.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return g.clone();
        }
        let (m, coverage) = self.font.rasterize(c, px);
        let halo = dilate(&coverage, m.width, m.height);
        let g = std::sync::Arc::new(Glyph { xmin: m.xmin, ymin: m.ymin, width: m.width, height: m.height, advance: m.advance_width, coverage, halo });
        self.glyphs.lock().unwrap_or_else(|e| e.into_inner()).insert(key, g.clone());
        g
    }

    /// Lays out one line at `px` pixels, with kerning.
    pub fn layout(&self, text: &str, px: f32) -> Line {
        let mut pen = 0.0;
        let mut glyphs = Vec::with_capacity(text.len());
        let mut prev: Option<char> = None;
        for c in text.chars() {
            if let Some(p) = prev {
                pen += self.font.horizontal_kern(p, c, px).unwrap_or(0.0);
            }
            let g = self.glyph(c, px);
            let adv = g.advance;
            glyphs.push((pen, g));
            pen += adv;
            prev = Some(c);
        }
        let ascent = self.font.horizontal_line_metrics(px).map_or(px * 0.8, |m| m.ascent);
        Line { width: pen, ascent, glyphs }
    }
}

impl Line {
    /// Draws the line with its left end at `x` and its baseline at `y`. A halo (when given) is
    /// the text stamped around itself first in the background colour, so a label stays legible
    /// over borders and markers.
    pub fn draw(&self, pixmap: &mut PixmapMut, x: f32, y: f32, color: [u8; 3], halo: Option<[u8; 3]>) {
        if let Some(h) = halo {
            self.stamp(pixmap, x, y, h, true);
        }
        self.stamp(pixmap, x, y, color, false);
    }

    fn stamp(&self, pixmap: &mut PixmapMut, x: f32, y: f32, color: [u8; 3], halo: bool) {
        for (pen, g) in &self.glyphs {
            let gx = (x + pen).round() as i32 + g.xmin;
            let gy = y.round() as i32 - g.ymin - g.height as i32;
            if halo {
                blend_mask(pixmap, gx - 1, gy - 1, g.width + 2, g.height + 2, &g.halo, color);
            } else {
                blend_mask(pixmap, gx, gy, g.width, g.height, &g.coverage, color);
            }
        }
    }
}

/// Blends an opaque colour into the pixmap through an 8-bit coverage mask (source-over, in
/// premultiplied space).
pub fn blend_mask(pixmap: &mut PixmapMut, x0: i32, y0: i32, w: usize, h: usize, mask: &[u8], color: [u8; 3]) {
    let (pw, ph) = (pixmap.width() as i32, pixmap.height() as i32);
    let data = pixmap.data_mut();
    for row in 0..h as i32 {
        let y = y0 + row;
        if y < 0 || y >= ph {
            continue;
        }
        for col in 0..w as i32 {
            let x = x0 + col;
            if x < 0 || x >= pw {
                continue;
            }
            let a = mask[(row * w as i32 + col) as usize];
            if a == 0 {
                continue;
            }
            let i = (y * pw + x) as usize * 4;
            over(covered(color, a), &mut data[i..i + 4]);
        }
    }
}

/// 12345 -> "12,345".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dilation_grows_coverage_by_one_pixel() {
        let d = dilate(&[0, 0, 0, 0, 9, 0, 0, 0, 0], 3, 3);
        assert_eq!(d.len(), 25);
        let on: Vec<usize> = (0..25).filter(|&i| d[i] == 9).collect();
        assert_eq!(on, vec![6, 7, 8, 11, 12, 13, 16, 17, 18]);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(43_123_456), "43,123,456");
    }

    #[test]
    fn blending_full_coverage_writes_the_colour() {
        let mut p = tiny_skia::Pixmap::new(2, 1).unwrap();
        p.fill(tiny_skia::Color::WHITE);
        blend_mask(&mut p.as_mut(), 0, 0, 2, 1, &[255, 0], [10, 20, 30]);
        let px = p.pixels();
        assert_eq!((px[0].red(), px[0].green(), px[0].blue(), px[0].alpha()), (10, 20, 30, 255));
        assert_eq!((px[1].red(), px[1].alpha()), (255, 255));
    }
}
