//! Codes placed at towns: a postal area or a dialling area at its main town, read by name from
//! the gazetteer, and a town takes the code of the nearest of them. One mechanism for the
//! postcodes' first digits ([`super::postcode`]) and the phone numbers' area codes
//! ([`super::phone`]).

use std::collections::{HashMap, HashSet};

use crate::reference::City;

/// A country's table: (code, its main town as GeoNames names it, or "town, region" where the
/// name stands in several of the country's regions, as Springfield does in the United States).
/// A code may stand at several towns (Mannheim and Ludwigshafen both dial 0621).
pub type Table = &'static [(&'static str, &'static str)];

/// A table's town: its name, and its region where it names one ("" where not).
fn named(town: &str) -> (&str, &str) {
    town.rsplit_once(", ").unwrap_or((town, ""))
}

/// Each table's towns in the gazetteer, by (country, the table's text): the most populous place
/// of that name in that country (Essen in the Ruhr, not the village in Lower Saxony), or in
/// that region where the table names one. A place is found by GeoNames' name too where the
/// reference names it as at home (a table's "Gifu-shi" is the reference's Gifu).
pub(super) fn most_populous<'c>(cities: &'c [City], wanted: &HashSet<(&'static str, &'static str)>) -> HashMap<(&'c str, &'c str), &'c City> {
    // (country, name) -> (region or "", the table's text).
    let mut by_name: HashMap<(&str, &str), Vec<(&str, &'static str)>> = HashMap::new();
    for &(country, town) in wanted {
        let (name, region) = named(town);
        by_name.entry((country, name)).or_default().push((region, town));
    }
    let mut best: HashMap<(&str, &str), &City> = HashMap::new();
    for c in cities {
        let names = std::iter::once(c.name.as_str()).chain((!c.also.is_empty()).then_some(c.also.as_str()));
        for &(region, text) in names.filter_map(|n| by_name.get(&(c.country.as_str(), n))).flatten() {
            if region.is_empty() || region == c.admin1 {
                let slot = best.entry((c.country.as_str(), text)).or_insert(c);
                if c.population > slot.population {
                    *slot = c;
                }
            }
        }
    }
    best
}

fn wanted(tables: &[(&'static str, Table)]) -> HashSet<(&'static str, &'static str)> {
    tables.iter().flat_map(|&(country, table)| table.iter().map(move |&(_, town)| (country, town))).collect()
}

/// The codes of some countries at their towns.
#[derive(Default)]
pub struct AreaTowns {
    /// Each code's town: latitude, longitude, its region, the code.
    by_country: HashMap<&'static str, Vec<(f64, f64, String, &'static str)>>,
}

impl AreaTowns {
    /// The codes whose town the gazetteer has.
    pub fn new(cities: &[City], tables: &[(&'static str, Table)]) -> AreaTowns {
        let best = most_populous(cities, &wanted(tables));
        let mut by_country: HashMap<&'static str, Vec<(f64, f64, String, &'static str)>> = HashMap::new();
        for &(country, table) in tables {
            for &(code, town) in table {
                if let Some(c) = best.get(&(country, town)) {
                    by_country.entry(country).or_default().push((c.lat, c.lng, c.admin1.clone(), code));
                }
            }
        }
        AreaTowns { by_country }
    }

    /// The tables' towns the gazetteer does not have, as "country code town" (a test holds
    /// this empty).
    pub fn missing(cities: &[City], tables: &[(&'static str, Table)]) -> Vec<String> {
        let best = most_populous(cities, &wanted(tables));
        tables
            .iter()
            .flat_map(|&(country, table)| table.iter().map(move |&(code, town)| (country, code, town)))
            .filter(|&(country, _, town)| !best.contains_key(&(country, town)))
            .map(|(country, code, town)| format!("{country} {code} {town}"))
            .collect()
    }

    /// Whether a code stands in `town`'s region.
    pub fn covers(&self, town: &City) -> bool {
        self.by_country.get(town.country.as_str()).is_some_and(|t| t.iter().any(|a| a.2 == town.admin1))
    }

    /// The code of the town nearest `town`; of its own region's towns where `within_region`
    /// and the region has one (so that Gatineau, across the river from Ottawa, is Quebec's J).
    pub fn nearest(&self, town: &City, within_region: bool) -> Option<&'static str> {
        let towns = self.by_country.get(town.country.as_str())?;
        // Near enough to flat across one country: longitude's degrees shrink with latitude.
        let k = town.lat.to_radians().cos();
        let d = |a: &(f64, f64, String, &str)| (a.0 - town.lat).powi(2) + ((a.1 - town.lng) * k).powi(2);
        let bounded = within_region && towns.iter().any(|a| a.2 == town.admin1);
        towns.iter().filter(|a| !bounded || a.2 == town.admin1).min_by(|a, b| d(a).total_cmp(&d(b))).map(|a| a.3)
    }
}
