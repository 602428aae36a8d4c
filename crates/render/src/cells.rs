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
}

impl Cell {
    /// A drawn cell, kept as one colour when every pixel is the same opaque one.
    pub fn from_pixmap(pixmap: Pixmap) -> Cell {
        let px = pixmap.pixels();
        let first = px[0];
        if first.alpha() == 255 && px.iter().all(|p| *p == first) {
            return Cell::Solid([first.red(), first.green(), first.blue(), 255]);
        }
        let opaque = px.iter().all(|p| p.alpha() == 255);
        Cell::Pixels { pixmap, opaque }
    }

    fn bytes(&self) -> u64 {
        match self {
            Cell::Pixels { pixmap, .. } => pixmap.data().len() as u64,
            Cell::Solid(_) => 64,
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
                            for _ in xa..xb {
                                out.extend_from_slice(c);
                            }
                        }
                        Cell::Pixels { pixmap, .. } => {
                            let s0 = (((y - cy) * side + (xa - cx)) * 4) as usize;
                            out.extend_from_slice(&pixmap.data()[s0..s0 + ((xb - xa) * 4) as usize]);
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
                    Cell::Solid(c) => {
                        for q in to.chunks_exact_mut(4) {
                            q.copy_from_slice(c);
                        }
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
