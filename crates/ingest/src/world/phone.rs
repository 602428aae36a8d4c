//! Phone numbers that cannot ring anyone: the ranges regulators keep for fiction where the
//! country has them (North America's 555-0100 to 555-0199; Ofcom's drama numbers in Britain,
//! by city; ARCEP's numbers for fiction in France, by region; ACMA's 5550 range in Australia,
//! by state), and elsewhere the country's calling code and made-up digits.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::reference::City;

/// Ofcom's drama numbers, which are never allocated to anyone: (town, the number before its
/// last three digits, in international form). A town without a range of its own takes the
/// one with no area (01632 960xxx).
const BRITISH_DRAMA: [(&str, &str); 17] = [
    ("London", "20 7946 0"),
    ("Birmingham", "121 496 0"),
    ("Edinburgh", "131 496 0"),
    ("Glasgow", "141 496 0"),
    ("Liverpool", "151 496 0"),
    ("Manchester", "161 496 0"),
    ("Leeds", "113 496 0"),
    ("Sheffield", "114 496 0"),
    ("Nottingham", "115 496 0"),
    ("Leicester", "116 496 0"),
    ("Bristol", "117 496 0"),
    ("Reading", "118 496 0"),
    ("Newcastle upon Tyne", "191 498 0"),
    ("Sunderland", "191 498 0"),
    ("Belfast", "28 9018 0"),
    ("Cardiff", "29 2018 0"),
    ("", "1632 960"),
];

/// ARCEP's numbers for fiction, one block of each geographic zone: the zone's digit and the
/// number's next four.
const FRENCH_FICTION: [(char, &str); 5] = [('1', "99 00"), ('2', "61 91"), ('3', "53 01"), ('4', "65 71"), ('5', "36 49")];

/// France's geographic zone for a town of a région (the reference's ISO 3166-2 codes) and, in
/// Occitanie, which two zones share, of a département (its postal area's first two digits):
/// 01 Paris's région, 02 the north-west, 03 the north-east, 04 the south-east with Languedoc
/// (Aude, Gard, Hérault, Lozère, Pyrénées-Orientales), 05 the south-west with Midi-Pyrénées.
fn french_zone(region: &str, area: Option<&str>) -> char {
    match region {
        "IDF" => '1',
        "BRE" | "NOR" | "PDL" | "CVL" => '2',
        "HDF" | "GES" | "BFC" => '3',
        "OCC" if area.is_some_and(|a| ["11", "30", "34", "48", "66"].iter().any(|d| a.starts_with(d))) => '4',
        "ARA" | "PAC" | "20R" => '4',
        _ => '5',
    }
}

/// Australia's area code for a town of a state: 02 New South Wales and the ACT, 03 Victoria
/// and Tasmania, 07 Queensland, 08 the rest.
fn australian_area(region: &str) -> char {
    match region {
        "NSW" | "ACT" => '2',
        "VIC" | "TAS" => '3',
        "QLD" => '7',
        _ => '8',
    }
}

/// Britain's inner London postcode areas: their towns are London's places, whose numbers start
/// 020 whatever GeoNames calls them (Islington, City of Westminster).
const INNER_LONDON: [&str; 8] = ["E", "EC", "N", "NW", "SE", "SW", "W", "WC"];

/// A phone number for a store in `town` of `country`, whose postal area starts `area`
/// ([`super::postcode::PostalAreas::prefix`]). The draws are the first version's (two for
/// every country with a number, so the rest of the world does not move with the ranges).
pub fn phone(country: &str, town: &City, area: Option<&str>, rng: &mut ChaCha8Rng) -> String {
    let code = match country {
        "US" | "CA" | "PR" => {
            return format!("+1 {}-555-01{:02}", rng.random_range(201..990), rng.random_range(0..100));
        }
        "GB" => 44,
        "FR" => 33,
        "DE" => 49,
        "JP" => 81,
        "AU" => 61,
        "ES" => 34,
        "IT" => 39,
        "NL" => 31,
        "MX" => 52,
        "BR" => 55,
        "IN" => 91,
        "CN" => 86,
        "KR" => 82,
        "SE" => 46,
        "CH" => 41,
        "BE" => 32,
        "AT" => 43,
        "PL" => 48,
        "NZ" => 64,
        _ => return String::new(),
    };
    let (a, b): (i32, i32) = (rng.random_range(10..99), rng.random_range(100_000..999_999));
    match country {
        "GB" => {
            let london = area.is_some_and(|a| INNER_LONDON.contains(&a.split(|c: char| !c.is_ascii_uppercase()).next().unwrap_or_default()));
            let named = if london { "London" } else { town.name.as_str() };
            let (_, start) = BRITISH_DRAMA.iter().find(|(t, _)| *t == named).unwrap_or(&BRITISH_DRAMA[16]);
            format!("+44 {start}{:03}", b % 1000)
        }
        "FR" => {
            let zone = french_zone(&town.admin1, area);
            let (_, block) = FRENCH_FICTION.iter().find(|(z, _)| *z == zone).unwrap_or(&FRENCH_FICTION[0]);
            format!("+33 {zone} {block} {:02} {:02}", b % 100, a)
        }
        "AU" => format!("+61 {} 5550 {:04}", australian_area(&town.admin1), b % 10_000),
        _ => format!("+{code} {a} {b}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn town(name: &str, country: &str, admin1: &str, lng: f64) -> City {
        City { geonames_id: 0, name: name.into(), country: country.into(), admin1: admin1.into(), population: 0, lat: 0.0, lng, town: String::new() }
    }

    /// The first version drew two numbers for every country it gave a number: the stream after
    /// a phone is where it was.
    #[test]
    fn a_phone_takes_the_first_versions_draws() {
        for (country, admin1) in [("US", "TX"), ("GB", "ENG"), ("FR", "IDF"), ("AU", "NSW"), ("DE", "BY"), ("ZW", "HA")] {
            for seed in 0..100 {
                let (mut a, mut b) = (ChaCha8Rng::seed_from_u64(seed), ChaCha8Rng::seed_from_u64(seed));
                phone(country, &town("Leeds", country, admin1, 2.0), None, &mut a);
                if country == "US" {
                    let _: i32 = b.random_range(201..990);
                    let _: i32 = b.random_range(0..100);
                } else if country != "ZW" {
                    let _: i32 = b.random_range(10..99);
                    let _: i32 = b.random_range(100_000..999_999);
                }
                assert_eq!(a.random::<u64>(), b.random::<u64>(), "{country}, seed {seed}");
            }
        }
    }

    /// The numbers are in the ranges the regulators publish for fiction, the area each town
    /// really dials: Perpignan and Carcassonne in Occitanie are 04 (Languedoc), Toulouse and
    /// Millau 05 (Midi-Pyrénées); Islington is London's 020.
    #[test]
    fn numbers_are_in_the_ranges_kept_for_fiction() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut call = |country: &str, name: &str, admin1: &str, area: Option<&str>| phone(country, &town(name, country, admin1, 0.0), area, &mut rng);
        for _ in 0..500 {
            let london = call("GB", "London", "ENG", Some("E1-18|N1-22"));
            assert!(london.starts_with("+44 20 7946 0") && london.len() == "+44 20 7946 0123".len(), "{london}");
            let islington = call("GB", "Islington", "ENG", Some("N"));
            assert!(islington.starts_with("+44 20 7946 0"), "{islington}");
            let leeds = call("GB", "Leeds", "ENG", Some("LS"));
            assert!(leeds.starts_with("+44 113 496 0"), "{leeds}");
            let truro = call("GB", "Truro", "ENG", Some("TR"));
            assert!(truro.starts_with("+44 1632 960") && truro.len() == "+44 1632 960123".len(), "{truro}");
            let paris = call("FR", "Paris", "IDF", Some("750"));
            assert!(paris.starts_with("+33 1 99 00 ") && paris.len() == "+33 1 99 00 12 34".len(), "{paris}");
            for (name, area, zone) in
                [("Toulouse", "31", "5 36 49"), ("Millau", "12", "5 36 49"), ("Perpignan", "66", "4 65 71"), ("Carcassonne", "11", "4 65 71")]
            {
                let n = call("FR", name, "OCC", Some(area));
                assert!(n.starts_with(&format!("+33 {zone} ")), "{name}: {n}");
            }
            let lyon = call("FR", "Lyon", "ARA", Some("6900"));
            assert!(lyon.starts_with("+33 4 65 71 "), "{lyon}");
            let sydney = call("AU", "Sydney", "NSW", Some("2"));
            assert!(sydney.starts_with("+61 2 5550 ") && sydney.len() == "+61 2 5550 1234".len(), "{sydney}");
            let perth = call("AU", "Perth", "WA", Some("6"));
            assert!(perth.starts_with("+61 8 5550 "), "{perth}");
            let us = call("US", "Austin", "TX", None);
            assert!(us.contains("-555-01"), "{us}");
        }
    }
}
