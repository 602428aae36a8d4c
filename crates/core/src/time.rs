//! ISO-8601 UTC timestamps <-> unix seconds, without a date library: the snapshot stores seconds
//! and the writers print `YYYY-MM-DDTHH:MM:SSZ`.

/// Seconds in a day: the one home of the number for every crate.
pub const DAY_S: i64 = 86_400;

/// How far past the time it is stamped for a date may stand and still be believed: a data
/// refresh planned ahead, or a source refreshed after a build's as-of, is weeks; a year more
/// is a typed year or a broken clock (2062, 9999). Limits a command's `--as-of` against the
/// machine's clock, and a source's own dates against the build's as-of.
pub const AHEAD_MAX_S: i64 = 366 * DAY_S;

/// Days since 1970-01-01 for a civil date (Howard Hinnant's days_from_civil).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

pub(crate) fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Formats unix seconds as `2026-11-01T00:00:00Z`.
pub fn format_iso(secs: i64) -> String {
    let days = secs.div_euclid(DAY_S);
    let rem = secs.rem_euclid(DAY_S);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

/// Days in month `m` (1-12) of year `y`, Gregorian.
fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS` with an optional fraction and `Z` or `±HH:MM`.
/// A day the month does not have is no time (publishers' impossible dates, such as an
/// AllThePlaces `end_date` of 2023-06-31, are then unread rather than moved to the next month).
pub fn parse_iso(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        if t.bytes().all(|c| c.is_ascii_digit()) {
            t.parse().ok()
        } else {
            None
        }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    // A day the month has: 2026-02-30 is not 2 March, as days_from_civil would make it.
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let mut secs = days_from_civil(y, mo, d) * DAY_S;
    if b.len() == 10 {
        return Some(secs);
    }
    if !(b[10] == b'T' || b[10] == b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || mi > 59 || se > 60 {
        return None;
    }
    secs += h * 3600 + mi * 60 + se;
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    match rest {
        "" | "Z" | "z" => Some(secs),
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) && &tz[3..4] == ":" => {
            let off = tz[1..3].parse::<i64>().ok()? * 3600 + tz[4..6].parse::<i64>().ok()? * 60;
            Some(if tz.starts_with('+') { secs - off } else { secs + off })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_known_instants() {
        assert_eq!(format_iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(parse_iso("2024-02-29T12:34:56Z"), Some(1_709_210_096));
        assert_eq!(format_iso(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(parse_iso("2026-11-01"), Some(1_793_491_200));
        assert_eq!(parse_iso("2026-11-01T02:00:00+02:00"), Some(1_793_491_200));
        assert_eq!(parse_iso("1969-12-31T23:59:59.5Z"), Some(-1));
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "2026", "2026-13-01", "2026-11-01T25:00:00Z", "2026-11-01Tab:00:00Z", "2026-11-01T00:00:00X"] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
    }

    #[test]
    fn refuses_days_the_month_does_not_have() {
        for bad in ["2026-02-29", "2026-02-30T00:00:00Z", "2026-04-31T12:00:00Z", "2100-02-29", "2026-06-00"] {
            assert_eq!(parse_iso(bad), None, "{bad}");
        }
        // Leap days of leap years (2000 is one, 2100 is not), and every month's last day.
        assert_eq!(parse_iso("2000-02-29"), Some(951_782_400));
        assert_eq!(parse_iso("2028-02-29"), Some(parse_iso("2028-03-01").unwrap() - 86_400));
        for (m, last) in [(1, 31), (3, 31), (4, 30), (6, 30), (9, 30), (11, 30), (12, 31)] {
            assert!(parse_iso(&format!("2026-{m:02}-{last:02}")).is_some(), "2026-{m:02}-{last:02}");
        }
    }
}
