//! One brand's true stores and what each source saw of them.

use std::collections::{BTreeMap, HashMap};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use storemap_core::{haversine_m, offset_m, SourceType};

use super::address::{self, Address};
use super::churn::{self, Event, SURVEY};
use super::phone;
use super::places::{self, Area, Gazetteer};
use super::postcode;
use super::Calibration;
use crate::catalog::CatalogBrand;
use crate::footprint::Reach;
use crate::hash::fnv1a;

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
    pub address: Address,
    pub postcode: String,
    /// The town the address names where it is not its place's ([`super::town::of_store`]).
    pub town: Option<Box<str>>,
    pub phone: String,
    pub kind: Kind,
    /// Closed: a stale closure of the surveyed world, or a closure since the survey.
    pub closed: bool,
    /// When it opened, for a store opened since the survey ([`churn::SURVEY`]).
    pub opened: Option<i64>,
    /// When it closed, for a store closed since the survey (on or before the build's as-of).
    pub closed_at: Option<i64>,
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
/// How fast a chain's extra density around its home fades with distance.
const HOME_REACH_KM: f64 = 300.0;
/// How much an unlisted one-country chain's city weights grow near home (see [`Home`]).
const REGIONAL_HOME_BOOST: f64 = 10.0;
/// The share of a listed regional chain's home-country stores drawn among the towns around its
/// home (Wegmans around Rochester, Publix in Florida); the rest fade with distance from home,
/// so that none are a continent away.
const REGIONAL_HOME_SHARE: f64 = 0.4;

/// How a chain sits in the land.
struct Habits {
    /// Share of its stores drawn among metro cities (the rest among all cities by size).
    metro: f64,
    /// Share strung along the roads between neighbouring towns (fuel, motels, fast chargers).
    highway: f64,
    /// Keeps off downtowns: big boxes and forecourts sit in the suburbs.
    suburban: bool,
    home: Option<Home>,
}

/// The city a chain is densest around: a city's weight is multiplied by
/// `1 + boost * exp(-distance / HOME_REACH_KM)` (by `exp(-distance / HOME_REACH_KM)` alone
/// when `confined`: a regional chain), and a share of the chain's stores in its home
/// country is drawn among the towns within [`HOME_REACH_KM`] of home, however small (Dutch Bros
/// around Grants Pass, where no city is a metro).
struct Home {
    lat: f64,
    lng: f64,
    country: String,
    boost: f64,
    confined: bool,
    /// The towns around home, and the share of home-country stores drawn among them.
    around: Option<(f64, Area)>,
}

const SUBURBAN: &[&str] = &[
    "shop/doityourself",
    "shop/department_store",
    "shop/furniture",
    "shop/garden_centre",
    "shop/car_parts",
    "shop/hardware",
    "shop/appliance",
    "shop/bed",
    "shop/electronics",
    "shop/sports",
    "shop/pet",
];

fn habits(rank: usize, brand: &CatalogBrand, g: &Gazetteer, rng: &mut ChaCha8Rng) -> Habits {
    let suburban = matches!(brand.class.as_str(), "fuel" | "hotel") || SUBURBAN.contains(&brand.category.as_str());
    let base = match (brand.class.as_str(), brand.category.as_str()) {
        (_, "shop/variety_store") => 0.3,
        (_, "shop/convenience") => 0.55,
        ("fuel", _) => 0.3,
        _ if suburban => 0.45,
        ("coffee", _) => 0.85,
        ("telecom", _) => 0.8,
        ("fitness", _) => 0.75,
        ("bank", _) => 0.7,
        ("supermarket" | "hotel" | "ev", _) => 0.5,
        _ => 0.6,
    };
    let highway = match (brand.class.as_str(), brand.category.as_str()) {
        (_, "tourism/motel") => 0.5,
        ("fuel", _) => 0.35,
        ("ev", _) => 0.25,
        ("hotel", _) => 0.15,
        _ => 0.0,
    };
    // A curated national chain draws as many of its home-country stores around home as the
    // people there would get anyway, so home has about twice its people's share (Starbucks
    // around Seattle); a curated regional chain draws a fixed share there and leans the rest
    // towards home.
    let curated = brand.home.as_ref().and_then(|h| {
        let c = g.find_city(&h.country, &h.admin1, &h.city)?;
        let city = &g.cities[c as usize];
        let area = g.area_around(&h.country, city.lat, city.lng, HOME_REACH_KM)?;
        Some(match h.reach {
            Reach::National => (c, 0.0, false, Some((area.people_share, area))),
            Reach::Regional => (c, 0.0, true, Some((REGIONAL_HOME_SHARE, area))),
        })
    });
    // A chain in one country with no published counts is a regional chain: it grows out of
    // one metro area.
    let regional = || {
        (brand.footprint.is_empty() && brand.footprint_groups.is_empty() && brand.trade.len() == 1 && rank >= 300)
            .then(|| g.sample_city(&brand.trade[0], true, rng))
            .flatten()
            .map(|c| (c, REGIONAL_HOME_BOOST, false, None))
    };
    let home = curated.or_else(regional).map(|(c, boost, confined, around)| {
        let c = &g.cities[c as usize];
        Home { lat: c.lat, lng: c.lng, country: c.country.clone(), boost, confined, around }
    });
    Habits { metro: (base + rng.random_range(-0.1f64..0.1)).clamp(0.0, 1.0), highway, suburban, home }
}

/// Published counts that make up less than this share of a chain's size are not its main
/// markets (a table with Burger King's Vietnam alone): the rest of it then goes where a chain
/// without published counts would go.
const MAIN_MARKETS_SHARE: f64 = 0.5;
/// When they are not, and the chain's home market is published, a market without a figure
/// holds at most this share of the home one; so does each other market of a chain whose home
/// holds [`HOME_SHARE`] (see [`plan`]).
const UNLISTED_SHARE_OF_HOME: f64 = 0.5;
/// The share of a chain without published counts that trades in its home market, where its
/// home is known: about half, as for the chains that have both a home count and a world total
/// in the table (their median is 0.54: McDonald's 0.31, Starbucks 0.43, Subway 0.53, Wendy's
/// 0.82). Without it a worldwide location set puts the United States first for every brand
/// (Lada dealers and Petrolimex stations in Ohio, and no WHSmith in Britain's top five).
pub const HOME_SHARE: f64 = 0.5;
/// How much likelier a chain without published counts is to trade in a country of its home's
/// market region than its weight alone says (Lada's half beyond Russia goes to Europe first,
/// not the United States): the median odds ratio of the chains the tables know with a home and
/// two markets abroad or more is 5.3 (35 chains; Tim Hortons' US, Uniqlo's Asia, Oxxo's Latin
/// America).
pub const NEIGHBOUR_BOOST: f64 = 5.0;
/// The most stores a chain whose size nobody publishes has in a country, per person of its
/// places (GeoNames populations): the 99th percentile of the table's published counts per
/// person, 286 per million (above it only 7-Eleven in Thailand, 920, and Taiwan, Nemzeti
/// Dohánybolt, Korea's CU and GS25, Żabka, Indomaret, Alfamart and Taiwan's FamilyMart). A
/// rank-sized chain is a few hundred stores wherever it trades, which on the Faroe Islands was
/// 310 Magn stations for some 35,000 people (Magn has about fifteen).
pub const UNLISTED_DENSITY_CAP: f64 = 286e-6;
/// How much denser chains may be in a country than in the world, per unit of how much chains
/// trade there ([`Generator::country_weight`](super::Generator::country_weight)), before the
/// chains of unknown size whose main market it is are made smaller. The big markets stand at
/// 0.8-1.4 times the world's; a country whose name-suggestion-index entries are many local
/// brands, each sized by its rank and holding half of it at home, stood far above them
/// (Georgia 12 times; `data/footprints-notes.md`, batches 32-33, has the figures).
pub const LOCAL_DENSITY_LIMIT: f64 = 2.0;
/// The least share of its planned stores a local chain keeps, however crowded its main market.
const LEAST_LOCAL_SHARE: f64 = 0.1;

/// A country's expected stores, and the chains of unknown size whose main market it is.
#[derive(Default)]
struct Crowd {
    all: f64,
    /// Each one's expected stores there, and the least share of its plan it keeps.
    local: Vec<(f64, f64)>,
}

/// By country where chains would stand denser than [`LOCAL_DENSITY_LIMIT`] times the world:
/// the share of its planned stores each chain of unknown size whose main market it is keeps
/// (its home, else the country it expects most stores in), the largest that brings the
/// country down to the limit, each chain keeping at least its [`least_kept`] (0 where those
/// floors cannot: each chain is then at its own). Made from the plans before any share, once
/// per catalog; a chain made smaller is smaller in its other markets too, which this does not
/// count, so a neighbour of a crowded country can end below the limit. Chains of known size,
/// and chains whose main market is elsewhere, keep their size. Sums run in rank and country
/// order, so the same catalog gives the same shares on any number of threads.
pub(super) fn local_shares(brands: &[CatalogBrand], g: &Gazetteer, cal: &Calibration) -> BTreeMap<String, f64> {
    let plans: Vec<_> = (0..brands.len()).into_par_iter().map(|rank| expected(rank, &brands[rank], g, cal)).collect();
    // Per country: every chain's expected stores, and the unknown-size chains whose main
    // market it is, each with its stores there and the least share it keeps.
    let mut by_country: BTreeMap<&str, Crowd> = BTreeMap::new();
    for (brand, plan) in brands.iter().zip(&plans) {
        let main = brand.known_stores.is_none().then(|| main_market(plan)).flatten();
        let least = least_kept(brand, plan, cal);
        for &(c, e) in plan {
            let crowd = by_country.entry(c).or_default();
            crowd.all += e;
            if main == Some(c) {
                crowd.local.push((e, least));
            }
        }
    }
    let weight: f64 = by_country.keys().map(|c| g.country_weight(c)).sum();
    let density = by_country.values().map(|crowd| crowd.all).sum::<f64>() / weight.max(f64::MIN_POSITIVE);
    by_country
        .into_iter()
        .filter_map(|(c, Crowd { all, local })| {
            let excess = all - LOCAL_DENSITY_LIMIT * density * g.country_weight(c);
            if excess <= 0.0 || local.is_empty() {
                return None;
            }
            // The largest share that takes the excess off, each chain keeping at least its own
            // least share (the stores taken off fall as the share rises: halve the interval).
            let taken = |keep: f64| local.iter().map(|(e, least)| e * (1.0 - keep.max(*least))).sum::<f64>();
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..40 {
                let mid = (lo + hi) / 2.0;
                if taken(mid) >= excess {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Some((c.to_string(), lo))
        })
        .collect()
}

/// The least share of its planned stores a chain of unknown size keeps however crowded its
/// main market: [`LEAST_LOCAL_SHARE`], or more where OpenStreetMap alone shows more of it (its
/// tally of storefronts over the map's usual share of a chain: Красное&Белое, tallied 4,723
/// times, is a chain of thousands wherever it is based).
fn least_kept(brand: &CatalogBrand, plan: &[(&str, f64)], cal: &Calibration) -> f64 {
    let planned: f64 = plan.iter().map(|(_, e)| e).sum();
    let seen = f64::from(brand.osm_count) / cal.osm_coverage * cal.scale;
    (seen / planned.max(f64::MIN_POSITIVE)).clamp(LEAST_LOCAL_SHARE, 1.0)
}

/// Named in this many countries besides its published ones, a chain is a global chain.
const GLOBAL_CHAIN: usize = 20;
/// How dense a chain of unlisted size is in a market without a figure, against its published
/// markets (per person, weighted as [`Gazetteer::country_weight`]).
const UNPUBLISHED_DENSITY: f64 = 0.5;

/// The middle of a chain's published markets: no market it has no figure for is bigger. Not
/// the smallest, since one small market in the table (McDonald's Vietnam, 30 restaurants) would
/// then cap Britain and lose a third of the chain.
fn median(counts: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = counts.filter(|n| *n > 0.0).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::INFINITY,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// How many stores go to each country: the published counts times the scale, and the rest of
/// the brand's size spread over the other countries it trades in by how much chains trade
/// there. When the published counts are its main markets, the rest goes only to countries
/// named for it, none beyond the median of its published markets, and a chain named in few
/// countries gives them only their share of the rest over its whole location set; a chain
/// whose size nobody lists gets its published markets' density there instead. When they are
/// not its main markets but include its home, the rest goes to its other countries, none
/// beyond half its home market. Without published counts, or with counts that are not its main
/// markets and leave out its home, a chain with a known home that it trades in has
/// [`HOME_SHARE`] of its size there and the rest elsewhere, its home's region
/// first ([`NEIGHBOUR_BOOST`]), none beyond half its home nor denser than it; home takes what
/// they cannot. A count for several countries together is spread over them first, as if each
/// had its share published; a territory is no denser than its country (none where the chain has
/// left the country); a chain of unknown size is no denser anywhere than
/// [`UNLISTED_DENSITY_CAP`], and smaller as a whole where its main market is crowded with such
/// chains ([`local_shares`]). Fractions round at random, so counts are right on average at any
/// scale.
fn plan<'b>(rank: usize, brand: &'b CatalogBrand, g: &Gazetteer, cal: &Calibration, rng: &mut ChaCha8Rng) -> Vec<(&'b str, usize)> {
    let expected = expected(rank, brand, g, cal);
    // Smaller as a whole where its main market is crowded, so that home stays home.
    let keep = match (brand.known_stores, main_market(&expected)) {
        (None, Some(main)) => cal.local_share(main).max(least_kept(brand, &expected, cal)),
        _ => 1.0,
    };
    expected
        .into_iter()
        .map(|(c, e)| (c, e * keep))
        .map(|(c, e)| {
            let n = e.floor() as usize + usize::from(rng.random::<f64>() < e.fract());
            (c, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The stores [`plan`] expects in each country, before rounding and before a crowded main
/// market makes the chain smaller ([`local_shares`]).
fn expected<'b>(rank: usize, brand: &'b CatalogBrand, g: &Gazetteer, cal: &Calibration) -> Vec<(&'b str, f64)> {
    let scale = cal.scale;
    let mut published: Vec<(&str, f64)> = brand.footprint.iter().map(|(c, n)| (c.as_str(), *n as f64 * scale)).collect();
    let mut published_total: f64 = published.iter().map(|(_, n)| n).sum();
    // A count for several countries together is spread over them by how much chains trade
    // there (Foot Locker's 626 European stores: Germany's share, not Luxembourg's). A group
    // with no member the gazetteer can place is counted and not placed, as such a country is.
    for (members, n) in &brand.footprint_groups {
        let n = *n as f64 * scale;
        published_total += n;
        let weights: Vec<(&str, f64)> =
            members.iter().filter(|c| g.has_country(c)).map(|c| (c.as_str(), g.country_weight(c))).filter(|(_, w)| *w > 0.0).collect();
        let weight: f64 = weights.iter().map(|(_, w)| w).sum();
        published.extend(weights.into_iter().map(|(c, w)| (c, n * w / weight)));
    }
    let total = match brand.known_stores {
        Some(n) => n as f64 * scale,
        None => cal.stores_at_rank(rank),
    };
    let main_markets = !published.is_empty() && published_total >= MAIN_MARKETS_SHARE * total;
    // Where the published counts are not the chain's main markets and leave out its home, a
    // known home the chain trades in holds its share (Scotiabank, when its rows were Mexico and
    // Peru alone, put the rest of it in the US, Japan and Germany before Canada; Adidas's home
    // has no row today).
    let home_market = brand.home_country.as_deref().filter(|h| {
        let trades = if published.is_empty() { &brand.trade } else { &brand.countries };
        !main_markets
            && !published.iter().any(|(c, _)| c == h)
            && !brand.absent.iter().any(|a| a == h)
            && trades.iter().any(|t| t == h)
            && g.has_country(h)
            && g.country_weight(h) > 0.0
    });
    let (others, cap): (Vec<&String>, f64) = if main_markets {
        // A chain named in many countries is a global chain: it is also in the high-income
        // markets its location set covers (McDonald's in Britain), where a chain named in a
        // few (7-Eleven) is not.
        let global = brand.trade.len() >= GLOBAL_CHAIN;
        let rich = brand.countries.iter().filter(|c| global && places::country_factor(c) >= 1.0);
        (brand.trade.iter().chain(rich).collect(), median(published.iter().map(|(_, n)| *n)))
    } else if published.is_empty() {
        (brand.trade.iter().collect(), f64::INFINITY)
    } else {
        // Most of the chain is in markets nobody found a figure for. Where its home market is
        // among the published ones, none of those is more than half of it: the rest of Orange
        // is not more shops in Spain than in France, nor the rest of Blink more chargers in
        // Britain than in the US. (A chain whose published rows miss its home, AEON with
        // Vietnam alone, has its home's share there, below.) What does not fit is not placed.
        let home = brand.home_country.as_deref().and_then(|h| published.iter().find(|(c, _)| *c == h));
        (brand.countries.iter().collect(), home.map_or(f64::INFINITY, |&(_, n)| UNLISTED_SHARE_OF_HOME * n))
    };
    let mut others: Vec<&String> = others;
    others.sort();
    others.dedup();
    let others: Vec<(&str, f64)> = others
        .into_iter()
        .filter(|c| g.has_country(c) && !published.iter().any(|(p, _)| p == c) && !brand.absent.contains(c))
        .filter(|c| home_market != Some(c.as_str()))
        .map(|c| {
            let neighbour = home_market.is_some_and(|h| g.region(h).is_some_and(|r| g.region(c) == Some(r)));
            (c.as_str(), g.country_weight(c) * if neighbour { NEIGHBOUR_BOOST } else { 1.0 })
        })
        .filter(|(_, w)| *w > 0.0)
        .collect();
    let weight: f64 = others.iter().map(|(_, w)| w).sum();
    // A home with nowhere else to trade holds the whole chain; where it has somewhere else, no
    // other market is more than half of it (Bridgestone's Australian spider does not make
    // Australia its biggest market).
    let at_home = home_market.map(|h| (h, if weight > 0.0 { HOME_SHARE * total } else { total }));
    let cap = at_home.map_or(cap, |(_, n)| cap.min(UNLISTED_SHARE_OF_HOME * n));
    // The rest of a chain of known size is spread over every country its location set names
    // that the table does not, though only the ones named for it get stores: a chain named in a
    // few countries besides its published ones (Papa John's Cyrillic entry, Wendy's spider in
    // Japan) does not pour its whole rest into them. What falls on the others is not placed.
    let spread = if main_markets && brand.listed && brand.trade.len() < GLOBAL_CHAIN {
        let unnamed: f64 = brand
            .countries
            .iter()
            .filter(|c| g.has_country(c) && !published.iter().any(|(p, _)| p == *c) && !brand.absent.contains(*c))
            .filter(|c| !others.iter().any(|(o, _)| o == c))
            .map(|c| g.country_weight(c))
            .sum();
        weight + unnamed
    } else {
        weight
    };
    let rest = total - published_total - at_home.map_or(0.0, |(_, n)| n);
    let mut expected: Vec<(&str, f64)> = published.iter().copied().filter(|(c, _)| g.has_country(c)).collect();
    if main_markets && !brand.listed {
        // Its size is only the table's sum, which misses every market nobody found a figure
        // for (Lidl in Poland): those get the chain's density in its published markets, thinned,
        // since the markets a search finds first are a chain's biggest.
        let published_weight: f64 = expected.iter().map(|(c, _)| g.country_weight(c)).sum();
        if published_weight > 0.0 {
            let density = UNPUBLISHED_DENSITY * published_total / published_weight;
            expected.extend(others.iter().map(|&(c, w)| (c, (density * w).min(cap))));
        }
    } else if rest > 0.0 && weight > 0.0 {
        expected.extend(others.iter().map(|&(c, w)| (c, (rest * w / spread).min(cap))));
    }
    // A territory named with its parent country (NSI's US set names Puerto Rico and Guam) is
    // no denser than the chain is in the country, published (the rest of 7-Eleven is not two
    // thousand stores in Puerto Rico) or estimated (Supercheap Auto's rest on the Cook Islands
    // beside its few in New Zealand), and a chain that has left the country has left its
    // territories (Rite Aid, closed in 2025, is not three thousand pharmacies in Puerto Rico).
    // Applied again once the density cap below has shrunk a country.
    let cap_territories = |expected: &mut Vec<(&'b str, f64)>| {
        for i in 0..expected.len() {
            let (c, e) = expected[i];
            // A published figure stands, and so does a chain's home (a Puerto Rican bank).
            if published.iter().any(|(p, _)| *p == c) || at_home.is_some_and(|(h, _)| h == c) {
                continue;
            }
            let parent = places::parent_market(c).and_then(|p| {
                if brand.absent.iter().any(|a| a == p) {
                    return Some(0.0);
                }
                expected.iter().find(|(k, _)| *k == p).map(|&(_, n)| n / g.country_weight(p).max(f64::MIN_POSITIVE))
            });
            if let Some(d) = parent {
                expected[i].1 = e.min(d * g.country_weight(c));
            }
        }
    };
    cap_territories(&mut expected);
    // Home takes what its other markets cannot hold: none of them is bigger than half of it
    // (above) nor denser than it for its people (Boston Pizza's set names Guam and Puerto Rico
    // besides Canada and the US, and half of it is not on two islands).
    if let Some((home, n)) = at_home {
        no_denser_than(&mut expected, n / g.country_weight(home), g, |c| !published.iter().any(|(p, _)| *p == c));
        // Less every published count, placeable or not: a count for a country without cities
        // is not placed, and not moved home either.
        let abroad: f64 = expected.iter().filter(|(c, _)| !published.iter().any(|(p, _)| p == c)).map(|(_, e)| e).sum();
        expected.push((home, total - published_total - abroad));
    }
    // A chain of unknown size is no denser anywhere than the cap; where that shrinks its home,
    // its other markets shrink with it: none more than half of home nor denser, and home still
    // its share of the whole (Mercator is not bigger in Croatia than in Slovenia).
    if brand.known_stores.is_none() {
        for (c, e) in expected.iter_mut() {
            *e = e.min(UNLISTED_DENSITY_CAP * g.people(c) * scale);
        }
        if let Some((home, _)) = at_home {
            let n = expected.iter().rev().find(|(c, _)| *c == home).map_or(0.0, |&(_, n)| n);
            let abroad = |c: &str| c != home && !published.iter().any(|(p, _)| *p == c);
            no_denser_than(&mut expected, n / g.country_weight(home), g, abroad);
            for (_, e) in expected.iter_mut().filter(|(c, _)| abroad(c)) {
                *e = e.min(UNLISTED_SHARE_OF_HOME * n);
            }
            let held: f64 = expected.iter().filter(|(c, _)| abroad(c)).map(|(_, e)| e).sum();
            let most = n * (1.0 - HOME_SHARE) / HOME_SHARE;
            if held > most {
                for (_, e) in expected.iter_mut().filter(|(c, _)| abroad(c)) {
                    *e *= most / held;
                }
            }
        }
        cap_territories(&mut expected);
    }
    expected
}

/// Where a chain expects most of its stores (the first by code of equals).
fn main_market<'b>(expected: &[(&'b str, f64)]) -> Option<&'b str> {
    expected.iter().filter(|(_, e)| *e > 0.0).max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0))).map(|(c, _)| *c)
}

/// Caps each market `applies` to at `density` stores per unit of [`Gazetteer::country_weight`].
fn no_denser_than(expected: &mut [(&str, f64)], density: f64, g: &Gazetteer, applies: impl Fn(&str) -> bool) {
    for (c, e) in expected.iter_mut().filter(|(c, _)| applies(c)) {
        *e = e.min(density * g.country_weight(c));
    }
}

/// A brand's world as it is at `as_of`: the surveyed world, aged (see [`churn`]) when `as_of`
/// is after the survey.
pub fn generate(rank: usize, brand: &CatalogBrand, g: &Gazetteer, cal: &Calibration, seed: u64, as_of: i64) -> BrandWorld {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ fnv1a(brand.nsi_id.as_bytes()));
    let plan = plan(rank, brand, g, cal, &mut rng);
    // A chain of known size is scraped where AllThePlaces really has a spider for it (not
    // Luckin or Indian Oil); the rank-sized rest by a chance calibrated to the dataset.
    let has_spider = match brand.known_stores {
        Some(_) => brand.spidered,
        None => rng.random::<f64>() < cal.spider_probability(rank),
    };
    if plan.is_empty() {
        return BrandWorld { stores: Vec::new(), sightings: Vec::new() };
    }
    let habits = habits(rank, brand, g, &mut rng);
    let mut taken: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    let mut stores = Vec::with_capacity(plan.iter().map(|(_, n)| n).sum());
    for &(country, n) in &plan {
        for _ in 0..n {
            let number = 1000 + stores.len() as u32;
            if let Some(s) = new_store(number, country, brand, &habits, g, cal, &mut taken, &mut rng) {
                stores.push(s);
            }
        }
    }

    let mut sightings = Vec::new();
    for (i, s) in stores.iter().enumerate() {
        observe(i as u32, s, rank, brand, has_spider, cal, g, &mut rng, &mut sightings);
    }
    let mut world = BrandWorld { stores, sightings };
    if as_of > SURVEY {
        let ctx = Ctx { rank, brand, g, cal, habits: &habits, has_spider };
        age(&ctx, &mut world, &mut taken, seed, as_of);
    }
    world
}

/// One store placed in a country: its spot, kind, address and whether it is a stale closure.
/// `None` when the chain's cities there are full.
#[allow(clippy::too_many_arguments)]
fn new_store(
    number: u32,
    country: &str,
    brand: &CatalogBrand,
    habits: &Habits,
    g: &Gazetteer,
    cal: &Calibration,
    taken: &mut HashMap<(i64, i64), Vec<(f64, f64)>>,
    rng: &mut ChaCha8Rng,
) -> Option<TrueStore> {
    let (city, lat, lng) = place(country, habits, g, taken, rng)?;
    let kind = match (brand.class.as_str(), rng.random::<f64>()) {
        ("fitness", r) if r < 0.2 => Kind::Studio,
        ("coffee" | "food", r) if r < 0.03 => Kind::Pickup,
        // Only a chain that runs a small format (the draw is the same either way, so the rest
        // of the world does not move with this rule).
        ("retail" | "supermarket" | "coffee" | "food" | "pharmacy", r) if r < 0.09 && brand.small_format.is_some() => Kind::Small,
        _ => Kind::Full,
    };
    // The postal area of the town the address names, so that the two agree where the store
    // stands past the town's edge (it draws nothing).
    let area = g.postal_area(city);
    let us_zip = if matches!(country, "US" | "PR") { g.us_zip(lat, lng, &g.cities[city as usize]) } else { None };
    // (Drawn in this order: the address, the postcode, the phone number.)
    let address = address::address(country, &g.cities[city as usize].admin1, lat, lng, rng);
    let postcode = postcode::for_store(country, us_zip, area, (lat, lng), rng);
    let town = g.address_town(&g.cities[city as usize], &postcode);
    Some(TrueStore {
        number,
        lat,
        lng,
        city,
        country: country.to_string(),
        address,
        postcode,
        town,
        phone: phone::phone(country, &g.cities[city as usize], area, g.dial_area(city), rng),
        kind,
        closed: rng.random::<f64>() < cal.closed_share,
        opened: None,
        closed_at: None,
    })
}

/// What placing and observing one more store of a brand needs.
struct Ctx<'a, 'g> {
    rank: usize,
    brand: &'a CatalogBrand,
    g: &'a Gazetteer<'g>,
    cal: &'a Calibration,
    habits: &'a Habits,
    has_spider: bool,
}

/// Ages a surveyed world to `as_of`: each surveyed store closes at a time drawn from its class's
/// closure rate; new stores open as a Poisson process at its opening rate (in the countries of
/// the surveyed stores, in proportion), each placed and observed as a surveyed store is; then a
/// source lists a store from its opening plus that source's lag until its closure plus that
/// source's lag. The draws do not depend on `as_of` (openings are a sequence cut at `as_of`), so
/// a later world holds every store of an earlier one, at the same place.
fn age(ctx: &Ctx, world: &mut BrandWorld, taken: &mut HashMap<(i64, i64), Vec<(f64, f64)>>, seed: u64, as_of: i64) {
    let rates = churn::rates(&ctx.brand.class);
    let surveyed = world.stores.len();
    let brand_seed = seed ^ fnv1a(ctx.brand.nsi_id.as_bytes()) ^ churn::SALT;
    let mut rng = ChaCha8Rng::seed_from_u64(brand_seed);
    // When each store closes, and the window in which each sighting is listed.
    let mut closes: Vec<f64> = (0..surveyed).map(|_| SURVEY as f64 + churn::exp_s(&mut rng, churn::YEAR_S / rates.close)).collect();
    let mut listed: Vec<(f64, f64)> =
        world.sightings.iter().map(|s| (f64::NEG_INFINITY, closes[s.store as usize] + churn::lag_s(&mut rng, s.source, Event::Closing))).collect();

    let per_second = rates.open * surveyed as f64 / churn::YEAR_S;
    let mut t = SURVEY as f64;
    for k in 0u32.. {
        if per_second <= 0.0 {
            break;
        }
        t += churn::exp_s(&mut rng, 1.0 / per_second);
        if t > as_of as f64 {
            break;
        }
        let mut r = ChaCha8Rng::seed_from_u64(brand_seed ^ fnv1a(format!("opening #{k}").as_bytes()));
        let country = world.stores[r.random_range(0..surveyed)].country.clone();
        let number = 1000 + surveyed as u32 + k;
        let Some(mut store) = new_store(number, &country, ctx.brand, ctx.habits, ctx.g, ctx.cal, taken, &mut r) else { continue };
        store.closed = false;
        store.opened = Some(t as i64);
        let close = t + churn::exp_s(&mut r, churn::YEAR_S / rates.close);
        let index = world.stores.len() as u32;
        let first = world.sightings.len();
        observe(index, &store, ctx.rank, ctx.brand, ctx.has_spider, ctx.cal, ctx.g, &mut r, &mut world.sightings);
        for s in &world.sightings[first..] {
            listed.push((t + churn::lag_s(&mut r, s.source, Event::Opening), close + churn::lag_s(&mut r, s.source, Event::Closing)));
        }
        world.stores.push(store);
        closes.push(close);
    }

    let now = as_of as f64;
    for (s, &close) in world.stores.iter_mut().zip(&closes) {
        if close <= now {
            s.closed = true;
            s.closed_at = Some(close as i64);
        }
    }
    let mut window = listed.into_iter();
    world.sightings.retain_mut(|s| {
        let (from, until) = window.next().expect("a window per sighting");
        // A source last saw a store no earlier than it began listing it.
        if from.is_finite() {
            s.days_ago = s.days_ago.min(((now - from) / churn::DAY_S) as u32);
        }
        from <= now && now < until
    });
}

/// A city for one store: by the chain's metro share, then kept with a probability that grows
/// near its home, so that a chain is denser there without a per-brand weight table.
fn pick_city(country: &str, habits: &Habits, g: &Gazetteer, rng: &mut ChaCha8Rng) -> Option<u32> {
    let home = habits.home.as_ref().filter(|h| h.country == country);
    if let Some((share, area)) = home.and_then(|h| h.around.as_ref()) {
        if rng.random::<f64>() < *share {
            return area.draw(rng);
        }
    }
    let metro = rng.random::<f64>() < habits.metro;
    for _ in 0..32 {
        let city = g.sample_city(country, metro, rng)?;
        let Some(h) = home else { return Some(city) };
        let c = &g.cities[city as usize];
        let near = (-haversine_m(c.lat, c.lng, h.lat, h.lng) / 1000.0 / HOME_REACH_KM).exp();
        let keep = if h.confined { near } else { (1.0 + h.boost * near) / (1.0 + h.boost) };
        if rng.random::<f64>() < keep {
            return Some(city);
        }
    }
    match home.and_then(|h| h.around.as_ref()) {
        Some((_, area)) => area.draw(rng),
        None => g.sample_city(country, metro, rng),
    }
}

/// Where one store goes: a city and a point in or around it (or on the road to a neighbour
/// town), at least [`MIN_SPACING_M`] from the chain's other stores. `None` when a few cities
/// in a row are full.
fn place(country: &str, habits: &Habits, g: &Gazetteer, taken: &mut HashMap<(i64, i64), Vec<(f64, f64)>>, rng: &mut ChaCha8Rng) -> Option<(u32, f64, f64)> {
    for _ in 0..6 {
        let city = pick_city(country, habits, g, rng)?;
        let c = &g.cities[city as usize];
        let leg = if rng.random::<f64>() < habits.highway { g.highway_neighbour(city, rng) } else { None };
        // Big cities have dense downtowns where one chain has several stores a few hundred
        // metres apart: the hard case for de-duplication. Suburban formats skip them.
        let downtown = !habits.suburban && c.population > 500_000 && rng.random::<f64>() < 0.35;
        let spread_m = if downtown { 450.0 } else { (1500.0 * (c.population as f64 / 100_000.0).sqrt()).clamp(500.0, 12_000.0) };
        for _ in 0..12 {
            let (dn, de) = gaussian_pair(rng);
            let mut at = city;
            let (lat, lng) = match leg {
                Some(other) => {
                    let o = &g.cities[other as usize];
                    let t = rng.random_range(0.15..0.85);
                    if t > 0.5 {
                        at = other;
                    }
                    offset_m(c.lat + (o.lat - c.lat) * t, c.lng + (o.lng - c.lng) * t, dn * 150.0, de * 150.0)
                }
                // Out of the centre, as a ring road's retail parks are: the same direction,
                // pushed out by most of a spread.
                None if habits.suburban => {
                    let r = (dn * dn + de * de).sqrt().max(1e-9);
                    let push = 0.7 + r;
                    offset_m(c.lat, c.lng, dn / r * push * spread_m, de / r * push * spread_m)
                }
                None => offset_m(c.lat, c.lng, dn * spread_m, de * spread_m),
            };
            // A store stands on land, in its own country: a spot in the sea, a bay, a lake or
            // across a border is drawn again.
            if !(-85.0..=85.0).contains(&lat) || !g.in_country(lat, lng, country) {
                continue;
            }
            let cell = ((lat * 1000.0).floor() as i64, (lng * 1000.0).floor() as i64);
            let near = (-2..=2).any(|dy| {
                (-2..=2).any(|dx| taken.get(&(cell.0 + dy, cell.1 + dx)).is_some_and(|v| v.iter().any(|&(a, b)| haversine_m(lat, lng, a, b) < MIN_SPACING_M)))
            });
            if !near {
                taken.entry(cell).or_default().push((lat, lng));
                return Some((at, lat, lng));
            }
        }
    }
    None
}

/// Decides which sources saw a store, and how each recorded it.
#[allow(clippy::too_many_arguments)]
fn observe(
    i: u32,
    s: &TrueStore,
    rank: usize,
    brand: &CatalogBrand,
    has_spider: bool,
    cal: &Calibration,
    g: &Gazetteer,
    rng: &mut ChaCha8Rng,
    out: &mut Vec<Sighting>,
) {
    let long_tail = rank >= cal.verified_brands;
    let undercounted = matches!(s.country.as_str(), "CN" | "KR");
    // A convenience chain in Japan, whatever its main NSI entry is (7-Eleven's is fuel).
    let jp_konbini = s.country == "JP" && brand.categories.iter().any(|c| c == "shop/convenience");
    let region = if undercounted { cal.undercount_factor } else { 1.0 };
    let p = |base: f64| if long_tail { 0.0 } else { base * region };
    // OpenStreetMap's share where isOsmComplete measures the chain (7-Eleven Japan 0.68,
    // Dollar General 0.55, CVS 0.92), else the Japanese konbini's or everyone's typical share.
    let osm = brand.osm_share_in(&s.country).unwrap_or(if jp_konbini { cal.osm_jp_konbini } else { cal.osm_coverage });
    // AllThePlaces harvests a chain where a spider runs: a chain whose spiders are all one
    // country's or another's is scraped in those countries only (Carrefour in France, not in
    // Poland); one that a spider of several countries names, anywhere it trades.
    let scraped = brand.scraped_in(&s.country);
    // The contract's Japanese limit is about store locators: a konbini chain whose locator
    // AllThePlaces has not harvested (Daily Yamazaki, Seicomart) rests on the community map and
    // the places datasets, which cover Japan's cities as they cover others'. One whose locator
    // it harvests (7-Eleven since September 2026, FamilyMart, Lawson, Ministop) is scraped
    // there as chains are anywhere.
    let spider_recall = if jp_konbini && scraped != Some(true) { 0.05 } else { cal.atp_coverage };
    let (p_ov, p_fsq) = (p(cal.overture_coverage(rank)), p(cal.fsq_coverage));
    let p_osm = if long_tail { cal.osm_long_tail } else { osm * region };
    // No spider, no AllThePlaces row, in Japan as anywhere.
    let p_atp = if has_spider && scraped != Some(false) { p(spider_recall) } else { 0.0 };
    let base = crate::catalog::store_name(&brand.name);
    let suffix = match s.kind {
        Kind::Full => String::new(),
        Kind::Small => format!(" {}", brand.small_format.unwrap_or("Express")),
        Kind::Pickup => " Pickup".into(),
        Kind::Studio => " Studio".into(),
    };
    let city = super::town::name(&g.cities[s.city as usize]);
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
            SourceType::Fsq => {
                if rng.random::<f64>() < 0.03 {
                    30.0
                } else {
                    10.0
                }
            }
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
            SourceType::Fsq if r < 0.3 => format!("{base}{suffix} - {}", s.address.line),
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
