//! Stores stand on land: the land mask against the country index (two ways of asking the same
//! borders, one a grid sweep, the other a ray cast over an R-tree), and the synthetic world's
//! biggest brands, every true store and every source's pin, measured from the coast.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use storemap_ingest::world::Generator;

use crate::common::{land, reference};

#[test]
fn the_land_mask_agrees_with_the_country_index_everywhere_and_along_coasts() {
    let (r, mask) = (reference(), land());
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let (mut points, mut on_land, mut near_cities) = (0, 0, 0);
    // Anywhere between the Antarctic and the Arctic seas.
    for _ in 0..100_000 {
        let (lat, lng) = (rng.random_range(-60.0..75.0), rng.random_range(-180.0..180.0));
        let inside = r.countries.inside(lat, lng);
        assert_eq!(mask.is_land(lat, lng), inside.is_some(), "({lat}, {lng}): the index says {inside:?}");
        points += 1;
        on_land += inside.is_some() as u32;
    }
    // Within 15 km of towns, where most coasts and most stores are.
    for _ in 0..100_000 {
        let c = &r.cities[rng.random_range(0..r.cities.len())];
        let (lat, lng) = (c.lat + rng.random_range(-0.13..0.13), c.lng + rng.random_range(-0.13..0.13));
        let inside = r.countries.inside(lat, lng);
        assert_eq!(mask.is_land(lat, lng), inside.is_some(), "({lat}, {lng}) near {}: the index says {inside:?}", c.name);
        near_cities += inside.is_none() as u32;
    }
    assert_eq!(points, 100_000);
    // A third of the globe's surface between those latitudes is land; some towns are on coasts.
    assert!((25_000..40_000).contains(&on_land), "{on_land} of 100,000 random points on land");
    assert!(near_cities > 1_000, "only {near_cities} points near towns at sea: the sample misses the coasts");
}

/// The measure: the biggest brands' rows more than 2 km from land, and the farthest.
#[test]
fn the_biggest_brands_stores_and_pins_stand_on_land() {
    let r = reference();
    let mask = land();
    let gen = Generator::new(&r.catalog, &r.cities, &r.zips, mask, 0.1, 7);
    let (mut stores, mut pins, mut beyond_2, mut farthest) = (0u64, 0u64, 0u64, 0f64);
    for rank in 0..60 {
        let w = gen.brand(rank);
        for s in &w.stores {
            assert!(mask.is_land(s.lat, s.lng), "{} store {} at ({}, {}) is at sea", r.catalog.brands[rank].name, s.number, s.lat, s.lng);
        }
        stores += w.stores.len() as u64;
        for p in &w.sightings {
            let d = mask.distance_to_land_m(p.lat, p.lng, 50_000.0).unwrap_or(50_000.0);
            beyond_2 += (d > 2_000.0) as u64;
            farthest = farthest.max(d);
        }
        pins += w.sightings.len() as u64;
    }
    assert!(stores > 50_000, "only {stores} stores in the 60 biggest brands at scale 0.1");
    assert!((beyond_2 as f64) <= 0.005 * pins as f64, "{beyond_2} of {pins} pins more than 2 km from land");
    assert!(farthest <= 10_000.0, "a pin {farthest:.0} m from land");
}
