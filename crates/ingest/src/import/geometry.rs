//! One position for a shape: the store's pin. OpenStreetMap maps many stores as building areas
//! (ways and multipolygon relations), and osmium exports them as LineString, Polygon or
//! MultiPolygon; a store needs one point, and it must lie inside the building, so this takes a
//! point on the surface (geo's `InteriorPoint`), not the centroid, which falls outside an L- or
//! U-shaped building.

use geo::{Coord, InteriorPoint, LineString, MultiPolygon, Point, Polygon};

use crate::source_row::{valid_point, Skip, Skipped};

pub type Lonlat = (f64, f64);

fn bad(why: impl Into<String>) -> Skipped {
    Skipped::new(Skip::BadGeometry, why)
}

pub fn checked((lng, lat): Lonlat) -> Result<Lonlat, Skipped> {
    if valid_point(lat, lng) {
        Ok((lng, lat))
    } else {
        Err(bad(format!("coordinates out of range: [{lng}, {lat}]")))
    }
}

/// Every vertex on the globe: a shape with one beyond it (a node written with a bad
/// granularity or offset) has no trustworthy point, though the point taken from it may fall
/// in range (a way from latitude 85 to 95 has its middle at 90).
fn in_range<'a>(vertices: impl IntoIterator<Item = &'a Lonlat>) -> Result<(), Skipped> {
    let on_globe = |x: f64, y: f64| (-180.0..=180.0).contains(&x) && (-90.0..=90.0).contains(&y);
    match vertices.into_iter().find(|&&(x, y)| !on_globe(x, y)) {
        Some((x, y)) => Err(bad(format!("a vertex out of range: [{x}, {y}]"))),
        None => Ok(()),
    }
}

fn closed(ring: &[Lonlat]) -> bool {
    ring.len() >= 4 && ring.first() == ring.last()
}

fn line(ring: &[Lonlat]) -> LineString {
    LineString(ring.iter().map(|&(x, y)| Coord { x, y }).collect())
}

/// A point on the surface of the polygons given as rings (`[outer, holes...]` each); the
/// largest polygon wins when there are several (a store's main building, not its kiosk).
pub fn polygons_point(polygons: &[Vec<Vec<Lonlat>>]) -> Result<Lonlat, Skipped> {
    in_range(polygons.iter().flatten().flatten())?;
    let polys: Vec<Polygon> = polygons
        .iter()
        .filter(|rings| rings.first().is_some_and(|outer| closed(outer)))
        .map(|rings| Polygon::new(line(&rings[0]), rings[1..].iter().filter(|r| closed(r)).map(|r| line(r)).collect()))
        .collect();
    if polys.is_empty() {
        return Err(bad("area without a closed outer ring"));
    }
    let largest = polys.iter().max_by(|a, b| unsigned_area(a).total_cmp(&unsigned_area(b))).expect("not empty");
    let p: Option<Point> = largest.interior_point().or_else(|| MultiPolygon(polys.clone()).interior_point());
    let p = p.ok_or_else(|| bad("degenerate area"))?;
    checked((p.x(), p.y()))
}

fn unsigned_area(p: &Polygon) -> f64 {
    use geo::Area;
    p.unsigned_area()
}

/// A point for a line: a closed line is an area (osmium exports a closed way as a
/// LineString too); an open one gives its vertex nearest the middle.
pub fn line_point(coords: &[Lonlat]) -> Result<Lonlat, Skipped> {
    in_range(coords)?;
    match coords.len() {
        0 => Err(bad("empty LineString")),
        1 => checked(coords[0]),
        _ if closed(coords) => polygons_point(&[vec![coords.to_vec()]]).or_else(|_| vertex_point(coords)),
        _ => line(coords).interior_point().ok_or_else(|| bad("degenerate LineString")).and_then(|p| checked((p.x(), p.y()))),
    }
}

/// The average of a shape's vertices: the fallback for rings that do not close (an extract
/// cut at its boundary leaves a multipolygon's ways incomplete).
pub fn vertex_point(coords: &[Lonlat]) -> Result<Lonlat, Skipped> {
    in_range(coords)?;
    if coords.is_empty() {
        return Err(bad("no vertices"));
    }
    let n = coords.len() as f64;
    let (sx, sy) = coords.iter().fold((0.0, 0.0), |(sx, sy), &(x, y)| (sx + x, sy + y));
    checked((sx / n, sy / n))
}

/// Joins way segments (each a node sequence) into closed rings by their shared end nodes,
/// as a multipolygon's outer ways are drawn. Segments that never close are returned apart.
pub fn join_rings(mut segments: Vec<Vec<Lonlat>>) -> (Vec<Vec<Lonlat>>, Vec<Vec<Lonlat>>) {
    let (mut rings, mut open) = (Vec::new(), Vec::new());
    segments.retain(|s| s.len() >= 2);
    while let Some(mut ring) = segments.pop() {
        loop {
            if closed(&ring) {
                rings.push(ring);
                break;
            }
            let (first, last) = (ring[0], *ring.last().expect("len >= 2"));
            let Some(k) =
                segments.iter().position(|s| s[0] == last || *s.last().expect("len >= 2") == last || s[0] == first || *s.last().expect("len >= 2") == first)
            else {
                open.push(ring);
                break;
            };
            let mut s = segments.swap_remove(k);
            if s[0] == last {
                ring.extend_from_slice(&s[1..]);
            } else if *s.last().expect("len >= 2") == last {
                s.reverse();
                ring.extend_from_slice(&s[1..]);
            } else if *s.last().expect("len >= 2") == first {
                s.extend_from_slice(&ring[1..]);
                ring = s;
            } else {
                s.reverse();
                s.extend_from_slice(&ring[1..]);
                ring = s;
            }
        }
    }
    (rings, open)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(x: f64, y: f64, d: f64) -> Vec<Lonlat> {
        vec![(x, y), (x + d, y), (x + d, y + d), (x, y + d), (x, y)]
    }

    #[test]
    fn the_point_of_an_l_shaped_building_lies_inside_it() {
        // An L: its centroid (about 0.0004, 0.0004) lies in the notch, outside the building.
        let l = vec![(0.0, 0.0), (0.001, 0.0), (0.001, 0.0002), (0.0002, 0.0002), (0.0002, 0.001), (0.0, 0.001), (0.0, 0.0)];
        let (x, y) = polygons_point(&[vec![l]]).unwrap();
        let in_foot = (0.0..=0.001).contains(&x) && (0.0..=0.0002).contains(&y);
        let in_stem = (0.0..=0.0002).contains(&x) && (0.0..=0.001).contains(&y);
        assert!(in_foot || in_stem, "({x}, {y}) is outside the L");
    }

    #[test]
    fn the_largest_polygon_gives_the_point() {
        let (x, y) = polygons_point(&[vec![square(10.0, 10.0, 0.0001)], vec![square(0.0, 0.0, 0.01)]]).unwrap();
        assert!((0.0..0.01).contains(&x) && (0.0..0.01).contains(&y));
    }

    #[test]
    fn a_closed_line_is_an_area_and_an_open_one_a_line() {
        let (x, y) = line_point(&square(8.0, 47.0, 0.001)).unwrap();
        assert!(x > 8.0 && x < 8.001 && y > 47.0 && y < 47.001);
        let (x, y) = line_point(&[(1.0, 1.0), (1.0, 1.001), (1.0, 1.002)]).unwrap();
        assert_eq!((x, y), (1.0, 1.001));
        assert_eq!(line_point(&[]).unwrap_err().reason, Skip::BadGeometry);
        assert_eq!(line_point(&[(200.0, 0.5), (200.0, 0.6)]).unwrap_err().reason, Skip::BadGeometry);
    }

    #[test]
    fn a_shape_with_a_vertex_off_the_globe_has_no_point_though_its_middle_is_on_it() {
        // The middle of each lies in range: latitude 90, longitude 180.
        let line = [(8.0, 85.0), (8.0, 95.0)];
        let e = line_point(&line).unwrap_err();
        assert_eq!(e.reason, Skip::BadGeometry);
        assert!(e.why.contains("[8, 95]"), "{}", e.why);
        let square = vec![(179.0, 10.0), (181.0, 10.0), (181.0, 10.002), (179.0, 10.002), (179.0, 10.0)];
        assert_eq!(polygons_point(&[vec![square.clone()]]).unwrap_err().reason, Skip::BadGeometry);
        assert_eq!(line_point(&square).unwrap_err().reason, Skip::BadGeometry);
        assert_eq!(vertex_point(&line).unwrap_err().reason, Skip::BadGeometry);
    }

    #[test]
    fn segments_join_into_rings_in_any_direction() {
        let sq = square(0.0, 0.0, 1.0);
        // Three segments of one ring, the middle one drawn backwards.
        let a = sq[0..3].to_vec();
        let mut b = sq[2..4].to_vec();
        b.reverse();
        let c = sq[3..5].to_vec();
        let (rings, open) = join_rings(vec![a, b, c]);
        assert_eq!(rings.len(), 1);
        assert!(open.is_empty());
        assert_eq!(rings[0].len(), 5);
        let (rings, open) = join_rings(vec![sq[0..3].to_vec()]);
        assert!(rings.is_empty());
        assert_eq!(open.len(), 1);
    }
}
