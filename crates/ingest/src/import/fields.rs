//! Lenient field decoding shared by the GeoJSON importers: tag values are meant to be strings,
//! but real files carry the odd number or boolean, which should not cost the whole row.

use serde::{Deserialize, Deserializer};

use super::geometry::{self, Lonlat};
use crate::source_row::{Skip, Skipped};

pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    })
}

#[derive(Debug, Deserialize)]
pub struct Geometry {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub coordinates: serde_json::Value,
}

impl Geometry {
    /// The store's position: a Point as it is, an area's point on the surface, a line's middle
    /// vertex (see `geometry`). A reason when there is none.
    pub fn position(&self) -> Result<Lonlat, Skipped> {
        let c = &self.coordinates;
        match self.kind.as_str() {
            "Point" => point_of(c),
            "MultiPoint" => point_of(c.as_array().and_then(|a| a.first()).unwrap_or(&serde_json::Value::Null)),
            "LineString" => geometry::line_point(&positions(c)?),
            "MultiLineString" => {
                let lines = c.as_array().ok_or_else(|| bad("MultiLineString without an array"))?;
                let all: Vec<Lonlat> = lines.iter().map(positions).collect::<Result<Vec<_>, _>>()?.concat();
                geometry::line_point(&all)
            }
            "Polygon" => geometry::polygons_point(&[rings(c)?]),
            "MultiPolygon" => {
                let polys = c.as_array().ok_or_else(|| bad("MultiPolygon without an array"))?;
                geometry::polygons_point(&polys.iter().map(rings).collect::<Result<Vec<_>, _>>()?)
            }
            other => Err(bad(format!("geometry is a {other}, which has no position"))),
        }
    }
}

fn bad(why: impl Into<String>) -> Skipped {
    Skipped::new(Skip::BadGeometry, why)
}

fn point_of(c: &serde_json::Value) -> Result<Lonlat, Skipped> {
    let c = c.as_array().ok_or_else(|| bad("Point without a coordinate array"))?;
    match (c.first().and_then(|v| v.as_f64()), c.get(1).and_then(|v| v.as_f64())) {
        (Some(lon), Some(lat)) if crate::source_row::valid_point(lat, lon) => Ok((lon, lat)),
        (Some(lon), Some(lat)) => Err(bad(format!("coordinates out of range: [{lon}, {lat}]"))),
        _ => Err(bad("coordinates are not two numbers")),
    }
}

fn positions(c: &serde_json::Value) -> Result<Vec<Lonlat>, Skipped> {
    c.as_array().ok_or_else(|| bad("coordinates are not an array"))?.iter().map(point_of).collect()
}

fn rings(c: &serde_json::Value) -> Result<Vec<Vec<Lonlat>>, Skipped> {
    c.as_array().ok_or_else(|| bad("Polygon without an array of rings"))?.iter().map(positions).collect()
}

/// The keys that make an OSM object a place that may be a storefront, in the order a row's
/// category is taken from them. Which of their values are in the contract's scope is the
/// catalog's call (`data/categories.csv`).
pub const PLACE_KEYS: [&str; 7] = ["amenity", "shop", "tourism", "leisure", "healthcare", "craft", "office"];

/// The OSM-style tags both OSM and ATP carry, under their real keys.
#[derive(Debug, Default, Deserialize)]
pub struct Tags {
    #[serde(default, deserialize_with = "opt_string")]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub brand: Option<String>,
    #[serde(default, rename = "brand:wikidata", deserialize_with = "opt_string")]
    pub brand_wikidata: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub amenity: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub shop: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub tourism: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub leisure: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub healthcare: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub craft: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub office: Option<String>,
    #[serde(default, rename = "addr:full", deserialize_with = "opt_string")]
    pub addr_full: Option<String>,
    #[serde(default, rename = "addr:housenumber", deserialize_with = "opt_string")]
    pub housenumber: Option<String>,
    #[serde(default, rename = "addr:street", deserialize_with = "opt_string")]
    pub street: Option<String>,
    #[serde(default, rename = "addr:street_address", deserialize_with = "opt_string")]
    pub street_address: Option<String>,
    #[serde(default, rename = "addr:city", deserialize_with = "opt_string")]
    pub city: Option<String>,
    #[serde(default, rename = "addr:state", deserialize_with = "opt_string")]
    pub state: Option<String>,
    #[serde(default, rename = "addr:postcode", deserialize_with = "opt_string")]
    pub postcode: Option<String>,
    #[serde(default, rename = "addr:country", deserialize_with = "opt_string")]
    pub country: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub phone: Option<String>,
    #[serde(default, rename = "contact:phone", deserialize_with = "opt_string")]
    pub contact_phone: Option<String>,
    #[serde(default, deserialize_with = "opt_string")]
    pub opening_hours: Option<String>,
}

impl Tags {
    /// `amenity/fast_food` from whichever category key is set.
    pub fn category(&self) -> Option<String> {
        let values = [&self.amenity, &self.shop, &self.tourism, &self.leisure, &self.healthcare, &self.craft, &self.office];
        PLACE_KEYS.iter().zip(values).find_map(|(k, v)| v.as_ref().map(|v| format!("{k}/{v}")))
    }

    /// One address line: `addr:street_address`, else house number + street (joined for the
    /// country's order, which reconciliation knows: [`crate::house_number`]), else `addr:full`.
    pub fn address(&self) -> Option<String> {
        let joined = match (&self.housenumber, &self.street) {
            (Some(n), Some(s)) if !n.trim().is_empty() && !s.trim().is_empty() => Some(crate::house_number::join(n.trim(), s.trim())),
            (_, Some(s)) => crate::source_row::clean(Some(s)),
            _ => None,
        };
        crate::source_row::clean(self.street_address.as_deref()).or(joined).or_else(|| crate::source_row::clean(self.addr_full.as_deref()))
    }

    /// Fills the tag-derived fields of a row.
    pub fn fill(self, row: &mut crate::SourceRow) {
        use crate::source_row::clean;
        row.category = self.category();
        row.address = self.address();
        row.name = clean(self.name.as_deref()).or_else(|| clean(self.brand.as_deref())).unwrap_or_default();
        row.brand = clean(self.brand.as_deref());
        row.brand_wikidata = clean(self.brand_wikidata.as_deref()).filter(|q| is_qid(q));
        row.city = clean(self.city.as_deref());
        row.state = clean(self.state.as_deref());
        row.postcode = clean(self.postcode.as_deref());
        row.country = clean(self.country.as_deref()).map(|c| c.to_uppercase()).filter(|c| c.len() == 2);
        row.phone = clean(self.phone.as_deref()).or_else(|| clean(self.contact_phone.as_deref()));
        match crate::hours::normalize(self.opening_hours.as_deref()) {
            crate::hours::Hours::Valid(h) => row.opening_hours = Some(h),
            crate::hours::Hours::Invalid => row.hours_invalid = true,
            crate::hours::Hours::Absent => {}
        }
    }
}

pub fn is_qid(s: &str) -> bool {
    s.len() > 1 && s.starts_with('Q') && s[1..].bytes().all(|b| b.is_ascii_digit())
}
