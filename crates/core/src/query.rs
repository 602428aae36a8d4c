//! Filtering one brand's rows. Filters combine with AND; a query scans only the brand's
//! contiguous row range, which is at most a few tens of thousands of rows.

use crate::coverage::Sightings;
use crate::error::{CoreError, Result};
use crate::geodesy::haversine_m;
use crate::model::{SourceMask, StorefrontType};
use crate::names::fold_case;
use crate::open_at::{OpenAt, OpenCheck};
use crate::snapshot::{Snapshot, TextColumn};

#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// ISO 3166-1 alpha-2, any case.
    pub country: Option<String>,
    /// USPS code in the US, the admin-1 code elsewhere; case-insensitive exact.
    pub state: Option<String>,
    /// Case-insensitive exact match against the row's city; with `radius_km`, the centre.
    pub city: Option<String>,
    /// Case-insensitive, ignoring spaces ("SW1A 1AA" = "sw1a1aa").
    pub postcode: Option<String>,
    /// Rows within this distance of the city's centre (from the gazetteer) instead of the
    /// exact city-name match. Requires `city`.
    pub radius_km: Option<f64>,
    pub storefront_type: Option<StorefrontType>,
    /// Data formats: only rows at or above the confidence floor and not community-only.
    pub verified_only: bool,
    /// Only stores open at this moment by their opening hours; rows without hours are left
    /// out and counted (`QueryResult::hours_unknown`).
    pub open_at: Option<OpenAt>,
}

#[derive(Debug, Clone, Default)]
pub struct QueryResult {
    /// Matching row indices, in snapshot order.
    pub rows: Vec<u32>,
    /// Sources that contributed to the matching rows.
    pub sources: SourceMask,
    /// Every storefront within the filters by the sources that saw it, the rows the data
    /// formats leave out (below the confidence floor, community-only) included: what the
    /// coverage estimate reads.
    pub sightings: Sightings,
    /// The radius centre, when `radius_km` was used.
    pub center: Option<(f64, f64)>,
    /// With `open_at`: rows within every other filter left out because their hours are
    /// unknown (none given, or none that say).
    pub hours_unknown: u32,
}

impl Filters {
    /// The filter as text, for `region` and `X-Region`: "US / IL / Chicago", or "worldwide".
    pub fn region_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(c) = &self.country {
            parts.push(c.to_uppercase());
        }
        if let Some(s) = &self.state {
            parts.push(s.to_uppercase());
        }
        match (&self.city, self.radius_km) {
            (Some(c), Some(r)) => parts.push(format!("{} +{} km", c.trim(), number_text(r))),
            (Some(c), None) => parts.push(c.trim().to_string()),
            _ => {}
        }
        if let Some(p) = &self.postcode {
            parts.push(p.trim().to_string());
        }
        if parts.is_empty() {
            "worldwide".into()
        } else {
            parts.join(" / ")
        }
    }
}

/// A request's number as text for a message or header: as written when short, else in
/// scientific notation with five significant digits. `5e-324` is 324 digits in plain notation;
/// nobody needs them echoed into `X-Region`.
pub fn number_text(x: f64) -> String {
    let plain = format!("{x}");
    if plain.len() <= 12 {
        return plain;
    }
    let sci = format!("{x:.4e}");
    // 1.2500e3 -> 1.25e3
    match sci.split_once('e') {
        Some((m, e)) if m.contains('.') => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
        _ => sci,
    }
}

fn eq_ci(row: &str, filter_folded: &str) -> bool {
    row.chars().flat_map(char::to_lowercase).eq(filter_folded.chars())
}

fn postcode_key(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect()
}

impl Snapshot {
    pub fn query(&self, brand: u32, f: &Filters) -> Result<QueryResult> {
        if f.radius_km.is_some() && f.city.is_none() {
            return Err(CoreError::RadiusWithoutCity);
        }
        if let Some(r) = f.radius_km {
            if !(r.is_finite() && r > 0.0) {
                return Err(CoreError::InvalidFilter("radius_km must be a positive number".into()));
            }
        }
        let Some(b) = self.brands.get(brand as usize) else {
            return Ok(QueryResult::default());
        };
        let range = b.row_start as usize..b.row_end as usize;

        let country = match &f.country {
            Some(c) => match self.countries.iter().position(|x| x.eq_ignore_ascii_case(c.trim())) {
                Some(i) => Some(i as u16),
                None => return Ok(QueryResult::default()),
            },
            None => None,
        };
        let state = f.state.as_ref().map(|s| fold_case(s.trim()));
        let city = f.city.as_ref().map(|s| fold_case(s.trim()));
        let postcode = f.postcode.as_ref().map(|s| postcode_key(s));
        let storefront = f.storefront_type.map(|t| t as u8);

        let center = match (f.radius_km, &city) {
            (Some(_), Some(c)) => Some(self.city_center(brand, c, f, country, state.as_deref())?),
            _ => None,
        };
        let other_names = match (&city, center) {
            (Some(c), None) => self.other_city_names(c, f),
            _ => Vec::new(),
        };
        let radius_m = f.radius_km.map(|r| r * 1000.0);

        let mut out = QueryResult { center, ..QueryResult::default() };
        let mut open = f.open_at.map(OpenCheck::new);
        for r in range {
            if country.is_some_and(|c| self.country[r] != c) {
                continue;
            }
            if storefront.is_some_and(|t| self.storefront[r] != t) {
                continue;
            }
            if let Some(s) = &state {
                if !eq_ci(self.row_text(TextColumn::State, r), s) {
                    continue;
                }
            }
            if let Some(p) = &postcode {
                if postcode_key(self.row_text(TextColumn::Postcode, r)) != *p {
                    continue;
                }
            }
            match (center, radius_m, &city) {
                (Some((lat, lng)), Some(m), _) if haversine_m(lat, lng, self.lat[r], self.lng[r]) > m => continue,
                (Some(_), Some(_), _) => {}
                (_, _, Some(c)) => {
                    let text = self.row_text(TextColumn::City, r);
                    if !eq_ci(text, c) && !other_names.iter().any(|(n, k)| *k == self.country[r] && eq_ci(text, n)) {
                        continue;
                    }
                }
                _ => {}
            }
            // With open_at no coverage is estimated: the sources' overlap estimates every
            // storefront within the filters, and the answer holds the ones open (at 03:00 it
            // would read as a near-zero coverage).
            if f.open_at.is_none() {
                out.sightings.add(SourceMask(self.sources[r]));
            }
            if f.verified_only && !self.row_is_verified(r) {
                continue;
            }
            if let Some(check) = open.as_mut() {
                if !check.admits(self.row_text(TextColumn::OpeningHours, r), self.lat[r], self.lng[r], &mut out.hours_unknown) {
                    continue;
                }
            }
            out.rows.push(r as u32);
            out.sources.0 |= self.sources[r];
        }
        Ok(out)
    }

    /// The other names of the gazetteer's cities called `city_lower` (within the country and
    /// state filters), each with its country: rows in Munich may say München, or Munich, and
    /// both are the city asked for. Only in that city's country, though: Rome's Roma is not
    /// the Roma in Queensland.
    fn other_city_names(&self, city_lower: &str, f: &Filters) -> Vec<(String, u16)> {
        let g = &self.cities;
        let mut out: Vec<(String, u16)> = Vec::new();
        for i in g.named(city_lower) {
            if f.country.as_ref().is_some_and(|k| !g.country(i).eq_ignore_ascii_case(k.trim()))
                || f.state.as_ref().is_some_and(|s| !g.admin1(i).eq_ignore_ascii_case(s.trim()))
            {
                continue;
            }
            let Some(country) = self.countries.iter().position(|x| x == g.country(i)) else { continue };
            for name in [g.name(i), g.also(i)] {
                let folded = fold_case(name);
                if !name.is_empty() && folded != city_lower && !out.iter().any(|(n, k)| *n == folded && *k == country as u16) {
                    out.push((folded, country as u16));
                }
            }
        }
        out
    }

    /// The radius centre: the most populous gazetteer city of that name (within the country
    /// and state filters when given); failing that, the mean position of the brand's rows that
    /// carry the name, within the same filters.
    fn city_center(&self, brand: u32, city_lower: &str, f: &Filters, country: Option<u16>, state: Option<&str>) -> Result<(f64, f64)> {
        let g = &self.cities;
        let best = g
            .named(city_lower)
            .filter(|&i| f.country.as_ref().is_none_or(|k| g.country(i).eq_ignore_ascii_case(k.trim())))
            .filter(|&i| f.state.as_ref().is_none_or(|s| g.admin1(i).eq_ignore_ascii_case(s.trim())))
            .max_by_key(|&i| g.population(i));
        if let Some(i) = best {
            return Ok(g.lat_lng(i));
        }
        let b = &self.brands[brand as usize];
        let (mut n, mut lat, mut lng) = (0.0, 0.0, 0.0);
        for r in b.row_start as usize..b.row_end as usize {
            if country.is_some_and(|c| self.country[r] != c) || state.is_some_and(|s| !eq_ci(self.row_text(TextColumn::State, r), s)) {
                continue;
            }
            if eq_ci(self.row_text(TextColumn::City, r), city_lower) {
                n += 1.0;
                lat += self.lat[r];
                lng += self.lng[r];
            }
        }
        if n == 0.0 {
            return Err(CoreError::UnknownCity(f.city.clone().unwrap_or_default()));
        }
        Ok((lat / n, lng / n))
    }
}

#[cfg(test)]
mod number_text_tests {
    use super::number_text;

    #[test]
    fn short_numbers_as_written_long_ones_in_five_digits() {
        assert_eq!(number_text(2.5), "2.5");
        assert_eq!(number_text(-122.4194), "-122.4194");
        assert_eq!(number_text(5e-324), "4.9407e-324");
        assert_eq!(number_text(1e300), "1e300");
        assert_eq!(number_text(0.1 + 0.2), "3e-1");
        assert!(number_text(f64::MIN_POSITIVE).len() <= 12);
    }
}
