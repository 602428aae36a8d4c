//! The world ages. The generated world is the world as surveyed on [`SURVEY`]; a build whose
//! `--as-of` is later sees it that much older: stores close and new ones open at yearly rates
//! per storefront class, and each source takes its own time to notice either. Every draw here
//! comes from a random stream of its own (seeded by the brand and, for an opening, its number),
//! never from the stream that made the surveyed world, so the surveyed world is the same at
//! every date and a later date's world is an earlier one's plus what happened in between.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use storemap_core::SourceType;

/// The day the generated world describes: 2026-11-01T00:00:00Z. Builds at or before it are the
/// surveyed world itself (it does not age backwards).
pub const SURVEY: i64 = 1_793_491_200;

/// A day in seconds, as the churn model's rates are reckoned (core's `DAY_S`).
pub const DAY_S: f64 = storemap_core::DAY_S as f64;
pub const YEAR_S: f64 = 365.25 * DAY_S;

/// Mixed into a brand's seed for its churn stream, so that stream is not the surveyed world's.
pub const SALT: u64 = 0x6368_7572_6e21_0001;

/// Openings and closures a year, each as a share of the brand's surveyed stores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub open: f64,
    pub close: f64,
}

/// Churn by storefront class. Assumed, not measured: chains of each kind open and close a few
/// per cent of their stores a year, coffee and fitness more, hotels and fuel less; bank and
/// telecom branches close faster than they open, fast chargers open far faster than they close.
pub fn rates(class: &str) -> Rates {
    let (open, close) = match class {
        "coffee" => (0.07, 0.05),
        "food" => (0.06, 0.05),
        "fitness" => (0.08, 0.06),
        "supermarket" => (0.04, 0.025),
        "pharmacy" => (0.03, 0.035),
        "bank" => (0.02, 0.05),
        "telecom" => (0.03, 0.06),
        "fuel" => (0.02, 0.025),
        "hotel" => (0.04, 0.02),
        "ev" => (0.25, 0.01),
        _ => (0.05, 0.05),
    };
    Rates { open, close }
}

/// Which change a source has to notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Opening,
    Closing,
}

/// The mean time, in days, before a source shows a change: retailers' locators (AllThePlaces
/// scrapes them weekly) change within days; Overture's monthly releases and Foursquare's
/// refreshes take months; the community map notices openings in months and removes closed
/// shops slowest of all. The contract's closure lag is this table's closing column.
pub fn mean_lag_days(source: SourceType, event: Event) -> f64 {
    match (source, event) {
        (SourceType::Atp, Event::Opening) => 5.0,
        (SourceType::Atp, Event::Closing) => 4.0,
        (SourceType::Overture, Event::Opening) => 45.0,
        (SourceType::Overture, Event::Closing) => 60.0,
        (SourceType::Fsq, Event::Opening) => 90.0,
        (SourceType::Fsq, Event::Closing) => 150.0,
        (SourceType::Osm, Event::Opening) => 120.0,
        (SourceType::Osm, Event::Closing) => 365.0,
    }
}

/// An exponential draw with this mean (seconds).
pub fn exp_s(rng: &mut ChaCha8Rng, mean_s: f64) -> f64 {
    -mean_s * (1.0 - rng.random::<f64>()).ln()
}

/// How long this source takes to show this change (seconds).
pub fn lag_s(rng: &mut ChaCha8Rng, source: SourceType, event: Event) -> f64 {
    exp_s(rng, mean_lag_days(source, event) * DAY_S)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_survey_day_is_2026_11_01() {
        assert_eq!(storemap_core::format_iso(SURVEY), "2026-11-01T00:00:00Z");
    }

    #[test]
    fn exponential_draws_have_their_mean() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 200_000;
        let mean = (0..n).map(|_| exp_s(&mut rng, 10.0)).sum::<f64>() / n as f64;
        // The standard error of the mean of n exponential draws is mean / sqrt(n): 0.022 here.
        assert!((mean - 10.0).abs() < 0.1, "mean {mean}");
    }

    #[test]
    fn every_source_shows_a_closure_no_sooner_than_retailers_do() {
        for s in SourceType::ALL {
            assert!(mean_lag_days(s, Event::Closing) >= mean_lag_days(SourceType::Atp, Event::Closing));
            assert!(mean_lag_days(s, Event::Opening) > 0.0);
        }
    }
}
