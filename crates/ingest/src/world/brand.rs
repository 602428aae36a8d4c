//! One brand's true stores and what each source saw of them.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use storemap_core::{haversine_m, offset_m, SourceType};

use super::places::{self, Gazetteer};
use super::Calibration;
use crate::catalog::{fnv1a, CatalogBrand};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Full,
    Small,
    Pickup,
    Studio,
}

#[derive(Debug, Clone)]
pub struct TrueStore {
    /// Store number within the brand (its ATP `ref`).
    pub number: u32,
    pub lat: f64,
    pub lng: f64,
    pub city: u32,
    pub country: String,
    pub address: String,
    pub postcode: String,
    pub phone: String,
    pub kind: Kind,
    pub closed: bool,
}

/// One source's record of one store.
#[derive(Debug, Clone)]
pub struct Sighting {
    pub store: u32,
    pub source: SourceType,
    pub lat: f64,
    pub lng: f64,
    pub name: String,
    pub tag_brand: bool,
    pub tag_wikidata: bool,
    pub with_address: bool,
    pub with_country: bool,
    pub closed_marker: bool,
    /// Overture rows re-published from another source.
    pub derived: Option<SourceType>,
    pub days_ago: u32,
}

pub struct BrandWorld {
    pub stores: Vec<TrueStore>,
    pub sightings: Vec<Sighting>,
}

/// Same-brand stores are at least this far apart: closer than that, two storefronts of one
/// chain are one storefront in every source.
const MIN_SPACING_M: f64 = 120.0;

pub fn generate(rank: usize, brand: &CatalogBrand, g: &Gazetteer, cal: &Calibration, seed: u64) -> BrandWorld {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ fnv1a(brand.nsi_id.as_bytes()));
    let countries: Vec<(&str, f64)> = brand.countries.iter().filter(|c| g.has_country(c)).map(|c| (c.as_str(), g.country_weight(c))).filter(|(_, w)| *w > 0.0).collect();
    let expected = match brand.known_stores {
        Some(n) => n as f64 * cal.scale,
        None => cal.stores_at_rank(rank),
    };
    let mut n = expected.floor() as usize;
    if rng.random::<f64>() < expected.fract() {
        n += 1;
    }
    // Every listed chain publishes a store locator that AllThePlaces scrapes.
    let has_spider = brand.known_stores.is_some() || rng.random::<f64>() < cal.spider_probability(rank);
    if countries.is_empty() || n == 0 {
        return BrandWorld { stores: Vec::new(), sightings: Vec::new() };
    }
    let total: f64 = countries.iter().map(|(_, w)| w).sum();
    let mut cum = Vec::with_capacity(countries.len());
    let mut acc = 0.0;
    for (_, w) in &countries {
        acc += w / total;
        cum.push(acc);
    }

    let mut taken: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    let mut stores = Vec::with_capacity(n);
    for _ in 0..n {
        let x: f64 = rng.random();
        let country = countries[cum.partition_point(|&c| c < x).min(countries.len() - 1)].0;
        let Some(city) = g.sample_city(country, &mut rng) else { continue };
        let c = &g.cities[city as usize];
        // Big cities have dense downtowns where one chain has several stores a few hundred
        // metres apart: the hard case for de-duplication.
        let downtown = c.population > 500_000 && rng.random::<f64>() < 0.35;
        let spread_m = if downtown { 450.0 } else { (1500.0 * (c.population as f64 / 100_000.0).sqrt()).clamp(500.0, 12_000.0) };
        let mut placed = None;
        for _ in 0..12 {
            let (dn, de) = gaussian_pair(&mut rng);
            let (lat, lng) = offset_m(c.lat, c.lng, dn * spread_m, de * spread_m);
            if !(-85.0..=85.0).contains(&lat) {
                continue;
            }
            let cell = ((lat * 1000.0).floor() as i64, (lng * 1000.0).floor() as i64);
            let near = (-2..=2).any(|dy| {
                (-2..=2).any(|dx| taken.get(&(cell.0 + dy, cell.1 + dx)).is_some_and(|v| v.iter().any(|&(a, b)| haversine_m(lat, lng, a, b) < MIN_SPACING_M)))
            });
            if !near {
                taken.entry(cell).or_default().push((lat, lng));
                placed = Some((lat, lng));
                break;
            }
        }
        let Some((lat, lng)) = placed else { continue };
        let kind = match (brand.class.as_str(), rng.random::<f64>()) {
            ("fitness", r) if r < 0.2 => Kind::Studio,
            ("coffee" | "food", r) if r < 0.03 => Kind::Pickup,
            ("retail" | "supermarket" | "coffee" | "food" | "pharmacy", r) if r < 0.09 => Kind::Small,
            _ => Kind::Full,
        };
        stores.push(TrueStore {
            number: 1000 + stores.len() as u32,
            lat,
            lng,
            city,
            country: country.to_string(),
            address: places::address(country, &mut rng),
            postcode: places::postcode(g, country, lat, lng, &mut rng),
            phone: places::phone(country, &mut rng),
            kind,
            closed: rng.random::<f64>() < cal.closed_share,
        });
    }

    let mut sightings = Vec::new();
    for (i, s) in stores.iter().enumerate() {
        observe(i as u32, s, rank, brand, has_spider, cal, g, &mut rng, &mut sightings);
    }
    BrandWorld { stores, sightings }
}

/// Decides which sources saw a store, and how each recorded it.
#[allow(clippy::too_many_arguments)]
fn observe(i: u32, s: &TrueStore, rank: usize, brand: &CatalogBrand, has_spider: bool, cal: &Calibration, g: &Gazetteer, rng: &mut ChaCha8Rng, out: &mut Vec<Sighting>) {
    let long_tail = rank >= cal.verified_brands;
    let undercounted = matches!(s.country.as_str(), "CN" | "KR");
    let jp_konbini = s.country == "JP" && brand.category == "shop/convenience";
    let region = if undercounted { cal.undercount_factor } else { 1.0 };
    let p = |base: f64| if long_tail { 0.0 } else { base * region };
    let (p_atp, p_ov, p_fsq, p_osm) = if jp_konbini {
        (p(0.05), p(0.1), p(0.1), 0.85)
    } else {
        (
            if has_spider { p(cal.atp_coverage) } else { 0.0 },
            p(cal.overture_coverage(rank)),
            p(cal.fsq_coverage),
            if long_tail { cal.osm_long_tail } else { cal.osm_coverage * region },
        )
    };
    let base = crate::catalog::store_name(&brand.name);
    let suffix = match s.kind {
        Kind::Full => "",
        Kind::Small => " Express",
        Kind::Pickup => " Pickup",
        Kind::Studio => " Studio",
    };
    let city = &g.cities[s.city as usize].name;
    let mut saw_atp = false;
    let mut saw_fsq = false;
    for source in [SourceType::Atp, SourceType::Fsq, SourceType::Overture, SourceType::Osm] {
        let prob = match source {
            SourceType::Atp => p_atp,
            SourceType::Overture => p_ov,
            SourceType::Fsq => p_fsq,
            SourceType::Osm => p_osm,
        };
        if rng.random::<f64>() >= prob {
            continue;
        }
        // Pin precision: retailers publish rooftop pins, mappers place nodes by hand,
        // Overture and Foursquare resolve centroids.
        let sigma = match source {
            SourceType::Atp => 4.0,
            SourceType::Osm => 7.0,
            SourceType::Fsq => if rng.random::<f64>() < 0.03 { 30.0 } else { 10.0 },
            SourceType::Overture => 12.0,
        };
        let (dn, de) = gaussian_pair(rng);
        let (lat, lng) = offset_m(s.lat, s.lng, (dn * sigma).clamp(-3.0 * sigma, 3.0 * sigma), (de * sigma).clamp(-3.0 * sigma, 3.0 * sigma));
        let r: f64 = rng.random();
        let name = match source {
            SourceType::Atp => format!("{base}{suffix}"),
            SourceType::Osm if r < 0.1 => format!("{base}{suffix} {city}"),
            SourceType::Overture if r < 0.2 => format!("{base}{suffix} {city}"),
            SourceType::Fsq if r < 0.15 => format!("{}{suffix}", base.replace(['\'', '’'], "")),
            SourceType::Fsq if r < 0.3 => format!("{base}{suffix} - {}", s.address),
            SourceType::Fsq if r < 0.4 => format!("{base}{suffix} #{}", s.number),
            _ => format!("{base}{suffix}"),
        };
        let closed_marker = s.closed
            && rng.random::<f64>()
                < match source {
                    SourceType::Atp => 0.75,
                    SourceType::Fsq => 0.6,
                    SourceType::Overture => 0.5,
                    SourceType::Osm => 0.0,
                };
        let derived = match source {
            SourceType::Overture if saw_atp && rng.random::<f64>() < 0.3 => Some(SourceType::Atp),
            SourceType::Overture if saw_fsq && rng.random::<f64>() < 0.15 => Some(SourceType::Fsq),
            _ => None,
        };
        let (tag_brand, tag_wikidata) = match source {
            SourceType::Osm => {
                let t = rng.random::<f64>();
                (t < 0.85, t < 0.7)
            }
            SourceType::Overture => {
                let t = rng.random::<f64>();
                (t < 0.7, t < 0.65)
            }
            SourceType::Atp => (true, true),
            SourceType::Fsq => (false, false),
        };
        out.push(Sighting {
            store: i,
            source,
            lat,
            lng,
            name,
            tag_brand,
            tag_wikidata,
            with_address: rng.random::<f64>() < if source == SourceType::Osm { 0.6 } else { 0.95 },
            with_country: rng.random::<f64>() < if source == SourceType::Osm { 0.7 } else { 0.98 },
            closed_marker,
            derived,
            days_ago: rng.random_range(0..if source == SourceType::Atp { 7 } else { 60 }),
        });
        saw_atp |= source == SourceType::Atp;
        saw_fsq |= source == SourceType::Fsq;
    }
}

/// Two independent standard normal draws (Box-Muller).
fn gaussian_pair(rng: &mut ChaCha8Rng) -> (f64, f64) {
    let u1: f64 = rng.random::<f64>().max(1e-12);
    let u2: f64 = rng.random();
    let r = (-2.0 * u1.ln()).sqrt();
    let t = std::f64::consts::TAU * u2;
    (r * t.cos(), r * t.sin())
}
