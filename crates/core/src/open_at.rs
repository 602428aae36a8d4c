//! `open_at`: which stores are open at a moment, each read by its own opening hours at its own
//! wall-clock time. A moment without an offset is that wall-clock time at every store ("noon
//! wherever the store is"); one with an offset is a single instant, which each store sees in
//! the time zone its coordinates are in (09:00 in Zurich is 17:00 in Tokyo).

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, FixedOffset, NaiveDateTime};
use chrono_tz::Tz;
use opening_hours::{OpeningHours, RuleKind};

use crate::error::{CoreError, Result};

/// The moment a request asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenAt {
    /// The same wall-clock time at every store.
    Local(NaiveDateTime),
    /// One instant, read in each store's zone.
    Instant(DateTime<FixedOffset>),
}

/// A store's state at the moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Openness {
    Open,
    Closed,
    /// No hours, or hours that do not say (`unknown` rules, a text the evaluator refuses).
    Unknown,
}

/// Zones from coordinates: the bundled polygons load once per process (a few tens of ms).
static ZONES: LazyLock<tzf_rs::DefaultFinder> = LazyLock::new(tzf_rs::DefaultFinder::new);

impl OpenAt {
    /// ISO 8601 date and time, with seconds or without, with an offset (`Z`, `+09:00`) or
    /// without (the store's own time).
    pub fn parse(text: &str) -> Result<OpenAt> {
        let t = text.trim();
        let bad = || CoreError::InvalidFilter(format!("open_at: {t:?} is not an ISO 8601 date and time such as 2026-12-01T12:00 or 2026-12-01T12:00:00+01:00"));
        if let Ok(at) = DateTime::parse_from_rfc3339(t) {
            return Ok(OpenAt::Instant(at));
        }
        if let Ok(at) = DateTime::parse_from_str(t, "%Y-%m-%dT%H:%M%:z") {
            return Ok(OpenAt::Instant(at));
        }
        if let Some(utc) = t.strip_suffix('Z').or_else(|| t.strip_suffix('z')) {
            if let Some(naive) = local(utc) {
                return Ok(OpenAt::Instant(naive.and_utc().fixed_offset()));
            }
        }
        local(t).map(OpenAt::Local).ok_or_else(bad)
    }

    /// The store's wall-clock time at this moment; `None` where its zone cannot be told (the
    /// polygons cover the land and, with nautical zones, the sea: a name chrono-tz does not
    /// know would be the only way).
    pub fn wall_clock(&self, lat: f64, lng: f64) -> Option<NaiveDateTime> {
        match self {
            OpenAt::Local(t) => Some(*t),
            OpenAt::Instant(at) => {
                let zone: Tz = ZONES.get_tz_name(lng, lat).parse().ok()?;
                Some(at.with_timezone(&zone).naive_local())
            }
        }
    }
}

/// The moment as the envelope echoes it: seconds always, the offset when one was given.
impl std::fmt::Display for OpenAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenAt::Local(t) => write!(f, "{}", t.format("%Y-%m-%dT%H:%M:%S")),
            OpenAt::Instant(at) => write!(f, "{}", at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        }
    }
}

fn local(t: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"].iter().find_map(|f| NaiveDateTime::parse_from_str(t, f).ok())
}

/// One request's reading of hours: each distinct hours text is parsed once (the snapshot
/// interns them, so a chain's thousand stores share a handful).
pub struct OpenCheck<'a> {
    at: OpenAt,
    parsed: HashMap<&'a str, Option<OpeningHours>>,
}

impl<'a> OpenCheck<'a> {
    pub fn new(at: OpenAt) -> OpenCheck<'a> {
        OpenCheck { at, parsed: HashMap::new() }
    }

    /// Whether a store is served under `open_at`: open, yes; closed, no; unknown, no and
    /// counted in `unknown`.
    pub fn admits(&mut self, hours: &'a str, lat: f64, lng: f64, unknown: &mut u32) -> bool {
        match self.state(hours, lat, lng) {
            Openness::Open => true,
            Openness::Closed => false,
            Openness::Unknown => {
                *unknown += 1;
                false
            }
        }
    }

    /// Whether a store with these hours (`""` for none) at this position is open.
    pub fn state(&mut self, hours: &'a str, lat: f64, lng: f64) -> Openness {
        if hours.is_empty() {
            return Openness::Unknown;
        }
        let Some(when) = self.at.wall_clock(lat, lng) else { return Openness::Unknown };
        // The build kept only hours the grammar parses; a text the evaluator still refuses, or
        // a rule it cannot evaluate (it panics on a few), is unknown, never a failed request.
        let parsed = self.parsed.entry(hours).or_insert_with(|| std::panic::catch_unwind(|| hours.parse::<OpeningHours>().ok()).ok().flatten());
        let Some(oh) = parsed else { return Openness::Unknown };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| oh.state(when).0)) {
            Ok(RuleKind::Open) => Openness::Open,
            Ok(RuleKind::Closed) => Openness::Closed,
            _ => Openness::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> OpenAt {
        OpenAt::parse(t).unwrap()
    }

    #[test]
    fn reads_local_times_and_instants() {
        assert!(matches!(at("2026-12-01T12:00"), OpenAt::Local(_)));
        assert!(matches!(at("2026-12-01T12:00:30"), OpenAt::Local(_)));
        assert!(matches!(at("2026-12-01T12:00Z"), OpenAt::Instant(_)));
        assert!(matches!(at("2026-12-01T12:00:00+09:00"), OpenAt::Instant(_)));
        assert!(matches!(at("2026-12-01T12:00+09:00"), OpenAt::Instant(_)));
        for bad in ["", "noon", "2026-12-01", "2026-13-01T12:00", "2026-12-01T25:00", "12:00", "2026-12-01T12:00+25:00"] {
            assert!(OpenAt::parse(bad).is_err(), "{bad:?} was read");
        }
    }

    // Zurich (Europe/Zurich, UTC+1 in winter, +2 in summer) and Tokyo (Asia/Tokyo, UTC+9, no
    // daylight saving), by their coordinates.
    const ZURICH: (f64, f64) = (47.3769, 8.5417);
    const TOKYO: (f64, f64) = (35.6762, 139.6503);
    const SHOP: &str = "Mo-Sa 08:00-20:00";

    fn state(t: &str, hours: &str, (lat, lng): (f64, f64)) -> Openness {
        OpenCheck::new(at(t)).state(hours, lat, lng)
    }

    #[test]
    fn local_time_is_each_stores_own() {
        // Tuesday 1 December 2026: noon open, 03:30 closed, in both cities alike.
        for place in [ZURICH, TOKYO] {
            assert_eq!(state("2026-12-01T12:00", SHOP, place), Openness::Open);
            assert_eq!(state("2026-12-01T03:30", SHOP, place), Openness::Closed);
            assert_eq!(state("2026-12-06T12:00", SHOP, place), Openness::Closed, "Sunday");
            assert_eq!(state("2026-12-01T03:30", "24/7", place), Openness::Open);
        }
    }

    #[test]
    fn an_instant_is_read_in_each_stores_zone() {
        // 11:00 UTC on a Tuesday in December: 12:00 in Zurich (open), 20:00 in Tokyo (closed:
        // it closes at 20:00).
        assert_eq!(state("2026-12-01T11:00:00Z", SHOP, ZURICH), Openness::Open);
        assert_eq!(state("2026-12-01T11:00:00Z", SHOP, TOKYO), Openness::Closed);
        // 02:00 UTC: 03:00 in Zurich (closed), 11:00 in Tokyo (open).
        assert_eq!(state("2026-12-01T02:00:00Z", SHOP, ZURICH), Openness::Closed);
        assert_eq!(state("2026-12-01T02:00:00Z", SHOP, TOKYO), Openness::Open);
        // The same instant written with another offset is the same instant.
        assert_eq!(state("2026-12-01T20:00:00+09:00", SHOP, ZURICH), Openness::Open);
    }

    #[test]
    fn the_same_utc_time_across_a_dst_change() {
        // Zurich moves from UTC+1 to UTC+2 on Sunday 29 March 2026. 06:30 UTC is 07:30 local on
        // the Saturday before (closed: opens at 08:00) and 08:30 local on the Monday after (open).
        assert_eq!(state("2026-03-28T06:30:00Z", SHOP, ZURICH), Openness::Closed);
        assert_eq!(state("2026-03-30T06:30:00Z", SHOP, ZURICH), Openness::Open);
        // Tokyo keeps one offset: 06:30 UTC is 15:30 there on both days.
        assert_eq!(state("2026-03-28T06:30:00Z", SHOP, TOKYO), Openness::Open);
        assert_eq!(state("2026-03-30T06:30:00Z", SHOP, TOKYO), Openness::Open);
    }

    #[test]
    fn no_hours_and_unknown_rules_are_unknown() {
        assert_eq!(state("2026-12-01T12:00", "", ZURICH), Openness::Unknown);
        assert_eq!(state("2026-12-01T12:00", "Mo-Su 08:00-20:00 unknown", ZURICH), Openness::Unknown);
        assert_eq!(state("2026-12-01T12:00", "not hours at all", ZURICH), Openness::Unknown);
    }

    #[test]
    fn at_sea_the_nautical_zone() {
        // The zone polygons cover the oceans with nautical zones (Etc/GMT+8 at 120° W): 12:00
        // UTC there is 04:00 (closed), 20:00 UTC is noon (open).
        assert_eq!(state("2026-12-01T12:00:00Z", SHOP, (-40.0, -120.0)), Openness::Closed);
        assert_eq!(state("2026-12-01T20:00:00Z", SHOP, (-40.0, -120.0)), Openness::Open);
    }
}
