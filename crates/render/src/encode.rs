//! PNG and JPEG encoding of a finished pixmap, with the requested DPI written into the file
//! (PNG pHYs in pixels per metre, JPEG JFIF density in dots per inch).

use tiny_skia::Pixmap;

use crate::error::{RenderError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    /// Quality 1-100.
    Jpeg(u8),
}

/// JPEG quality when the request gives none.
pub const DEFAULT_JPEG_QUALITY: u8 = 85;

impl ImageFormat {
    /// JPEG at `quality` (clamped to 1-100), [`DEFAULT_JPEG_QUALITY`] when not given.
    pub fn jpeg(quality: Option<u32>) -> ImageFormat {
        ImageFormat::Jpeg(quality.map_or(DEFAULT_JPEG_QUALITY, |q| q.clamp(1, 100) as u8))
    }
}

fn enc(e: impl std::fmt::Display) -> RenderError {
    RenderError::Encode(e.to_string())
}

pub fn encode(pixmap: Pixmap, format: ImageFormat, dpi: u32) -> Result<Vec<u8>> {
    let (w, h) = (pixmap.width(), pixmap.height());
    let opaque = pixmap.pixels().iter().all(|p| p.alpha() == 255);
    let mut rgba = pixmap.take();
    match format {
        ImageFormat::Png => {
            // tiny-skia stores premultiplied colour; PNG wants straight alpha.
            if !opaque {
                for px in rgba.chunks_exact_mut(4) {
                    let a = px[3] as u32;
                    if a != 0 && a != 255 {
                        for c in &mut px[..3] {
                            *c = ((*c as u32 * 255 + a / 2) / a).min(255) as u8;
                        }
                    }
                }
            }
            let data = if opaque {
                // RGBA to RGB in place: each pixel moves to an offset no later than its own.
                let n = rgba.len() / 4;
                for i in 0..n {
                    let (r, g, b) = (rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2]);
                    rgba[i * 3] = r;
                    rgba[i * 3 + 1] = g;
                    rgba[i * 3 + 2] = b;
                }
                rgba.truncate(n * 3);
                rgba
            } else {
                rgba
            };
            let mut out = Vec::with_capacity(data.len() / 4);
            {
                let mut e = png::Encoder::new(&mut out, w, h);
                e.set_color(if opaque { png::ColorType::Rgb } else { png::ColorType::Rgba });
                e.set_depth(png::BitDepth::Eight);
                e.set_compression(png::Compression::Fast);
                let ppm = (dpi as f64 / 0.0254).round() as u32;
                e.set_pixel_dims(Some(png::PixelDimensions { xppu: ppm, yppu: ppm, unit: png::Unit::Meter }));
                let mut wr = e.write_header().map_err(enc)?;
                wr.write_image_data(&data).map_err(enc)?;
                wr.finish().map_err(enc)?;
            }
            Ok(out)
        }
        ImageFormat::Jpeg(quality) => {
            // JPEG has no alpha: transparent pixels fall back to white, as the contract says.
            // Premultiplied over white is c + (255 - a); done in place, as for PNG.
            let n = rgba.len() / 4;
            for i in 0..n {
                let inv = 255 - rgba[i * 4 + 3] as u32;
                for c in 0..3 {
                    rgba[i * 3 + c] = (rgba[i * 4 + c] as u32 + inv).min(255) as u8;
                }
            }
            rgba.truncate(n * 3);
            let rgb = rgba;
            let mut out = Vec::with_capacity(rgb.len() / 8);
            let mut e = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
            e.set_density(jpeg_encoder::Density::Inch { x: dpi.min(u16::MAX as u32) as u16, y: dpi.min(u16::MAX as u32) as u16 });
            e.encode(&rgb, w as u16, h as u16, jpeg_encoder::ColorType::Rgb).map_err(enc)?;
            Ok(out)
        }
    }
}
