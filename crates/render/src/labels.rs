//! City labels: the largest cities in view first, each placed only where it overlaps nothing
//! already placed (other labels, the legend), up to a count that keeps the map readable.
//! Placing is done once for the whole image; drawing can then happen band by band.

use tiny_skia::{FillRule, Paint, PathBuilder, PixmapMut, Transform};

use crate::camera::Camera;
use crate::error::{RenderError, Result};
use crate::text::{Font, Line};
use crate::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

impl Rect {
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// Cities smaller than this get no label on a map of a country or more ("major city labels").
pub const LABEL_MIN_POPULATION: u64 = 100_000;

/// The smallest town any map labels: on a map of a city and its surroundings, the towns around
/// it (Oranienburg and Bernau beside Berlin), as a road map names them.
pub const LABEL_FLOOR: u64 = 10_000;

/// The width of ground, in kilometres, a map of [`LABEL_MIN_POPULATION`] and more spans (a
/// country the size of France or more); a narrower one labels towns down to that floor in
/// proportion (a map of Washington State, 580 km across, from 39,000 people: Yakima, Olympia
/// and Bellingham beside Seattle and Spokane), never below [`LABEL_FLOOR`]. The biggest still
/// come first, so a dense map names its cities as before and a sparse one its towns.
const MAJOR_CITIES_SPAN_KM: f64 = 1_500.0;

/// The least population a label on this map needs, by the ground its longer side spans (a
/// tall map of Chile is a map of a country).
fn min_population(cam: &Camera) -> u64 {
    let (x0, y0, x1, y1) = cam.world_box();
    // Web Mercator: 256 world units round the equator, shrinking with the cosine of latitude
    // the same way across and up the map at its middle.
    let lat = (std::f64::consts::PI * (1.0 - (y0 + y1) / 256.0)).sinh().atan();
    let km = (x1 - x0).max(y1 - y0) / 256.0 * 40_075.0 * lat.cos();
    ((LABEL_MIN_POPULATION as f64 * km / MAJOR_CITIES_SPAN_KM) as u64).clamp(LABEL_FLOOR, LABEL_MIN_POPULATION)
}

/// A city that may get a label.
#[derive(Debug, Clone)]
pub struct City {
    pub name: String,
    pub lat: f64,
    pub lng: f64,
    pub population: u64,
}

/// The gazetteer CSV's labelled cities (`name`, `population`, `lat`, `lng` columns), largest
/// first. A city's district (a row whose optional `town` column names its city: Wandsbek,
/// Hamburg's) gets no label where its city has at least twice its people: the map names
/// Hamburg once. (A district nearly as big as the town the reference found for it may be a
/// town of its own, Jaffa beside Bat Yam: it keeps its label.)
pub fn read_cities_csv(text: &str) -> Result<Vec<City>> {
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let headers = rd.headers().map_err(|e| RenderError::Shapes(format!("cities: {e}")))?.clone();
    let col = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| RenderError::Shapes(format!("cities: no {name} column")));
    let (ni, pi, lai, lni) = (col("name")?, col("population")?, col("lat")?, col("lng")?);
    let (town, country) = (col("town").ok(), col("country").ok());
    let field = |rec: &csv::StringRecord, i: Option<usize>| i.and_then(|i| rec.get(i)).unwrap_or("").to_string();
    // The places big enough for a label, with the city each is a district of, if any; and the
    // biggest place of each name by country among those that could be such a city (twice a
    // labelled place's people): a quarter of the gazetteer's rows.
    let mut labelled: Vec<(City, String, String)> = Vec::new();
    let mut biggest: std::collections::HashMap<(String, String), u64> = std::collections::HashMap::new();
    for rec in rd.records() {
        let rec = rec.map_err(|e| RenderError::Shapes(format!("cities: {e}")))?;
        let population: u64 = rec.get(pi).and_then(|p| p.parse().ok()).unwrap_or(0);
        if population < LABEL_FLOOR {
            continue;
        }
        let name = rec.get(ni).unwrap_or("").to_string();
        if population >= 2 * LABEL_FLOOR {
            let slot = biggest.entry((field(&rec, country), name.clone())).or_default();
            *slot = (*slot).max(population);
        }
        let (Some(lat), Some(lng)) = (rec.get(lai).and_then(|v| v.parse().ok()), rec.get(lni).and_then(|v| v.parse().ok())) else { continue };
        labelled.push((City { name, lat, lng, population }, field(&rec, country), field(&rec, town)));
    }
    let mut cities: Vec<City> = labelled
        .into_iter()
        .filter(|(c, country, town)| town.is_empty() || biggest.get(&(country.clone(), town.clone())).is_none_or(|&p| p < 2 * c.population))
        .map(|(c, _, _)| c)
        .collect();
    cities.sort_by(|a, b| b.population.cmp(&a.population).then_with(|| a.name.cmp(&b.name)));
    Ok(cities)
}

/// Label text size at scale 1, in pixels.
const LABEL_PX: f32 = 12.0;
/// One label per this many square pixels (at scale 1), at most; but three on any map big
/// enough for them (below).
const AREA_PER_LABEL: f32 = 30_000.0;
/// The least area a label is given (at scale 1): a 12-pixel name and its dot take about 1,000
/// square pixels, so a label takes no more than a twentieth of the image. Three labels on a
/// 64 x 64 map covered a third of it, under its markers.
const MIN_AREA_PER_LABEL: f32 = 20_000.0;

/// How many labels a map of this size gets.
fn budget(cam: &Camera) -> usize {
    let s = cam.scale as f32;
    let area = (cam.width as f32 * cam.height as f32) / (s * s);
    (area / AREA_PER_LABEL).clamp(3.0, 40.0).min(area / MIN_AREA_PER_LABEL) as usize
}

/// Labels placed on the whole image: a dot at each city and its name beside it.
pub struct Placed {
    dots: Vec<(f32, f32)>,
    texts: Vec<(Line, f32, f32)>,
    dot_radius: f32,
}

/// Labels for `cities` (largest first) in `font`; none without a font.
pub fn place(cities: &[City], font: Option<&Font>, cam: &Camera, occupied: &mut Vec<Rect>) -> Placed {
    let s = cam.scale as f32;
    let mut placed = Placed { dots: Vec::new(), texts: Vec::new(), dot_radius: 2.0 * s };
    let Some(font) = font else { return placed };
    let (w, h) = (cam.width as f32, cam.height as f32);
    let budget = budget(cam);
    let least = min_population(cam);
    let (vx0, vy0, vx1, vy1) = cam.world_box();
    for c in cities {
        if placed.texts.len() >= budget || c.population < least {
            break;
        }
        let (wx, wy) = crate::camera::world(c.lat, c.lng);
        // The copy of the world nearest the view, as markers are drawn: a map across the
        // antimeridian names Nome beside Anadyr.
        let wx = wx + 256.0 * (((vx0 + vx1) / 2.0 - wx) / 256.0).round();
        if wx < vx0 || wx > vx1 || wy < vy0 || wy > vy1 {
            continue;
        }
        let (x, y) = cam.pixel(c.lat, c.lng);
        let (x, y) = (x as f32, y as f32);
        let line = font.layout(&c.name, LABEL_PX * s);
        let (tx, baseline) = (x + 5.0 * s, y + 4.0 * s);
        let rect = Rect { x0: x - 3.0 * s, y0: baseline - line.ascent - s, x1: tx + line.width + 2.0 * s, y1: baseline + 3.0 * s };
        if rect.x0 < 0.0 || rect.y0 < 0.0 || rect.x1 > w || rect.y1 > h || occupied.iter().any(|o| o.overlaps(&rect)) {
            continue;
        }
        occupied.push(rect);
        placed.dots.push((x, y));
        placed.texts.push((line, tx, baseline));
    }
    placed
}

/// Place names from a street map's tiles (ranked, largest first; image pixels), each centred
/// on its place without a dot, as street maps show towns and neighbourhoods.
pub fn place_names(places: &[(String, u32, (f32, f32))], font: Option<&Font>, cam: &Camera, occupied: &mut Vec<Rect>) -> Placed {
    let s = cam.scale as f32;
    let mut placed = Placed { dots: Vec::new(), texts: Vec::new(), dot_radius: 2.0 * s };
    let Some(font) = font else { return placed };
    let (w, h) = (cam.width as f32, cam.height as f32);
    let budget = budget(cam);
    for (name, _, (x, y)) in places {
        if placed.texts.len() >= budget {
            break;
        }
        let line = font.layout(name, LABEL_PX * s);
        let (tx, baseline) = (x - line.width / 2.0, y + line.ascent / 2.0);
        let rect = Rect { x0: tx - 2.0 * s, y0: baseline - line.ascent - s, x1: tx + line.width + 2.0 * s, y1: baseline + 3.0 * s };
        if rect.x0 < 0.0 || rect.y0 < 0.0 || rect.x1 > w || rect.y1 > h || occupied.iter().any(|o| o.overlaps(&rect)) {
            continue;
        }
        occupied.push(rect);
        placed.texts.push((line, tx, baseline));
    }
    placed
}

impl Placed {
    /// Draws the labels onto an image whose top row is row `y0` of the whole image.
    pub fn draw(&self, pixmap: &mut PixmapMut, theme: &Theme, y0: f32) {
        let mut dots = PathBuilder::new();
        for &(x, y) in &self.dots {
            dots.push_circle(x, y - y0, self.dot_radius);
        }
        if let Some(path) = dots.finish() {
            let mut paint = Paint { anti_alias: true, ..Paint::default() };
            paint.set_color_rgba8(theme.text[0], theme.text[1], theme.text[2], 255);
            pixmap.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), None);
        }
        for (line, x, y) in &self.texts {
            line.draw(pixmap, *x, y - y0, theme.text, Some(theme.land));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Viewport;

    /// A district of a city (its `town` column set) is no label; a file without the column
    /// reads as before.
    #[test]
    fn a_citys_districts_get_no_label() {
        let with_town = "geonames_id,name,country,admin1,population,lat,lng,town\n\
            2911298,Hamburg,DE,HH,1739117,53.55,10.0,\n\
            2814127,Wandsbek,DE,HH,411422,53.58,10.08,Hamburg\n\
            2867714,Munich,DE,BY,1260391,48.14,11.58,\n\
            295548,Bat Yam,IL,TA,130000,32.02,34.75,\n\
            294781,Jaffa,IL,TA,100000,32.05,34.75,Bat Yam\n";
        let names = |text: &str| read_cities_csv(text).map(|c| c.into_iter().map(|c| c.name).collect::<Vec<_>>()).expect("cities");
        // Jaffa, nearly as big as the town found for it, keeps its label.
        assert_eq!(names(with_town), ["Hamburg", "Munich", "Bat Yam", "Jaffa"]);
        let without: String = with_town.lines().map(|l| format!("{}\n", l.rsplit_once(',').map_or(l, |(head, _)| head))).collect();
        assert_eq!(names(&without), ["Hamburg", "Munich", "Wandsbek", "Bat Yam", "Jaffa"], "largest first, the district among them");
    }

    /// A map of a big country labels its cities of 100,000 people and more; a map of a state
    /// or of a city and its surroundings the towns around it, down to 10,000 people, in
    /// proportion to the ground it spans.
    #[test]
    fn a_narrower_map_labels_smaller_towns() {
        // Degrees of longitude at Berlin's latitude (52.5°: 67.8 km a degree) for a given width.
        let least = |km: f64| {
            let deg = km / (111.32 * 52.5f64.to_radians().cos());
            let half = deg / 2.0;
            min_population(&Camera::new(Viewport::Bounds([52.49, 13.4 - half, 52.51, 13.4 + half]), &[], 1200, 800, 1.0))
        };
        assert_eq!(least(3_000.0), 100_000);
        assert_eq!(least(1_530.0), 100_000);
        let state = least(600.0);
        assert!((39_000..=41_000).contains(&state), "{state}");
        assert_eq!(least(100.0), 10_000);
        // A tall narrow map of Chile (4,000 km from north to south) is a map of a country.
        let chile = min_population(&Camera::new(Viewport::Bounds([-55.9, -71.0, -17.5, -70.0]), &[], 400, 1200, 1.0));
        assert_eq!(chile, 100_000);
        // Towns beside a city are placed on its map, the city first; a 4,000-person village is not.
        let font =
            crate::text::Font::from_bytes(&std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/DejaVuSans.ttf")).expect("font")).expect("font");
        let cities: Vec<City> = [("Berlin", 3_426_354, 52.52, 13.41), ("Oranienburg", 40_793, 52.75, 13.24), ("Schwanebeck", 4_000, 52.62, 13.53)]
            .into_iter()
            .map(|(name, population, lat, lng)| City { name: name.into(), population, lat, lng })
            .collect();
        let around_berlin = Camera::new(Viewport::Bounds([52.3, 12.9, 52.9, 13.9]), &[], 1200, 800, 1.0);
        assert_eq!(place(&cities, Some(&font), &around_berlin, &mut Vec::new()).texts.len(), 2);
        // On a map of all Germany only Berlin is big enough.
        let germany = Camera::new(Viewport::Bounds([47.3, 5.9, 55.1, 15.0]), &[], 1200, 800, 1.0);
        assert_eq!(place(&cities, Some(&font), &germany, &mut Vec::new()).texts.len(), 1);
        // Read from the file: the towns of 10,000 and more, districts of a city twice theirs
        // left out as before.
        let text = "geonames_id,name,country,admin1,population,lat,lng,town\n\
            2950159,Berlin,DE,BE,3426354,52.52,13.41,\n\
            2857798,Oranienburg,DE,BB,40793,52.75,13.24,\n\
            2873074,Marzahn,DE,BE,100000,52.55,13.56,Berlin\n\
            2834498,Schwanebeck,DE,BB,4000,52.62,13.53,\n";
        let names: Vec<String> = read_cities_csv(text).expect("cities").into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["Berlin", "Oranienburg"]);
    }

    #[test]
    fn a_map_across_the_antimeridian_names_towns_on_both_sides() {
        let font =
            crate::text::Font::from_bytes(&std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/DejaVuSans.ttf")).expect("font")).expect("font");
        // Two places big enough for any map, at Anadyr's place west of the line and Nome's east
        // of it (the towns themselves are too small for a map this wide).
        let cities: Vec<City> = [("East", 2_000_000, 64.5, -165.41), ("West", 1_000_000, 64.73, 177.51)]
            .into_iter()
            .map(|(name, population, lat, lng)| City { name: name.into(), population, lat, lng })
            .collect();
        let bering = Camera::new(Viewport::Bounds([60.0, 170.0, 68.0, -145.0]), &[], 1200, 800, 1.0);
        let placed = place(&cities, Some(&font), &bering, &mut Vec::new());
        assert_eq!(placed.texts.len(), 2);
        let xs: Vec<f32> = placed.dots.iter().map(|&(x, _)| x).collect();
        assert!(xs.iter().all(|x| (0.0..1200.0).contains(x)), "{xs:?}");
        assert!(xs[1] < xs[0], "West is left of East: {xs:?}");
    }

    #[test]
    fn a_map_gets_labels_by_its_area_at_any_scale() {
        let n = |w: u32, h: u32, scale: f64| budget(&Camera::new(Viewport::CenterZoom([0.0, 0.0], 2.0), &[], w, h, scale));
        // Under 20,000 square pixels none; then one per 20,000 up to three; then one per 30,000
        // up to forty.
        assert_eq!([n(64, 64, 1.0), n(120, 120, 1.0), n(300, 60, 1.0)], [0, 0, 0]);
        assert_eq!([n(200, 150, 1.0), n(300, 200, 1.0), n(360, 240, 1.0)], [1, 3, 3]);
        assert_eq!([n(1200, 800, 1.0), n(4096, 4096, 1.0)], [32, 40]);
        // At scale 2 an image has four times the pixels of the same map: the same labels.
        assert_eq!([n(240, 240, 2.0), n(400, 300, 2.0), n(2400, 1600, 2.0)], [0, 1, 32]);
    }
}
