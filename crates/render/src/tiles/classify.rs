//! What a vector tile's features are, in the few kinds a street map draws, for both schemas
//! people have: the Protomaps basemap's (`earth`, `water`, `landuse`, `landcover`, `natural`,
//! `roads`, `transit`, `buildings`, `places`, `boundaries`) and OpenMapTiles' (`water`,
//! `waterway`, `landcover`, `landuse`, `park`, `transportation`, `building`, `place`,
//! `boundary`), as tilemaker, planetiler and MapTiler write them. Everything else (POIs, labels
//! of roads, house numbers, aeroways) is left out.

use super::mvt::{Feature, GeomType, Layer};

/// The tile schema, told by its layer names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    Protomaps,
    OpenMapTiles,
}

impl Schema {
    /// The schema whose layer names these are; None when neither's.
    pub fn of_layers<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Schema> {
        let (mut pm, mut omt) = (0, 0);
        for n in names {
            match n {
                "earth" | "roads" | "buildings" | "places" | "boundaries" | "natural" | "transit" => pm += 1,
                "transportation" | "building" | "place" | "boundary" | "waterway" | "park" | "transportation_name" => omt += 1,
                _ => {}
            }
        }
        match (pm, omt) {
            (0, 0) => None,
            (p, o) if p >= o => Some(Schema::Protomaps),
            _ => Some(Schema::OpenMapTiles),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Schema::Protomaps => "protomaps",
            Schema::OpenMapTiles => "openmaptiles",
        }
    }
}

/// Filled areas, in drawing order (later ones over earlier ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// Land, where a schema draws land (Protomaps' `earth`).
    Earth,
    /// Built-up land: residential, commercial, industrial, institutions.
    Urban,
    Park,
    Wood,
    Water,
    Building,
}

impl Area {
    pub const ALL: [Area; 6] = [Area::Earth, Area::Urban, Area::Park, Area::Wood, Area::Water, Area::Building];
}

/// Lines, in drawing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Line {
    Waterway,
    Boundary,
    Path,
    Rail,
    Minor,
    Major,
    Highway,
}

impl Line {
    pub const ALL: [Line; 7] = [Line::Waterway, Line::Boundary, Line::Path, Line::Rail, Line::Minor, Line::Major, Line::Highway];
}

/// What one feature is drawn as.
#[derive(Clone, Debug, PartialEq)]
pub enum Class {
    Area(Area),
    /// A line; `tunnel` ones are drawn faint, without a casing.
    Line {
        line: Line,
        tunnel: bool,
    },
    /// A place name. Larger `rank` first.
    Place {
        name: String,
        rank: u32,
    },
}

fn text<'a>(layer: &'a Layer, f: &Feature, key: &str) -> &'a str {
    layer.tag(f, key).and_then(|v| v.as_str()).unwrap_or("")
}

fn number(layer: &Layer, f: &Feature, key: &str) -> Option<f64> {
    layer.tag(f, key).and_then(|v| v.as_f64())
}

/// Land use and land cover kinds, the same words in both schemas (OSM's tags).
fn land(kind: &str) -> Option<Area> {
    Some(match kind {
        "park" | "national_park" | "nature_reserve" | "protected_area" | "garden" | "grass" | "grassland" | "meadow" | "playground" | "golf_course"
        | "pitch" | "recreation_ground" | "cemetery" | "village_green" | "allotments" | "dog_park" | "zoo" | "wetland" | "scrub" | "heath" => Area::Park,
        "wood" | "forest" => Area::Wood,
        "residential" | "commercial" | "industrial" | "retail" | "urban_area" | "railway" | "military" | "hospital" | "school" | "university" | "college"
        | "kindergarten" | "stadium" | "pedestrian" | "parking" | "garages" | "construction" | "brownfield" => Area::Urban,
        _ => return None,
    })
}

fn road(kind: &str) -> Option<Line> {
    Some(match kind {
        "highway" | "motorway" | "trunk" | "motorway_link" | "trunk_link" => Line::Highway,
        "major_road" | "medium_road" | "primary" | "secondary" | "tertiary" | "primary_link" | "secondary_link" | "tertiary_link" => Line::Major,
        "minor_road" | "minor" | "service" | "residential" | "unclassified" | "living_street" | "busway" | "raceway" => Line::Minor,
        "path" | "track" | "footway" | "cycleway" | "pedestrian" | "steps" | "bridleway" | "other" => Line::Path,
        "rail" | "transit" | "light_rail" | "subway" | "tram" | "narrow_gauge" => Line::Rail,
        _ => return None,
    })
}

fn is_area(f: &Feature) -> bool {
    f.kind == GeomType::Polygon
}

fn is_line(f: &Feature) -> bool {
    f.kind == GeomType::LineString
}

/// What `f` of `layer` is drawn as, or None when it is not drawn.
pub fn classify(schema: Schema, layer: &Layer, f: &Feature) -> Option<Class> {
    match schema {
        Schema::Protomaps => protomaps(layer, f),
        Schema::OpenMapTiles => openmaptiles(layer, f),
    }
}

fn protomaps(layer: &Layer, f: &Feature) -> Option<Class> {
    let kind = text(layer, f, "kind");
    let area = |a: Area| is_area(f).then_some(Class::Area(a));
    match layer.name.as_str() {
        "earth" => area(Area::Earth),
        "water" if is_area(f) => Some(Class::Area(Area::Water)),
        "water" if is_line(f) => Some(Class::Line { line: Line::Waterway, tunnel: false }),
        "landuse" | "landcover" | "natural" => land(kind).and_then(area),
        "buildings" => area(Area::Building),
        "roads" | "transit" if is_line(f) => {
            let line = road(kind).or_else(|| road(text(layer, f, "kind_detail")))?;
            Some(Class::Line { line, tunnel: layer.tag(f, "is_tunnel").is_some_and(|v| matches!(v, super::mvt::Value::Bool(true))) })
        }
        "boundaries" if is_line(f) && matches!(kind, "country" | "region") => {
            // Regions (states, cantons) only where their level is 4 or less, as on any map.
            let level = number(layer, f, "kind_detail").or_else(|| text(layer, f, "kind_detail").parse().ok()).unwrap_or(2.0);
            (kind == "country" || level <= 4.0).then_some(Class::Line { line: Line::Boundary, tunnel: false })
        }
        "places" if f.kind == GeomType::Point => {
            let weight = match kind {
                "locality" => 4,
                "macrohood" => 3,
                "neighbourhood" => 2,
                _ => return None,
            };
            let pop = number(layer, f, "population_rank").unwrap_or(0.0).clamp(0.0, 99.0) as u32;
            place(layer, f, weight * 100 + pop)
        }
        _ => None,
    }
}

fn openmaptiles(layer: &Layer, f: &Feature) -> Option<Class> {
    let class = text(layer, f, "class");
    let area = |a: Area| is_area(f).then_some(Class::Area(a));
    let tunnel = text(layer, f, "brunnel") == "tunnel";
    match layer.name.as_str() {
        "water" => area(Area::Water),
        "waterway" if is_line(f) && !tunnel => Some(Class::Line { line: Line::Waterway, tunnel: false }),
        "landcover" | "landuse" => land(class).or_else(|| land(text(layer, f, "subclass"))).and_then(area),
        "park" => area(Area::Park),
        "building" => area(Area::Building),
        "transportation" if is_line(f) => Some(Class::Line { line: road(class)?, tunnel }),
        "boundary" if is_line(f) => {
            let level = number(layer, f, "admin_level").unwrap_or(99.0);
            (level <= 4.0 && number(layer, f, "maritime").unwrap_or(0.0) == 0.0).then_some(Class::Line { line: Line::Boundary, tunnel: false })
        }
        "place" if f.kind == GeomType::Point => {
            let weight = match class {
                "city" => 6,
                "town" => 5,
                "village" => 4,
                "suburb" => 3,
                "hamlet" | "quarter" => 2,
                "neighbourhood" => 1,
                _ => return None,
            };
            // OpenMapTiles ranks 1 (most important) and up.
            let rank = number(layer, f, "rank").unwrap_or(99.0).clamp(0.0, 99.0) as u32;
            place(layer, f, weight * 100 + (99 - rank))
        }
        _ => None,
    }
}

/// The name keys the schemas' writers use, the local name first: OpenMapTiles has `name` and
/// `name:latin` (tilemaker's profile writes only the latter), Protomaps `name`.
const NAME_KEYS: [&str; 4] = ["name", "name:latin", "name_int", "name:en"];

fn place(layer: &Layer, f: &Feature, rank: u32) -> Option<Class> {
    let name = NAME_KEYS.iter().map(|k| text(layer, f, k)).find(|n| !n.is_empty())?;
    Some(Class::Place { name: name.to_string(), rank })
}
