//! Kernel density over the markers: points are counted into a grid of small cells, smoothed
//! with three box blurs (close to a Gaussian, each pass O(1) a cell whatever the radius),
//! normalized to the densest cell and coloured through a ramp, then blended over the basemap.
//! Cells with no density nearby are left untouched.

use tiny_skia::PixmapMut;

use crate::blend::{covered, over};

/// Image pixels per grid cell side: the kernel is tens of pixels wide, so a coarser grid loses
/// nothing visible and keeps a 4096-pixel map cheap.
const CELL: usize = 4;

/// Cold to hot: (position, r, g, b, alpha).
const RAMP: [(f32, [f32; 4]); 5] = [
    (0.0, [65.0, 105.0, 225.0, 0.0]),
    (0.15, [0.0, 180.0, 220.0, 0.3]),
    (0.4, [60.0, 200.0, 80.0, 0.6]),
    (0.7, [250.0, 210.0, 40.0, 0.75]),
    (1.0, [220.0, 40.0, 30.0, 0.85]),
];

fn ramp(t: f32) -> [f32; 4] {
    let t = t.clamp(0.0, 1.0);
    for w in RAMP.windows(2) {
        let ((t0, c0), (t1, c1)) = (w[0], w[1]);
        if t <= t1 {
            let f = (t - t0) / (t1 - t0);
            return [0, 1, 2, 3].map(|i| c0[i] + (c1[i] - c0[i]) * f);
        }
    }
    RAMP[RAMP.len() - 1].1
}

/// One box-blur pass along rows (`stride` 1) or columns, radius `r` cells.
fn box_pass(src: &[f32], dst: &mut [f32], len: usize, lines: usize, step: usize, stride: usize, r: usize) {
    let norm = 1.0 / (2 * r + 1) as f32;
    for line in 0..lines {
        let base = line * stride;
        let at = |i: isize| -> f32 {
            if i < 0 || i as usize >= len {
                0.0
            } else {
                src[base + i as usize * step]
            }
        };
        let mut sum: f32 = (-(r as isize)..=r as isize).map(at).sum();
        for i in 0..len {
            dst[base + i * step] = sum * norm;
            sum += at(i as isize + r as isize + 1) - at(i as isize - r as isize);
        }
    }
}

/// The smoothed density of points over an image, ready to be blended band by band.
pub struct Density {
    grid: Vec<f32>,
    gw: usize,
    gh: usize,
    max: f32,
    /// Premultiplied colours by level: index `t * 255`.
    lut: Vec<[u8; 4]>,
}

impl Density {
    /// The density of `points` (image pixels) over a `w` x `h` image with a kernel of about
    /// `radius` pixels; None when no point is in the image.
    pub fn new(points: &[(f32, f32)], w: u32, h: u32, radius: f32) -> Option<Density> {
        let (w, h) = (w as usize, h as usize);
        let (gw, gh) = (w.div_ceil(CELL), h.div_ceil(CELL));
        let mut grid = vec![0f32; gw * gh];
        let mut any = false;
        for &(x, y) in points {
            if x < 0.0 || y < 0.0 || x >= w as f32 || y >= h as f32 {
                continue;
            }
            grid[(y as usize / CELL) * gw + x as usize / CELL] += 1.0;
            any = true;
        }
        if !any {
            return None;
        }
        let r = ((radius / CELL as f32) / 2.0).round().max(1.0) as usize;
        let mut tmp = vec![0f32; grid.len()];
        for _ in 0..3 {
            box_pass(&grid, &mut tmp, gw, gh, 1, gw, r);
            box_pass(&tmp, &mut grid, gh, gw, gw, 1, r);
        }
        let max = grid.iter().copied().fold(0.0, f32::max);
        let lut = (0..=255)
            .map(|i| {
                let [r, g, b, a] = ramp(i as f32 / 255.0);
                covered([r.round() as u8, g.round() as u8, b.round() as u8], (a * 255.0).round() as u8)
            })
            .collect();
        (max > 0.0).then_some(Density { grid, gw, gh, max, lut })
    }

    /// Blends the density over a band of the image whose top row is row `y0` of the whole.
    pub fn blend(&self, band: &mut PixmapMut, y0: u32) {
        let (w, h) = (band.width() as usize, band.height() as usize);
        let (grid, gw, gh) = (&self.grid, self.gw, self.gh);
        // Levels under this are left undrawn: where there is no density nearby, the basemap
        // stays exactly as it was. The level is a square root (a lone store stays visible
        // beside a downtown of hundreds); running sums leave float dust, even below zero.
        let floor = 0.04f32 * 0.04 * self.max;
        let data = band.data_mut();
        // Bilinear between cell centres: each column's two cells and its weight, the same on
        // every row.
        let cols: Vec<(usize, usize, f32)> = (0..w)
            .map(|x| {
                let gx = ((x as f32 + 0.5) / CELL as f32 - 0.5).max(0.0);
                let c0 = gx as usize;
                (c0, (c0 + 1).min(gw - 1), gx - c0 as f32)
            })
            .collect();
        let mut mixed = vec![0f32; gw];
        for y in 0..h {
            let gy = (((y + y0 as usize) as f32 + 0.5) / CELL as f32 - 0.5).max(0.0);
            let r0 = gy as usize;
            let (r1, fy) = ((r0 + 1).min(gh - 1), gy - r0 as f32);
            let (row0, row1) = (&grid[r0 * gw..(r0 + 1) * gw], &grid[r1 * gw..(r1 + 1) * gw]);
            // The two grid rows mixed once for the whole image row; then each pixel mixes two
            // neighbours, and is under the floor wherever both of them are.
            for ((m, a), b) in mixed.iter_mut().zip(row0).zip(row1) {
                *m = a * (1.0 - fy) + b * fy;
            }
            let out = &mut data[y * w * 4..(y + 1) * w * 4];
            for (&(c0, c1, fx), px) in cols.iter().zip(out.chunks_exact_mut(4)) {
                let (a, b) = (mixed[c0], mixed[c1]);
                if a < floor && b < floor {
                    continue;
                }
                let v = a * (1.0 - fx) + b * fx;
                if v < floor {
                    continue;
                }
                let t = (v / self.max).sqrt();
                over(self.lut[((t * 255.0 + 0.5) as usize).min(255)], px);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_dense_places_and_leaves_empty_ones() {
        let mut p = tiny_skia::Pixmap::new(200, 100).unwrap();
        p.fill(tiny_skia::Color::WHITE);
        let pts: Vec<(f32, f32)> = (0..50).map(|i| (40.0 + (i % 5) as f32, 50.0 + (i / 5) as f32 * 0.5)).collect();
        Density::new(&pts, 200, 100, 24.0).unwrap().blend(&mut p.as_mut(), 0);
        let at = |x: usize, y: usize| p.pixels()[y * 200 + x];
        assert_ne!((at(42, 52).red(), at(42, 52).green(), at(42, 52).blue()), (255, 255, 255));
        assert_eq!((at(180, 50).red(), at(180, 50).green(), at(180, 50).blue()), (255, 255, 255));
    }

    #[test]
    fn ramp_ends() {
        assert_eq!(ramp(0.0)[3], 0.0);
        assert_eq!(ramp(1.0), RAMP[4].1);
    }
}
