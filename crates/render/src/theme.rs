//! Theme palettes, read from `data/themes.json` (one place for every colour of every theme).

use std::collections::BTreeMap;

use crate::color::parse_hex;
use crate::error::{RenderError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Theme {
    pub water: [u8; 3],
    pub land: [u8; 3],
    pub border: [u8; 3],
    pub marker: [u8; 3],
    pub marker_stroke: [u8; 3],
    pub text: [u8; 3],
    pub panel: [u8; 3],
    /// The street map's colours (drawn from vector tiles when a basemap archive is set).
    pub streets: StreetColors,
}

/// Colours of what a street map draws over land and water.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreetColors {
    pub urban: [u8; 3],
    pub park: [u8; 3],
    pub wood: [u8; 3],
    pub building: [u8; 3],
    /// Minor streets.
    pub road: [u8; 3],
    /// The edge drawn under every road.
    pub road_casing: [u8; 3],
    pub major: [u8; 3],
    pub highway: [u8; 3],
    pub rail: [u8; 3],
    pub path: [u8; 3],
}

#[derive(Debug, Clone)]
pub struct Themes(BTreeMap<String, Theme>);

impl Themes {
    pub fn from_json(text: &str) -> Result<Themes> {
        let raw: BTreeMap<String, BTreeMap<String, String>> = serde_json::from_str(text).map_err(|e| RenderError::Shapes(format!("themes: {e}")))?;
        let mut out = BTreeMap::new();
        for (name, t) in raw {
            let c = |key: &str| t.get(key).ok_or_else(|| RenderError::Shapes(format!("themes: {name} has no {key}"))).and_then(|v| parse_hex(v));
            let streets = StreetColors {
                urban: c("urban")?,
                park: c("park")?,
                wood: c("wood")?,
                building: c("building")?,
                road: c("road")?,
                road_casing: c("road_casing")?,
                major: c("major")?,
                highway: c("highway")?,
                rail: c("rail")?,
                path: c("path")?,
            };
            let theme = Theme {
                water: c("water")?,
                land: c("land")?,
                border: c("border")?,
                marker: c("marker")?,
                marker_stroke: c("marker_stroke")?,
                text: c("text")?,
                panel: c("panel")?,
                streets,
            };
            out.insert(name, theme);
        }
        Ok(Themes(out))
    }

    pub fn get(&self, name: &str) -> Result<&Theme> {
        self.0.get(name).ok_or_else(|| RenderError::UnknownStyle(name.to_string()))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}
