//! Stores stand on land: the country index (a quarter-degree grid, which is the land mask
//! too) against a direct ray cast over every border edge, and the synthetic world's biggest
//! brands, every true store and every source's pin, measured from the coast.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use storemap_ingest::countries::each_border_ring;
use storemap_ingest::world::Generator;

use crate::common::{land, reference, reference_dir};

/// A bounding box, `[west, south, east, north]`.
type Bbox = [f64; 4];

fn bbox_of<'a>(edges: impl Iterator<Item = &'a [f64; 4]>) -> Bbox {
    edges.fold([f64::MAX, f64::MAX, f64::MIN, f64::MIN], |b, e| {
        [b[0].min(e[0]).min(e[2]), b[1].min(e[1]).min(e[3]), b[2].max(e[0]).max(e[2]), b[3].max(e[1]).max(e[3])]
    })
}

/// Up to 64 edges of a ring, `[x0, y0, x1, y1]` each, with their box.
type Run = (Bbox, Vec<[f64; 4]>);
/// A ring's runs with the ring's box.
type Ring = (Bbox, Vec<Run>);

/// The borders straight from `borders.bin`, each country's rings in runs of up to 64 edges,
/// with a bounding box for each country, ring and run: a test of every edge, with whole
/// countries, rings and runs skipped when the point is outside their box.
struct Direct {
    codes: Vec<String>,
    countries: Vec<(Bbox, Vec<Ring>)>,
}

impl Direct {
    fn load() -> Direct {
        let bin = std::fs::read(reference_dir().join("borders.bin")).expect("borders.bin");
        let mut rings: Vec<(u16, Vec<[f64; 4]>)> = Vec::new();
        let codes = each_border_ring(&bin, |code, ring| {
            let edges = ring.windows(2).filter(|w| w[0] != w[1]).map(|w| [w[0][0] as f64, w[0][1] as f64, w[1][0] as f64, w[1][1] as f64]);
            rings.push((code, edges.collect()));
        })
        .expect("borders.bin parses");
        let mut countries: Vec<(Bbox, Vec<Ring>)> = vec![([f64::MAX, f64::MAX, f64::MIN, f64::MIN], vec![]); codes.len()];
        for (code, edges) in rings.into_iter().filter(|(_, e)| !e.is_empty()) {
            let ring_box = bbox_of(edges.iter());
            let runs = edges.chunks(64).map(|run| (bbox_of(run.iter()), run.to_vec())).collect();
            let c = &mut countries[code as usize];
            c.0 = [c.0[0].min(ring_box[0]), c.0[1].min(ring_box[1]), c.0[2].max(ring_box[2]), c.0[3].max(ring_box[3])];
            c.1.push((ring_box, runs));
        }
        Direct { codes, countries }
    }

    /// Every edge of each country in a box that may hold one within `reach` of the point.
    fn edges_near(&self, lat: f64, lng: f64, reach: [f64; 4]) -> impl Iterator<Item = (u16, &[f64; 4])> {
        let near = move |b: &Bbox| lng >= b[0] - reach[0] && lat >= b[1] - reach[1] && lng <= b[2] + reach[2] && lat <= b[3] + reach[3];
        self.countries.iter().enumerate().filter(move |(_, c)| near(&c.0)).flat_map(move |(code, c)| {
            c.1.iter()
                .filter(move |r| near(&r.0))
                .flat_map(move |r| r.1.iter().filter(move |run| near(&run.0)).flat_map(move |run| run.1.iter().map(move |e| (code as u16, e))))
        })
    }

    /// A ray from the point towards the east, its crossings counted per country; of the
    /// countries crossed an odd number of times, the first listed.
    fn inside(&self, lat: f64, lng: f64) -> Option<&str> {
        let mut odd = vec![false; self.codes.len()];
        // East of the point only: every box whose east side is past it, at its latitude.
        for (code, e) in self.edges_near(lat, lng, [f64::INFINITY, 0.0, 0.0, 0.0]) {
            if (e[1] > lat) != (e[3] > lat) && lng < e[0] + (lat - e[1]) * (e[2] - e[0]) / (e[3] - e[1]) {
                odd[code as usize] ^= true;
            }
        }
        odd.iter().position(|&o| o).map(|i| self.codes[i].as_str())
    }

    /// The country of the nearest edge within `limit` degrees (ties to the first listed).
    fn nearest(&self, lat: f64, lng: f64, limit: f64) -> Option<&str> {
        let mut best: Option<(f64, u16)> = None;
        for (code, e) in self.edges_near(lat, lng, [limit; 4]) {
            // The nearest point of the segment, by its parameter clamped to the ends.
            let (dx, dy) = (e[2] - e[0], e[3] - e[1]);
            let t = ((lng - e[0]) * dx + (lat - e[1]) * dy) / (dx * dx + dy * dy);
            let (x, y) = if t <= 0.0 {
                (e[0], e[1])
            } else if t >= 1.0 {
                (e[2], e[3])
            } else {
                (e[0] + t * dx, e[1] + t * dy)
            };
            let d = (x - lng).powi(2) + (y - lat).powi(2);
            if d <= limit * limit && best.is_none_or(|(bd, bc)| d < bd || (d == bd && code < bc)) {
                best = Some((d, code));
            }
        }
        best.map(|(_, c)| self.codes[c as usize].as_str())
    }
}

#[test]
fn the_country_index_agrees_with_a_direct_ray_cast_everywhere_and_along_coasts() {
    let (r, direct) = (reference(), Direct::load());
    assert_eq!(r.countries.codes(), &direct.codes[..]);
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let (mut on_land, mut near_cities, mut offshore) = (0, 0, 0);
    // Anywhere between the Antarctic and the Arctic seas.
    for _ in 0..20_000 {
        let (lat, lng) = (rng.random_range(-60.0..75.0), rng.random_range(-180.0..180.0));
        let inside = direct.inside(lat, lng);
        assert_eq!(r.countries.inside(lat, lng), inside, "({lat}, {lng})");
        assert_eq!(land().is_land(lat, lng), inside.is_some(), "({lat}, {lng}): the direct test says {inside:?}");
        on_land += inside.is_some() as u32;
    }
    // Within 15 km of towns, where most coasts and most stores are; off the coast, the nearest
    // country within a quarter degree.
    for _ in 0..50_000 {
        let c = &r.cities[rng.random_range(0..r.cities.len())];
        let (lat, lng) = (c.lat + rng.random_range(-0.13..0.13), c.lng + rng.random_range(-0.13..0.13));
        let inside = direct.inside(lat, lng);
        assert_eq!(r.countries.inside(lat, lng), inside, "({lat}, {lng}) near {}", c.name);
        assert_eq!(land().is_land(lat, lng), inside.is_some(), "({lat}, {lng}) near {}", c.name);
        if inside.is_none() {
            near_cities += 1;
            let nearest = direct.nearest(lat, lng, 0.25);
            assert_eq!(r.countries.locate(lat, lng), nearest, "({lat}, {lng}) off {}", c.name);
            offshore += nearest.is_some() as u32;
        }
    }
    // A third of the globe's surface between those latitudes is land; some towns are on coasts.
    assert!((5_000..8_000).contains(&on_land), "{on_land} of 20,000 random points on land");
    assert!(near_cities > 500, "only {near_cities} points near towns at sea: the sample misses the coasts");
    assert!(offshore > 500, "only {offshore} points at sea near a coast");
}

/// The measure: the biggest brands' rows more than 2 km from land, and the farthest.
#[test]
fn the_biggest_brands_stores_and_pins_stand_on_land() {
    let r = reference();
    let mask = land();
    let gen = Generator::new(&r.catalog, &r.cities, &r.zips, mask, 0.1, 7);
    let (mut stores, mut pins, mut beyond_2, mut farthest) = (0u64, 0u64, 0u64, 0f64);
    // A store stands in its own country, as the borders draw it (not a Ciudad Juárez store in
    // El Paso): checked where the borders have a shape of that code.
    let mut abroad: Vec<String> = Vec::new();
    for rank in 0..60 {
        let w = gen.brand(rank);
        for s in &w.stores {
            assert!(mask.is_land(s.lat, s.lng), "{} store {} at ({}, {}) is at sea", r.catalog.brands[rank].name, s.number, s.lat, s.lng);
            let inside: Vec<&str> = mask.inside(s.lat, s.lng).ids().iter().map(|&id| r.countries.codes()[id as usize].as_str()).collect();
            if r.countries.knows(&s.country) && !inside.contains(&s.country.as_str()) {
                abroad.push(format!("{} {} in {:?} at ({:.4}, {:.4})", r.catalog.brands[rank].name, s.country, inside, s.lat, s.lng));
            }
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
    assert!(abroad.is_empty(), "{} stores in another country: {:?}", abroad.len(), &abroad[..abroad.len().min(20)]);
    assert!((beyond_2 as f64) <= 0.005 * pins as f64, "{beyond_2} of {pins} pins more than 2 km from land");
    assert!(farthest <= 10_000.0, "a pin {farthest:.0} m from land");
}
