//! The city a US address gives. The Postal Service files every ZIP under one city (Brooklyn for
//! 11203, Las Vegas for 89109) and accepts a few other names there (Bloomington for 55420,
//! which it files under Minneapolis; Lakewood for Denver's 80226). A neighbourhood, a borough
//! or an unincorporated place that GeoNames lists as a town of its own is none of them: an
//! address in East Flatbush reads "Brooklyn, NY 11203", one in Paradise "Las Vegas, NV 89109",
//! and so do store locators and the community map. So a store keeps its town's name where its
//! ZIP accepts it and takes the ZIP's city where not. The ZIPs' cities are the `zipcodes`
//! crate's (the USPS city-state data).

use std::collections::HashMap;
use std::sync::LazyLock;

/// What the Postal Service files a ZIP under.
struct Filed {
    city: &'static str,
    state: &'static str,
    /// The names it accepts there, the city's among them, in [`key`] form.
    accepted: Vec<String>,
}

static ZIPS: LazyLock<HashMap<&'static str, Filed>> = LazyLock::new(|| {
    zipcodes::database()
        .iter()
        .map(|z| {
            let accepted = std::iter::once(&z.city).chain(&z.acceptable_cities).map(|n| key(n)).collect();
            (z.zip_code.as_str(), Filed { city: z.city.as_str(), state: z.state.as_str(), accepted })
        })
        .collect()
});

/// A name as the comparison sees it: case, accents and punctuation folded, and the
/// abbreviations the Postal Service spells out read as its words ("St. Louis" is its "Saint
/// Louis", "Mc Lean" is McLean, "Winston Salem" Winston-Salem).
pub fn key(name: &str) -> String {
    storemap_core::normalize_name(name)
        .split(' ')
        .map(|w| match w {
            "st" => "saint",
            "ste" => "sainte",
            "ft" => "fort",
            "mt" => "mount",
            w => w,
        })
        .collect()
}

/// The state (or Puerto Rico, "PR") a ZIP's post office is in; `None` for a ZIP the data lacks.
pub fn state(zip: &str) -> Option<&'static str> {
    ZIPS.get(zip).map(|f| f.state)
}

/// Whether the Postal Service accepts the town `town_key` (its name in [`key`] form) as the
/// city of an address at `zip`.
pub fn accepts(zip: &str, town_key: &str) -> bool {
    ZIPS.get(zip).is_some_and(|f| f.accepted.iter().any(|a| a == town_key))
}

/// The city the Postal Service files `zip` under, where it does not accept `town` there (an
/// address in East Flatbush at 11203 names Brooklyn); `None` where it does, or where the data
/// lacks the ZIP. The name is the Postal Service's spelling ("Saint Louis", "Winston Salem",
/// "Mcallen"): [`super::places::Gazetteer::address_town`] writes it as the place spells itself.
pub fn filed_city(zip: &str, town: &str) -> Option<&'static str> {
    ZIPS.get(zip).filter(|f| !f.accepted.contains(&key(town))).map(|f| f.city)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected: the USPS ZIP Code lookup's city for each ZIP and the names it lists as
    /// acceptable there.
    #[test]
    fn an_address_names_the_city_its_zip_accepts() {
        for (zip, town, expected) in [
            // Neighbourhoods, boroughs and unincorporated towns: the ZIP's city.
            ("11203", "East Flatbush", "Brooklyn"),
            ("10027", "Manhattan", "New York"),
            ("10451", "The Bronx", "Bronx"),
            ("89109", "Paradise", "Las Vegas"),
            ("85033", "Maryvale", "Phoenix"),
            ("20001", "Washington, D.C.", "Washington"),
            // Names the Postal Service accepts at the ZIP stay, however the ZIP is filed.
            ("55420", "Bloomington", "Bloomington"),
            ("80226", "Lakewood", "Lakewood"),
            ("11106", "Astoria", "Astoria"),
            ("98004", "Bellevue", "Bellevue"),
            // Spelt otherwise than the Postal Service spells it.
            ("63101", "St. Louis", "St. Louis"),
            ("27101", "Winston-Salem", "Winston-Salem"),
            ("22101", "McLean", "McLean"),
            // A ZIP it does not list keeps the town's name.
            ("00000", "Springfield", "Springfield"),
        ] {
            assert_eq!(filed_city(zip, town).unwrap_or(town), expected, "{town} at {zip}");
        }
        assert_eq!((state("02139"), state("56560"), state("00907"), state("00000")), (Some("MA"), Some("MN"), Some("PR"), None));
        assert!(accepts("02139", &key("Cambridge")) && !accepts("02143", &key("Cambridge")) && accepts("02143", &key("Somerville")));
    }
}
