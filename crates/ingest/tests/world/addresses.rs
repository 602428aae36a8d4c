//! Street addresses in the synthetic world read as the country writes them: no American
//! street names abroad, Swiss streets without ß, German streets that end as German streets do,
//! Japanese addresses as chōme-block-house numbers, and the house number never inside the
//! street (OpenStreetMap's `addr:street` is a name; its number is `addr:housenumber`);
//! postcodes of the big cities in the ranges their postal services give them; and phone
//! numbers with the area codes the numbering plans give the cities.

use std::collections::BTreeMap;

use storemap_ingest::world::postcode::PostalAreas;
use storemap_ingest::world::Generator;

use crate::common::{land, reference};

/// The streets every store used to be on, whatever its country: the tell-tales of an American
/// address (presidents and trees) that a store in Warsaw or Osaka should not carry.
const AMERICAN: [&str; 8] = ["Washington", "Lincoln", "Madison", "Jackson", "Franklin", "Maple", "Cedar", "Elm "];

#[test]
fn addresses_read_as_their_country_writes_them() {
    let r = reference();
    let gen = Generator::new(&r.catalog, &r.cities, &r.zips, land(), 0.25, 7);
    // Chains present in many countries (McDonald's, Starbucks, KFC, Subway, 7-Eleven), and
    // Switzerland's biggest grocer (Coop), so that Geneva has stores whatever the draws.
    // (line, street, number, the town's region) by country
    let mut by_country: BTreeMap<String, Vec<(String, String, String, String)>> = BTreeMap::new();
    // (the store's place, the city it is a section of or nothing, its postcode) in the
    // countries whose postcodes follow the postal areas
    let mut postcodes: Vec<(String, String, String, String)> = Vec::new();
    // (country, the store's place, its region, its phone number)
    let mut phones: Vec<(String, String, String, String)> = Vec::new();
    for qid in ["Q38076", "Q37158", "Q524757", "Q244457", "Q259340", "Q432564"] {
        let rank = r.catalog.brands.iter().position(|b| b.wikidata.as_deref() == Some(qid)).unwrap_or_else(|| panic!("{qid} in the catalog"));
        for s in gen.brand(rank).stores {
            let region = r.cities[s.city as usize].admin1.clone();
            by_country.entry(s.country.clone()).or_default().push((
                s.address.line.clone(),
                s.address.street().to_string(),
                s.address.number().to_string(),
                region,
            ));
            let place = &r.cities[s.city as usize];
            postcodes.push((s.country.clone(), place.name.clone(), place.town.clone(), s.postcode.clone()));
            phones.push((s.country.clone(), place.name.clone(), place.admin1.clone(), s.phone.clone()));
        }
    }
    for must in ["US", "CA", "DE", "CH", "JP", "PL", "FR", "GB", "MX"] {
        assert!(by_country.get(must).is_some_and(|a| a.len() >= 20), "{must}: {:?} stores", by_country.get(must).map(Vec::len));
    }
    for (country, addresses) in &by_country {
        for (line, street, number, region) in addresses {
            assert!(line.contains(street.as_str()) && line.contains(number.as_str()), "{country}: {line:?} ({street:?}, {number:?})");
            assert!(number.starts_with(|c: char| c.is_ascii_digit()), "{country}: {line:?} has number {number:?}");
            let words: Vec<&str> = street.split(' ').collect();
            assert!(
                (words.first() != Some(&number.as_str()) && words.last() != Some(&number.as_str())) || street.chars().any(|c| c.is_ascii_digit()),
                "{country}: the street {street:?} carries the house number {number:?}"
            );
            if !matches!(country.as_str(), "US" | "CA" | "PR" | "GU" | "VI" | "AS" | "MP") {
                assert!(!AMERICAN.iter().any(|a| line.contains(a)), "{country}: an American street, {line:?}");
            }
            match country.as_str() {
                // Quebec writes French streets, the number first with a comma (1234, rue
                // Principale); the rest of Canada English ones.
                "CA" => {
                    let french = ["rue ", "boulevard ", "chemin ", "avenue "].iter().any(|w| street.starts_with(w));
                    assert_eq!(french, region == "QC", "{region}: {line:?}");
                }
                // Switzerland writes "ss" for "ß" (Bahnhofstrasse).
                "CH" => assert!(!line.contains('ß'), "{line:?}"),
                "DE" | "AT" => assert!(
                    ["straße", "weg", "platz", "allee", "ring", "gasse"].iter().any(|w| street.to_lowercase().ends_with(w)),
                    "{country}: {street:?} is no German street"
                ),
                "JP" => assert!(
                    number.split('-').count() == 3 && number.split('-').all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())),
                    "JP: {number:?} is no chōme-block-house number"
                ),
                // A house number in Germany, Poland or France is rarely past a couple of hundred.
                "PL" | "FR" => assert!(number.parse::<u32>().is_ok_and(|n| (1..=200).contains(&n)), "{country}: {line:?}"),
                _ => {}
            }
        }
    }
    // The US keeps its long roads' numbers: some are in the thousands.
    assert!(by_country["US"].iter().any(|(_, _, n, _)| n.len() == 4), "US numbers: {:?}", &by_country["US"][..5]);
    assert!(by_country["CA"].iter().any(|a| a.3 == "QC") && by_country["CA"].iter().any(|a| a.3 != "QC"), "stores in Quebec and beyond");

    // The big cities' postcodes, as their postal services number them: the first digits, or a
    // British code's letters before its district number.
    let ranges: &[(&str, &str, &[&str])] = &[
        ("DE", "Berlin", &["10", "12", "13", "14"]),
        ("DE", "Hamburg", &["20", "21", "22"]),
        ("DE", "München", &["80", "81"]),
        ("DE", "Köln", &["50", "51"]),
        ("DE", "Frankfurt am Main", &["60", "65"]),
        ("FR", "Paris", &["75"]),
        ("FR", "Marseille", &["13"]),
        ("FR", "Lyon", &["69"]),
        ("ES", "Madrid", &["280"]),
        ("ES", "Barcelona", &["080"]),
        ("IT", "Milano", &["201"]),
        ("IT", "Roma", &["001"]),
        ("GB", "London", &["WC", "EC", "N", "NW", "E", "SE", "SW", "W"]),
        ("GB", "Manchester", &["M"]),
        ("GB", "Birmingham", &["B"]),
        ("GB", "Glasgow", &["G"]),
        ("GB", "Edinburgh", &["EH"]),
        ("CA", "Toronto", &["M"]),
        ("CA", "Montréal", &["H"]),
        ("CA", "Vancouver", &["V"]),
        ("CA", "Calgary", &["T"]),
        ("AU", "Sydney", &["2"]),
        ("AU", "Melbourne", &["3"]),
        ("AU", "Brisbane", &["4"]),
        ("AU", "Perth", &["6"]),
        // Correios, SEPOMEX, India Post, Korea Post, China Post and Poczta Polska, by the city
        // or by the state or province: São Paulo's city 01-05 and 08, Fortaleza 60000-60999,
        // Manaus 69000-69099, Mexico City 01-16, Delhi 110, Mumbai 400, Seoul 01-08, Warsaw
        // 00-04.
        ("BR", "São Paulo", &["01", "02", "03", "04", "05", "08"]),
        ("BR", "Rio de Janeiro", &["20", "21", "22", "23"]),
        ("BR", "Brasília", &["70", "71", "72", "73"]),
        ("BR", "Fortaleza", &["60"]),
        ("BR", "Manaus", &["690"]),
        ("MX", "Ciudad de México", &["0", "10", "11", "12", "13", "14", "15", "16"]),
        ("MX", "Guadalajara", &["44"]),
        ("MX", "Tijuana", &["21", "22"]),
        ("IN", "Delhi", &["110"]),
        ("IN", "Mumbai", &["400"]),
        ("IN", "Bengaluru", &["560"]),
        ("KR", "Seoul", &["0"]),
        ("KR", "Busan", &["46", "47", "48", "49"]),
        ("CN", "Beijing", &["10"]),
        ("CN", "Shanghai", &["20"]),
        ("CN", "Guangzhou", &["510"]),
        ("PL", "Warszawa", &["00", "01", "02", "03", "04"]),
        ("PL", "Kraków", &["30", "31"]),
        // Swiss Post, Austrian Post and Magyar Posta by city, canton, state and county.
        ("CH", "Zürich", &["80"]),
        ("CH", "Genève", &["12"]),
        ("AT", "Wien", &["10", "11", "12"]),
        ("HU", "Budapest", &["10", "11", "12"]),
    ];
    // Japan's codes start with three digits in the prefecture's range (Japan Post).
    let japan: [(&str, u32, u32); 5] = [("Tokyo", 100, 208), ("Osaka", 530, 599), ("Sapporo", 40, 99), ("Fukuoka", 800, 839), ("Naha", 900, 909)];
    let (mut seen, mut arrondissements) = (0, 0);
    for (country, town, section_of, code) in &postcodes {
        // A section of Marseille (Le Cabot) is in the city's codes, and in its arrondissement's
        // where the reference names one ("Marseille 09").
        let fr_town = if section_of.is_empty() { town } else { section_of };
        if let Some((_, _, prefixes)) = ranges.iter().find(|(c, t, _)| c == country && t == town) {
            seen += 1;
            let area: &str = if country == "GB" { code.split(|c: char| c.is_ascii_digit()).next().unwrap_or_default() } else { code };
            let fits = |p: &&str| if country == "GB" { area == *p } else { area.starts_with(*p) };
            assert!(prefixes.iter().any(fits), "{town}, {country}: postcode {code:?}, not one of {prefixes:?}…");
        }
        if let Some(&(_, lo, hi)) = japan.iter().find(|j| country == "JP" && j.0 == town) {
            seen += 1;
            let head: u32 = code.get(..3).and_then(|h| h.parse().ok()).unwrap_or_else(|| panic!("{town}: {code:?}"));
            assert!((lo..=hi).contains(&head) && code.len() == 8 && &code[3..4] == "-", "{town}: {code:?}, not {lo:03}-{hi:03}");
        }
        match country.as_str() {
            "DE" | "ES" | "IT" => assert!(code.len() == 5 && code.chars().all(|c| c.is_ascii_digit()), "{town}, {country}: {code:?}"),
            // French codes end in 0, but those of Paris, Marseille and Lyon, which name the
            // arrondissement: 75001-75020, 13001-13016, 69001-69009; an arrondissement that is
            // a place of its own ("Marseille 08") has its own (13008).
            "FR" if fr_town == "Paris" => assert!(code.starts_with("750") && (1..=20).contains(&code[3..].parse::<u32>().unwrap()), "Paris: {code:?}"),
            "FR" if fr_town == "Marseille" => assert!(code.starts_with("130") && (1..=16).contains(&code[3..].parse::<u32>().unwrap()), "{code:?}"),
            "FR" if fr_town == "Lyon" => assert!(code.starts_with("6900") && (1..=9).contains(&code[4..].parse::<u32>().unwrap()), "{code:?}"),
            "FR" if fr_town.starts_with("Marseille ") => match fr_town["Marseille ".len()..].parse::<u32>() {
                Ok(n) => {
                    assert_eq!(code, &format!("130{n:02}"), "{town}");
                    arrondissements += 1;
                }
                // A quarter GeoNames names after the city (Marseille Endoume): one of its codes.
                Err(_) => assert!(code.starts_with("130") && (1..=16).contains(&code[3..].parse::<u32>().unwrap()), "{town}: {code:?}"),
            },
            // Paris's suburbs, however close (Montrouge is 4 km from the centre), are not Paris.
            "FR" => assert!(code.len() == 5 && code.ends_with('0') && !code.starts_with("75"), "{town}: {code:?}"),
            // Britain: an area, a district, a space, a sector and two letters of the twenty an
            // inward code may use (no C, I, K, M, O or V).
            "GB" => {
                let (outward, inward) = code.split_once(' ').unwrap_or_else(|| panic!("{town}: {code:?}"));
                assert!(outward.len() >= 2 && outward.starts_with(|c: char| c.is_ascii_uppercase()), "{town}: {code:?}");
                let i = inward.as_bytes();
                assert!(i.len() == 3 && i[0].is_ascii_digit() && i[1..].iter().all(|c| b"ABDEFGHJLNPQRSTUWXYZ".contains(c)), "{town}: {code:?}");
            }
            // Canada: A1A 1A1, none of D, F, I, O, Q, U.
            "CA" => {
                let c = code.as_bytes();
                assert!(c.len() == 7 && c[3] == b' ' && [1, 4, 6].iter().all(|&k| c[k].is_ascii_digit()), "{town}: {code:?}");
                assert!([0, 2, 5].iter().all(|&k| c[k].is_ascii_uppercase() && !b"DFIOQU".contains(&c[k])), "{town}: {code:?}");
            }
            _ => {}
        }
    }
    assert!(seen >= 50, "{seen} stores in the big cities checked");
    let empty: Vec<&str> = ranges.iter().filter(|(c, t, _)| !postcodes.iter().any(|p| &p.0 == c && &p.1 == t)).map(|r| r.1).collect();
    assert!(empty.is_empty(), "no store to check in {empty:?}");
    assert!(arrondissements > 0, "no store in an arrondissement of Marseille");
    assert_eq!(PostalAreas::missing(&r.cities), Vec::<String>::new(), "postal areas whose town the gazetteer lacks");

    // The area codes the national numbering plans give the big cities and the places in
    // their networks: by place and region, not a namesake elsewhere (Zapopan is Guadalajara's
    // 33, Guarulhos São Paulo's 11, Niterói
    // Rio's 21, Contagem Belo Horizonte's 31, Sesto San Giovanni Milan's 02), and by region
    // where the whole region dials one (Berlin, Hamburg, Vienna, Madrid, Mexico City, Delhi,
    // Beijing, Shanghai, New Zealand's regions).
    let by_place: &[(&str, &str, &str, &str)] = &[
        ("DE", "München", "BY", "+49 89 "),
        ("DE", "Köln", "NW", "+49 221 "),
        ("DE", "Frankfurt am Main", "HE", "+49 69 "),
        ("DE", "Stuttgart", "BW", "+49 711 "),
        ("DE", "Düsseldorf", "NW", "+49 211 "),
        ("DE", "Leipzig", "SN", "+49 341 "),
        ("IT", "Roma", "62", "+39 06 "),
        ("IT", "Milano", "25", "+39 02 "),
        ("IT", "Sesto San Giovanni", "25", "+39 02 "),
        ("IT", "Napoli", "72", "+39 081 "),
        ("IT", "Torino", "21", "+39 011 "),
        ("ES", "Barcelona", "CT", "+34 93 "),
        ("ES", "L'Hospitalet de Llobregat", "CT", "+34 93 "),
        ("ES", "Badalona", "CT", "+34 93 "),
        ("ES", "Valencia", "VC", "+34 96"),
        ("ES", "Sevilla", "AN", "+34 95"),
        ("BR", "São Paulo", "SP", "+55 11 "),
        ("BR", "Guarulhos", "SP", "+55 11 "),
        ("BR", "Campinas", "SP", "+55 19 "),
        ("BR", "Rio de Janeiro", "RJ", "+55 21 "),
        ("BR", "Niterói", "RJ", "+55 21 "),
        ("BR", "Belo Horizonte", "MG", "+55 31 "),
        ("BR", "Contagem", "MG", "+55 31 "),
        ("BR", "Salvador", "BA", "+55 71 "),
        ("BR", "Fortaleza", "CE", "+55 85 "),
        ("BR", "Curitiba", "PR", "+55 41 "),
        ("MX", "Guadalajara", "JAL", "+52 33 "),
        ("MX", "Zapopan", "JAL", "+52 33 "),
        ("MX", "Monterrey", "NLE", "+52 81 "),
        ("MX", "Puebla", "PUE", "+52 222 "),
        ("MX", "Tijuana", "BCN", "+52 664 "),
        ("CN", "Guangzhou", "GD", "+86 20 "),
        ("CN", "Shenzhen", "GD", "+86 755 "),
        ("CN", "Chengdu", "SC", "+86 28 "),
        ("CN", "Wuhan", "HB", "+86 27 "),
        ("IN", "Mumbai", "MH", "+91 22 "),
        ("IN", "Bengaluru", "KA", "+91 80 "),
        ("IN", "Chennai", "TN", "+91 44 "),
        ("IN", "Kolkata", "WB", "+91 33 "),
        ("IN", "Hyderabad", "TG", "+91 40 "),
        ("AT", "Graz", "6", "+43 316 "),
        ("AT", "Linz", "4", "+43 732 "),
        ("JP", "Osaka", "27", "+81 6 "),
        ("JP", "Yokohama", "14", "+81 45 "),
        ("JP", "Naha", "47", "+81 98 "),
        ("JP", "Sapporo", "01", "+81 11 "),
        ("PL", "Kraków", "MA", "+48 12 "),
        ("PL", "Gdańsk", "PM", "+48 58 "),
        ("NL", "Amsterdam", "NH", "+31 20 "),
        ("NL", "Rotterdam", "ZH", "+31 10 "),
        ("CH", "Genève", "GE", "+41 22 "),
        ("CH", "Basel", "BS", "+41 61 "),
        ("SE", "Stockholm", "AB", "+46 8 "),
        ("SE", "Göteborg", "O", "+46 31 "),
        ("BE", "Antwerpen", "VLG", "+32 3 "),
        ("BE", "Liège", "WAL", "+32 4 "),
        // The Wellington region dials 04, but its Wairarapa towns 06 (Hawke's Bay's).
        ("NZ", "Wellington", "WGN", "+64 4 "),
        ("NZ", "Lower Hutt", "WGN", "+64 4 "),
        ("NZ", "Masterton", "WGN", "+64 6 "),
        // North America's fiction range, 555-0100 to 555-0199, behind the code the place
        // dials (NANPA): Manhattan 212, Brooklyn 718, Chicago 312, Seattle 206, Bellevue 425,
        // Los Angeles 213, Houston 713, Dallas 214, Miami 305, San Francisco 415, Atlanta 404,
        // Boston 617, Toronto 416, Mississauga 905, Montréal 514, Vancouver 604, Calgary 403.
        ("US", "Manhattan", "NY", "+1 212-555-01"),
        ("US", "Brooklyn", "NY", "+1 718-555-01"),
        ("US", "Chicago", "IL", "+1 312-555-01"),
        ("US", "Seattle", "WA", "+1 206-555-01"),
        ("US", "Bellevue", "WA", "+1 425-555-01"),
        ("US", "Los Angeles", "CA", "+1 213-555-01"),
        ("US", "Houston", "TX", "+1 713-555-01"),
        ("US", "Dallas", "TX", "+1 214-555-01"),
        ("US", "Miami", "FL", "+1 305-555-01"),
        ("US", "San Francisco", "CA", "+1 415-555-01"),
        ("US", "Atlanta", "GA", "+1 404-555-01"),
        ("US", "Boston", "MA", "+1 617-555-01"),
        ("CA", "Toronto", "ON", "+1 416-555-01"),
        ("CA", "Mississauga", "ON", "+1 905-555-01"),
        ("CA", "Montréal", "QC", "+1 514-555-01"),
        ("CA", "Vancouver", "BC", "+1 604-555-01"),
        ("CA", "Calgary", "AB", "+1 403-555-01"),
    ];
    let by_region: &[(&str, &str, &str)] = &[
        ("DE", "BE", "+49 30 "),
        ("DE", "HH", "+49 40 "),
        ("AT", "9", "+43 1 "),
        ("ES", "MD", "+34 91 "),
        ("MX", "CMX", "+52 55 "),
        ("IN", "DL", "+91 11 "),
        ("CN", "BJ", "+86 10 "),
        ("CN", "SH", "+86 21 "),
        ("NZ", "AUK", "+64 9 "),
        ("NZ", "CAN", "+64 3 "),
        ("US", "DC", "+1 202-555-01"),
    ];
    // Germany's area codes begin with the digit of the Land's zone (the Bundesnetzagentur's
    // Ortsnetzbereiche): Berlin and the east 3, the north 4, Bavaria 8 and 9 (its north-west
    // corner 6, Neu-Ulm's district Ulm's 7), Baden-Württemberg 7 (and its Rhine-Neckar corner
    // 6), Hesse, the Palatinate and the Saar 6 (Kassel 5).
    let german_zone: &[(&str, &str)] =
        &[("SN", "3"), ("ST", "3"), ("TH", "3"), ("BB", "3"), ("MV", "3"), ("SH", "4"), ("HB", "4"), ("BW", "67"), ("BY", "6789"), ("SL", "6"), ("HE", "56")];
    let (mut checked, mut zoned) = (0, 0);
    for (country, place, region, phone) in &phones {
        let want = by_place
            .iter()
            .find(|(c, t, r, _)| c == country && t == place && r == region)
            .map(|w| w.3)
            .or_else(|| by_region.iter().find(|(c, r, _)| c == country && r == region).map(|w| w.2));
        if let Some(start) = want {
            checked += 1;
            assert!(phone.starts_with(start), "{place} ({region}, {country}): {phone}, not {start}…");
        }
        if let Some((_, digits)) = german_zone.iter().find(|(r, _)| country == "DE" && r == region) {
            zoned += 1;
            let first = phone["+49 ".len()..].chars().next().unwrap_or_default();
            assert!(digits.contains(first), "{place} ({region}): {phone}");
        }
    }
    assert!(checked >= 100 && zoned >= 50, "{checked} numbers in the big cities checked, {zoned} German numbers by zone");
    assert_eq!(storemap_ingest::world::DialAreas::missing(&r.cities), Vec::<String>::new(), "area codes whose town the gazetteer lacks");

    // Postcodes by region where the postal services number regions: a Turkish code starts with
    // its province's number (the plate code, which ISO 3166-2:TR uses); Moscow's codes start 1
    // and Saint Petersburg's 19 (Russian Post); Bangkok's 10 and Chiang Mai's 50 (Thailand
    // Post); Kyiv's 01-06, Lviv oblast's 79-82, Kharkiv oblast's 61-64 (Ukrposhta); Kuala
    // Lumpur's 50-60 and Johor's 79-86 (Pos Malaysia). Read from the four home brands of each country
    // (trading there alone) that OpenStreetMap maps most.
    let by_region: &[(&str, &str, &[&str])] = &[
        ("RU", "MOW", &["1"]),
        ("RU", "SPE", &["19"]),
        ("TH", "10", &["10"]),
        ("TH", "50", &["50"]),
        ("UA", "30", &["01", "02", "03", "04", "05", "06"]),
        ("UA", "46", &["79", "80", "81", "82"]),
        ("UA", "63", &["61", "62", "63", "64"]),
        ("MY", "14", &["5", "60"]),
        ("MY", "01", &["79", "80", "81", "82", "83", "84", "85", "86"]),
    ];
    let mut regional: BTreeMap<(String, String), usize> = BTreeMap::new();
    for country in ["RU", "TR", "TH", "UA", "MY"] {
        let mut ranks: Vec<usize> = r.catalog.brands.iter().enumerate().filter(|(_, b)| b.countries == [country]).map(|(i, _)| i).collect();
        ranks.sort_by_key(|&i| std::cmp::Reverse(r.catalog.brands[i].osm_count));
        ranks.truncate(4);
        for rank in ranks {
            for s in gen.brand(rank).stores.iter().filter(|s| s.country == country) {
                let region = &r.cities[s.city as usize].admin1;
                let code = &s.postcode;
                let width = if country == "RU" { 6 } else { 5 };
                assert!(code.len() == width && code.chars().all(|c| c.is_ascii_digit()), "{country}-{region}: {code:?}");
                if country == "TR" {
                    assert!(code.starts_with(region.as_str()), "TR-{region}: {code}");
                    *regional.entry((country.to_string(), "every province".to_string())).or_default() += 1;
                }
                if let Some((_, _, starts)) = by_region.iter().find(|(c, g, _)| *c == country && g == region) {
                    assert!(starts.iter().any(|p| code.starts_with(p)), "{country}-{region}: {code}, not {starts:?}");
                    *regional.entry((country.to_string(), region.clone())).or_default() += 1;
                }
            }
        }
    }
    for (country, region) in [("RU", "MOW"), ("TR", "every province"), ("TH", "10"), ("UA", "30"), ("MY", "14")] {
        assert!(regional.get(&(country.to_string(), region.to_string())).is_some_and(|&n| n >= 3), "{country}-{region}: {regional:?}");
    }

    // Postcodes by city where they were drawn at random before GeoNames' postcode list placed
    // their prefixes: each city's codes as its postal service numbers them (PostNord:
    // Stockholm 100-199, Göteborg 400-449, Malmö 200-239; Posten: Oslo 0001-1299, Bergen
    // 5003-5899; Copenhagen 1000-2999, Aarhus 8000-8270; Posti: Helsinki 00100-00990; Česká
    // pošta: Prague 1xx xx; Poșta Română: Bucharest 0xxxxx; SAPO: Johannesburg 2000-2199,
    // Cape Town 7100-8099; PHLPost: Manila 1000-1099; Jakarta 10xxx-14xxx; NZ Post: Auckland
    // 0600-2699). Read from the five chains above and the four home brands of each country
    // that OpenStreetMap maps most (Norway, Denmark, Finland and New Zealand have none that
    // trade there alone).
    let by_city: &[(&str, &str, &[&str])] = &[
        ("SE", "Stockholm", &["1"]),
        ("SE", "Göteborg", &["40", "41", "42", "43", "44"]),
        ("SE", "Malmö", &["20", "21", "22", "23"]),
        ("NO", "Oslo", &["0", "10", "11", "12"]),
        ("NO", "Bergen", &["5"]),
        ("DK", "København", &["1", "2"]),
        ("DK", "Aarhus", &["80", "81", "82"]),
        ("FI", "Helsinki", &["00"]),
        ("CZ", "Praha", &["1"]),
        ("RO", "București", &["0"]),
        ("ZA", "Johannesburg", &["20", "21"]),
        ("ZA", "Cape Town", &["7", "80"]),
        ("PH", "Manila", &["10"]),
        ("ID", "Jakarta", &["10", "11", "12", "13", "14"]),
        ("NZ", "Auckland", &["06", "07", "08", "09", "1", "20", "21", "22", "23", "24", "25", "26"]),
        // Countries that had no postcode: CTT's Lisbon 1000-1999 and Porto 4000-4499, Correo
        // Argentino's Buenos Aires C1000-C1499, 4-72's Bogotá 11xxxx, Serpost's Lima 15xxx,
        // Correos de Chile's Santiago 75xxxxx-99xxxxx, Barid Al-Maghrib's Casablanca 20xxx.
        ("PT", "Lisboa", &["1"]),
        ("PT", "Porto", &["40", "41", "42", "43", "44"]),
        ("AR", "Buenos Aires", &["10", "11", "12", "13", "14"]),
        ("CO", "Bogotá", &["11"]),
        ("PE", "Lima", &["15"]),
        ("CL", "Santiago", &["75", "76", "77", "78", "79", "8", "9"]),
        ("MA", "Casablanca", &["20"]),
        // Chunghwa Post: Taipei City 100-116, Kaohsiung's central districts 800-807.
        ("TW", "Taipei", &["10", "110", "111", "112", "114", "115", "116"]),
        ("TW", "Kaohsiung", &["80"]),
    ];
    let countries = ["SE", "NO", "DK", "FI", "CZ", "RO", "ZA", "PH", "ID", "NZ", "PT", "AR", "CO", "PE", "CL", "MA", "IE", "TW"];
    // (country, the store's city, its postcode)
    let mut coded: Vec<(String, String, String)> = postcodes
        .iter()
        .filter(|p| countries.contains(&p.0.as_str()))
        .map(|(c, name, town, code)| (c.clone(), if town.is_empty() { name.clone() } else { town.clone() }, code.clone()))
        .collect();
    for country in countries {
        let mut ranks: Vec<usize> = r.catalog.brands.iter().enumerate().filter(|(_, b)| b.countries == [country]).map(|(i, _)| i).collect();
        ranks.sort_by_key(|&i| std::cmp::Reverse(r.catalog.brands[i].osm_count));
        ranks.truncate(4);
        for rank in ranks {
            for s in gen.brand(rank).stores.iter().filter(|s| s.country == country) {
                let place = &r.cities[s.city as usize];
                coded.push((country.to_string(), if place.town.is_empty() { place.name.clone() } else { place.town.clone() }, s.postcode.clone()));
            }
        }
    }
    let mut in_cities: BTreeMap<String, usize> = BTreeMap::new();
    for (country, city, code) in &coded {
        // Ireland's Eircodes: a routing key (a letter and two digits, or Dublin's D6W) and four
        // of the unique identifier's characters.
        if country == "IE" {
            let (key, unique) = code.split_once(' ').unwrap_or_else(|| panic!("IE: {code:?}"));
            let k = key.as_bytes();
            assert!(k.len() == 3 && k[0].is_ascii_uppercase() && (k[1..].iter().all(u8::is_ascii_digit) || key == "D6W"), "IE: {code:?}");
            assert!(unique.len() == 4 && unique.chars().all(|c| "0123456789ACDEFHKNPRTVWXY".contains(c)), "IE: {code:?}");
            // Dublin's keys: the city's D01-D24 and D6W, and County Dublin's towns that the
            // gazetteer files under the city (Blackrock's A94, Swords' K67, Lucan's K78).
            const COUNTY_DUBLIN: [&str; 12] = ["A41", "A42", "A45", "A94", "A96", "K32", "K34", "K36", "K45", "K56", "K67", "K78"];
            if city == "Dublin" {
                assert!(key.starts_with('D') || COUNTY_DUBLIN.contains(&key), "Dublin: {code}");
                *in_cities.entry("IE Dublin".to_string()).or_default() += 1;
            }
            continue;
        }
        let digits: String = code.chars().filter(char::is_ascii_digit).collect();
        let width = match country.as_str() {
            "SE" | "CZ" | "FI" | "ID" | "PE" | "MA" => 5,
            "RO" | "CO" => 6,
            "PT" | "CL" => 7,
            "TW" => 3,
            _ => 4,
        };
        assert_eq!(digits.len(), width, "{country}: {code:?}");
        if let Some((_, _, starts)) = by_city.iter().find(|(c, t, _)| c == country && t == city) {
            assert!(starts.iter().any(|p| digits.starts_with(p)), "{city} ({country}): {code}, not {starts:?}");
            *in_cities.entry(format!("{country} {city}")).or_default() += 1;
        }
    }
    for city in [
        "SE Stockholm",
        "NO Oslo",
        "DK København",
        "FI Helsinki",
        "CZ Praha",
        "RO București",
        "ZA Johannesburg",
        "PH Manila",
        "ID Jakarta",
        "NZ Auckland",
        "PT Lisboa",
        "AR Buenos Aires",
        "CO Bogotá",
        "PE Lima",
        "CL Santiago",
        "IE Dublin",
        "TW Taipei",
    ] {
        assert!(in_cities.get(city).is_some_and(|&n| n >= 3), "{city}: {in_cities:?}");
    }
}
