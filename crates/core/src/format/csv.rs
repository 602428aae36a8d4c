//! RFC 4180 CSV with the contract's column order (lat, lng) and CRLF line ends.

use super::text::{json_f64, needs_csv_quotes};
use super::{BrandCursor, TimeCache};
use crate::snapshot::{Snapshot, TextColumn, NULL_TIME};

/// The CSV header: the contract's nine columns in order, then the two DESIGN.md adds.
pub const CSV_HEADER: &str = "brand,name,lat,lng,country,state,city,postcode,address,phone,last_updated\r\n";

/// The column `include_hours` adds after `last_updated`: the contract fixes CSV at eleven
/// columns, so hours are a twelfth a client asks for.
pub const HOURS_COLUMN: &str = "opening_hours";

/// The header's columns, without the line end: the eleven, and the hours when asked for.
pub fn csv_columns(hours: bool) -> String {
    let base = CSV_HEADER.trim_end();
    if hours {
        format!("{base},{HOURS_COLUMN}")
    } else {
        base.to_string()
    }
}

pub(super) fn write_csv(snap: &Snapshot, rows: &[u32], hours: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(csv_columns(hours).as_bytes());
    out.extend_from_slice(b"\r\n");
    let mut row = CsvRows::new(hours);
    for &r in rows {
        row.write(snap, r as usize, out);
        out.extend_from_slice(b"\r\n");
    }
}

/// Writes CSV rows of one snapshot (without their line ends), keeping the brand cell and the
/// timestamp of the row before.
#[derive(Default)]
pub(super) struct CsvRows {
    brand: BrandCursor,
    times: TimeCache,
    /// The brand cell, quoted once per brand: rows come grouped by brand.
    brand_cell: (usize, Vec<u8>),
    /// Adds the opening_hours column.
    hours: bool,
}

impl CsvRows {
    pub(super) fn new(hours: bool) -> CsvRows {
        CsvRows { hours, ..CsvRows::default() }
    }

    pub(super) fn write(&mut self, snap: &Snapshot, r: usize, out: &mut Vec<u8>) {
        let name = self.brand.name(snap, r as u32);
        if name.as_ptr() as usize != self.brand_cell.0 {
            self.brand_cell.1.clear();
            csv_field(&mut self.brand_cell.1, name);
            self.brand_cell.0 = name.as_ptr() as usize;
        }
        out.extend_from_slice(&self.brand_cell.1);
        out.push(b',');
        csv_field(out, snap.row_text(TextColumn::Name, r));
        out.push(b',');
        json_f64(out, snap.lat[r]);
        out.push(b',');
        json_f64(out, snap.lng[r]);
        out.push(b',');
        out.extend_from_slice(snap.countries[snap.country[r] as usize].as_bytes());
        for c in [TextColumn::State, TextColumn::City, TextColumn::Postcode, TextColumn::Address, TextColumn::Phone] {
            out.push(b',');
            csv_field(out, snap.row_text(c, r));
        }
        out.push(b',');
        if snap.last_updated[r] != NULL_TIME {
            out.extend_from_slice(self.times.get(snap.last_updated[r]));
        }
        if self.hours {
            out.push(b',');
            csv_field(out, snap.row_text(TextColumn::OpeningHours, r));
        }
    }
}

/// One text cell. A cell a spreadsheet would read as a formula (its first character `=`, `+`,
/// `-`, `@`, a tab or a carriage return: names and addresses come from community edits and
/// scrapes, so `=HYPERLINK(...)` can reach a row) gets a leading apostrophe, as OWASP's "CSV
/// injection" advice says, and is quoted; a signed number such as an E.164 phone number,
/// `+17585550185`, stays as it is, since no formula can hide in digits.
fn csv_field(out: &mut Vec<u8>, s: &str) {
    let formula = starts_formula(s.as_bytes());
    if formula || needs_csv_quotes(s.as_bytes()) {
        out.push(b'"');
        if formula {
            out.push(b'\'');
        }
        for b in s.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

/// Whether a spreadsheet would take the cell for a formula: it begins with one of the
/// characters that start one, and is not a signed number written with digits, spaces and the
/// punctuation of phone numbers (`+1 (758) 555-0185`, `-12.5`).
fn starts_formula(b: &[u8]) -> bool {
    match b.first() {
        Some(b'=' | b'@' | b'\t' | b'\r') => true,
        Some(b'+' | b'-') => !b[1..].iter().all(|c| c.is_ascii_digit() || matches!(c, b' ' | b'.' | b'-' | b'(' | b')' | b'/')),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_csv_fields_only_when_needed() {
        let mut out = Vec::new();
        csv_field(&mut out, "plain");
        out.push(b'|');
        csv_field(&mut out, "Smith, \"Jr\"");
        assert_eq!(String::from_utf8(out).unwrap(), "plain|\"Smith, \"\"Jr\"\"\"");
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_is_written_as_text() {
        let cell = |s: &str| {
            let mut out = Vec::new();
            csv_field(&mut out, s);
            String::from_utf8(out).unwrap()
        };
        // OWASP's examples of formula injection, and a name from a community edit.
        assert_eq!(cell("=HYPERLINK(\"http://x\",\"y\")"), "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
        assert_eq!(cell("-2+3+cmd|' /C calc'!A0"), "\"'-2+3+cmd|' /C calc'!A0\"");
        assert_eq!(cell("+SUM(A1:A9)"), "\"'+SUM(A1:A9)\"");
        assert_eq!(cell("@HOME"), "\"'@HOME\"");
        assert_eq!(cell("\tx"), "\"'\tx\"");
        // Numbers stay numbers: phones in E.164 and written out, negative values.
        assert_eq!(cell("+17585550185"), "+17585550185");
        assert_eq!(cell("+1 (758) 555-0185"), "+1 (758) 555-0185");
        assert_eq!(cell("-12.5"), "-12.5");
        // A sign or an at-sign inside a cell is nothing.
        assert_eq!(cell("Marks & Spencer - Oxford St"), "Marks & Spencer - Oxford St");
        assert_eq!(cell("a=b"), "a=b");
    }
}
