//! The checks a loaded snapshot passes before it serves: every index the query path follows
//! points inside its table.

use super::Snapshot;
use crate::model::SourceType;

impl Snapshot {
    /// Checks every index the query path follows, so a corrupt file fails at load, not as a
    /// panic inside a request.
    pub(super) fn validate(&self) -> std::result::Result<(), String> {
        let n = self.lat.len() as u32;
        let mut prev_end = 0;
        for b in &self.brands {
            if b.row_start != prev_end || b.row_start > b.row_end || b.row_end > n {
                return Err(format!("brand {} has an invalid row range", b.name));
            }
            prev_end = b.row_end;
        }
        if prev_end != n {
            return Err("brand ranges do not cover every row".into());
        }
        for t in &self.tickers {
            if t.brand as usize >= self.brands.len() {
                return Err(format!("ticker {} names a missing brand", t.ticker));
            }
        }
        let strings = self.strings.len() as u32;
        let text_ok = self.text.iter().chain([&self.alias_id]).all(|c| c.iter().all(|&id| id < strings));
        if !text_ok {
            return Err("a text column points outside the string pool".into());
        }
        if self.country.iter().any(|&c| c as usize >= self.countries.len()) {
            return Err("a row points outside the country table".into());
        }
        let a = &self.alias_start;
        if a.windows(2).any(|w| w[0] > w[1]) || a.last().copied().unwrap_or(0) as usize != self.alias_source.len() {
            return Err("alias offsets are invalid".into());
        }
        if self.alias_source.iter().any(|&s| SourceType::from_u8(s).is_none()) {
            return Err("unknown source type in alias_sources".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::model::{SourceMask, SourceType, CONFIDENCE_FLOOR};
    use crate::records::{BrandRecord, SnapshotMeta, TickerRecord};
    use crate::snapshot::{RowBuilder, Snapshot, SnapshotBuilder, TextColumn};

    /// A row: its brand, its country and its (source, id) pairs.
    type Row = (u32, &'static str, &'static [(SourceType, &'static str)]);

    /// A valid snapshot written and loaded through the file: Alpha (three rows in two countries,
    /// with aliases), Empty (no rows), Beta (two rows, the last brand with rows), one ticker.
    fn valid(name: &str) -> Snapshot {
        let brands = vec![BrandRecord::new("Alpha"), BrandRecord::new("Empty"), BrandRecord::new("Beta")];
        let tickers = vec![TickerRecord { ticker: "BET".into(), exchange: "NYSE".into(), brand: 2, company: "Beta Inc".into(), portfolio: vec![] }];
        let mut b = SnapshotBuilder::new(SnapshotMeta::default(), brands, Vec::new(), tickers);
        let rows: [Row; 5] = [
            (0, "US", &[(SourceType::Atp, "a/1"), (SourceType::Osm, "node/1")]),
            (0, "US", &[]),
            (0, "CA", &[(SourceType::Overture, "ovt-1")]),
            (2, "US", &[(SourceType::Fsq, "fsq-1"), (SourceType::Fsq, "fsq-2")]),
            (2, "MX", &[]),
        ];
        for (i, (brand, country, aliases)) in rows.into_iter().enumerate() {
            let mut sources = SourceMask::default();
            aliases.iter().for_each(|(s, _)| sources.insert(*s));
            b.push(&RowBuilder {
                brand,
                lat: 10.0 + i as f64,
                lng: 20.0 + i as f64,
                id: i as u64 + 1,
                name: format!("store {i}"),
                address: format!("{i} Main St"),
                city: "Springfield".into(),
                state: "IL".into(),
                postcode: format!("6270{i}"),
                phone: format!("+1 217 555 010{i}"),
                opening_hours: String::new(),
                country: country.into(),
                confidence: CONFIDENCE_FLOOR + 0.1,
                provenance: true,
                sources,
                aliases: aliases.iter().map(|(s, id)| (*s, id.to_string())).collect(),
                ..RowBuilder::default()
            });
        }
        let dir: PathBuf = std::env::temp_dir().join(format!("storemap-core-validate-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("snapshot.smap");
        b.write(&path).unwrap();
        let snap = Snapshot::load(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        let snap = snap.unwrap();
        // What the corruptions below rely on.
        let ranges: Vec<(u32, u32)> = snap.brands.iter().map(|b| (b.row_start, b.row_end)).collect();
        assert_eq!(ranges, [(0, 3), (3, 3), (3, 5)]);
        assert_eq!(snap.countries.len(), 3);
        // Rows sort CA, US, US for Alpha, then MX, US for Beta: 1, 2, 0, 0 and 2 aliases.
        assert_eq!(snap.alias_start, [0, 1, 3, 3, 3, 5]);
        snap
    }

    /// Loads a fresh valid snapshot, corrupts it and returns what `validate` says.
    fn corrupted(name: &str, corrupt: impl FnOnce(&mut Snapshot)) -> Result<(), String> {
        let mut s = valid(name);
        corrupt(&mut s);
        s.validate()
    }

    #[test]
    fn the_snapshot_as_written_validates() {
        assert_eq!(valid("intact").validate(), Ok(()));
    }

    #[test]
    fn a_brand_with_an_invalid_row_range() {
        let err = |name: &str| Err(format!("brand {name} has an invalid row range"));
        // Past the last row.
        assert_eq!(corrupted("range-past-end", |s| s.brands[2].row_end = 6), err("Beta"));
        // Ending before it starts.
        assert_eq!(corrupted("range-reversed", |s| s.brands[1].row_end = 2), err("Empty"));
        // A gap after the previous brand.
        assert_eq!(corrupted("range-gap", |s| s.brands[2].row_start = 4), err("Beta"));
        // Overlapping the previous brand.
        assert_eq!(corrupted("range-overlap", |s| s.brands[0].row_end = 4), err("Empty"));
        // Not starting at row 0.
        assert_eq!(corrupted("range-start", |s| s.brands[0].row_start = 1), err("Alpha"));
    }

    #[test]
    fn brand_ranges_that_do_not_cover_every_row() {
        let err = Err("brand ranges do not cover every row".to_string());
        assert_eq!(corrupted("cover-short", |s| s.brands[2].row_end = 4), err);
        assert_eq!(corrupted("cover-none", |s| s.brands.clear()), err);
    }

    #[test]
    fn a_ticker_naming_a_missing_brand() {
        let err = Err("ticker BET names a missing brand".to_string());
        assert_eq!(corrupted("ticker-next", |s| s.tickers[0].brand = 3), err);
        assert_eq!(corrupted("ticker-max", |s| s.tickers[0].brand = u32::MAX), err);
        assert_eq!(corrupted("ticker-last", |s| s.tickers[0].brand = 1), Ok(()), "the last brand is a brand");
    }

    #[test]
    fn a_text_column_pointing_outside_the_string_pool() {
        let err = Err("a text column points outside the string pool".to_string());
        for c in TextColumn::ALL {
            let name = format!("text-{}", c.key());
            assert_eq!(corrupted(&name, |s| s.text[c as usize][4] = s.strings.len() as u32), err, "{c:?}");
            let name = format!("text-{}-last", c.key());
            assert_eq!(corrupted(&name, |s| s.text[c as usize][4] = s.strings.len() as u32 - 1), Ok(()), "{c:?}: the pool's last string");
        }
        assert_eq!(corrupted("alias-id", |s| s.alias_id[2] = s.strings.len() as u32), err, "source ids are text too");
        assert_eq!(corrupted("alias-id-max", |s| s.alias_id[0] = u32::MAX), err);
    }

    #[test]
    fn a_row_outside_the_country_table() {
        let err = Err("a row points outside the country table".to_string());
        assert_eq!(corrupted("country", |s| s.country[1] = 3), err);
        assert_eq!(corrupted("country-max", |s| s.country[4] = u16::MAX), err);
        assert_eq!(corrupted("country-last", |s| s.country[1] = 2), Ok(()), "the table's last country");
    }

    #[test]
    fn invalid_alias_offsets() {
        let err = Err("alias offsets are invalid".to_string());
        assert_eq!(corrupted("alias-decreasing", |s| s.alias_start[2] = 0), err);
        assert_eq!(corrupted("alias-last-short", |s| s.alias_start[5] = 4), err);
        assert_eq!(corrupted("alias-last-long", |s| s.alias_start[5] = 6), err);
        assert_eq!(corrupted("alias-source-longer", |s| s.alias_source.push(0)), err, "offsets end before the pairs do");
    }

    #[test]
    fn an_unknown_source_type_in_alias_sources() {
        let err = Err("unknown source type in alias_sources".to_string());
        assert_eq!(corrupted("source-4", |s| s.alias_source[0] = SourceType::ALL.len() as u8), err);
        assert_eq!(corrupted("source-max", |s| s.alias_source[4] = u8::MAX), err);
        assert_eq!(corrupted("source-last", |s| s.alias_source[0] = SourceType::Overture as u8), Ok(()), "the last source type");
    }
}
