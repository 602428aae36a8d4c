//! Point-in-polygon country lookup against Natural Earth shapes, for rows whose sources left
//! the country out or disagree on it.
//!
//! The lookup is the land mask's grid ([`LandMask`]): each quarter-degree cell keeps the border
//! edges that touch it and the countries its centre is inside, so a point costs the edges of
//! its own cell (none inland or at open sea, a few dozen along a coast). An R-tree over every
//! edge did this before: about 75 bytes an edge for the tree's nodes (550 MB for the 7.6 M
//! edges of the 100 m borders, a third of a scale-0.1 build's peak) and seconds of bulk
//! loading on one thread, beside a grid the synthetic world builds anyway.

use std::collections::HashMap;

use storemap_core::{polygon_features, PolygonGeometry};

use crate::error::{IngestError, Result};
use crate::land::LandMask;

pub struct CountryIndex {
    codes: Vec<String>,
    /// Ring ids are indexes into `codes`.
    grid: LandMask,
}

/// How far (in degrees) a point off every coastline may be from its nearest country edge and
/// still take that country: a store on a pier or a pin just offshore.
const NEAREST_LIMIT_DEG: f64 = 0.25;

/// Country ids are 16 bits in the grid, which keeps two values of its own (see
/// [`LandMask::from_rings`]); a border file has a few hundred.
const MAX_COUNTRIES: usize = u16::MAX as usize - 2;

impl CountryIndex {
    /// From a FeatureCollection whose features carry `properties.iso_a2` and Polygon or
    /// MultiPolygon geometries (coordinates kept to f32, as `borders.bin` holds them: a
    /// centimetre).
    pub fn from_geojson(v: &serde_json::Value) -> Result<CountryIndex> {
        let bad = |m: String| IngestError::Invalid(format!("countries GeoJSON: {m}"));
        let features = polygon_features(v, &["iso_a2"]).ok_or_else(|| bad("no features".into()))?;
        let mut codes: Vec<String> = Vec::new();
        let mut code_ids: HashMap<String, u16> = HashMap::new();
        let mut rings: Vec<(u16, Vec<[f32; 2]>)> = Vec::new();
        // Borders decide countries: every feature must be a coded polygon, or the file is wrong.
        for f in features {
            let code = f.code.ok_or_else(|| bad("feature without iso_a2".into()))?;
            let polygons = match f.geometry {
                PolygonGeometry::Polygons(p) => p,
                PolygonGeometry::Missing => return Err(bad(format!("{code}: no geometry"))),
                PolygonGeometry::Other(other) => return Err(bad(format!("{code}: unsupported geometry {other:?}"))),
            };
            if !code_ids.contains_key(&code) && codes.len() >= MAX_COUNTRIES {
                return Err(bad(format!("more than {MAX_COUNTRIES} country codes")));
            }
            let id = *code_ids.entry(code.clone()).or_insert_with(|| {
                codes.push(code);
                (codes.len() - 1) as u16
            });
            rings.extend(polygons.into_iter().flatten().map(|ring| (id, ring.iter().map(|&(x, y)| [x as f32, y as f32]).collect())));
        }
        if !rings.iter().any(|(_, r)| r.windows(2).any(|w| w[0] != w[1])) {
            return Err(bad("no polygon edges".into()));
        }
        Ok(CountryIndex { codes, grid: LandMask::from_rings(|f| rings.iter().for_each(|(id, r)| f(*id, r))) })
    }

    /// From the flat ring file `ts/data/reference.ts` writes (see [`each_border_ring`]), each
    /// ring's country its id. The rings are split into runs of about as many points, one a core
    /// (the grid's two passes over a run on its core); no ring is held.
    pub fn from_borders_bin(b: &[u8]) -> Result<CountryIndex> {
        let (codes, rings) = border_rings(b)?;
        if codes.len() > MAX_COUNTRIES {
            return Err(IngestError::Invalid(format!("borders.bin: more than {MAX_COUNTRIES} country codes")));
        }
        let parts = crate::parallel::threads().clamp(1, MAX_BORDER_PARTS);
        let bounds = runs_of_points(&rings.iter().map(|r| r.points).collect::<Vec<_>>(), parts);
        let grid = LandMask::from_ring_parts(parts, |p, f| {
            let mut ring = Vec::new();
            for r in &rings[bounds[p]..bounds[p + 1]] {
                r.read(b, &mut ring);
                f(r.code, &ring);
            }
        });
        if grid.is_empty() {
            return Err(IngestError::Invalid("borders.bin: no edges".into()));
        }
        Ok(CountryIndex { codes, grid })
    }

    /// The same borders as a land mask (land is inside any country).
    pub fn land(&self) -> &LandMask {
        &self.grid
    }

    pub fn codes(&self) -> &[String] {
        &self.codes
    }

    pub fn knows(&self, code: &str) -> bool {
        self.codes.iter().any(|c| c == code)
    }

    /// The country containing the point, else the nearest one within a quarter degree.
    pub fn locate(&self, lat: f64, lng: f64) -> Option<&str> {
        if let Some(code) = self.inside(lat, lng) {
            return Some(code);
        }
        self.grid.nearest_country(lat, lng, NEAREST_LIMIT_DEG).map(|id| self.codes[id as usize].as_str())
    }

    /// The country containing the point (the first listed, where shapes overlap).
    pub fn inside(&self, lat: f64, lng: f64) -> Option<&str> {
        self.grid.inside(lat, lng).ids().iter().min().map(|&id| self.codes[id as usize].as_str())
    }
}

/// Where one ring of `borders.bin` lies: its country's index and its points' place.
struct RingAt {
    code: u16,
    at: usize,
    points: usize,
}

impl RingAt {
    /// The ring's points, into `ring` (its bounds were checked when it was found).
    fn read(&self, b: &[u8], ring: &mut Vec<[f32; 2]>) {
        let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        ring.clear();
        ring.extend((0..self.points).map(|k| [f32_at(self.at + k * 8), f32_at(self.at + k * 8 + 4)]));
    }
}

/// Rings (their point counts) cut into `parts` runs of about as many points: run `p` is
/// `bounds[p]..bounds[p + 1]`, a ring going to the run its first point falls in (a run may be
/// empty, the runs in order are every ring once).
fn runs_of_points(points: &[usize], parts: usize) -> Vec<usize> {
    let total: usize = points.iter().sum();
    let mut bounds = vec![0usize; parts + 1];
    let mut seen = 0usize;
    for (i, &n) in points.iter().enumerate() {
        bounds[(seen * parts / total.max(1)).min(parts - 1) + 1] = i + 1;
        seen += n;
    }
    for p in 1..=parts {
        bounds[p] = bounds[p].max(bounds[p - 1]);
    }
    bounds
}

/// Border parts built at once at most: each holds a cell table of its own (8 MB) while built.
const MAX_BORDER_PARTS: usize = 8;

/// The flat ring file `ts/data/reference.ts` writes (see `writeBorders` there): the magic
/// `SMBORDR1`, the country codes, then rings of f32 longitude/latitude pairs, each tagged with
/// its country's index. The codes, and where each ring lies, every bound checked.
fn border_rings(b: &[u8]) -> Result<(Vec<String>, Vec<RingAt>)> {
    let bad = |m: &str| IngestError::Invalid(format!("borders.bin: {m}"));
    let u32_at = |o: usize| b.get(o..o + 4).map(|x| u32::from_le_bytes(x.try_into().unwrap()));
    if b.get(..8) != Some(b"SMBORDR1") {
        return Err(bad("bad magic"));
    }
    let n_codes = u32_at(8).ok_or_else(|| bad("truncated"))? as usize;
    let mut o = 12;
    let codes: Vec<String> = (0..n_codes)
        .map(|i| b.get(o + i * 2..o + i * 2 + 2).map(|c| String::from_utf8_lossy(c).into_owned()))
        .collect::<Option<_>>()
        .ok_or_else(|| bad("truncated codes"))?;
    o += n_codes * 2;
    let n_rings = u32_at(o).ok_or_else(|| bad("truncated"))? as usize;
    o += 4;
    // Not sized by the file's own count: a damaged count must not reserve gigabytes.
    let mut rings = Vec::new();
    for _ in 0..n_rings {
        let code = b.get(o..o + 2).map(|x| u16::from_le_bytes(x.try_into().unwrap())).ok_or_else(|| bad("truncated ring"))?;
        let n = u32_at(o + 4).ok_or_else(|| bad("truncated ring"))? as usize;
        o += 8;
        if (code as usize) >= codes.len() || b.len() < o + n * 8 {
            return Err(bad("ring runs past the end"));
        }
        rings.push(RingAt { code, at: o, points: n });
        o += n * 8;
    }
    Ok((codes, rings))
}

/// Walks `borders.bin` (see [`border_rings`]): `f` gets each ring's country index and points;
/// the codes come back (the border tests read the file this way).
pub fn each_border_ring(b: &[u8], mut f: impl FnMut(u16, &[[f32; 2]])) -> Result<Vec<String>> {
    let (codes, rings) = border_rings(b)?;
    let mut ring = Vec::new();
    for r in &rings {
        r.read(b, &mut ring);
        f(r.code, &ring);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_are_cut_into_runs_of_about_as_many_points() {
        // Every ring once, in order, whatever the sizes and however many parts.
        for points in [vec![], vec![7], vec![5, 5, 5, 5], vec![1000, 1, 1, 1, 1], vec![1, 1, 1, 1, 1000, 3, 3], vec![0, 0, 4]] {
            for parts in 1..=6 {
                let b = runs_of_points(&points, parts);
                assert_eq!(b.len(), parts + 1);
                assert_eq!((b[0], b[parts]), (0, points.len()), "{points:?} in {parts}");
                assert!(b.windows(2).all(|w| w[0] <= w[1]), "{points:?} in {parts}: {b:?}");
            }
        }
        // Even sizes split evenly; a giant ring keeps a run to itself.
        assert_eq!(runs_of_points(&[5, 5, 5, 5], 2), vec![0, 2, 4]);
        assert_eq!(runs_of_points(&[5, 5, 5, 5], 4), vec![0, 1, 2, 3, 4]);
        assert_eq!(runs_of_points(&[1000, 1, 1, 1, 1], 2), vec![0, 1, 5]);
    }

    fn index() -> CountryIndex {
        // Two unit squares side by side, B with a hole, plus an island of A.
        let v = serde_json::json!({"type": "FeatureCollection", "features": [
            {"type": "Feature", "properties": {"iso_a2": "AA"}, "geometry": {"type": "MultiPolygon", "coordinates": [
                [[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]]],
                [[[5.0, 5.0], [6.0, 5.0], [6.0, 6.0], [5.0, 5.0]]]
            ]}},
            {"type": "Feature", "properties": {"iso_a2": "BB"}, "geometry": {"type": "Polygon", "coordinates": [
                [[1.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 0.0]],
                [[1.4, 0.4], [1.6, 0.4], [1.6, 0.6], [1.4, 0.6], [1.4, 0.4]]
            ]}}
        ]});
        CountryIndex::from_geojson(&v).unwrap()
    }

    #[test]
    fn finds_the_containing_country_on_each_side_of_a_border() {
        let idx = index();
        assert_eq!(idx.locate(0.5, 0.997), Some("AA"));
        assert_eq!(idx.locate(0.5, 1.003), Some("BB"));
        assert_eq!(idx.locate(5.2, 5.8), Some("AA"));
    }

    #[test]
    fn holes_and_open_sea() {
        let idx = index();
        // In B's hole: not B; the nearest edge (the hole's) is B's, within the limit.
        assert_eq!(idx.locate(0.5, 1.5), Some("BB"));
        assert_eq!(idx.locate(0.5, 1.1), Some("BB"));
        // Just off A's west coast: the nearest country within a quarter degree.
        assert_eq!(idx.locate(0.5, -0.1), Some("AA"));
        assert_eq!(idx.locate(40.0, -40.0), None);
        // Off the coast where the two meet, as near one as the other: the first listed.
        assert_eq!(idx.locate(-0.1, 1.0), Some("AA"));
        assert_eq!(idx.locate(-0.1, 1.001), Some("BB"));
    }
}
