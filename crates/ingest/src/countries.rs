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
    /// ring's country its id. The file is read three times (checked, then twice by the grid:
    /// each cell's edges counted, then placed), so no ring is held.
    pub fn from_borders_bin(b: &[u8]) -> Result<CountryIndex> {
        let mut edges = 0usize;
        let codes = each_border_ring(b, |_, ring| edges += ring.windows(2).filter(|w| w[0] != w[1]).count())?;
        if codes.len() > MAX_COUNTRIES {
            return Err(IngestError::Invalid(format!("borders.bin: more than {MAX_COUNTRIES} country codes")));
        }
        if edges == 0 {
            return Err(IngestError::Invalid("borders.bin: no edges".into()));
        }
        let grid = LandMask::from_rings(|f| {
            // Checked above: it reads the same way again.
            let _ = each_border_ring(b, &mut *f);
        });
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

/// Walks the flat ring file `ts/data/reference.ts` writes (see `writeBorders` there): the magic
/// `SMBORDR1`, the country codes, then rings of f32 longitude/latitude pairs, each tagged with
/// its country's index. `f` gets each ring's country index and points; the codes come back.
/// Both border indexes read it ([`CountryIndex`], [`crate::land::LandMask`]).
pub fn each_border_ring(b: &[u8], mut f: impl FnMut(u16, &[[f32; 2]])) -> Result<Vec<String>> {
    let bad = |m: &str| IngestError::Invalid(format!("borders.bin: {m}"));
    let u32_at = |o: usize| b.get(o..o + 4).map(|x| u32::from_le_bytes(x.try_into().unwrap()));
    let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
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
    let mut ring: Vec<[f32; 2]> = Vec::new();
    for _ in 0..n_rings {
        let code = b.get(o..o + 2).map(|x| u16::from_le_bytes(x.try_into().unwrap())).ok_or_else(|| bad("truncated ring"))?;
        let n = u32_at(o + 4).ok_or_else(|| bad("truncated ring"))? as usize;
        o += 8;
        if (code as usize) >= codes.len() || b.len() < o + n * 8 {
            return Err(bad("ring runs past the end"));
        }
        ring.clear();
        ring.extend((0..n).map(|k| [f32_at(o + k * 8), f32_at(o + k * 8 + 4)]));
        f(code, &ring);
        o += n * 8;
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

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
