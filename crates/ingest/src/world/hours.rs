//! The synthetic world's opening hours: each store's true week, by what the chain sells and the
//! country's trading laws, and how each publisher writes it down or leaves it out.
//!
//! Drawn from hashes of the store, never from the generator's random streams, so adding hours
//! moved no store, sighting or id of the world that had none.
//!
//! What the publishers do, as their files show it:
//! - AllThePlaces: a spider collects hours from the chain's store locator or does not collect
//!   them at all (about one spider in five has none here); where it does, nearly every feature
//!   has them, written cleanly.
//! - OpenStreetMap: mappers add hours to about half the branded shops they map; some write
//!   hours without a leading zero (`9:00`), a 24-hour place as `Mo-Su 00:00-24:00`, and a few
//!   write something the grammar refuses (`9am-5pm`), which the import counts and drops.
//! - Overture and Foursquare's open places publish no hours.

use storemap_core::SourceType;

use super::brand::TrueStore;
use crate::catalog::CatalogBrand;
use crate::hash::fnv1a;

/// Countries whose law closes most shops on Sunday (Germany's Ladenschlussgesetze, Austria's
/// Öffnungszeitengesetz, the Swiss cantons, Norway's helligdagsloven, Poland's Sunday trading
/// ban of 2018, Greece): supermarkets, pharmacies and other shops there are closed on Sundays.
const SUNDAY_CLOSED: [&str; 6] = ["DE", "AT", "CH", "NO", "PL", "GR"];

/// Where convenience stores keep the konbini habit of never closing.
const ALWAYS_OPEN_CONVENIENCE: [&str; 7] = ["JP", "TW", "TH", "KR", "HK", "MY", "PH"];

/// A value in [0, 1) from the store and what is being drawn.
fn draw(seed: u64, key: &str, what: &str) -> f64 {
    (fnv1a(format!("{seed}/hours/{what}/{key}").as_bytes()) % 1_000_000) as f64 / 1_000_000.0
}

/// One line of a week: days, and a span in minutes from midnight.
fn span(days: &str, open: u32, close: u32) -> String {
    format!("{days} {:02}:{:02}-{:02}:{:02}", open / 60, open % 60, close / 60, close % 60)
}

/// The store's true hours, in OSM's syntax.
pub fn true_hours(brand: &CatalogBrand, store: &TrueStore, key: &str, seed: u64) -> String {
    let country = store.country.as_str();
    let sunday_law = SUNDAY_CLOSED.contains(&country);
    // Stores of one chain open within half an hour of each other.
    let shift = [0u32, 30, 60][(draw(seed, key, "shift") * 3.0) as usize];
    let o = |m: u32| m + shift;
    let always = |share: f64| draw(seed, key, "always") < share;
    match (brand.class.as_str(), brand.category.as_str()) {
        ("hotel", _) | ("ev", _) => "24/7".into(),
        ("fuel", _) if always(0.45) => "24/7".into(),
        ("fuel", _) => span("Mo-Su", o(300), 1320),
        ("supermarket", "shop/convenience") if ALWAYS_OPEN_CONVENIENCE.contains(&country) || always(0.25) => "24/7".into(),
        ("supermarket", "shop/convenience") => span("Mo-Su", o(360), 1380),
        ("food", _) if !sunday_law && always(0.08) => "24/7".into(),
        ("food", _) => format!("{}; {}", span("Mo-Th,Su", o(600), 1320), span("Fr,Sa", o(600), 1410)),
        ("coffee", _) => format!("{}; {}", span("Mo-Fr", o(360), 1200), span("Sa,Su", o(420), 1140)),
        ("bank", _) => format!("{}; PH off", span("Mo-Fr", o(510), 1020)),
        ("fitness", _) => format!("{}; {}", span("Mo-Fr", o(330), 1380), span("Sa,Su", o(480), 1200)),
        ("supermarket", _) if sunday_law => span("Mo-Sa", o(450), 1200),
        ("supermarket", _) => format!("{}; {}", span("Mo-Sa", o(420), 1320), span("Su", o(480), 1200)),
        ("pharmacy", _) if sunday_law => format!("{}; {}", span("Mo-Fr", o(450), 1140), span("Sa", o(480), 960)),
        ("pharmacy", _) => format!("{}; {}; {}", span("Mo-Fr", o(450), 1260), span("Sa", o(540), 1080), span("Su", o(600), 1020)),
        (_, _) if sunday_law => span("Mo-Sa", o(570), 1200),
        (_, _) => format!("{}; {}", span("Mo-Sa", o(570), 1260), span("Su", o(660), 1080)),
    }
}

/// What `source` publishes of a store's true hours, with its habits; `None` where it gives
/// none. `spider` is the brand's AllThePlaces spider.
pub fn published(source: SourceType, truth: &str, key: &str, spider: &str, seed: u64) -> Option<String> {
    match source {
        SourceType::Atp => {
            let collects = draw(seed, spider, "spider collects hours") < 0.8;
            (collects && draw(seed, key, "atp") < 0.97).then(|| truth.to_string())
        }
        SourceType::Osm => {
            if draw(seed, key, "osm") >= 0.5 {
                return None;
            }
            let habit = draw(seed, key, "osm habit");
            Some(if habit < 0.03 {
                // A value the grammar refuses.
                "daily 9am-5pm".to_string()
            } else if truth == "24/7" && habit < 0.3 {
                "Mo-Su 00:00-24:00".to_string()
            } else if habit < 0.15 {
                unpadded(truth)
            } else {
                truth.to_string()
            })
        }
        SourceType::Overture | SourceType::Fsq => None,
    }
}

/// `06:30` written `6:30`, as mappers often do.
fn unpadded(hours: &str) -> String {
    let mut out = String::with_capacity(hours.len());
    let b = hours.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let starts_time = c == b'0' && b.get(i + 1).is_some_and(u8::is_ascii_digit) && b.get(i + 2) == Some(&b':') && (i == 0 || !b[i - 1].is_ascii_digit());
        if !starts_time {
            out.push(c as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpadded_drops_only_leading_zeros_of_hours() {
        assert_eq!(unpadded("Mo-Fr 06:30-20:00; Sa,Su 07:30-19:00"), "Mo-Fr 6:30-20:00; Sa,Su 7:30-19:00");
        assert_eq!(unpadded("Mo-Su 10:00-23:00"), "Mo-Su 10:00-23:00");
        assert_eq!(unpadded("Mo-Fr 08:30-17:00; PH off"), "Mo-Fr 8:30-17:00; PH off");
    }
}
