//! A row's six text fields, named once. The one list, in the file's section order, drives the
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
}

/// One column of string-pool ids per text field, indexed by `TextColumn as usize`.
pub(crate) type TextColumns = [Vec<u32>; 6];

impl TextColumn {
    pub const ALL: [TextColumn; 6] = [TextColumn::Name, TextColumn::Address, TextColumn::City, TextColumn::State, TextColumn::Postcode, TextColumn::Phone];

    /// The column's section in the file, and its field's name in JSON, CSV and GeoJSON.
    pub const fn key(self) -> &'static str {
        match self {
            TextColumn::Name => "name",
            TextColumn::Address => "address",
            TextColumn::City => "city",
            TextColumn::State => "state",
            TextColumn::Postcode => "postcode",
            TextColumn::Phone => "phone",
        }
    }

    /// Values many rows share (names, cities, states, postcodes) are interned once; values a
    /// row has alone (addresses, phone numbers) are appended without a lookup.
    pub const fn interned(self) -> bool {
        !matches!(self, TextColumn::Address | TextColumn::Phone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_each_column_once_at_its_index() {
        for (i, c) in TextColumn::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "{c:?}");
        }
        let mut keys: Vec<&str> = TextColumn::ALL.iter().map(|c| c.key()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 6);
    }
}
