//! Everything a map is drawn from, loaded once and shared by every request: the shapes (in
//! degrees), the basemap's drawing layers made from them, the labelled cities, the font, and
//! the focus maps worked out from the shapes. Each part is its own module's; this one only
//! puts them together, so none of them needs another.

use crate::basemap::{Basemap, DEFAULT_BASEMAP_CELL_BYTES};
use crate::error::{RenderError, Result};
use crate::focus::{FocusMaps, FocusSpec};
use crate::labels::{read_cities_csv, City};
use crate::shapes::{parse_shapes, Shape, Shapes};
use crate::streets::Streets;
use crate::text::Font;
use crate::tiles::source::VectorTiles;

use std::sync::Arc;

pub struct Atlas {
    pub(crate) shapes: Shapes,
    pub(crate) basemap: Basemap,
    /// Largest first.
    pub(crate) cities: Vec<City>,
    pub(crate) font: Option<Font>,
    pub(crate) focus: FocusMaps,
    /// The street map's tiles and the cells drawn from them, when the operator gave an archive.
    pub(crate) streets: Option<Streets>,
}

impl Atlas {
    /// From a GeoJSON FeatureCollection of country Polygon/MultiPolygon features (coded by
    /// `iso_a2`).
    pub fn from_geojson(text: &str) -> Result<Atlas> {
        let countries = parse_shapes(text, &["iso_a2", "ISO_A2", "code"])?;
        if countries.is_empty() {
            return Err(RenderError::Shapes("no polygon rings".into()));
        }
        let shapes = Shapes { countries, us_states: Vec::new(), lakes: Vec::new() };
        Ok(Atlas {
            basemap: Basemap::new(&shapes, DEFAULT_BASEMAP_CELL_BYTES),
            shapes,
            cities: Vec::new(),
            font: None,
            focus: FocusMaps::default(),
            streets: None,
        })
    }

    /// US state shapes (coded by USPS code): state lines on the basemap, `regions` and `conus`
    /// on focus maps.
    pub fn with_us_states(mut self, text: &str) -> Result<Atlas> {
        self.shapes.us_states = parse_shapes(text, &["usps", "code"])?;
        // Only the state lines: the countries' layers, the costly ones, stay as they are.
        self.basemap.set_us_states(&self.shapes.us_states);
        self.focus = FocusMaps::default();
        Ok(self)
    }

    /// The lakes drawn as water over the countries' land (polygons; properties are ignored):
    /// the reference step's `lakes.geojson`. Without them the Great Lakes are land, as Natural
    /// Earth's countries draw them.
    pub fn with_lakes(mut self, text: &str) -> Result<Atlas> {
        self.shapes.lakes = parse_shapes(text, &["code"])?.into_iter().flat_map(|s| s.polygons).collect();
        self.basemap.set_lakes(&self.shapes.lakes);
        self.focus = FocusMaps::default();
        Ok(self)
    }

    /// City labels from the gazetteer CSV (`name`, `population`, `lat`, `lng` columns).
    pub fn with_cities_csv(mut self, text: &str) -> Result<Atlas> {
        self.cities = read_cities_csv(text)?;
        Ok(self)
    }

    /// The font for labels and legends; without one, maps carry no text.
    pub fn with_font(mut self, bytes: &[u8]) -> Result<Atlas> {
        self.font = Some(Font::from_bytes(bytes)?);
        Ok(self)
    }

    /// The most bytes of basemap cells kept between maps ([`DEFAULT_BASEMAP_CELL_BYTES`] when
    /// not given; 0 draws every map's background afresh). Forgets the cells drawn so far.
    pub fn with_basemap_cell_bytes(mut self, bytes: u64) -> Atlas {
        self.basemap.set_cell_bytes(bytes);
        self
    }

    /// Basemap cells held now and their bound, in bytes.
    pub fn basemap_cell_bytes(&self) -> (u64, u64) {
        self.basemap.cell_bytes()
    }

    /// Vector tiles to draw city and street views from (Natural Earth elsewhere).
    pub fn with_streets(mut self, tiles: Arc<VectorTiles>) -> Atlas {
        self.streets = Some(Streets::new(tiles));
        self
    }

    /// Replaces the street map's tiles (and forgets every cell drawn from the old ones).
    pub fn set_streets(&mut self, tiles: Arc<VectorTiles>) {
        self.streets = Some(Streets::new(tiles));
    }

    pub fn streets(&self) -> Option<&Arc<VectorTiles>> {
        self.streets.as_ref().map(|s| &s.tiles)
    }

    /// A country's mainland as focus maps cut it, [south, west, north, east] degrees.
    pub fn mainland_bounds(&self, code: &str) -> Option<[f64; 4]> {
        crate::focus::mainland_bounds(&self.shapes, code)
    }

    /// What a map filtered to a country frames: its mainland with a margin around it
    /// (`focus::with_margin`), [south, west, north, east] degrees (west east of east across
    /// the antimeridian). A street-map extract cut to the country covers the same.
    pub fn country_frame(&self, code: &str) -> Option<[f64; 4]> {
        self.mainland_bounds(code).map(crate::focus::with_margin)
    }

    /// Each polygon of a country as a box [west, south, east, north]: what a download cut to the
    /// country keeps (every part, islands and exclaves included). None for an unknown code.
    pub fn country_boxes(&self, code: &str) -> Option<Vec<[f64; 4]>> {
        self.shapes.country(code).map(|s| s.polygons.iter().map(|p| p.bbox).collect())
    }

    pub fn has_font(&self) -> bool {
        self.font.is_some()
    }

    pub fn country(&self, code: &str) -> Option<&Shape> {
        self.shapes.country(code)
    }

    /// The inset frames a focus map of this size draws, in image pixels (left, top, right,
    /// bottom), largest inset first: none for a country without far-flung parts or a map cut
    /// to its mainland. For tests and for clients that label the insets.
    pub fn inset_frames(&self, spec: &FocusSpec, width: u32, height: u32, scale: f32, marker_radius: f32) -> Result<Vec<[f32; 4]>> {
        self.focus.inset_frames(&self.shapes, spec, width, height, scale, marker_radius)
    }
}
