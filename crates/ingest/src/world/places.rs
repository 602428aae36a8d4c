//! Where stores go: population-weighted city sampling per country, metro areas and highway
//! legs, the land and the US ZIPs under them (street addresses are `world::address`'s,
//! postcodes `world::postcode`'s, phone numbers `world::phone`'s).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::phone::DialAreas;
use super::postcode::PostalAreas;
use crate::land::LandMask;
use crate::reference::{City, Zip};

/// Countries where chains are dense (high income), and where they are moderately so. The rest
/// get a low weight: brands trade where people spend, not only where people live.
const HIGH: &[&str] = &[
    "US", "CA", "GB", "IE", "FR", "DE", "NL", "BE", "LU", "CH", "AT", "IT", "ES", "PT", "DK", "SE", "NO", "FI", "IS", "JP", "KR", "TW", "SG", "HK", "AU", "NZ",
    "IL", "AE", "QA", "KW", "SA", "BH", "OM", "CZ", "SI", "EE", "LV", "LT", "SK", "PL", "HU", "HR", "GR", "CY", "MT", "PR",
    // The small high-income states and territories (World Bank): few people, but shops on
    // every street (Monaco, Andorra, Bermuda), which the low weight left with none at all.
    "AD", "MC", "SM", "LI", "GI", "JE", "GG", "IM", "FO", "GL", "BM", "KY", "VG", "TC", "AW", "CW", "SX", "MF", "BL", "BS", "BB", "KN", "AG", "TT", "GU", "VI",
    "MP", "NC", "PF", "MO", "BN", "SC", "NR", "PW",
];
const MIDDLE: &[&str] = &[
    "CN", "MX", "BR", "AR", "CL", "CO", "PE", "TR", "RU", "MY", "TH", "ZA", "RO", "BG", "RS", "KZ", "CR", "PA", "UY", "DO", "EC", "ID", "PH", "VN", "GT", "JO",
    "LB", "MA", "EG", "UA", "BY", "GE", "AZ", "AM", "BA", "MK", "AL", "ME", "MU", "BW", "NA", "TN", "DZ", "IR", "IQ", "IN",
];

/// The territories location sets name with their country (country-coder's aggregates, which
/// the name-suggestion-index resolves them by): the US set names Puerto Rico and Guam,
/// Australia's and New Zealand's Christmas Island and the Cook Islands, France's its overseas
/// departments and collectivities, Britain's the Crown dependencies, the Netherlands' the
/// Caribbean islands of its kingdom, Denmark's the Faroes and Greenland, Norway's Svalbard and
/// Finland's Åland. A chain listed for the country is listed there too, whether or not it
/// trades there (Bunnings had twenty warehouses on the Cook Islands).
///
/// A chosen part of those aggregates, not all of them: country-coder also puts Hong Kong and
/// Macau in China's and Bermuda, Gibraltar and the Caymans in Britain's, but those are markets
/// of their own that chains name one by one, often far denser than the country (7-Eleven in
/// Hong Kong, KFC in Bermuda), so no parent's density caps them.
pub const SET_TERRITORIES: &[(&str, &[&str])] = &[
    ("US", &["AS", "GU", "MP", "PR", "UM", "VI"]),
    ("AU", &["CC", "CX", "HM", "NF"]),
    ("NZ", &["CK", "NU", "TK"]),
    ("FR", &["BL", "GF", "GP", "MF", "MQ", "NC", "PF", "PM", "RE", "WF", "YT"]),
    ("GB", &["GG", "IM", "JE"]),
    ("NL", &["AW", "BQ", "CW", "SX"]),
    ("DK", &["FO", "GL"]),
    ("NO", &["SJ"]),
    ("FI", &["AX"]),
];

/// The country a territory is named with in location sets (Puerto Rico with the US).
pub fn parent_market(code: &str) -> Option<&'static str> {
    SET_TERRITORIES.iter().find(|(_, t)| t.contains(&code)).map(|(p, _)| *p)
}

pub fn country_factor(code: &str) -> f64 {
    if HIGH.contains(&code) {
        1.0
    } else if MIDDLE.contains(&code) {
        0.3
    } else {
        0.08
    }
}

/// A city of at least this many people anchors a metro area.
pub const METRO_POPULATION: u64 = 250_000;
/// A big place this close to a bigger one is part of it.
const METRO_CORE_M: f64 = 20_000.0;
/// The towns this close to a metro's core are its suburbs: a chain's metro stores spread over
/// them, not only over the core city.
const METRO_REACH_M: f64 = 35_000.0;
/// Towns this big are the ends of the highway legs fuel stations and motels line.
const HUB_POPULATION: u64 = 20_000;
/// How far apart two hubs joined by a highway leg may be.
const LEG_MAX_KM: f64 = 250.0;
/// A leg is tested for water every this many metres, leaving out this much at each end (a
/// town's point may stand just off the coast the borders draw).
const LEG_STEP_M: f64 = 1_000.0;
const LEG_ENDS_M: f64 = 3_000.0;

/// Cities indexed for sampling.
type Weighted = (Vec<u32>, Vec<f64>);

/// The cities around a point, drawn by size as [`Gazetteer::sample_city`] draws all cities.
pub struct Area {
    cities: Weighted,
    /// The share of the country's people who live here.
    pub people_share: f64,
}

impl Area {
    pub fn draw(&self, rng: &mut ChaCha8Rng) -> Option<u32> {
        draw(&self.cities, rng)
    }
}

/// Cities grouped by country with cumulative weights for sampling: every city by
/// population^0.9, and metro cities by population.
pub struct Gazetteer<'a> {
    pub cities: &'a [City],
    by_country: HashMap<String, Weighted>,
    /// Metro areas by country, weighted by the people in them (indices into `members`).
    metros: HashMap<String, Weighted>,
    /// Each metro's core and suburbs, weighted by population.
    members: Vec<Weighted>,
    /// Hub towns by one-degree cell, for highway legs.
    hubs: HashMap<(i32, i32), Vec<u32>>,
    /// Each city's highway legs, found when first asked for (a pure function of the city, so
    /// any thread may fill it).
    legs: Vec<OnceLock<Box<[u32]>>>,
    /// Each city's postal area, found when first asked for (it depends on the town alone, and
    /// finding it scans the country's area towns).
    postal_areas: Vec<OnceLock<Option<Cow<'static, str>>>>,
    /// Each city's phone area code, likewise.
    dial_areas: Vec<OnceLock<Cow<'static, str>>>,
    land: &'a LandMask,
    /// Each country's shape in `land`: the one most of its places stand in. A country whose
    /// places stand in none (a speck the borders do not draw) has none.
    shapes: HashMap<String, u16>,
    /// The US ZIP centroids, bucketed when a US store first asks ([`ZipGrid`]; reading the
    /// USPS data they carry takes a fifth of a second a world without US stores need not spend).
    zip_points: &'a [Zip],
    zips: OnceLock<ZipGrid>,
    /// How each American place spells itself, by state and [`super::usps::key`], found when
    /// first asked for ([`Gazetteer::address_town`]).
    us_spellings: OnceLock<HashMap<(&'a str, String), &'a str>>,
    postal: PostalAreas,
    dial: DialAreas,
    /// Each country's market region, where the reference names one.
    regions: HashMap<String, String>,
    /// The people of each country's places (GeoNames populations, summed).
    people: HashMap<String, f64>,
}

/// The sum of a [`Weighted`]'s weights.
fn total(e: &Weighted) -> f64 {
    e.1.last().copied().unwrap_or(0.0)
}

fn push(e: &mut Weighted, i: usize, w: f64) {
    let total = total(e) + w;
    e.0.push(i as u32);
    e.1.push(total);
}

/// The one-degree cell a point is in: the grid the hub and metro-core indexes use.
fn degree_cell(lat: f64, lng: f64) -> (i32, i32) {
    (lat.floor() as i32, lng.floor() as i32)
}

/// The metros' cores: the places of at least [`METRO_POPULATION`], biggest first, each kept
/// unless a bigger one kept before is within [`METRO_CORE_M`]. Each is held against the cores
/// kept in the degree cells around it only (those `core_reach_deg` says a circle of that radius
/// can reach), which finds the same cores as holding it against every one kept.
fn metro_cores(cities: &[City]) -> Vec<usize> {
    let mut big: Vec<usize> = (0..cities.len()).filter(|&i| cities[i].population >= METRO_POPULATION).collect();
    big.sort_by_key(|&i| (std::cmp::Reverse(cities[i].population), i));
    let mut kept: Vec<usize> = Vec::new();
    let mut kept_cells: HashMap<(i32, i32), Vec<usize>> = HashMap::new();
    for i in big {
        let c = &cities[i];
        let (cy, cx) = degree_cell(c.lat, c.lng);
        let reach = core_reach_deg(c.lat);
        let near = (cy - 1..=cy + 1).flat_map(|y| (cx - reach..=cx + reach).map(move |x| (y, wrap_degree(x))));
        if near
            .flat_map(|cell| kept_cells.get(&cell).into_iter().flatten())
            .any(|&k| storemap_core::haversine_m(c.lat, c.lng, cities[k].lat, cities[k].lng) < METRO_CORE_M)
        {
            continue;
        }
        kept.push(i);
        // Filed under its column's own number, as the lookups ask (longitude 180 is -180).
        kept_cells.entry((cy, wrap_degree(cx))).or_default().push(i);
    }
    kept
}

/// Each country's shape in `land`: the one most of its places stand in. The borders draw some
/// territories over their neighbour (Macau and Hong Kong over China), so a Macau place stands in
/// both: of shapes that hold as many of its places, the one that holds fewest places of any
/// country (then the lower id).
fn country_shapes(cities: &[City], land: &LandMask) -> HashMap<String, u16> {
    let mut votes: HashMap<(&str, u16), u32> = HashMap::new();
    let mut held: HashMap<u16, u32> = HashMap::new();
    for c in cities {
        for &id in land.inside(c.lat, c.lng).ids() {
            *votes.entry((c.country.as_str(), id)).or_default() += 1;
            *held.entry(id).or_default() += 1;
        }
    }
    use std::cmp::Reverse;
    let mut best: HashMap<&str, (u32, Reverse<u32>, Reverse<u16>)> = HashMap::new();
    for ((country, id), n) in votes {
        let rank = (n, Reverse(held[&id]), Reverse(id));
        best.entry(country).and_modify(|b| *b = (*b).max(rank)).or_insert(rank);
    }
    best.into_iter().map(|(country, (_, _, Reverse(id)))| (country.to_string(), id)).collect()
}

/// The state a US place is in, as ZIPs are filed: Puerto Rico is "PR".
fn us_state(place: &City) -> &str {
    if place.country == "PR" {
        "PR"
    } else {
        place.admin1.as_str()
    }
}

/// How the American places spell themselves, by state and [`super::usps::key`]: of places
/// whose names fold alike, the most populous's (then the first's).
fn us_spellings(cities: &[City]) -> HashMap<(&str, String), &str> {
    let mut best: HashMap<(&str, String), &City> = HashMap::new();
    for c in cities.iter().filter(|c| matches!(c.country.as_str(), "US" | "PR")) {
        let slot = best.entry((us_state(c), super::usps::key(&c.name))).or_insert(c);
        if c.population > slot.population {
            *slot = c;
        }
    }
    best.into_iter().map(|(k, c)| (k, c.name.as_str())).collect()
}

/// A degree column's own number, across the antimeridian (-181 is 179).
fn wrap_degree(x: i32) -> i32 {
    (x + 180).rem_euclid(360) - 180
}

/// How many degree columns either side of a place at `lat` hold every point within
/// [`METRO_CORE_M`] of it (rows: one either side, as 20 km is under a degree of latitude). On
/// the sphere hav(d) >= cos(lat1) cos(lat2) hav(dlng), so dlng is at most that bound at the
/// highest latitude the two can share (a smaller radius than the distance's own, to be safe).
fn core_reach_deg(lat: f64) -> i32 {
    const R_LOW_M: f64 = 6_300_000.0;
    let highest = (lat.abs() + 1.0).min(90.0).to_radians();
    let hav_d = (METRO_CORE_M / R_LOW_M / 2.0).sin().powi(2);
    let s = hav_d.sqrt() / highest.cos();
    if s.is_nan() || s >= 1.0 {
        return 180;
    }
    (2.0 * s.asin()).to_degrees().ceil() as i32 + 1
}

fn draw(e: &Weighted, rng: &mut ChaCha8Rng) -> Option<u32> {
    let x = rng.random::<f64>() * e.1.last()?;
    Some(e.0[e.1.partition_point(|&c| c < x).min(e.0.len() - 1)])
}

impl<'a> Gazetteer<'a> {
    pub fn new(cities: &'a [City], zips: &'a [Zip], land: &'a LandMask) -> Gazetteer<'a> {
        let mut by_country: HashMap<String, Weighted> = HashMap::new();
        let mut people: HashMap<String, f64> = HashMap::new();
        let mut hubs: HashMap<(i32, i32), Vec<u32>> = HashMap::new();
        for (i, c) in cities.iter().enumerate() {
            push(by_country.entry(c.country.clone()).or_default(), i, (c.population.max(1000) as f64).powf(0.9));
            *people.entry(c.country.clone()).or_default() += c.population as f64;
            if c.population >= HUB_POPULATION {
                hubs.entry(degree_cell(c.lat, c.lng)).or_default().push(i as u32);
            }
        }
        // GeoNames lists a city and its boroughs or wards as places of their own (New York City
        // and Brooklyn, Queens, Manhattan): a metro counts once, as its biggest place.
        let kept = metro_cores(cities);
        // Every town joins the nearest core of its country within reach.
        let mut cores: HashMap<(i32, i32), Vec<usize>> = HashMap::new();
        for (m, &k) in kept.iter().enumerate() {
            cores.entry(degree_cell(cities[k].lat, cities[k].lng)).or_default().push(m);
        }
        let mut members: Vec<Weighted> = vec![Weighted::default(); kept.len()];
        for (i, c) in cities.iter().enumerate() {
            let (cy, cx) = degree_cell(c.lat, c.lng);
            let nearest = (-1..=1)
                .flat_map(|dy| (-1..=1).map(move |dx| (cy + dy, cx + dx)))
                .flat_map(|key| cores.get(&key).into_iter().flatten())
                .filter(|&&m| cities[kept[m]].country == c.country)
                .map(|&m| (storemap_core::haversine_m(c.lat, c.lng, cities[kept[m]].lat, cities[kept[m]].lng), m))
                .filter(|&(d, _)| d < METRO_REACH_M)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, m)) = nearest {
                push(&mut members[m], i, c.population.max(1) as f64);
            }
        }
        let mut metros: HashMap<String, Weighted> = HashMap::new();
        for (m, &k) in kept.iter().enumerate() {
            push(metros.entry(cities[k].country.clone()).or_default(), m, total(&members[m]));
        }
        let legs = (0..cities.len()).map(|_| OnceLock::new()).collect();
        let postal_areas = (0..cities.len()).map(|_| OnceLock::new()).collect();
        let dial_areas = (0..cities.len()).map(|_| OnceLock::new()).collect();
        Gazetteer {
            cities,
            by_country,
            metros,
            members,
            hubs,
            legs,
            postal_areas,
            dial_areas,
            land,
            shapes: country_shapes(cities, land),
            zip_points: zips,
            zips: OnceLock::new(),
            us_spellings: OnceLock::new(),
            postal: PostalAreas::new(cities),
            dial: DialAreas::new(cities),
            regions: HashMap::new(),
            people,
        }
    }

    /// A city drawn by population: a metro area by its people and then one of its towns, core
    /// or suburb, when `metro` (and the country has any), else among all its cities with a
    /// weight that still favours the big ones.
    pub fn sample_city(&self, code: &str, metro: bool, rng: &mut ChaCha8Rng) -> Option<u32> {
        match self.metros.get(code) {
            Some(m) if metro => draw(&self.members[draw(m, rng)? as usize], rng),
            _ => draw(self.by_country.get(code)?, rng),
        }
    }

    /// The cities of `country` within `km` of a point (small towns included), and the share of
    /// the country's people living in them.
    pub fn area_around(&self, country: &str, lat: f64, lng: f64, km: f64) -> Option<Area> {
        let (ids, _) = self.by_country.get(country)?;
        let (mut cities, mut near, mut all) = (Weighted::default(), 0.0, 0.0);
        for &i in ids {
            let c = &self.cities[i as usize];
            all += c.population as f64;
            if storemap_core::haversine_m(c.lat, c.lng, lat, lng) < km * 1000.0 {
                near += c.population as f64;
                push(&mut cities, i as usize, (c.population.max(1000) as f64).powf(0.9));
            }
        }
        (!cities.0.is_empty() && all > 0.0).then(|| Area { cities, people_share: near / all })
    }

    /// The biggest city of this name, or of this English name (Munich for München), in a
    /// country's admin-1 unit.
    pub fn find_city(&self, country: &str, admin1: &str, name: &str) -> Option<u32> {
        let (ids, _) = self.by_country.get(country)?;
        ids.iter()
            .copied()
            .filter(|&i| {
                let c = &self.cities[i as usize];
                c.admin1 == admin1 && (c.name == name || (!c.also.is_empty() && c.also == name))
            })
            .max_by_key(|&i| self.cities[i as usize].population)
    }

    /// A hub town of the same country within a highway leg of `city`: one of the four nearest
    /// the straight road to which stays on land, so legs join neighbours as trunk roads do and
    /// no fuel station stands in a bay.
    pub fn highway_neighbour(&self, city: u32, rng: &mut ChaCha8Rng) -> Option<u32> {
        let legs = self.legs[city as usize].get_or_init(|| self.find_legs(city));
        (!legs.is_empty()).then(|| legs[rng.random_range(0..legs.len())])
    }

    fn find_legs(&self, city: u32) -> Box<[u32]> {
        let c = &self.cities[city as usize];
        let (cy, cx) = degree_cell(c.lat, c.lng);
        let reach = (LEG_MAX_KM / 111.0).ceil() as i32 + 1;
        let mut near: Vec<(f64, u32)> = Vec::new();
        for dy in -reach..=reach {
            for dx in -2 * reach..=2 * reach {
                for &j in self.hubs.get(&(cy + dy, cx + dx)).into_iter().flatten() {
                    let o = &self.cities[j as usize];
                    if j == city || o.country != c.country {
                        continue;
                    }
                    let d = storemap_core::haversine_m(c.lat, c.lng, o.lat, o.lng) / 1000.0;
                    if d <= LEG_MAX_KM && d > 5.0 {
                        near.push((d, j));
                    }
                }
            }
        }
        near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.into_iter()
            .map(|(_, j)| j)
            .filter(|&j| {
                let o = &self.cities[j as usize];
                self.land.dry_line((c.lat, c.lng), (o.lat, o.lng), LEG_STEP_M, LEG_ENDS_M)
            })
            .take(4)
            .collect()
    }

    /// Whether a store of `country` may stand at the point: inside its country's shape (a
    /// Ciudad Juárez store drawn across the river in El Paso is drawn again), or on any land for
    /// a country the borders do not draw.
    pub fn in_country(&self, lat: f64, lng: f64, country: &str) -> bool {
        match self.shapes.get(country) {
            Some(shape) => self.land.inside(lat, lng).ids().contains(shape),
            None => self.land.is_land(lat, lng),
        }
    }

    /// A country's weight for a brand's store split: its urban population times how dense
    /// chains are there.
    pub fn country_weight(&self, code: &str) -> f64 {
        self.by_country.get(code).map_or(0.0, |(_, cum)| cum.last().copied().unwrap_or(0.0) * country_factor(code))
    }

    /// The people of a country's places (the sum of its GeoNames populations).
    pub fn people(&self, code: &str) -> f64 {
        self.people.get(code).copied().unwrap_or(0.0)
    }

    /// With each country's market region (the catalog's).
    pub fn with_regions(mut self, regions: &HashMap<String, String>) -> Gazetteer<'a> {
        self.regions = regions.clone();
        self
    }

    /// The market region a country is in, where known.
    pub fn region(&self, code: &str) -> Option<&str> {
        self.regions.get(code).map(String::as_str)
    }

    pub fn has_country(&self, code: &str) -> bool {
        self.by_country.contains_key(code)
    }

    /// The ZIP of a US or Puerto Rican store at (`lat`, `lng`) in `town` ([`ZipGrid::choose`]).
    pub fn us_zip(&self, lat: f64, lng: f64, town: &City) -> Option<&str> {
        self.zips.get_or_init(|| ZipGrid::new(self.zip_points)).choose(lat, lng, super::town::name(town), us_state(town))
    }

    /// The town an address in `place` at `postcode` names where that is not the place's own
    /// ([`super::town::name`]): in the United States and Puerto Rico, the city the store's ZIP
    /// is filed under where the Postal Service does not accept the town's name there
    /// ([`super::usps::filed_city`]: East Flatbush is Brooklyn), spelt as the place of that name
    /// in the state spells itself. The Postal Service writes its cities without accents,
    /// apostrophes or hyphens and with "Saint" and "Mc " spelt out ("Saint Louis", "Winston
    /// Salem", "Mcallen", "Bayamon"); an address, a store locator and the map write St. Louis,
    /// Winston-Salem, McAllen and Bayamón.
    pub fn address_town(&self, place: &City, postcode: &str) -> Option<Box<str>> {
        if !matches!(place.country.as_str(), "US" | "PR") {
            return None;
        }
        let filed = super::usps::filed_city(postcode, super::town::name(place))?;
        let spellings = self.us_spellings.get_or_init(|| us_spellings(self.cities));
        Some(spellings.get(&(us_state(place), super::usps::key(filed))).copied().unwrap_or(filed).into())
    }

    /// The first characters of a town's postcodes, where its country's postal areas are known.
    pub fn postal_area(&self, city: u32) -> Option<&str> {
        self.postal_areas[city as usize].get_or_init(|| self.postal.prefix(&self.cities[city as usize])).as_deref()
    }

    /// The area code a town's phone numbers dial, where its country's numbers have one.
    pub fn dial_area(&self, city: u32) -> &str {
        self.dial_areas[city as usize].get_or_init(|| self.dial.area(&self.cities[city as usize]))
    }
}

/// US ZIP centroids bucketed in 0.25-degree cells, for "the nearest ZIP" lookups.
struct ZipGrid {
    cells: HashMap<(i32, i32), Vec<ZipPoint>>,
}

/// A ZIP's centroid, code, and the state its post office is in (where the USPS data has it).
struct ZipPoint {
    lat: f64,
    lng: f64,
    zip: String,
    state: Option<&'static str>,
}

impl ZipGrid {
    fn new(zips: &[Zip]) -> ZipGrid {
        let mut cells: HashMap<(i32, i32), Vec<ZipPoint>> = HashMap::new();
        for z in zips {
            let point = ZipPoint { lat: z.lat, lng: z.lng, zip: z.zip.clone(), state: super::usps::state(&z.zip) };
            cells.entry(Self::cell(z.lat, z.lng)).or_default().push(point);
        }
        ZipGrid { cells }
    }
    fn cell(lat: f64, lng: f64) -> (i32, i32) {
        ((lat * 4.0).floor() as i32, (lng * 4.0).floor() as i32)
    }

    /// The ZIP a store at (`lat`, `lng`) in `town`, `state`, has. Centroids are not shapes: the
    /// nearest one may be a neighbour's across a line (a Cambridge store nearer Somerville's
    /// 02143 centroid, a Fargo one nearer Moorhead's, across the state line). So: of the
    /// state's ZIPs, the nearest whose post office accepts the town's name, where it is no more
    /// than twice as far as the state's nearest (or 3 km further); else the state's nearest;
    /// else, where the state has no ZIP near, the nearest of all.
    fn choose(&self, lat: f64, lng: f64, town: &str, state: &str) -> Option<&str> {
        const SLACK_KM: f64 = 3.0;
        let (cy, cx) = Self::cell(lat, lng);
        let near = || (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| (cy + dy, cx + dx))).flat_map(|cell| self.cells.get(&cell).into_iter().flatten());
        let km = |p: &ZipPoint| 111.2 * ((p.lat - lat).powi(2) + ((p.lng - lng) * lat.to_radians().cos()).powi(2)).sqrt();
        let in_state = |p: &&ZipPoint| p.state.is_none_or(|s| s == state);
        let Some((closest, zip)) = Self::nearest(near().filter(in_state), km) else {
            return Self::nearest(near(), km).map(|(_, z)| z);
        };
        let reach = (2.0 * closest).max(closest + SLACK_KM);
        let town = super::usps::key(town);
        let accepting = Self::nearest(near().filter(in_state).filter(|p| km(p) <= reach && super::usps::accepts(&p.zip, &town)), km);
        Some(accepting.map_or(zip, |(_, z)| z))
    }

    /// The nearest of `points` by `km`, and how far; ties to the lower code, so that the order
    /// the cells hold them in does not matter.
    fn nearest<'z>(points: impl Iterator<Item = &'z ZipPoint>, km: impl Fn(&ZipPoint) -> f64) -> Option<(f64, &'z str)> {
        points.map(|p| (km(p), p.zip.as_str())).min_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores found through the grid are the ones holding each place against every core kept
    /// finds: random big places, crowded so that many fall within reach of each other, near the
    /// poles, on the antimeridian (at 180 and at -180) and at odd longitudes.
    #[test]
    fn the_metro_cores_are_those_every_pair_compared_would_keep() {
        let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(7);
        let mut cities = Vec::new();
        for k in 0..3000 {
            let (lat, lng): (f64, f64) = match k % 5 {
                0 => (rng.random_range(-89.9..89.9), rng.random_range(-180.0..=180.0)),
                1 => (rng.random_range(84.0..89.99), rng.random_range(-180.0..180.0)),
                2 => {
                    (rng.random_range(-20.0..20.0), if rng.random_bool(0.5) { 180.0 - rng.random_range(0.0..0.3) } else { -180.0 + rng.random_range(0.0..0.3) })
                }
                3 => (rng.random_range(-1.0..1.0), if rng.random_bool(0.5) { 180.0 } else { -180.0 }),
                _ => (rng.random_range(40.0..41.0), rng.random_range(10.0..11.0)),
            };
            cities.push(City {
                geonames_id: k,
                name: format!("c{k}"),
                country: "XX".into(),
                admin1: String::new(),
                population: rng.random_range(METRO_POPULATION..5_000_000),
                lat,
                lng,
                town: String::new(),
                also: String::new(),
            });
        }
        let mut big: Vec<usize> = (0..cities.len()).collect();
        big.sort_by_key(|&i| (std::cmp::Reverse(cities[i].population), i));
        let mut every: Vec<usize> = Vec::new();
        for i in big {
            let c = &cities[i];
            if !every.iter().any(|&k| storemap_core::haversine_m(c.lat, c.lng, cities[k].lat, cities[k].lng) < METRO_CORE_M) {
                every.push(i);
            }
        }
        let kept = metro_cores(&cities);
        assert!(every.len() < cities.len() && every.len() > 100, "the places crowd each other: {} kept of {}", every.len(), cities.len());
        assert_eq!(kept, every);
    }

    /// Every point within METRO_CORE_M of a place lies in the rows either side of its degree cell
    /// and the columns `core_reach_deg` gives, up to the poles and across the antimeridian: found
    /// by walking the circle of that radius around places at many latitudes.
    #[test]
    fn the_cells_searched_for_a_metro_core_hold_every_place_within_reach() {
        for lat10 in (-899..=899).step_by(7) {
            let lat = lat10 as f64 / 10.0;
            for lng in [-179.99, -179.5, -120.3, 0.0, 0.01, 45.7, 179.5, 179.99] {
                let (cy, cx) = degree_cell(lat, lng);
                let reach = core_reach_deg(lat);
                for k in 0..72 {
                    let t = (k as f64 * 5.0).to_radians();
                    // Just inside the radius, by the same distance the check uses.
                    let (la, lo) = storemap_core::offset_m(lat, lng, 0.999 * METRO_CORE_M * t.cos(), 0.999 * METRO_CORE_M * t.sin());
                    let lo = (lo + 540.0).rem_euclid(360.0) - 180.0;
                    if !(-90.0..90.0).contains(&la) || storemap_core::haversine_m(lat, lng, la, lo) >= METRO_CORE_M {
                        continue;
                    }
                    let (y, x) = degree_cell(la, lo);
                    assert!((y - cy).abs() <= 1, "row of {la},{lo} from {lat},{lng}");
                    let dx = (x - cx + 540).rem_euclid(360) - 180;
                    assert!(dx.abs() <= reach, "column of {la},{lo} from {lat},{lng}: {dx} past {reach}");
                }
            }
        }
    }

    /// A store takes its state's ZIP whose post office accepts its town where one is about as
    /// near as the nearest centroid (Cambridge's 02139, not Somerville's 02143; Fargo's 58103,
    /// not Moorhead's 56560 across the Red River); a town no ZIP accepts takes the nearest
    /// (East Flatbush, Brooklyn's 11203). Centroids: the Census Bureau's ZCTA gazetteer.
    #[test]
    fn a_store_takes_the_zip_of_its_own_town_and_state() {
        let zip = |zip: &str, lat: f64, lng: f64| Zip { zip: zip.into(), lat, lng };
        let grid = ZipGrid::new(&[
            zip("02139", 42.3640, -71.1034),
            zip("02143", 42.3811, -71.0979),
            zip("58103", 46.8563, -96.8227),
            zip("56560", 46.8445, -96.7463),
            zip("11203", 40.6494, -73.9345),
            zip("11226", 40.6464, -73.9567),
        ]);
        // A point in Cambridge a little nearer Somerville's centroid than its own.
        assert_eq!(grid.choose(42.3735, -71.1000, "Cambridge", "MA"), Some("02139"));
        assert_eq!(grid.choose(42.3735, -71.1000, "Somerville", "MA"), Some("02143"));
        // A Fargo store by the river, nearer Moorhead's centroid, in North Dakota.
        assert_eq!(grid.choose(46.8470, -96.7700, "Fargo", "ND"), Some("58103"));
        assert_eq!(grid.choose(40.6490, -73.9360, "East Flatbush", "NY"), Some("11203"));
        // No ZIP of the state near (the gazetteer's town and the ZIPs disagree): the nearest.
        assert_eq!(grid.choose(40.6464, -73.9567, "Cambridge", "MA"), Some("11226"));
    }

    /// An American address names its ZIP's city where the Postal Service does not take the
    /// town's name there, spelt as the city of that name in the state spells itself. Expected:
    /// the USPS ZIP lookup (63125 is filed under "Saint Louis" and accepts Lemay, not Mehlville;
    /// 22102 under "Mc Lean", accepting Tysons) and the cities' own spellings.
    #[test]
    fn an_american_address_spells_its_zip_city_as_the_city_does() {
        let at = |name: &str, country: &str, admin1: &str, population: u64| City { population, ..City::place(name, country, admin1, 0.0, 0.0) };
        let cities = [
            at("St. Louis", "US", "MO", 301_578),
            at("Mehlville", "US", "MO", 28_822),
            at("Sappington", "US", "MO", 7_715),
            // Another state's place of the same name, and a smaller one folding alike, do not spell it.
            at("Saint Louis", "US", "MI", 999_999),
            at("Saint Louis", "US", "MO", 10),
            at("Winston-Salem", "US", "NC", 249_545),
            at("Walkertown", "US", "NC", 5_692),
            at("McAllen", "US", "TX", 142_210),
            at("Pharr", "US", "TX", 79_715),
            at("Tysons", "US", "VA", 26_171),
            at("Bayamón", "PR", "", 185_187),
            at("Santa Rosa", "PR", "", 4_000),
            at("East Flatbush", "US", "NY", 178_464),
        ];
        let land = LandMask::from_rings(|_| {});
        let g = Gazetteer::new(&cities, &[], &land);
        let town = |name: &str, zip: &str| g.address_town(cities.iter().find(|c| c.name == name && c.population > 10).unwrap(), zip).map(String::from);
        assert_eq!(town("Mehlville", "63125").as_deref(), Some("St. Louis"));
        assert_eq!(town("Walkertown", "27105").as_deref(), Some("Winston-Salem"));
        assert_eq!(town("Pharr", "78503").as_deref(), Some("McAllen"));
        assert_eq!(town("Santa Rosa", "00956").as_deref(), Some("Bayamón"));
        // No place of the ZIP's city's name: the Postal Service's spelling.
        assert_eq!(town("East Flatbush", "11203").as_deref(), Some("Brooklyn"));
        // A name the ZIP accepts is the place's own; so is one at a ZIP the data lacks, and abroad.
        assert_eq!((town("Sappington", "63126"), town("Tysons", "22102"), town("Pharr", "00000")), (None, None, None));
        assert_eq!(town("St. Louis", "63125"), None);
    }
}
