//! Square cells on the world's pixel grid at a view's zoom, drawn once and kept in a cache
//! bounded in bytes, then copied into every image that shows them. What a cell holds does not
//! change between requests (the basemap's land and borders, a street map's tiles), so the next
//! view at the same zoom (a pan, another brand over the same countries, the same map in another
//! format) copies pixels instead of rasterizing paths again.
//!
//! A view's corner must be on a whole pixel (the renderer rounds it): cells then land on whole
//! pixels and are copied, never resampled, and a map drawn from cells is the map drawn whole,
//! because rasterizing is per pixel and a cell is drawn with the image's own pixel grid.

use std::sync::Arc;

use tiny_skia::{Pixmap, PixmapMut};

use crate::blend::over;
use crate::camera::Camera;
use crate::theme::Theme;

/// A cell's pixels.
pub(crate) enum Cell {
    /// Premultiplied RGBA; `opaque` when every pixel is (copied row by row instead of blended).
    Pixels { pixmap: Pixmap, opaque: bool },
    /// One opaque colour over the whole cell (open water): kept in a few bytes, filled on copy.
    Solid([u8; 4]),
    /// Opaque, row by row as runs of one colour: a Natural Earth cell is mostly land and water
    /// with a few coasts and borders across it, so its runs take a small share of its pixels'
    /// bytes. A 4096 x 4096 map over land needs 256 cells, 64 MiB as pixels, twice the default
    /// cache, and drew part of its background again on every call.
    Runs(Runs),
}

/// An opaque cell's rows as runs of one colour.
pub(crate) struct Runs {
    /// Where each row's runs begin in `runs`, and where the last row's end.
    rows: Vec<u32>,
    runs: Vec<Run>,
}

#[derive(Clone, Copy)]
struct Run {
    color: [u8; 4],
    len: u16,
}

/// A cell is kept as runs only when they take at most this share of its pixels' bytes: else
/// copying run by run would cost more than it saves.
const RUNS_MAX_SHARE: usize = 4;

impl Runs {
    /// The runs of an opaque pixmap, or None when there would be more than `max` of them.
    fn of(pixmap: &Pixmap, max: usize) -> Option<Runs> {
        let w = pixmap.width() as usize;
        let mut rows = Vec::with_capacity(pixmap.height() as usize + 1);
        let mut runs: Vec<Run> = Vec::new();
        for row in pixmap.data().chunks_exact(w * 4) {
            rows.push(runs.len() as u32);
            let mut px = row.chunks_exact(4);
            let Some(first) = px.next() else { continue };
            let mut run = Run { color: [first[0], first[1], first[2], first[3]], len: 1 };
            for p in px {
                if p == run.color && run.len < u16::MAX {
                    run.len += 1;
                } else {
                    runs.push(run);
                    run = Run { color: [p[0], p[1], p[2], p[3]], len: 1 };
                }
            }
            runs.push(run);
            if runs.len() > max {
                return None;
            }
        }
        rows.push(runs.len() as u32);
        Some(Runs { rows, runs })
    }

    /// Writes row `y`'s pixels from column `from` to column `to` of the cell into `out`.
    fn copy_row(&self, y: usize, from: usize, to: usize, out: &mut [u8]) {
        let (mut x, mut at) = (0, 0);
        for r in &self.runs[self.rows[y] as usize..self.rows[y + 1] as usize] {
            let end = x + r.len as usize;
            let (a, b) = (x.max(from), end.min(to));
            if a < b {
                let n = (b - a) * 4;
                fill(&mut out[at..at + n], r.color);
                at += n;
            }
            if end >= to {
                break;
            }
            x = end;
        }
    }
}

/// Fills `to` (whole pixels) with one colour: as 32-bit words where the bytes are aligned for
/// them (a pixmap's and the image's buffers are), a pixel at a time where not.
fn fill(to: &mut [u8], c: [u8; 4]) {
    // Most runs along a coast or border are a pixel or two of its anti-aliased edge.
    if to.len() <= 16 {
        to.chunks_exact_mut(4).for_each(|p| p.copy_from_slice(&c));
        return;
    }
    match bytemuck::try_cast_slice_mut::<u8, u32>(to) {
        Ok(words) => words.fill(u32::from_ne_bytes(c)),
        Err(_) => to.chunks_exact_mut(4).for_each(|p| p.copy_from_slice(&c)),
    }
}

impl Cell {
    /// A drawn cell, kept as one colour when every pixel is the same opaque one, as runs when
    /// it is opaque and they take a quarter of its bytes or less.
    pub fn from_pixmap(pixmap: Pixmap) -> Cell {
        let px = pixmap.pixels();
        let first = px[0];
        if first.alpha() == 255 && px.iter().all(|p| *p == first) {
            return Cell::Solid([first.red(), first.green(), first.blue(), 255]);
        }
        let opaque = px.iter().all(|p| p.alpha() == 255);
        // A run takes 6 bytes where a pixel takes 4.
        let max = pixmap.data().len() / RUNS_MAX_SHARE / std::mem::size_of::<Run>();
        match opaque.then(|| Runs::of(&pixmap, max)).flatten() {
            Some(runs) => Cell::Runs(runs),
            None => Cell::Pixels { pixmap, opaque },
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Cell::Pixels { pixmap, .. } => pixmap.data().len() as u64,
            Cell::Solid(_) => 64,
            Cell::Runs(r) => (r.runs.len() * std::mem::size_of::<Run>() + r.rows.len() * 4 + 64) as u64,
        }
    }
}

/// What a cell is drawn for: its side, the zoom and scale (as bits: any zoom a fit gives), the
/// theme and the cell's place in the world grid.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct CellKey {
    side: u32,
    zoom: u64,
    scale: u64,
    theme: Theme,
    x: i64,
    y: i64,
}

impl CellKey {
    /// The camera that draws this cell as an image of its own.
    pub fn camera(&self, view: &Camera) -> Camera {
        let s = f64::from(self.side);
        Camera { left: self.x as f64 * s, top: self.y as f64 * s, width: self.side, height: self.side, ..*view }
    }
}

#[derive(Clone)]
struct Weigh;

impl quick_cache::Weighter<CellKey, Option<Arc<Cell>>> for Weigh {
    fn weight(&self, _: &CellKey, v: &Option<Arc<Cell>>) -> u64 {
        v.as_ref().map_or(64, |c| c.bytes())
    }
}

/// Drawn cells of one side, at most `bytes` of them.
pub(crate) struct CellCache {
    side: u32,
    bytes: u64,
    cells: quick_cache::sync::Cache<CellKey, Option<Arc<Cell>>, Weigh>,
}

impl CellCache {
    pub fn new(side: u32, bytes: u64) -> CellCache {
        // quick_cache wants a capacity of at least one item; a bound of 0 keeps nothing (see `cover`).
        let items = (bytes / u64::from(side * side)).clamp(16, 4096) as usize;
        CellCache { side, bytes, cells: quick_cache::sync::Cache::with_weighter(items, bytes.max(1), Weigh) }
    }

    /// Bytes held now.
    pub fn weight(&self) -> u64 {
        self.cells.weight()
    }

    /// The most bytes it holds.
    pub fn bound(&self) -> u64 {
        self.bytes
    }

    /// The cells covering a view, each with the image pixel of its top-left corner: those
    /// already drawn from the cache, the rest drawn by `draw` (given the cell's camera; None
    /// leaves the cell empty) on two threads, the cores this serves from. With a bound of 0
    /// nothing is kept and every cell is drawn.
    pub fn cover(&self, cam: &Camera, theme: &Theme, draw: &(dyn Fn(&Camera) -> Option<Cell> + Sync)) -> Cover {
        let s = f64::from(self.side);
        let (left, top) = (cam.left.round(), cam.top.round());
        let (x0, y0) = ((left / s).floor() as i64, (top / s).floor() as i64);
        let (x1, y1) = (((left + cam.width as f64 - 0.5) / s).floor() as i64, ((top + cam.height as f64 - 0.5) / s).floor() as i64);
        let keys: Vec<CellKey> = (y0..=y1)
            .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
            .map(|(x, y)| CellKey { side: self.side, zoom: cam.zoom.to_bits(), scale: cam.scale.to_bits(), theme: *theme, x, y })
            .collect();
        let keep = self.bytes > 0;
        let mut drawn: Vec<Option<Arc<Cell>>> = Vec::with_capacity(keys.len());
        let mut missing: Vec<usize> = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            match self.cells.get(k).filter(|_| keep) {
                Some(cell) => drawn.push(cell),
                None => {
                    drawn.push(None);
                    missing.push(i);
                }
            }
        }
        if !missing.is_empty() {
            let one = |k: &CellKey| -> Option<Arc<Cell>> {
                let make = || draw(&k.camera(cam)).map(Arc::new);
                if keep {
                    // One thread draws a cell while any other asking for it waits.
                    self.cells.get_or_insert_with(k, || -> Result<_, ()> { Ok(make()) }).ok().flatten()
                } else {
                    make()
                }
            };
            let (ma, mb) = missing.split_at(missing.len().div_ceil(2));
            let part = |p: &[usize]| p.iter().map(|&i| (i, one(&keys[i]))).collect::<Vec<_>>();
            let (a, b) = if mb.is_empty() {
                (part(ma), Vec::new())
            } else {
                std::thread::scope(|sc| {
                    let other = sc.spawn(|| part(mb));
                    (part(ma), other.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                })
            };
            for (i, cell) in a.into_iter().chain(b) {
                drawn[i] = cell;
            }
        }
        let side = i64::from(self.side);
        let cells = keys.iter().zip(drawn).filter_map(|(k, c)| c.map(|c| (c, k.x * side - left as i64, k.y * side - top as i64))).collect();
        Cover { side, cells }
    }
}

/// A cell with the image pixel of its top-left corner.
type Placed = (Arc<Cell>, i64, i64);

/// One image's cells, ready to copy band by band.
pub(crate) struct Cover {
    side: i64,
    cells: Vec<Placed>,
}

impl Cover {
    /// The whole image of `w` x `h` pixels made of the cells (premultiplied RGBA; transparent
    /// where none was drawn), written once row by row: no zeroed buffer is filled first, which
    /// at 4096 x 4096 is 64 MiB of memory written twice.
    pub fn image(&self, w: u32, h: u32) -> Vec<u8> {
        let (w, h) = (i64::from(w), i64::from(h));
        let side = self.side;
        let mut out = Vec::with_capacity((w * h * 4) as usize);
        let zeros = |out: &mut Vec<u8>, n: i64| out.resize(out.len() + (n * 4) as usize, 0);
        // The cells come row of cells by row of cells, left to right.
        let mut rows: Vec<(i64, Vec<&Placed>)> = Vec::new();
        for c in &self.cells {
            match rows.last_mut() {
                Some((cy, cs)) if *cy == c.2 => cs.push(c),
                _ => rows.push((c.2, vec![c])),
            }
        }
        let mut group = 0;
        for y in 0..h {
            while group < rows.len() && rows[group].0 + side <= y {
                group += 1;
            }
            let mut x = 0;
            if let Some((cy, cells)) = rows.get(group).filter(|(cy, _)| *cy <= y) {
                for (cell, cx, _) in cells {
                    let (xa, xb) = ((*cx).max(x), (cx + side).min(w));
                    if xa >= xb {
                        continue;
                    }
                    zeros(&mut out, xa - x);
                    match &**cell {
                        Cell::Solid(c) => {
                            let at = out.len();
                            out.resize(at + ((xb - xa) * 4) as usize, 0);
                            fill(&mut out[at..], *c);
                        }
                        Cell::Pixels { pixmap, .. } => {
                            let s0 = (((y - cy) * side + (xa - cx)) * 4) as usize;
                            out.extend_from_slice(&pixmap.data()[s0..s0 + ((xb - xa) * 4) as usize]);
                        }
                        Cell::Runs(runs) => {
                            let at = out.len();
                            out.resize(at + ((xb - xa) * 4) as usize, 0);
                            runs.copy_row((y - cy) as usize, (xa - cx) as usize, (xb - cx) as usize, &mut out[at..]);
                        }
                    }
                    x = xb;
                }
            }
            zeros(&mut out, w - x);
        }
        out
    }

    /// Copies the cells onto a band whose top row is row `y0` of the image: opaque cells row by
    /// row, others blended over what the band holds.
    pub fn draw(&self, band: &mut PixmapMut, y0: u32) {
        let (bw, bh) = (i64::from(band.width()), i64::from(band.height()));
        let top = i64::from(y0);
        let data = band.data_mut();
        let side = self.side;
        for (cell, cx, cy) in &self.cells {
            let (xa, xb) = ((*cx).max(0), (cx + side).min(bw));
            let (ya, yb) = ((*cy).max(top), (cy + side).min(top + bh));
            if xa >= xb || ya >= yb {
                continue;
            }
            let n = ((xb - xa) * 4) as usize;
            for y in ya..yb {
                let d0 = (((y - top) * bw + xa) * 4) as usize;
                let to = &mut data[d0..d0 + n];
                match &**cell {
                    Cell::Solid(c) => fill(to, *c),
                    Cell::Runs(runs) => {
                        runs.copy_row((y - cy) as usize, (xa - cx) as usize, (xb - cx) as usize, to);
                    }
                    Cell::Pixels { pixmap, opaque } => {
                        let s0 = (((y - cy) * side + (xa - cx)) * 4) as usize;
                        let from = &pixmap.data()[s0..s0 + n];
                        if *opaque {
                            to.copy_from_slice(from);
                        } else {
                            for (p, q) in from.chunks_exact(4).zip(to.chunks_exact_mut(4)) {
                                if p[3] != 0 {
                                    over([p[0], p[1], p[2], p[3]], q);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tiny_skia::{Color, FillRule, Paint, PathBuilder, Transform};

    /// A cell like the basemap's: water, and land with an anti-aliased coast across it.
    fn coast() -> Pixmap {
        let mut p = Pixmap::new(256, 256).unwrap();
        p.fill(Color::from_rgba8(170, 211, 223, 255));
        let mut paint = Paint { anti_alias: true, ..Paint::default() };
        paint.set_color_rgba8(242, 239, 233, 255);
        let circle = PathBuilder::from_circle(40.0, 300.0, 230.0).unwrap();
        p.fill_path(&circle, &paint, FillRule::Winding, Transform::identity(), None);
        p
    }

    #[test]
    fn a_cell_of_land_and_water_is_kept_as_runs_and_copied_back_pixel_for_pixel() {
        let pixmap = coast();
        let raw = pixmap.data().to_vec();
        let cell = Cell::from_pixmap(pixmap);
        assert!(matches!(cell, Cell::Runs(_)), "kept as runs");
        assert!(cell.bytes() * 20 < raw.len() as u64, "{} bytes for {} of pixels", cell.bytes(), raw.len());
        // Placed partly off a 200 x 300 image (its left 10 columns cut, 5 rows down), the image
        // made of it and the cell drawn onto two bands are the pixels, where it lies.
        let (w, h, cx, cy) = (200u32, 300u32, -10i64, 5i64);
        let cover = Cover { side: 256, cells: vec![(Arc::new(cell), cx, cy)] };
        let want = |x: i64, y: i64| -> [u8; 4] {
            let (sx, sy) = (x - cx, y - cy);
            if (0..256).contains(&sx) && (0..256).contains(&sy) {
                let i = ((sy * 256 + sx) * 4) as usize;
                [raw[i], raw[i + 1], raw[i + 2], raw[i + 3]]
            } else {
                [0; 4]
            }
        };
        let image = cover.image(w, h);
        let mut bands = vec![0u8; (w * h * 4) as usize];
        for (y0, rows) in [(0u32, 120u32), (120, 180)] {
            let at = (y0 * w * 4) as usize;
            let mut band = PixmapMut::from_bytes(&mut bands[at..at + (rows * w * 4) as usize], w, rows).unwrap();
            cover.draw(&mut band, y0);
        }
        for y in 0..i64::from(h) {
            for x in 0..i64::from(w) {
                let i = ((y * i64::from(w) + x) * 4) as usize;
                assert_eq!(image[i..i + 4], want(x, y), "image ({x}, {y})");
                assert_eq!(bands[i..i + 4], want(x, y), "bands ({x}, {y})");
            }
        }
    }

    #[test]
    fn a_cell_with_too_many_runs_keeps_its_pixels() {
        // A checkerboard: a run a pixel.
        let mut p = Pixmap::new(64, 64).unwrap();
        for (i, px) in p.pixels_mut().iter_mut().enumerate() {
            let v = if (i + i / 64) % 2 == 0 { 255 } else { 0 };
            *px = tiny_skia::PremultipliedColorU8::from_rgba(v, v, v, 255).unwrap();
        }
        assert!(matches!(Cell::from_pixmap(p), Cell::Pixels { opaque: true, .. }));
    }
}
