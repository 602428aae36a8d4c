//! A house number and a street, given apart (OpenStreetMap's and AllThePlaces'
//! `addr:housenumber` and `addr:street`), make one address line in the order the country
//! writes it: "12 Rue de la Gare" and "350 Fifth Avenue", but "Hauptstraße 12", "Via Roma 12",
//! "ul. Długa 12". The importers cannot tell the country (the borders decide it at
//! reconciliation), so they join the two with [`SEP`] and reconciliation writes the line once
//! the row's country is known ([`line`]).

use std::borrow::Cow;

/// Between a house number and its street in an imported address that is not a line yet: the
/// ASCII unit separator, which no real address holds. One that a source's text carries anyway
/// is a space by the time the text is read (`source_row::clean`), and [`line`] leaves none: no
/// control character reaches a served row.
pub const SEP: char = '\u{1f}';

/// Countries whose addresses put the number after the street: continental Europe but France,
/// Monaco and Luxembourg; Latin America; the Portuguese-speaking world; Turkey, Israel, Iran and
/// the Caucasus; Indonesia and Korea. Elsewhere (the English-writing world, France, most of Asia and Africa) it comes first.
const NUMBER_AFTER: &[&str] = &[
    "AD", "AL", "AM", "AO", "AR", "AT", "AZ", "BA", "BE", "BG", "BO", "BR", "BY", "CH", "CL", "CO", "CR", "CU", "CV", "CY", "CZ", "DE", "DK", "DO", "EC", "EE",
    "ES", "FI", "FO", "GE", "GL", "GR", "GT", "GW", "HN", "HR", "HU", "ID", "IL", "IR", "IS", "IT", "KG", "KR", "KZ", "LI", "LT", "LV", "MD", "ME", "MK", "MX",
    "MZ", "NI", "NL", "NO", "PA", "PE", "PL", "PT", "PY", "RO", "RS", "RU", "SE", "SI", "SK", "SM", "ST", "SV", "TL", "TR", "UA", "UY", "UZ", "VA", "VE", "XK",
];

/// A number and a street to be written in the order of the country the row turns out to be in.
pub fn join(number: &str, street: &str) -> String {
    format!("{}{SEP}{}", number.replace(SEP, " "), street.replace(SEP, " "))
}

/// The address line of an imported address in `country` (ISO 3166-1 alpha-2): a joined number
/// and street in the country's order, anything else as it came.
pub fn line<'a>(address: &'a str, country: &str) -> Cow<'a, str> {
    match address.split_once(SEP) {
        None => Cow::Borrowed(address),
        Some((number, street)) if street.contains(SEP) => Cow::Owned(format!("{number} {}", street.replace(SEP, " "))),
        // Colombia numbers its streets: the number names the cross street and the distance
        // from it, after a # (Calle 72 # 10-07).
        Some((number, street)) if country == "CO" => Cow::Owned(format!("{street} # {number}")),
        Some((number, street)) if NUMBER_AFTER.contains(&country) => Cow::Owned(format!("{street} {number}")),
        Some((number, street)) => Cow::Owned(format!("{number} {street}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_joined_address_is_written_in_the_countrys_order() {
        let a = join("12", "Hauptstraße");
        assert_eq!(line(&a, "DE"), "Hauptstraße 12");
        assert_eq!(line(&a, "CH"), "Hauptstraße 12");
        assert_eq!(line(&join("350", "Fifth Avenue"), "US"), "350 Fifth Avenue");
        assert_eq!(line(&join("12", "Rue de la Gare"), "FR"), "12 Rue de la Gare");
        assert_eq!(line(&join("12", "Via Roma"), "IT"), "Via Roma 12");
        assert_eq!(line(&join("10-07", "Calle 72"), "CO"), "Calle 72 # 10-07");
        // Unknown or missing countries keep the number first, as before.
        assert_eq!(line(&join("1", "High Street"), "XX"), "1 High Street");
        // A line a source wrote whole is left alone, whatever the country.
        assert_eq!(line("Hauptstraße 12", "US"), "Hauptstraße 12");
        assert!(matches!(line("12 Rue de la Gare", "DE"), Cow::Borrowed(_)));
        // A separator inside a source's own text never reaches the line, nor turns it round.
        assert_eq!(line(&join("1\u{1f}2", "Main\u{1f}St"), "US"), "1 2 Main St");
        assert_eq!(line("a\u{1f}b\u{1f}c", "DE"), "a b c");
    }

    #[test]
    fn the_list_is_sorted_and_of_country_codes() {
        assert!(NUMBER_AFTER.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        assert!(NUMBER_AFTER.iter().all(|c| c.len() == 2 && c.chars().all(|ch| ch.is_ascii_uppercase())));
    }
}
