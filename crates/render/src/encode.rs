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

/// Pixels per metre, as PNG's pHYs wants the DPI.
fn pixels_per_metre(dpi: u32) -> u32 {
    (dpi as f64 / 0.0254).round() as u32
}

/// The PNG of an opaque pixmap (every map but a focus map's transparent corners): 8-bit RGB,
/// written here rather than by the png crate so that each byte is touched once before the
/// compressor. Per pixel it reads the RGBA pixel and the one above it in the pixmap and writes
/// three bytes of their difference (PNG's Up filter, fused with dropping alpha), so a row equal
/// to the one above (open water, the plain land between borders) is all zeros; fdeflate (the
/// png crate's own fast mode) then codes runs of zeros as lengths and the other bytes through
/// a fixed Huffman table fitted to filtered images. The png crate took a pass to drop alpha, a
/// pass to filter, and two copies of the compressed stream.
fn png_opaque(rgba: &[u8], w: u32, h: u32, dpi: u32) -> Result<Vec<u8>> {
    let stride = w as usize * 4;
    let zeros = vec![0u8; stride];
    let filtered = |y: usize, line: &mut [u8]| {
        let cur = &rgba[y * stride..(y + 1) * stride];
        let above = if y == 0 { &zeros[..] } else { &rgba[(y - 1) * stride..y * stride] };
        for ((d, s), a) in line.chunks_exact_mut(3).zip(cur.chunks_exact(4)).zip(above.chunks_exact(4)) {
            // The four bytes' differences at once (each byte wrapping on its own), alpha's
            // left behind.
            let (x, y) = (u32::from_le_bytes([s[0], s[1], s[2], s[3]]), u32::from_le_bytes([a[0], a[1], a[2], a[3]]));
            let v = ((x | HIGH).wrapping_sub(y & !HIGH)) ^ ((x ^ !y) & HIGH);
            d.copy_from_slice(&v.to_le_bytes()[..3]);
        }
    };
    let raw = |y: usize, line: &mut [u8]| {
        line.chunks_exact_mut(3).zip(rgba[y * stride..(y + 1) * stride].chunks_exact(4)).for_each(|(d, s)| d.copy_from_slice(&s[..3]));
    };
    let idat = deflate_rows(w as usize * 3, h as usize, filtered, raw)?;
    Ok(png_file(w, h, dpi, 2, &idat))
}

/// The PNG of a pixmap with transparent pixels: 8-bit RGBA, straight alpha (tiny-skia keeps it
/// premultiplied: only pixels neither opaque nor clear are divided), each row Up-filtered
/// against the one above as the opaque writer does.
fn png_rgba(rgba: &[u8], w: u32, h: u32, dpi: u32) -> Result<Vec<u8>> {
    let stride = w as usize * 4;
    let straight = |y: usize, out: &mut [u8]| {
        out.copy_from_slice(&rgba[y * stride..(y + 1) * stride]);
        for px in out.chunks_exact_mut(4) {
            let a = px[3] as u32;
            if a != 0 && a != 255 {
                for c in &mut px[..3] {
                    *c = ((*c as u32 * 255 + a / 2) / a).min(255) as u8;
                }
            }
        }
    };
    let (mut above, mut cur) = (vec![0u8; stride], vec![0u8; stride]);
    let filtered = |y: usize, line: &mut [u8]| {
        straight(y, &mut cur);
        for ((d, s), a) in line.iter_mut().zip(&cur).zip(&above) {
            *d = s.wrapping_sub(*a);
        }
        std::mem::swap(&mut above, &mut cur);
    };
    let idat = deflate_rows(stride, h as usize, filtered, straight)?;
    Ok(png_file(w, h, dpi, 6, &idat))
}

/// The zlib stream of `h` rows of `row` bytes, each given by `filtered` (Up-filtered; called
/// for rows 0, 1, 2... in order) into a line after its filter byte. Rows that compress to more
/// than they are (noise) are written again from `raw`, unfiltered in stored blocks, as the png
/// crate does.
fn deflate_rows(row: usize, h: usize, mut filtered: impl FnMut(usize, &mut [u8]), mut raw: impl FnMut(usize, &mut [u8])) -> Result<Vec<u8>> {
    let mut line = vec![0u8; 1 + row];
    // Up (2): the first row is its own difference from a row of zeros.
    line[0] = 2;
    let mut z = fdeflate::Compressor::new(Vec::with_capacity(row * h / 8)).map_err(enc)?;
    for y in 0..h {
        filtered(y, &mut line[1..]);
        z.write_data(&line).map_err(enc)?;
    }
    let idat = z.finish().map_err(enc)?;
    let size = line.len() * h;
    if idat.len() <= fdeflate::StoredOnlyCompressor::<()>::compressed_size(size) {
        return Ok(idat);
    }
    let mut st = fdeflate::StoredOnlyCompressor::new(std::io::Cursor::new(Vec::with_capacity(size + 64))).map_err(enc)?;
    line[0] = 0;
    for y in 0..h {
        raw(y, &mut line[1..]);
        st.write_data(&line).map_err(enc)?;
    }
    Ok(st.finish().map_err(enc)?.into_inner())
}

/// A PNG file around a zlib stream: 8-bit samples of `colour` type (2 RGB, 6 RGBA), the DPI
/// in pHYs.
fn png_file(w: u32, h: u32, dpi: u32, colour: u8, idat: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(idat.len() + 96);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = [0u8; 13];
    ihdr[..4].copy_from_slice(&w.to_be_bytes());
    ihdr[4..8].copy_from_slice(&h.to_be_bytes());
    // 8 bits, the colour type, deflate, adaptive filtering, no interlace.
    ihdr[8..].copy_from_slice(&[8, colour, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    let ppm = pixels_per_metre(dpi).to_be_bytes();
    chunk(&mut out, b"pHYs", &[ppm[0], ppm[1], ppm[2], ppm[3], ppm[0], ppm[1], ppm[2], ppm[3], 1]);
    // A chunk holds at most 2^31 - 1 bytes.
    for part in idat.chunks(1 << 30) {
        chunk(&mut out, b"IDAT", part);
    }
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Each byte's top bit: bytes subtracted in a u32 without borrowing from one another.
const HIGH: u32 = 0x8080_8080;

/// One PNG chunk: length, type, data, and the CRC of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// Encodes a finished pixmap. `opaque`: the caller knows every pixel is (a Web Mercator map),
/// which spares a pass over the pixels to find out.
pub fn encode(pixmap: Pixmap, format: ImageFormat, dpi: u32, opaque: bool) -> Result<Vec<u8>> {
    let (w, h) = (pixmap.width(), pixmap.height());
    let opaque = opaque || pixmap.pixels().iter().all(|p| p.alpha() == 255);
    if opaque && format == ImageFormat::Png {
        return png_opaque(pixmap.data(), w, h, dpi);
    }
    let mut rgba = pixmap.take();
    match format {
        ImageFormat::Png => png_rgba(&rgba, w, h, dpi),
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

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::{Color, FillRule, Paint, PathBuilder, Transform};

    /// Decoded with the png crate's decoder: size, colour type, pixels and pHYs.
    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>, Option<png::PixelDimensions>) {
        let mut r = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size()];
        let info = r.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        let dims = r.info().pixel_dims;
        (info, buf, dims)
    }

    fn rgb_of(p: &Pixmap) -> Vec<u8> {
        p.data().chunks_exact(4).flat_map(|c| [c[0], c[1], c[2]]).collect()
    }

    /// What the fused writer makes is a PNG another decoder reads back to the very pixels: a
    /// map-like picture (flat water, anti-aliased shapes), noise (stored, as it does not shrink),
    /// one pixel, a row, a column; and the DPI in pHYs.
    #[test]
    fn opaque_png_decodes_to_its_pixels() {
        let mut map = Pixmap::new(301, 203).unwrap();
        map.fill(Color::from_rgba8(170, 211, 223, 255));
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        paint.set_color_rgba8(242, 239, 233, 255);
        let mut pb = PathBuilder::new();
        pb.push_circle(120.3, 90.7, 70.2);
        pb.push_circle(250.0, 160.0, 40.5);
        map.fill_path(&pb.finish().unwrap(), &paint, FillRule::Winding, Transform::identity(), None);
        let mut noise = Pixmap::new(64, 48).unwrap();
        let mut s = 7u32;
        for px in noise.data_mut().chunks_exact_mut(4) {
            for c in &mut px[..3] {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *c = (s >> 24) as u8;
            }
            px[3] = 255;
        }
        let mut one = Pixmap::new(1, 1).unwrap();
        one.fill(Color::from_rgba8(1, 2, 3, 255));
        let mut row = Pixmap::new(97, 1).unwrap();
        row.fill(Color::from_rgba8(9, 200, 30, 255));
        let mut col = Pixmap::new(1, 77).unwrap();
        col.fill(Color::BLACK);
        for (name, p, dpi) in [("map", map, 96), ("noise", noise, 300), ("one", one, 72), ("row", row, 96), ("column", col, 1)] {
            let bytes = encode(p.clone(), ImageFormat::Png, dpi, false).unwrap();
            let (info, px, dims) = decode(&bytes);
            assert_eq!((info.width, info.height, info.color_type), (p.width(), p.height(), png::ColorType::Rgb), "{name}");
            assert!(px == rgb_of(&p), "{name}: decoded pixels differ");
            let dims = dims.unwrap();
            let ppm = (dpi as f64 / 0.0254).round() as u32;
            assert_eq!((dims.xppu, dims.yppu, dims.unit), (ppm, ppm, png::Unit::Meter), "{name}");
        }
    }

    /// The same picture with a transparent pixel goes through the png crate as RGBA, alpha
    /// made straight.
    #[test]
    fn transparent_png_keeps_alpha() {
        let mut p = Pixmap::new(10, 4).unwrap();
        p.fill(Color::from_rgba8(200, 100, 50, 255));
        p.pixels_mut()[5] = tiny_skia::PremultipliedColorU8::from_rgba(50, 25, 12, 128).unwrap();
        let (info, px, _) = decode(&encode(p, ImageFormat::Png, 96, false).unwrap());
        assert_eq!(info.color_type, png::ColorType::Rgba);
        assert_eq!(&px[..4], &[200, 100, 50, 255]);
        assert_eq!(&px[20..24], &[100, 50, 24, 128]);
    }
}
