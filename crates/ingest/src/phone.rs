//! A served row's phone number, written one way whichever source it came from. Sources write the
//! same number differently: OpenStreetMap "+41 41 740 60 13" or "041 740 60 13", Overture's
//! "+41417406013", Foursquare's national "(303) 555-0142", several numbers joined by ";". A
//! column an analyst joins on or dials from reads the same way in every row: each number in
//! the international format of Google's libphonenumber (the `phonenumber` crate, a port of its
//! code and metadata), the country of the row telling a national number's calling code.
//!
//! A number libphonenumber does not hold valid for that country (a range it does not know, a
//! typo, text) is kept as its source wrote it: formatting an invalid number would strip its
//! grouping and guess at nothing better.

use std::str::FromStr;

use phonenumber::country;
use phonenumber::Mode;

/// Where sources join several numbers in one value: OSM's multi-value separator, which the
/// spiders copy. Not `/`, which German numbers write after the area code ("030 / 1234567").
const SEPARATOR: char = ';';

/// The first number of `raw` as the row serves it, in `country` (ISO 3166-1 alpha-2); empty
/// stays empty.
pub fn served(raw: &str, country: &str) -> String {
    let first = raw.split(SEPARATOR).map(str::trim).find(|s| !s.is_empty()).unwrap_or_default();
    if first.is_empty() {
        return String::new();
    }
    let region = country::Id::from_str(country).ok();
    match phonenumber::parse(region, first) {
        Ok(n) if phonenumber::is_valid(&n) => n.format().mode(Mode::International).to_string(),
        _ => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::served;

    /// Expected values from another implementation: Python's `phonenumbers` 9.0 (a separate
    /// port of libphonenumber), `format_number(parse(raw, country), INTERNATIONAL)`.
    #[test]
    fn numbers_read_in_their_rows_country_and_written_as_libphonenumber_writes_them() {
        for (raw, country, want) in [
            ("+41417406013", "CH", "+41 41 740 60 13"),
            ("041 740 60 13", "CH", "+41 41 740 60 13"),
            ("0041 41 740 60 13", "CH", "+41 41 740 60 13"),
            ("+41 41 740 60 13", "CH", "+41 41 740 60 13"),
            ("(312) 555-0122", "US", "+1 312-555-0122"),
            ("+13125550142", "US", "+1 312-555-0142"),
            ("030 1234567", "DE", "+49 30 1234567"),
            ("030 / 1234567", "DE", "+49 30 1234567"),
            ("+558548330589", "BR", "+55 85 4833-0589"),
            ("+33465719598", "FR", "+33 4 65 71 95 98"),
            ("+44 20 7946 0123", "GB", "+44 20 7946 0123"),
            ("+81 980 593 893", "JP", "+81 980-59-3893"),
            // A number with its calling code is read as that country's, wherever the row is.
            ("+41 41 740 60 13", "DE", "+41 41 740 60 13"),
        ] {
            assert_eq!(served(raw, country), want, "{raw} in {country}");
        }
    }

    #[test]
    fn the_first_of_several_numbers_is_served_and_what_is_not_a_valid_number_is_kept() {
        assert_eq!(served("041 740 60 13; 041 740 60 14", "CH"), "+41 41 740 60 13");
        assert_eq!(served(" ; 041 740 60 14", "CH"), "+41 41 740 60 14");
        // Not valid in Brazil (eight digits starting 6): as the source wrote it.
        assert_eq!(served("+55 91 6948 7481", "BR"), "+55 91 6948 7481");
        assert_eq!(served("call the store", "CH"), "call the store");
        // No country code and no known country: nothing to read it by.
        assert_eq!(served("041 740 60 13", "XX"), "041 740 60 13");
        assert_eq!(served("", "CH"), "");
        assert_eq!(served(" ; ", "CH"), "");
    }
}
