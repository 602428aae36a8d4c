//! A row's seven text fields, named once. The one list, in the file's section order, drives the
//! builder (which values are interned), the sections written and read, validation and the
//! accessors; writers name the fields they print through it.

/// A text field of a row; the snapshot stores each as a column of string-pool ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextColumn {
    Name,
    Address,
    City,
    State,
    Postcode,
    Phone,
    /// OSM's `opening_hours` syntax in its parser's normal form; empty when no source gave hours.
    OpeningHours,
}

/// One column of string-pool ids per text field, indexed by `TextColumn as usize`.
pub(crate) type TextColumns = [Vec<u32>; 7];

impl TextColumn {
    pub const ALL: [TextColumn; 7] =
        [TextColumn::Name, TextColumn::Address, TextColumn::City, TextColumn::State, TextColumn::Postcode, TextColumn::Phone, TextColumn::OpeningHours];

    /// The column's section in the file, and its field's name in JSON, CSV and GeoJSON.
    pub const fn key(self) -> &'static str {
        match self {
            TextColumn::Name => "name",
            TextColumn::Address => "address",
            TextColumn::City => "city",
            TextColumn::State => "state",
            TextColumn::Postcode => "postcode",
            TextColumn::Phone => "phone",
            TextColumn::OpeningHours => "opening_hours",
        }
    }

    /// Values many rows share (names, cities, states, postcodes, hours: a chain's stores keep
    /// the same few) are interned once; values a
    /// row has alone (addresses, phone numbers) are appended without a lookup.
    pub const fn interned(self) -> bool {
        !matches!(self, TextColumn::Address | TextColumn::Phone)
    }
}

/// A time column (seconds, `NULL_TIME` for none) held as 16-bit codes into its distinct values
/// when it has few: a snapshot's rows share one refresh time, and each source import gives its
/// rows one verification time, so at scale 0.1 the two columns held 2 and 120 values in 8 bytes
/// a row each. A column with more than 65,536 values stays as it is in the file.
#[derive(Debug)]
pub(crate) enum TimeColumn {
    Coded { values: Vec<i64>, codes: Vec<u16> },
    Plain(Vec<i64>),
}

impl TimeColumn {
    pub(crate) fn new(times: Vec<i64>) -> TimeColumn {
        let mut index: std::collections::HashMap<i64, u16> = std::collections::HashMap::new();
        let mut values = Vec::new();
        let mut codes = Vec::with_capacity(times.len());
        for &t in &times {
            let code = match index.get(&t) {
                Some(&c) => c,
                None if values.len() <= u16::MAX as usize => {
                    let c = values.len() as u16;
                    index.insert(t, c);
                    values.push(t);
                    c
                }
                None => return TimeColumn::Plain(times),
            };
            codes.push(code);
        }
        TimeColumn::Coded { values, codes }
    }
}

impl std::ops::Index<usize> for TimeColumn {
    type Output = i64;
    #[inline]
    fn index(&self, r: usize) -> &i64 {
        match self {
            TimeColumn::Coded { values, codes } => &values[codes[r] as usize],
            TimeColumn::Plain(times) => &times[r],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_column_gives_back_every_value_coded_or_plain() {
        let few: Vec<i64> = (0..1000).map(|i| [i64::MIN, 1_795_678_334, 0, -5][i % 4]).collect();
        let col = TimeColumn::new(few.clone());
        assert!(matches!(&col, TimeColumn::Coded { values, .. } if values.len() == 4));
        assert!((0..few.len()).all(|r| col[r] == few[r]));
        // One value past what 16-bit codes hold: kept plain, still whole.
        let many: Vec<i64> = (0..65_537).map(|i| i * 7).collect();
        let col = TimeColumn::new(many.clone());
        assert!(matches!(col, TimeColumn::Plain(_)));
        assert!((0..many.len()).all(|r| col[r] == many[r]));
        let edge: Vec<i64> = (0..65_536).collect();
        assert!(matches!(TimeColumn::new(edge), TimeColumn::Coded { .. }), "exactly 65,536 values fit");
    }

    #[test]
    fn all_lists_each_column_once_at_its_index() {
        for (i, c) in TextColumn::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c:?}");
        }
        let mut keys: Vec<&str> = TextColumn::ALL.iter().map(|c| c.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), TextColumn::ALL.len());
    }
}
