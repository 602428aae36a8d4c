//! Distances on the sphere, and a local metric plane for spatial indexing.

const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// Great-circle distance in metres.
pub fn haversine_m(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lng2 - lng1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * a.sqrt().min(1.0).asin()
}

/// Moves a point by `north_m` and `east_m` metres (small offsets; good to well under a metre
/// for the few-hundred-metre moves the generator and the tests make).
pub fn offset_m(lat: f64, lng: f64, north_m: f64, east_m: f64) -> (f64, f64) {
    let dlat = (north_m / EARTH_RADIUS_M).to_degrees();
    let dlng = (east_m / (EARTH_RADIUS_M * lat.to_radians().cos().max(1e-6))).to_degrees();
    (lat + dlat, lng + dlng)
}

/// Maps lat/lng to Earth-centred 3-D coordinates in metres on the mean sphere. The straight
/// chord between two such points equals the great-circle distance to within micrometres at
/// the 100 m scale of de-duplication, everywhere on Earth (no seam at the antimeridian, no
/// distortion near the poles), so an R-tree over these points finds neighbours exactly.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalMetric;

/// The straight-line (chord) distance between two points on the sphere `arc_m` apart along it:
/// what a search among `LocalMetric` points uses as its radius.
pub fn chord_m(arc_m: f64) -> f64 {
    2.0 * EARTH_RADIUS_M * (arc_m / (2.0 * EARTH_RADIUS_M)).min(std::f64::consts::FRAC_PI_2).sin()
}

impl LocalMetric {
    pub fn project(lat: f64, lng: f64) -> [f64; 3] {
        let (p, l) = (lat.to_radians(), lng.to_radians());
        [EARTH_RADIUS_M * p.cos() * l.cos(), EARTH_RADIUS_M * p.cos() * l.sin(), EARTH_RADIUS_M * p.sin()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn haversine_matches_known_distance() {
        // Paris (48.8566, 2.3522) to London (51.5074, -0.1278): about 343.5 km.
        let d = haversine_m(48.8566, 2.3522, 51.5074, -0.1278);
        assert!((d - 343_500.0).abs() < 1_000.0, "{d}");
    }

    #[test]
    fn offset_moves_by_the_requested_distance() {
        let (lat, lng) = offset_m(41.88, -87.63, 60.0, 80.0);
        let d = haversine_m(41.88, -87.63, lat, lng);
        assert!((d - 100.0).abs() < 0.05, "{d}");
    }

    #[test]
    fn local_metric_chord_matches_arc() {
        for (lat0, lng0) in [(60.0, 10.0), (0.0, 179.9995), (-33.9, 151.2), (89.9, -45.0)] {
            let (lat, lng) = offset_m(lat0, lng0, 30.0, -90.0);
            let a = LocalMetric::project(lat0, lng0);
            let b = LocalMetric::project(lat, lng);
            let chord = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            let arc = haversine_m(lat0, lng0, lat, lng);
            assert!((chord - arc).abs() < 0.001, "{chord} vs {arc} at {lat0},{lng0}");
        }
    }
}
