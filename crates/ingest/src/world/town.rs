//! The town a store's address names. GeoNames lists many cities' districts as places of their
//! own ("Marseille 08", "Budapest XI. kerület", "Zürich (Kreis 11) / Oerlikon", Berlin's
//! Neukölln, Bucharest's "Sector 3", Barcelona's Eixample), and the world places stores in them
//! by their people; but an address there names the city (13008 Marseille, 1117 Budapest, 8050
//! Zürich, 12043 Berlin), and so does a `city` filter that asks for Marseille. The district
//! stays the store's place: its postcode and phone area are the district's.
//!
//! The reference gives a section of a city its city (`City::town`, from GeoNames' feature
//! codes); the rules here cover the districts GeoNames files as places of another kind
//! (Marseille's arrondissements are seats of fifth-order divisions, PPLA5), Zürich's quarters,
//! which carry their municipality in their names, and the city-states, whose every place is the
//! city.

use super::brand::TrueStore;
use crate::reference::City;

/// First-level regions that are one city, whose every place is one of its districts, with
/// the city's name as the gazetteer has it: (country, region, city).
/// Mexico City's boroughs (Iztapalapa, Coyoacán) are places of their own in GeoNames, as
/// Berlin's are; its addresses and the sources' rows name the city (Ciudad de México, CDMX).
const CITY_REGIONS: [(&str, &str, &str); 7] = [
    ("DE", "BE", "Berlin"),
    ("DE", "HH", "Hamburg"),
    ("AT", "9", "Wien"),
    ("CZ", "10", "Praha"),
    ("HU", "BU", "Budapest"),
    ("RO", "B", "București"),
    ("MX", "CMX", "Ciudad de México"),
];

/// The name an address in `place` gives its town.
pub fn name(place: &City) -> &str {
    let (country, region) = (place.country.as_str(), place.admin1.as_str());
    if let Some(&(_, _, city)) = CITY_REGIONS.iter().find(|&&(c, r, _)| c == country && r == region) {
        return city;
    }
    // Zürich's statistical quarters name their municipality themselves.
    if country == "CH" && (place.name.contains(" / ") || place.name.contains(" (Kreis ")) {
        return swiss_town(&place.name);
    }
    // A section's city may itself be a district by name (Sainte-Marguerite's is "Marseille 09").
    let own = if place.town.is_empty() { &place.name } else { &place.town };
    match super::postcode::city_of_quarter(country, own) {
        Some(city) => city,
        // The city found for a section may be such a quarter itself (Volketswil / Volketswil (Dorf)).
        None if country == "CH" => swiss_town(own),
        None => own,
    }
}

/// The name a store's address gives its town: the town the store was given where the place's
/// own name is not it (an American ZIP's city, [`super::places::Gazetteer::address_town`]),
/// else its place's ([`name`]).
pub fn of_store<'a>(place: &'a City, store: &'a TrueStore) -> &'a str {
    store.town.as_deref().unwrap_or_else(|| name(place))
}

/// Zürich's cantonal statistics name a municipality's quarters "Kloten / Holberg", and the
/// two cities' districts "Zürich (Kreis 11)" and, in Winterthur, after their old villages
/// ("Oberwinterthur (Kreis 2)", "Töss (Kreis 4)"): all within their city's postcodes and name.
fn swiss_town(name: &str) -> &str {
    let municipality = name.split_once(" / ").map_or(name, |(m, _)| m);
    match municipality.split_once(" (Kreis ") {
        Some(("Zürich", _)) => "Zürich",
        Some(_) => "Winterthur",
        None => municipality,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(name: &str, country: &str, admin1: &str, town: &str) -> City {
        City { town: town.into(), ..place(name, country, admin1) }
    }

    /// A section of a city, which the reference gives its city, is written as that city, and as
    /// the city's city where that is a district by name.
    #[test]
    fn a_section_is_written_as_its_city() {
        assert_eq!(name(&section("Eixample", "ES", "CT", "Barcelona")), "Barcelona");
        assert_eq!(name(&section("Sainte-Marguerite", "FR", "PAC", "Marseille 09")), "Marseille");
        // A Zürich quarter's own name wins over a town the reference found for it next door.
        assert_eq!(name(&section("Zürich (Kreis 12) / Hirzenbach", "CH", "ZH", "Wallisellen")), "Zürich");
        assert_eq!(name(&section("Neftenbach / Dorf Neftenbach", "CH", "ZH", "")), "Neftenbach");
        assert_eq!(name(&section("Hegnau", "CH", "ZH", "Volketswil / Volketswil (Dorf)")), "Volketswil");
        assert_eq!(name(&section("Brixton", "GB", "ENG", "")), "Brixton");
    }

    fn place(name: &str, country: &str, admin1: &str) -> City {
        City::place(name, country, admin1, 0.0, 0.0)
    }

    #[test]
    fn a_citys_districts_are_written_as_the_city() {
        for (place_name, country, admin1, town) in [
            ("Marseille 08", "FR", "PAC", "Marseille"),
            ("Marseille Endoume", "FR", "PAC", "Marseille"),
            ("Marseille", "FR", "PAC", "Marseille"),
            ("Neukölln", "DE", "BE", "Berlin"),
            ("Hamburg-Nord", "DE", "HH", "Hamburg"),
            ("Favoriten", "AT", "9", "Wien"),
            ("Karlín", "CZ", "10", "Praha"),
            ("Budapest XI. kerület", "HU", "BU", "Budapest"),
            ("Sector 3", "RO", "B", "București"),
            ("Iztapalapa", "MX", "CMX", "Ciudad de México"),
            ("Zürich (Kreis 11) / Oerlikon", "CH", "ZH", "Zürich"),
            ("Zürich (Kreis 3)", "CH", "ZH", "Zürich"),
            ("Oberwinterthur (Kreis 2) / Hegi", "CH", "ZH", "Winterthur"),
            ("Kloten / Holberg", "CH", "ZH", "Kloten"),
            // Towns of their own keep their names, even beside a bigger namesake.
            ("Allauch", "FR", "PAC", "Allauch"),
            ("Marseillan", "FR", "OCC", "Marseillan"),
            ("Miami Beach", "US", "FL", "Miami Beach"),
            ("Potsdam", "DE", "BB", "Potsdam"),
            ("Bremerhaven", "DE", "HB", "Bremerhaven"),
            ("Wangen an der Aare", "CH", "BE", "Wangen an der Aare"),
            ("Sector 3", "MD", "C", "Sector 3"),
            ("Ciudad Nezahualcóyotl", "MX", "MEX", "Ciudad Nezahualcóyotl"),
        ] {
            assert_eq!(name(&place(place_name, country, admin1)), town, "{place_name}, {country}-{admin1}");
        }
    }
}
