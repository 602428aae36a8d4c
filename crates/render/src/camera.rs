//! Web Mercator with slippy-map zoom: at zoom z the world is 256 * 2^z pixels wide. A camera
//! maps lat/lng to image pixels for one viewport.

/// The requested viewport, in the contract's priority order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Viewport {
    /// [south, west, north, east]: the box fits the image (aspect kept, centred).
    Bounds([f64; 4]),
    /// [lat, lng] at an integer zoom.
    CenterZoom([f64; 2], f64),
    /// Fit the given points with padding.
    Auto,
}

impl Viewport {
    /// The contract's priority: `bounds` over `center` with `zoom`, else fit the points.
    pub fn from_parts(bounds: Option<[f64; 4]>, center: Option<[f64; 2]>, zoom: Option<f64>) -> Viewport {
        match (bounds, center, zoom) {
            (Some(b), _, _) => Viewport::Bounds(b),
            (None, Some(c), Some(z)) => Viewport::CenterZoom(c, z),
            _ => Viewport::Auto,
        }
    }
}

/// An auto-fit view's zoom is a whole number of these steps: 2^(1/16), 4.4 % of the image's side
/// at most given back to the margin.
pub const AUTO_ZOOM_STEP: f64 = 1.0 / 16.0;

/// Web Mercator's latitude limit.
pub const MAX_LAT: f64 = 85.051_128_779_806_59;

/// World pixel coordinates at zoom 0 (0..256).
pub fn world(lat: f64, lng: f64) -> (f64, f64) {
    let lat = lat.clamp(-MAX_LAT, MAX_LAT).to_radians();
    let x = (lng + 180.0) / 360.0 * 256.0;
    let y = (1.0 - (lat.tan() + 1.0 / lat.cos()).ln() / std::f64::consts::PI) / 2.0 * 256.0;
    (x, y)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    pub zoom: f64,
    /// World pixel (at `zoom`) of the image's top-left corner.
    pub left: f64,
    pub top: f64,
    /// Image size in pixels (already multiplied by scale).
    pub width: u32,
    pub height: u32,
    /// Pixel multiplier (scale): zoom semantics stay those of a 256-px tile at scale 1.
    pub scale: f64,
}

impl Camera {
    fn centred(cx0: f64, cy0: f64, zoom: f64, width: u32, height: u32, scale: f64) -> Camera {
        let k = 2f64.powf(zoom) * scale;
        Camera { zoom, left: cx0 * k - width as f64 / 2.0, top: cy0 * k - height as f64 / 2.0, width, height, scale }
    }

    /// The camera for a viewport; `points` are (lat, lng) for auto-fit.
    pub fn new(viewport: Viewport, points: &[(f64, f64)], width: u32, height: u32, scale: f64) -> Camera {
        match viewport {
            Viewport::CenterZoom([lat, lng], zoom) => {
                let (x, y) = world(lat, lng);
                Camera::centred(x, y, zoom, width, height, scale)
            }
            Viewport::Bounds([s, w, n, e]) => {
                // West east of east: the box crosses the antimeridian, so its east edge is
                // one world further right.
                let (nw, mut se) = (world(n, w), world(s, e));
                if w > e {
                    se.0 += 256.0;
                }
                Camera::fit((nw, se), width, height, scale, 0.0, 18.0)
            }
            Viewport::Auto => {
                if points.is_empty() {
                    return Camera::new(Viewport::CenterZoom([20.0, 0.0], 0.0), points, width, height, scale);
                }
                let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
                for &(lat, lng) in points {
                    let (x, y) = world(lat, lng);
                    x0 = x0.min(x);
                    x1 = x1.max(x);
                    y0 = y0.min(y);
                    y1 = y1.max(y);
                }
                // Padding so edge markers are not cut; a single point gets a city-scale view.
                let pad = 0.08 * (width.min(height) as f64);
                let mut cam = Camera::fit(((x0, y0), (x1, y1)), width, height, scale, pad, 14.0);
                // Down to the step below: the points fit with a little more room, and maps of
                // brands over the same part of the world share a zoom, so the basemap cells drawn
                // for one are copied into the next.
                let snapped = (cam.zoom / AUTO_ZOOM_STEP).floor() * AUTO_ZOOM_STEP;
                if snapped != cam.zoom {
                    cam = Camera::centred((x0 + x1) / 2.0, (y0 + y1) / 2.0, snapped, width, height, scale);
                }
                cam
            }
        }
    }

    /// The largest zoom (capped) at which the world-pixel box fits inside the image minus
    /// `pad` on each side.
    fn fit(((x0, y0), (x1, y1)): ((f64, f64), (f64, f64)), width: u32, height: u32, scale: f64, pad: f64, max_zoom: f64) -> Camera {
        let (bw, bh) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
        let avail_w = (width as f64 - 2.0 * pad).max(1.0) / scale;
        let avail_h = (height as f64 - 2.0 * pad).max(1.0) / scale;
        let zoom = (avail_w / bw).min(avail_h / bh).log2().clamp(0.0, max_zoom);
        Camera::centred((x0 + x1) / 2.0, (y0 + y1) / 2.0, zoom, width, height, scale)
    }

    /// Image pixel of a lat/lng, on the copy of the world nearest the view's centre: a view
    /// across the antimeridian shows Alaska east of Chukotka, not a world away.
    pub fn pixel(&self, lat: f64, lng: f64) -> (f64, f64) {
        let (x, y) = world(lat, lng);
        let k = 2f64.powf(self.zoom) * self.scale;
        let centre = (self.left + self.width as f64 / 2.0) / k;
        let x = x + 256.0 * ((centre - x) / 256.0).round();
        (x * k - self.left, y * k - self.top)
    }

    /// The camera of rows `y0..y0 + height` of this image, drawn as an image of their own.
    pub fn band(&self, y0: u32, height: u32) -> Camera {
        Camera { top: self.top + y0 as f64, height, ..*self }
    }

    /// World-pixel scale factor from zoom-0 pixels to image pixels.
    pub fn k(&self) -> f64 {
        2f64.powf(self.zoom) * self.scale
    }

    /// The visible area in zoom-0 world pixels: (x0, y0, x1, y1).
    pub fn world_box(&self) -> (f64, f64, f64, f64) {
        let k = self.k();
        (self.left / k, self.top / k, (self.left + self.width as f64) / k, (self.top + self.height as f64) / k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_across_the_antimeridian_frame_the_bering_sea() {
        // [south, west, north, east] with west > east: from 170°E to 130°W.
        let c = Camera::new(Viewport::Bounds([50.0, 170.0, 72.0, -130.0]), &[], 1200, 800, 1.0);
        let inside = |(x, y): (f64, f64)| (0.0..1200.0).contains(&x) && (0.0..800.0).contains(&y);
        for (lat, lng) in [(64.5, -165.4), (61.2, -149.9), (64.7, 177.5), (60.0, 175.0)] {
            assert!(inside(c.pixel(lat, lng)), "({lat}, {lng}) at {:?}", c.pixel(lat, lng));
        }
        // Nome (Alaska) is east of Anadyr (Chukotka), and both are far from the seam's edges.
        assert!(c.pixel(64.5, -165.4).0 > c.pixel(64.7, 177.5).0);
        // Greenwich is nowhere near.
        assert!(!inside(c.pixel(51.5, 0.0)));
    }

    #[test]
    fn world_projection_matches_slippy_tiles() {
        assert_eq!(world(0.0, 0.0), (128.0, 128.0));
        let (x, y) = world(MAX_LAT, -180.0);
        assert!(x.abs() < 1e-9 && y.abs() < 1e-6);
    }

    #[test]
    fn center_zoom_puts_the_centre_in_the_middle() {
        let c = Camera::new(Viewport::CenterZoom([41.88, -87.63], 10.0), &[], 1200, 800, 1.0);
        let (x, y) = c.pixel(41.88, -87.63);
        assert!((x - 600.0).abs() < 1e-6 && (y - 400.0).abs() < 1e-6);
    }

    #[test]
    fn bounds_fit_inside_the_image() {
        let c = Camera::new(Viewport::Bounds([40.0, -90.0, 45.0, -80.0]), &[], 1200, 800, 1.0);
        let (x0, y0) = c.pixel(45.0, -90.0);
        let (x1, y1) = c.pixel(40.0, -80.0);
        assert!(x0 >= -1e-6 && y0 >= -1e-6 && x1 <= 1200.0 + 1e-6 && y1 <= 800.0 + 1e-6);
        assert!((x1 - x0 - 1200.0).abs() < 1e-6 || (y1 - y0 - 800.0).abs() < 1e-6, "one side fills the image");
    }
}
