//! Where a region is sparse: few people, so few sources look and a single sighting is weaker
//! evidence. Measured from the gazetteer's city populations on a 0.25-degree grid, so it does
//! not depend on how many stores the dataset happens to hold.

use std::collections::HashMap;

use crate::reference::City;

const CELL_DEG: f64 = 0.25;
/// Fewer people than this in a cell and its eight neighbours (roughly 80 x 80 km at mid
/// latitudes) makes the region sparse.
pub const SPARSE_POPULATION: u64 = 150_000;

pub struct PopulationGrid {
    cells: HashMap<(i32, i32), u64>,
}

fn cell(lat: f64, lng: f64) -> (i32, i32) {
    ((lat / CELL_DEG).floor() as i32, (lng / CELL_DEG).floor() as i32)
}

impl PopulationGrid {
    pub fn new(cities: &[City]) -> PopulationGrid {
        let mut cells: HashMap<(i32, i32), u64> = HashMap::new();
        for c in cities {
            *cells.entry(cell(c.lat, c.lng)).or_default() += c.population;
        }
        PopulationGrid { cells }
    }

    pub fn population_near(&self, lat: f64, lng: f64) -> u64 {
        let (y, x) = cell(lat, lng);
        (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (y + dy, x + dx))).filter_map(|k| self.cells.get(&k)).sum()
    }

    pub fn is_sparse(&self, lat: f64, lng: f64) -> bool {
        self.population_near(lat, lng) < SPARSE_POPULATION
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn city(lat: f64, lng: f64, population: u64) -> City {
        City { geonames_id: 1, population, ..City::place("x", "US", "", lat, lng) }
    }

    #[test]
    fn big_cities_are_dense_and_empty_land_is_sparse() {
        let g = PopulationGrid::new(&[city(41.88, -87.63, 2_700_000), city(45.0, -100.0, 20_000)]);
        assert!(!g.is_sparse(41.9, -87.7));
        // A neighbouring cell still counts the city.
        assert!(!g.is_sparse(41.88 + 0.3, -87.63));
        assert!(g.is_sparse(45.0, -100.0));
        assert!(g.is_sparse(0.0, -140.0));
    }
}
