//! The polygon features of a GeoJSON FeatureCollection: each feature's code (the first of the
//! caller's property keys it carries) and its Polygon or MultiPolygon rings as (lng, lat)
//! pairs. The renderer's shapes and the pipeline's country index read borders through this one
//! reader; each decides for itself what a feature without a code or polygons means.

use serde_json::Value;

/// A ring: (lng, lat) points as the file lists them.
pub type Ring = Vec<(f64, f64)>;

/// One feature's geometry, as far as polygons go.
#[derive(Debug, Clone, PartialEq)]
pub enum PolygonGeometry {
    /// Polygons, each its rings (the outer ring first, then holes).
    Polygons(Vec<Vec<Ring>>),
    /// No geometry, or one without coordinates.
    Missing,
    /// A geometry of another type (the type, when it names one).
    Other(Option<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct PolygonFeature {
    /// The first of the requested property keys the feature carries as a string.
    pub code: Option<String>,
    pub geometry: PolygonGeometry,
}

/// Every feature of the collection, in order; `None` when `v` has no `features` array.
pub fn polygon_features(v: &Value, code_keys: &[&str]) -> Option<Vec<PolygonFeature>> {
    let features = v.get("features")?.as_array()?;
    Some(features.iter().map(|f| PolygonFeature { code: code(f, code_keys), geometry: geometry(f) }).collect())
}

fn code(f: &Value, keys: &[&str]) -> Option<String> {
    let props = f.get("properties")?;
    keys.iter().find_map(|k| props.get(*k).and_then(|c| c.as_str())).map(str::to_string)
}

fn geometry(f: &Value) -> PolygonGeometry {
    let Some(g) = f.get("geometry") else { return PolygonGeometry::Missing };
    let Some(coords) = g.get("coordinates").and_then(|c| c.as_array()) else { return PolygonGeometry::Missing };
    let polygons: Vec<&Value> = match g.get("type").and_then(|t| t.as_str()) {
        Some("Polygon") => vec![&g["coordinates"]],
        Some("MultiPolygon") => coords.iter().collect(),
        other => return PolygonGeometry::Other(other.map(str::to_string)),
    };
    PolygonGeometry::Polygons(polygons.into_iter().map(|p| p.as_array().into_iter().flatten().map(ring).collect()).collect())
}

/// A ring's positions; a position that is not two numbers is skipped.
fn ring(r: &Value) -> Ring {
    r.as_array().into_iter().flatten().filter_map(|p| Some((p.get(0)?.as_f64()?, p.get(1)?.as_f64()?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_polygons_multipolygons_codes_and_says_what_else_it_met() {
        let v = serde_json::json!({"type": "FeatureCollection", "features": [
            {"properties": {"iso_a2": "AA"}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}},
            {"properties": {"code": "BB"}, "geometry": {"type": "MultiPolygon", "coordinates": [
                [[[0, 0], [2, 0], [2, 2], [0, 0]], [[0.5, 0.5], [1, 0.5], [1, 1], [0.5, 0.5]]],
                [[[5, 5], [6, 5], [6, 6], [5, 5]]]
            ]}},
            {"properties": {"iso_a2": "CC"}, "geometry": {"type": "Point", "coordinates": [1, 2]}},
            {"properties": {}},
        ]});
        let f = polygon_features(&v, &["iso_a2", "code"]).unwrap();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].code.as_deref(), Some("AA"));
        assert_eq!(f[0].geometry, PolygonGeometry::Polygons(vec![vec![vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 0.0)]]]));
        assert_eq!(f[1].code.as_deref(), Some("BB"));
        let PolygonGeometry::Polygons(p) = &f[1].geometry else { panic!("{:?}", f[1].geometry) };
        assert_eq!((p.len(), p[0].len(), p[1].len()), (2, 2, 1), "two polygons, the first with a hole");
        assert_eq!(f[2].geometry, PolygonGeometry::Other(Some("Point".into())));
        assert_eq!((f[3].code.clone(), f[3].geometry.clone()), (None, PolygonGeometry::Missing));
        assert!(polygon_features(&serde_json::json!({"type": "Feature"}), &["iso_a2"]).is_none());
    }
}
