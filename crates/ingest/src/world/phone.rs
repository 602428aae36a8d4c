//! Phone numbers that cannot ring anyone: the ranges regulators keep for fiction where the
//! country has them (North America's 555-0100 to 555-0199; Ofcom's drama numbers in Britain,
//! by city; ARCEP's numbers for fiction in France, by region; ACMA's 5550 range in Australia,
//! by state), and elsewhere the country's calling code, the area code its big cities dial and
//! made-up digits, as many as the country's numbers have.

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

/// How many digits follow the calling code in a city's landline number (area code and
/// subscriber number together), where the country fixes it: Germany's 030 1234 5678 and 0711
/// 123 4567 are both ten.
const NATIONAL_DIGITS: [(&str, usize); 15] = [
    ("DE", 10),
    ("JP", 9),
    ("ES", 9),
    ("IT", 10),
    ("NL", 9),
    ("MX", 10),
    ("BR", 10),
    ("IN", 10),
    ("KR", 9),
    ("SE", 9),
    ("CH", 9),
    ("BE", 8),
    ("AT", 9),
    ("PL", 9),
    ("NZ", 8),
];

/// Area codes of the big cities, as dialled after the calling code (Italy keeps its 0), by the
/// town an address names ([`super::town::name`]): the national numbering plans' own.
const CITY_AREAS: [(&str, &str, &str); 90] = [
    ("DE", "Berlin", "30"),
    ("DE", "Hamburg", "40"),
    ("DE", "Munich", "89"),
    ("DE", "Köln", "221"),
    ("DE", "Frankfurt am Main", "69"),
    ("DE", "Stuttgart", "711"),
    ("DE", "Düsseldorf", "211"),
    ("DE", "Dortmund", "231"),
    ("DE", "Essen", "201"),
    ("DE", "Leipzig", "341"),
    ("DE", "Bremen", "421"),
    ("DE", "Dresden", "351"),
    ("DE", "Hannover", "511"),
    ("DE", "Nürnberg", "911"),
    ("JP", "Tokyo", "3"),
    ("JP", "Osaka", "6"),
    ("JP", "Yokohama", "45"),
    ("JP", "Nagoya", "52"),
    ("JP", "Sapporo", "11"),
    ("JP", "Kobe", "78"),
    ("JP", "Kyoto", "75"),
    ("JP", "Fukuoka", "92"),
    ("JP", "Kawasaki", "44"),
    ("JP", "Hiroshima", "82"),
    ("JP", "Sendai", "22"),
    ("ES", "Barcelona", "93"),
    ("ES", "Valencia", "96"),
    ("ES", "Sevilla", "95"),
    ("ES", "Málaga", "95"),
    ("ES", "Zaragoza", "976"),
    ("ES", "Bilbao", "94"),
    ("IT", "Rome", "06"),
    ("IT", "Milan", "02"),
    ("IT", "Naples", "081"),
    ("IT", "Turin", "011"),
    ("IT", "Palermo", "091"),
    ("IT", "Genoa", "010"),
    ("IT", "Bologna", "051"),
    ("IT", "Florence", "055"),
    ("NL", "Amsterdam", "20"),
    ("NL", "Rotterdam", "10"),
    ("NL", "The Hague", "70"),
    ("NL", "Utrecht", "30"),
    ("NL", "Eindhoven", "40"),
    ("MX", "Guadalajara", "33"),
    ("MX", "Puebla", "222"),
    ("MX", "Tijuana", "664"),
    ("IN", "Mumbai", "22"),
    ("IN", "Kolkata", "33"),
    ("IN", "Chennai", "44"),
    ("IN", "Bengaluru", "80"),
    ("IN", "Hyderabad", "40"),
    ("IN", "Ahmedabad", "79"),
    ("IN", "Pune", "20"),
    ("CN", "Guangzhou", "20"),
    ("CN", "Shenzhen", "755"),
    ("CN", "Chengdu", "28"),
    ("CN", "Wuhan", "27"),
    ("CN", "Nanjing", "25"),
    ("CN", "Hangzhou", "571"),
    ("SE", "Stockholm", "8"),
    ("SE", "Malmö", "40"),
    ("SE", "Uppsala", "18"),
    ("CH", "Zürich", "44"),
    ("CH", "Genève", "22"),
    ("CH", "Basel", "61"),
    ("CH", "Bern", "31"),
    ("CH", "Lausanne", "21"),
    ("CH", "Luzern", "41"),
    ("BE", "Brussels", "2"),
    ("BE", "Antwerpen", "3"),
    ("BE", "Gent", "9"),
    ("BE", "Liège", "4"),
    ("BE", "Charleroi", "71"),
    ("AT", "Vienna", "1"),
    ("AT", "Graz", "316"),
    ("AT", "Linz", "732"),
    ("AT", "Salzburg", "662"),
    ("AT", "Innsbruck", "512"),
    ("PL", "Warsaw", "22"),
    ("PL", "Kraków", "12"),
    ("PL", "Łódź", "42"),
    ("PL", "Wrocław", "71"),
    ("PL", "Poznań", "61"),
    ("PL", "Gdańsk", "58"),
    ("PL", "Szczecin", "91"),
    ("NZ", "Auckland", "9"),
    ("NZ", "Wellington", "4"),
    ("NZ", "Christchurch", "3"),
    ("NZ", "Hamilton", "7"),
];

/// Area codes by first-level region, for a town the city table does not name: Brazil's DDD
/// as each state's capital dials it, South Korea's, one for each province and metropolitan city
/// (Gyeonggi 031, Gangwon 033, Jeju 064), and the capital regions that dial one code (Mexico
/// City 55, Delhi 11, Madrid 91, Beijing 10, Shanghai 21).
const REGION_AREAS: [(&str, &str, &str); 51] = [
    ("BR", "AC", "68"),
    ("BR", "AL", "82"),
    ("BR", "AM", "92"),
    ("BR", "AP", "96"),
    ("BR", "BA", "71"),
    ("BR", "CE", "85"),
    ("BR", "DF", "61"),
    ("BR", "ES", "27"),
    ("BR", "GO", "62"),
    ("BR", "MA", "98"),
    ("BR", "MG", "31"),
    ("BR", "MS", "67"),
    ("BR", "MT", "65"),
    ("BR", "PA", "91"),
    ("BR", "PB", "83"),
    ("BR", "PE", "81"),
    ("BR", "PI", "86"),
    ("BR", "PR", "41"),
    ("BR", "RJ", "21"),
    ("BR", "RN", "84"),
    ("BR", "RO", "69"),
    ("BR", "RR", "95"),
    ("BR", "RS", "51"),
    ("BR", "SC", "48"),
    ("BR", "SE", "79"),
    ("BR", "SP", "11"),
    ("BR", "TO", "63"),
    ("KR", "11", "2"),
    ("KR", "26", "51"),
    ("KR", "27", "53"),
    ("KR", "28", "32"),
    ("KR", "29", "62"),
    ("KR", "30", "42"),
    ("KR", "31", "52"),
    ("KR", "41", "31"),
    ("KR", "42", "33"),
    ("KR", "43", "43"),
    ("KR", "44", "41"),
    ("KR", "45", "63"),
    ("KR", "46", "61"),
    ("KR", "47", "54"),
    ("KR", "48", "55"),
    ("KR", "49", "64"),
    ("KR", "50", "44"),
    ("CN", "BJ", "10"),
    ("CN", "SH", "21"),
    ("CN", "TJ", "22"),
    ("CN", "CQ", "23"),
    ("ES", "MD", "91"),
    ("IN", "DL", "11"),
    ("MX", "CMX", "55"),
];

/// The area code of a town the tables do not name: its region's ([`REGION_AREAS`]), or one of
/// the country's own areas, chosen by the town (so that a town's stores share it): a Swiss,
/// Belgian, Dutch, Swedish, Polish, Japanese or New Zealand town one of the country's areas,
/// none of them a mobile or service prefix; a German, Austrian, Mexican or Indian town three
/// digits, not starting as mobile numbers do; an Italian one with its 0; a Chinese city's three.
fn town_area(country: &str, town: &City) -> String {
    const SWISS: [&str; 21] = ["21", "22", "24", "26", "27", "31", "32", "33", "34", "41", "43", "44", "52", "55", "56", "58", "61", "62", "71", "81", "91"];
    const BELGIAN: [&str; 14] = ["10", "11", "12", "13", "14", "15", "16", "19", "50", "51", "56", "58", "60", "89"];
    const NEW_ZEALAND: [&str; 5] = ["3", "4", "6", "7", "9"];
    const DUTCH: [&str; 30] = [
        "10", "13", "15", "20", "23", "24", "26", "30", "33", "35", "36", "38", "40", "43", "45", "46", "50", "53", "55", "58", "70", "71", "72", "73", "74",
        "75", "76", "77", "78", "79",
    ];
    const SWEDISH: [&str; 20] = ["11", "13", "16", "18", "19", "21", "23", "26", "31", "33", "35", "36", "40", "42", "44", "46", "54", "60", "63", "90"];
    const POLISH: [&str; 43] = [
        "12", "13", "14", "15", "16", "17", "18", "23", "24", "25", "29", "32", "33", "34", "41", "43", "44", "46", "48", "52", "54", "55", "56", "59", "62",
        "63", "65", "67", "68", "74", "75", "76", "77", "81", "82", "83", "84", "85", "86", "87", "89", "94", "95",
    ];
    const JAPANESE: [&str; 44] = [
        "11", "17", "18", "19", "22", "23", "24", "25", "26", "27", "28", "29", "42", "43", "44", "45", "46", "47", "48", "52", "53", "54", "55", "58", "59",
        "75", "76", "77", "78", "79", "82", "83", "84", "86", "87", "88", "89", "92", "93", "95", "96", "97", "98", "99",
    ];
    if let Some((_, _, area)) = REGION_AREAS.iter().find(|&&(c, r, _)| c == country && r == town.admin1) {
        return area.to_string();
    }
    let k = town.geonames_id as usize;
    let pick = |list: &[&str]| list[k % list.len()].to_string();
    // Two digits of the town's own, 10-99.
    let a = 10 + k % 90;
    match country {
        // 015-017 are German mobile numbers, 065-069 Austrian ones, and so on: first digits 2-5.
        "DE" | "MX" | "IN" | "AT" => format!("{}{a}", 2 + k % 4),
        "CN" => format!("{}{a}", 3 + k % 7),
        "IT" => format!("0{}{}", [3, 4, 5, 7, 8, 9][k % 6], k % 10),
        "ES" => format!("9{a}"),
        "CH" => pick(&SWISS),
        "BE" => pick(&BELGIAN),
        "NZ" => pick(&NEW_ZEALAND),
        "NL" => pick(&DUTCH),
        "SE" => pick(&SWEDISH),
        "PL" => pick(&POLISH),
        "JP" => pick(&JAPANESE),
        _ => a.to_string(),
    }
}

/// A subscriber number of `n` digits made from the drawn numbers (no draw of its own), not
/// starting with 0 or 1, which begin trunk, service and mobile numbers; written in groups as
/// the countries mostly do (1234 5678, 123 4567, 123 456).
fn subscriber(a: i32, b: i32, n: usize) -> String {
    let digits = format!("{}{b:06}{a:02}{b:06}", 2 + b % 8);
    let d = &digits[..n.min(digits.len())];
    match d.len() {
        8 => format!("{} {}", &d[..4], &d[4..]),
        7 => format!("{} {}", &d[..3], &d[3..]),
        6 => format!("{} {}", &d[..3], &d[3..]),
        _ => d.to_string(),
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
            let named = if london { "London" } else { super::town::name(town) };
            let (_, start) = BRITISH_DRAMA.iter().find(|(t, _)| *t == named).unwrap_or(&BRITISH_DRAMA[16]);
            format!("+44 {start}{:03}", b % 1000)
        }
        "FR" => {
            let zone = french_zone(&town.admin1, area);
            let (_, block) = FRENCH_FICTION.iter().find(|(z, _)| *z == zone).unwrap_or(&FRENCH_FICTION[0]);
            format!("+33 {zone} {block} {:02} {:02}", b % 100, a)
        }
        "AU" => format!("+61 {} 5550 {:04}", australian_area(&town.admin1), b % 10_000),
        _ => {
            let named = super::town::name(town);
            let area =
                CITY_AREAS.iter().find(|&&(c, t, _)| c == country && t == named).map_or_else(|| town_area(country, town), |(_, _, area)| area.to_string());
            // China's subscriber numbers are eight digits whatever the area's length.
            let digits = if country == "CN" { area.len() + 8 } else { NATIONAL_DIGITS.iter().find(|(c, _)| *c == country).map_or(area.len() + 6, |&(_, n)| n) };
            format!("+{code} {area} {}", subscriber(a, b, digits.saturating_sub(area.len())))
        }
    }
}

/// The towns of [`CITY_AREAS`] the gazetteer does not have by that name (a test holds this
/// empty).
pub fn missing_area_towns(cities: &[City]) -> Vec<String> {
    let have: std::collections::HashSet<(&str, &str)> = cities.iter().map(|c| (c.country.as_str(), c.name.as_str())).collect();
    CITY_AREAS.iter().filter(|&&(c, t, _)| !have.contains(&(c, t))).map(|(c, t, _)| format!("{c} {t}")).collect()
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

    /// A town the tables do not name keeps one area for all its stores, and it is one of its
    /// country's geographic areas, never a mobile or service prefix: Japan's 070-090 and 050,
    /// the Netherlands' 06 and 08x, Poland's 50-53 and 60s-70s mobiles, Austria's 065x-069x.
    #[test]
    fn an_unnamed_towns_stores_share_one_geographic_area() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for id in 0..400u64 {
            for (country, mobile) in [
                ("JP", &["70", "80", "90", "50", "20", "60", "10"][..]),
                ("NL", &["6", "84", "85", "87", "88", "90", "14"][..]),
                ("PL", &["45", "50", "51", "53", "57", "60", "66", "69", "70", "72", "73", "78", "79", "80", "88"][..]),
                ("AT", &["65", "66", "67", "68", "69"][..]),
                ("SE", &["70", "72", "73", "76", "79", "10", "20", "77"][..]),
            ] {
                let place = City { geonames_id: id, ..town("Somewhere", country, "ZZ", 0.0) };
                let area = |n: String| n.split(' ').nth(1).unwrap_or_default().to_string();
                let (first, second) = (area(phone(country, &place, None, &mut rng)), area(phone(country, &place, None, &mut rng)));
                assert_eq!(first, second, "{country} town {id}");
                assert!(!mobile.iter().any(|m| first.starts_with(m)), "{country} town {id}: {first}");
            }
        }
    }

    /// Elsewhere a number has the big city's area code and as many digits as the country's
    /// numbers: Berlin 030 and eight more, Tokyo 03 and eight, Milan 02 with its 0, Seoul 02,
    /// Beijing 010 and eight, São Paulo 11; a town the table does not name has its country's
    /// length too (a Swiss town one of the country's areas, a Brazilian one its state's).
    #[test]
    fn numbers_have_the_citys_area_and_the_countrys_length() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let digits = |n: &str| n.chars().filter(char::is_ascii_digit).count();
        for _ in 0..300 {
            for (country, name, admin1, start, len) in [
                ("DE", "Berlin", "BE", "+49 30 ", 12),
                ("DE", "Neukölln", "BE", "+49 30 ", 12),
                ("DE", "Köln", "NW", "+49 221 ", 12),
                ("DE", "Passau", "BY", "+49 ", 12),
                ("JP", "Tokyo", "13", "+81 3 ", 11),
                ("IT", "Milan", "25", "+39 02 ", 12),
                ("ES", "Madrid", "MD", "+34 91 ", 11),
                ("KR", "Seoul", "11", "+82 2 ", 11),
                ("CN", "Beijing", "BJ", "+86 10 ", 12),
                ("CN", "Luoyang", "HA", "+86 ", 13),
                ("BR", "São Paulo", "SP", "+55 11 ", 12),
                ("BR", "Feira de Santana", "BA", "+55 71 ", 12),
                ("KR", "Suwon", "41", "+82 31 ", 11),
                ("KR", "Jeju City", "49", "+82 64 ", 11),
                ("MX", "Mexico City", "CMX", "+52 55 ", 12),
                ("IN", "Mumbai", "MH", "+91 22 ", 12),
                ("CH", "Zürich", "ZH", "+41 44 ", 11),
                ("AT", "Vienna", "9", "+43 1 ", 11),
                ("PL", "Warsaw", "MZ", "+48 22 ", 11),
                ("NZ", "Auckland", "AUK", "+64 9 ", 10),
                ("BE", "Brussels", "BRU", "+32 2 ", 10),
            ] {
                let n = phone(country, &town(name, country, admin1, 0.0), None, &mut rng);
                assert!(n.starts_with(start) && digits(&n) == len, "{name}, {country}: {n}");
                // The subscriber number starts as no trunk, service or mobile number does.
                let subscriber = n[start.len()..].trim_start();
                let subscriber = if start == "+49 " || start == "+86 " { subscriber.split_once(' ').map_or("", |(_, s)| s) } else { subscriber };
                assert!(!subscriber.starts_with(['0', '1']), "{name}, {country}: {n}");
            }
            // Mexico City's other places dial 55 too (the region's one code).
            let iztapalapa = phone("MX", &town("Iztapalapa", "MX", "CMX", 0.0), None, &mut rng);
            assert!(iztapalapa.starts_with("+52 55 ") && digits(&iztapalapa) == 12, "{iztapalapa}");
            let swiss = phone("CH", &town("Laupen", "CH", "BE", 0.0), None, &mut rng);
            let area = swiss["+41 ".len()..].split(' ').next().unwrap_or_default();
            assert!(
                ["21", "22", "24", "26", "27", "31", "32", "33", "34", "41", "43", "44", "52", "55", "56", "58", "61", "62", "71", "81", "91"].contains(&area),
                "{swiss}"
            );
        }
    }
}
