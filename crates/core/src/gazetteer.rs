//! The gazetteer a radius filter's `city` is resolved against: about 130,000 cities, held as
//! columns over one string pool and a sorted table of name hashes. As records (three `String`s
//! a city) with a map from each folded name to its cities it took about 30 MB of every node,
//! for a lookup a few requests make.

use crate::names::fold_case;
use crate::records::CityRecord;
use crate::strings::{fnv1a, StringPool, StringPoolBuilder};

#[derive(Debug, Default)]
pub(crate) struct Gazetteer {
    /// Names, countries and admin1 codes, each a pool id (repeated codes are stored once).
    text: StringPool,
    name: Vec<u32>,
    country: Vec<u32>,
    admin1: Vec<u32>,
    lat: Vec<f64>,
    lng: Vec<f64>,
    population: Vec<u64>,
    /// Each city's other name (`CityRecord::also`), a pool id; the empty string's for most.
    also: Vec<u32>,
    /// (hash of a folded name, city), sorted: a name's cities are one run, in city order. A
    /// city with two names is in two runs.
    by_name: Vec<(u64, u32)>,
}

impl Gazetteer {
    pub(crate) fn new(cities: &[CityRecord]) -> Gazetteer {
        let mut pool = StringPoolBuilder::default();
        let mut g = Gazetteer::default();
        for (i, c) in cities.iter().enumerate() {
            g.name.push(pool.intern(&c.name));
            g.country.push(pool.intern(&c.country));
            g.admin1.push(pool.intern(&c.admin1));
            g.lat.push(c.lat);
            g.lng.push(c.lng);
            g.population.push(c.population);
            g.also.push(pool.intern(&c.also));
            g.by_name.push((fnv1a(&fold_case(&c.name)), i as u32));
            if !c.also.is_empty() && fold_case(&c.also) != fold_case(&c.name) {
                g.by_name.push((fnv1a(&fold_case(&c.also)), i as u32));
            }
        }
        g.by_name.sort_unstable();
        g.text = pool.finish();
        g
    }

    pub(crate) fn len(&self) -> usize {
        self.name.len()
    }

    pub(crate) fn record(&self, i: usize) -> CityRecord {
        CityRecord {
            name: self.text.get(self.name[i]).to_string(),
            country: self.text.get(self.country[i]).to_string(),
            admin1: self.text.get(self.admin1[i]).to_string(),
            lat: self.lat[i],
            lng: self.lng[i],
            population: self.population[i],
            also: self.also(i).to_string(),
        }
    }

    /// The cities whose folded name, or other name, is `folded`, in city order.
    pub(crate) fn named<'a>(&'a self, folded: &'a str) -> impl Iterator<Item = usize> + 'a {
        let h = fnv1a(folded);
        let start = self.by_name.partition_point(|&(k, _)| k < h);
        self.by_name[start..]
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .map(|&(_, i)| i as usize)
            // A hash shared by two names: only the city whose name folds to the query.
            .filter(move |&i| fold_case(self.name(i)) == folded || (!self.also(i).is_empty() && fold_case(self.also(i)) == folded))
    }

    pub(crate) fn name(&self, i: usize) -> &str {
        self.text.get(self.name[i])
    }
    pub(crate) fn country(&self, i: usize) -> &str {
        self.text.get(self.country[i])
    }
    pub(crate) fn also(&self, i: usize) -> &str {
        self.text.get(self.also[i])
    }
    pub(crate) fn admin1(&self, i: usize) -> &str {
        self.text.get(self.admin1[i])
    }
    pub(crate) fn lat_lng(&self, i: usize) -> (f64, f64) {
        (self.lat[i], self.lng[i])
    }
    pub(crate) fn population(&self, i: usize) -> u64 {
        self.population[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn city(name: &str, country: &str, admin1: &str, population: u64) -> CityRecord {
        CityRecord {
            name: name.into(),
            country: country.into(),
            admin1: admin1.into(),
            lat: population as f64 / 1e6,
            lng: -1.5,
            population,
            also: String::new(),
        }
    }

    #[test]
    fn a_city_is_found_by_either_of_its_names_once() {
        let munich = CityRecord { also: "Munich".into(), ..city("München", "DE", "BY", 1_260_000) };
        let cities = vec![city("Munich", "US", "ND", 200), munich.clone(), CityRecord { also: "Roma".into(), ..city("Roma", "IT", "62", 2_300_000) }];
        let g = Gazetteer::new(&cities);
        assert_eq!(g.named("munich").collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(g.named("münchen").collect::<Vec<_>>(), vec![1]);
        // A second name that is the first is indexed once.
        assert_eq!(g.named("roma").collect::<Vec<_>>(), vec![2]);
        assert_eq!(g.record(1), munich);
        assert_eq!((g.also(0), g.also(1)), ("", "Munich"));
    }

    #[test]
    fn records_come_back_as_given_and_names_find_their_cities_in_order() {
        let cities = vec![
            city("Springfield", "US", "IL", 114_000),
            city("Paris", "FR", "IDF", 2_100_000),
            city("SPRINGFIELD", "US", "MA", 155_000),
            city("Łódź", "PL", "10", 670_000),
            city("Paris", "US", "TX", 25_000),
        ];
        let g = Gazetteer::new(&cities);
        assert_eq!(g.len(), 5);
        assert_eq!((0..g.len()).map(|i| g.record(i)).collect::<Vec<_>>(), cities);
        assert_eq!(g.named("springfield").collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(g.named("paris").collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(g.named("łódź").collect::<Vec<_>>(), vec![3]);
        assert_eq!(g.named("lodz").count(), 0);
        assert_eq!(g.named("").count(), 0);
        assert_eq!((g.country(4), g.admin1(4), g.population(4), g.lat_lng(4)), ("US", "TX", 25_000, (0.025, -1.5)));
    }

    #[test]
    fn a_shared_hash_still_finds_only_the_name_asked_for() {
        // Two different names under one hash (the table is keyed by hash alone); the check
        // against the folded name keeps them apart.
        let mut g = Gazetteer::new(&[city("Alpha", "AA", "1", 1), city("Beta", "BB", "2", 2)]);
        let h = fnv1a("alpha");
        g.by_name = vec![(h, 0), (h, 1)];
        assert_eq!(g.named("alpha").collect::<Vec<_>>(), vec![0]);
        assert_eq!(g.named("beta").count(), 0, "beta's own hash has no entry now");
    }
}
