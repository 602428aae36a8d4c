//! Theme palettes, read from `data/themes.json` (one place for every colour of every theme).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::color::parse_hex;
use crate::error::{RenderError, Result};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Theme {
    pub water: [u8; 3],
    pub land: [u8; 3],
    pub border: [u8; 3],
    pub marker: [u8; 3],
    pub marker_stroke: [u8; 3],
    pub text: [u8; 3],
    pub panel: [u8; 3],
}

#[derive(Deserialize)]
struct RawTheme {
    water: String,
    land: String,
    border: String,
    marker: String,
    marker_stroke: String,
    text: String,
    panel: String,
}

#[derive(Debug, Clone)]
pub struct Themes(BTreeMap<String, Theme>);

impl Themes {
    pub fn from_json(text: &str) -> Result<Themes> {
        let raw: BTreeMap<String, RawTheme> = serde_json::from_str(text).map_err(|e| RenderError::Shapes(format!("themes: {e}")))?;
        let mut out = BTreeMap::new();
        for (name, t) in raw {
            out.insert(
                name,
                Theme {
                    water: parse_hex(&t.water)?,
                    land: parse_hex(&t.land)?,
                    border: parse_hex(&t.border)?,
                    marker: parse_hex(&t.marker)?,
                    marker_stroke: parse_hex(&t.marker_stroke)?,
                    text: parse_hex(&t.text)?,
                    panel: parse_hex(&t.panel)?,
                },
            );
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
