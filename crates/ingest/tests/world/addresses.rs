//! Street addresses in the synthetic world read as the country writes them: no American
//! street names abroad, Swiss streets without ß, German streets that end as German streets do,
//! Japanese addresses as chōme-block-house numbers, and the house number never inside the
//! street (OpenStreetMap's `addr:street` is a name; its number is `addr:housenumber`); and
//! postcodes of the big cities in the ranges their postal services give them.

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
    // Chains present in many countries (McDonald's, Starbucks, KFC, Subway, 7-Eleven).
    let mut by_country: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    // (the store's town, its postcode) in the countries whose postcodes follow the postal areas
    let mut postcodes: Vec<(String, String, String)> = Vec::new();
    for qid in ["Q38076", "Q37158", "Q524757", "Q244457", "Q259340"] {
        let rank = r.catalog.brands.iter().position(|b| b.wikidata.as_deref() == Some(qid)).unwrap_or_else(|| panic!("{qid} in the catalog"));
        for s in gen.brand(rank).stores {
            by_country.entry(s.country.clone()).or_default().push((s.address.line.clone(), s.address.street().to_string(), s.address.number().to_string()));
            postcodes.push((s.country.clone(), r.cities[s.city as usize].name.clone(), s.postcode.clone()));
        }
    }
    for must in ["US", "DE", "CH", "JP", "PL", "FR", "GB", "MX"] {
        assert!(by_country.get(must).is_some_and(|a| a.len() >= 20), "{must}: {:?} stores", by_country.get(must).map(Vec::len));
    }
    for (country, addresses) in &by_country {
        for (line, street, number) in addresses {
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
    assert!(by_country["US"].iter().any(|(_, _, n)| n.len() == 4), "US numbers: {:?}", &by_country["US"][..5]);

    // The big cities' postcodes, as their postal services number them.
    let ranges: [(&str, &str, &[&str]); 12] = [
        ("DE", "Berlin", &["10", "12", "13", "14"]),
        ("DE", "Hamburg", &["20", "21", "22"]),
        ("DE", "Munich", &["80", "81"]),
        ("DE", "Köln", &["50", "51"]),
        ("DE", "Frankfurt am Main", &["60", "65"]),
        ("FR", "Paris", &["75"]),
        ("FR", "Marseille", &["13"]),
        ("FR", "Lyon", &["69"]),
        ("ES", "Madrid", &["28"]),
        ("ES", "Barcelona", &["08"]),
        ("IT", "Milan", &["20"]),
        ("IT", "Rome", &["00"]),
    ];
    let mut seen = 0;
    for (country, town, code) in &postcodes {
        if let Some((_, _, prefixes)) = ranges.iter().find(|(c, t, _)| c == country && t == town) {
            seen += 1;
            assert!(prefixes.iter().any(|p| code.starts_with(p)), "{town}, {country}: postcode {code:?}, not one of {prefixes:?}…");
        }
        match country.as_str() {
            "DE" | "ES" | "IT" => assert!(code.len() == 5 && code.chars().all(|c| c.is_ascii_digit()), "{town}, {country}: {code:?}"),
            // French codes end in 0, but Paris's, which name the arrondissement: 75001-75020.
            "FR" if town == "Paris" => assert!(code.starts_with("750") && (1..=20).contains(&code[3..].parse::<u32>().unwrap()), "Paris: {code:?}"),
            // Paris's suburbs, however close (Montrouge is 4 km from the centre), are not Paris.
            "FR" => assert!(code.len() == 5 && code.ends_with('0') && !code.starts_with("75"), "{town}: {code:?}"),
            _ => {}
        }
    }
    assert!(seen >= 50, "{seen} stores in the big cities checked");
    assert_eq!(PostalAreas::missing(&r.cities), Vec::<String>::new(), "postal areas whose town the gazetteer lacks");
}
