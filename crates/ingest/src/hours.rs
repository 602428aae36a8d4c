//! `opening_hours` as OpenStreetMap and AllThePlaces publish it (OSM's own syntax, e.g.
//! `Mo-Fr 08:00-20:00; Sa 09:00-18:00; PH off`), read with the maintained parser of the
//! `opening-hours` crate and written back in its normal form, so that one store's hours read
//! the same whichever source gave them. A value the grammar rejects is dropped and counted.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Longer values are not hours: OSM caps a tag value at 255 characters; AllThePlaces' longest
/// real values are well under this.
const MAX_LEN: usize = 1_024;

/// What a source's `opening_hours` value came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hours {
    /// No value, or an empty one.
    Absent,
    /// The value in the parser's normal form.
    Valid(String),
    /// A value the grammar rejects (or too long to be hours): dropped, and counted.
    Invalid,
}

impl Hours {
    pub fn valid(self) -> Option<String> {
        match self {
            Hours::Valid(s) => Some(s),
            _ => None,
        }
    }
}

/// The value's normal form, if the grammar reads it. The parser is another crate's: a panic in
/// it on some input stops this value, never the import.
fn parse(value: &str) -> Option<String> {
    catch_unwind(AssertUnwindSafe(|| opening_hours_syntax::parse(value).map(|e| e.normalize().to_string()))).ok()?.ok()
}

/// `9:00` as `09:00`: a one-digit hour is the commonest slip in real values (a Swiss mall's 67
/// shops in the OSM sample write `Oct 31 9:00-19:00`), which the grammar refuses and OSM's
/// reference JavaScript parser reads with a warning.
fn pad_hours(value: &str) -> String {
    let b = value.as_bytes();
    let mut out = String::with_capacity(value.len() + 4);
    for (i, c) in value.char_indices() {
        let lone_digit = c.is_ascii_digit()
            && (i == 0 || !b[i - 1].is_ascii_digit())
            && b.get(i + 1) == Some(&b':')
            && b.get(i + 2).is_some_and(u8::is_ascii_digit)
            && b.get(i + 3).is_some_and(u8::is_ascii_digit);
        if lone_digit {
            out.push('0');
        }
        out.push(c);
    }
    out
}

const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `Dec 25,26 off` as `Dec 25,Dec 26 off`: the grammar wants a month before every day of a
/// list, and people write it once (the same mall's `Dec 15,22 10:00-17:00`).
fn spell_months(value: &str) -> String {
    // The grammar's words are ASCII; a value that is not is not mended (read bytewise below).
    if !value.is_ascii() {
        return value.to_string();
    }
    let b = value.as_bytes();
    let mut out = String::with_capacity(value.len() + 8);
    // The month (with its year, when one leads it) of the list of days being read, until a
    // time, a rule's end or another word.
    let mut month: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() {
            let end = (i..b.len()).find(|&j| !b[j].is_ascii_alphabetic()).unwrap_or(b.len());
            let word = &value[i..end];
            // "2025 Dec 24,31": the year is the first date's only, so it is repeated too.
            let year = (i >= 5 && b[i - 1] == b' ' && b[i - 5..i - 1].iter().all(u8::is_ascii_digit) && (i == 5 || !b[i - 6].is_ascii_digit()))
                .then(|| &value[i - 5..i]);
            month = MONTHS.iter().find(|m| **m == word).map(|m| format!("{}{m}", year.unwrap_or("")));
            out.push_str(word);
            i = end;
            continue;
        }
        if c == b':' || c == b';' {
            month = None;
        }
        if let (b',', Some(m)) = (c, &month) {
            let digits = (i + 1..b.len()).take_while(|&j| b[j].is_ascii_digit()).count();
            if (1..=2).contains(&digits) && b.get(i + 1 + digits) != Some(&b':') {
                out.push(',');
                out.push_str(m);
                out.push(' ');
                i += 1;
                continue;
            }
        }
        out.push(c as char);
        i += 1;
    }
    out
}

/// Reads one value: as written, else with the habits above mended.
pub fn normalize(raw: Option<&str>) -> Hours {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else { return Hours::Absent };
    if raw.len() > MAX_LEN {
        return Hours::Invalid;
    }
    // A chain's stores share a few values, so each thread keeps what it has read: parsing every
    // row again made hours most of a scale-1 import's time (OpenStreetMap 19 s to 50 s).
    SEEN.with(|seen| {
        if let Some(h) = seen.borrow().get(raw) {
            return h.clone();
        }
        let h = match parse(raw).or_else(|| parse(&spell_months(&pad_hours(raw)))) {
            Some(normal) => Hours::Valid(normal),
            None => Hours::Invalid,
        };
        let mut seen = seen.borrow_mut();
        if seen.len() >= SEEN_MAX {
            seen.clear();
        }
        seen.insert(raw.into(), h.clone());
        h
    })
}

/// Values a thread remembers at most (then it starts again): a few megabytes.
const SEEN_MAX: usize = 20_000;

thread_local! {
    static SEEN: std::cell::RefCell<std::collections::HashMap<Box<str>, Hours>> = std::cell::RefCell::new(std::collections::HashMap::new());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_publishers_write_read_and_come_back_in_one_form() {
        for (raw, want) in [
            ("24/7", "24/7"),
            // Closed is what no rule opens: a trailing "Su off" says nothing more.
            ("Mo-Fr 08:00-20:00; Sa 09:00-18:00; Su off", "Mo-Fr 08:00-20:00; Sa 09:00-18:00"),
            // The same week written two ways is one value.
            ("Mo,Tu,We,Th,Fr 08:00-20:00", "Mo-Fr 08:00-20:00"),
            ("Mo-Sa 7:30-19:00", "Mo-Sa 07:30-19:00"),
            ("Mo-Sa 08:00-12:00,13:00-18:00; Dec 25,26 off; Dec 24 7:30-16:00", "Mo-Sa 08:00-12:00,13:00-18:00; Dec 25,Dec 26 closed; Dec 24 07:30-16:00"),
            // A year leads its own date only: it is repeated with the month.
            ("Mo-Fr 08:00-18:00; 2025 Dec 24,31 off", "Mo-Fr 08:00-18:00; 2025 Dec 24,2025 Dec 31 closed"),
        ] {
            assert_eq!(normalize(Some(raw)), Hours::Valid(want.to_string()), "{raw}");
        }
        assert_eq!(normalize(None), Hours::Absent);
        assert_eq!(normalize(Some("  ")), Hours::Absent);
        for bad in ["open when we feel like it", "Mo-Fr 8am-5pm", "Mo-Fr 08:00-", &"Mo 08:00-09:00; ".repeat(100)] {
            assert_eq!(normalize(Some(bad)), Hours::Invalid, "{bad}");
        }
    }
}
