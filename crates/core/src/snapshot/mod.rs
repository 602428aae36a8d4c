//! The serving snapshot: one versioned file that the pipeline writes and the service loads.
//!
//! Layout: an 8-byte magic, the format version, a section table (name, offset, length), then
//! each section 8-byte aligned. Row data is columnar, one little-endian array per field, so a
//! load is a read plus one typed copy per column (no per-row parsing). Small tables (brands,
//! cities, tickers, metadata) are JSON sections. Rows are sorted by brand, so a brand's rows are
//! one contiguous range and a query scans only that range.

mod builder;
mod columns;
mod file;
mod load;
mod validate;

use crate::aliases::AliasIndex;
use crate::gazetteer::Gazetteer;
use crate::model::{is_servable, SourceMask, SourceType, StorefrontType, FLAG_COMMUNITY_ONLY, FLAG_PROVENANCE};
use crate::records::{BrandRecord, CityRecord, SnapshotMeta, TickerRecord};
use crate::strings::StringPool;

pub use builder::{PackedRows, RowBuilder, RowPacker, SnapshotBuilder};
pub use columns::TextColumn;
use columns::{TextColumns, TimeColumn};
pub(crate) use file::temp_path;

/// The serving snapshot's file name in a data folder.
pub const SNAPSHOT_FILE: &str = "snapshot.smap";
/// The snapshot a build replaced, kept so an operator can roll back (`storemap data rollback`).
pub const PREVIOUS_SNAPSHOT_FILE: &str = "snapshot.prev.smap";

pub(crate) const MAGIC: &[u8; 8] = b"STOREMAP";
/// Bumped whenever the layout changes; a server refuses snapshots of another version.
pub const FORMAT_VERSION: u32 = 3;
/// Version 1 files (no checksum) still load, unverified, and version 2 files (no opening
/// hours) load with none, so an upgrade does not strand a snapshot; everything written now is
/// version 3.
pub const OLDEST_READABLE: u32 = 1;
/// The last section of a version 2 file: the CRC-32 of every byte before it (the header,
/// the section table with this entry, every other section), then four zero bytes. A file
/// cut short or changed on disk fails to load instead of serving wrong rows.
pub(crate) const CHECKSUM_SECTION: &str = "checksum";
/// Stored in the time columns for "no value".
pub(crate) const NULL_TIME: i64 = i64::MIN;

/// A loaded snapshot. Columns are public to the crate so the query and the writers read them
/// directly.
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) meta: SnapshotMeta,
    pub(crate) brands: Vec<BrandRecord>,
    pub(crate) cities: Gazetteer,
    pub(crate) tickers: Vec<TickerRecord>,
    pub(crate) countries: Vec<String>,
    pub(crate) strings: StringPool,
    pub(crate) lat: Vec<f64>,
    pub(crate) lng: Vec<f64>,
    pub(crate) id: Vec<u64>,
    /// String-pool ids, one column per `TextColumn`.
    pub(crate) text: TextColumns,
    pub(crate) country: Vec<u16>,
    pub(crate) last_updated: TimeColumn,
    pub(crate) last_verified: TimeColumn,
    pub(crate) confidence: Vec<f32>,
    pub(crate) storefront: Vec<u8>,
    pub(crate) sources: Vec<u8>,
    pub(crate) flags: Vec<u8>,
    pub(crate) alias_start: Vec<u32>,
    pub(crate) alias_source: Vec<u8>,
    pub(crate) alias_id: Vec<u32>,
    pub(crate) aliases: AliasIndex,
}

impl Snapshot {
    pub fn meta(&self) -> &SnapshotMeta {
        &self.meta
    }
    pub fn brands(&self) -> &[BrandRecord] {
        &self.brands
    }
    /// The gazetteer as records, in the order the snapshot was built with.
    pub fn cities(&self) -> Vec<CityRecord> {
        (0..self.cities.len()).map(|i| self.cities.record(i)).collect()
    }
    pub fn tickers(&self) -> &[TickerRecord] {
        &self.tickers
    }
    pub fn aliases(&self) -> &AliasIndex {
        &self.aliases
    }
    pub fn row_count(&self) -> usize {
        self.lat.len()
    }
    pub fn countries(&self) -> &[String] {
        &self.countries
    }

    /// The brand whose range holds row `r`.
    pub fn brand_of_row(&self, r: u32) -> u32 {
        (self.brands.partition_point(|b| b.row_end <= r)) as u32
    }

    /// The ticker mapped to a brand, if any (the first when several map to it).
    pub fn ticker_of(&self, brand: u32) -> Option<&str> {
        self.ticker_record_of(brand).map(|t| t.ticker.as_str())
    }

    /// The ticker row of a brand, if any (the first when several map to it): the listed company
    /// it belongs to and its exchange.
    pub fn ticker_record_of(&self, brand: u32) -> Option<&TickerRecord> {
        self.tickers.iter().find(|t| t.brand == brand)
    }

    // Row accessors, for the pipeline's report and for tests.
    pub fn row_lat_lng(&self, r: usize) -> (f64, f64) {
        (self.lat[r], self.lng[r])
    }
    /// The row's stable id (served as `loc_` and 16 hex digits).
    pub fn row_id(&self, r: usize) -> u64 {
        self.id[r]
    }
    /// When the snapshot that served row `r` was made (its refresh time).
    pub fn row_last_updated(&self, r: usize) -> i64 {
        self.last_updated[r]
    }
    pub fn row_country(&self, r: usize) -> &str {
        &self.countries[self.country[r] as usize]
    }
    /// A text field of row `r` ("" when the row has none).
    pub fn row_text(&self, c: TextColumn, r: usize) -> &str {
        self.strings.get(self.text[c as usize][r])
    }
    /// The gating score, whether or not the row shows provenance.
    pub fn row_confidence(&self, r: usize) -> f32 {
        self.confidence[r]
    }
    pub fn row_has_provenance(&self, r: usize) -> bool {
        self.flags[r] & FLAG_PROVENANCE != 0
    }
    pub fn row_storefront(&self, r: usize) -> Option<StorefrontType> {
        StorefrontType::from_u8(self.storefront[r])
    }
    pub fn row_sources(&self, r: usize) -> SourceMask {
        SourceMask(self.sources[r])
    }
    pub fn row_is_community_only(&self, r: usize) -> bool {
        self.flags[r] & FLAG_COMMUNITY_ONLY != 0
    }
    /// Whether a data format may serve the row: the fixed confidence floor and no
    /// community-only rows.
    pub fn row_is_verified(&self, r: usize) -> bool {
        is_servable(self.row_is_community_only(r), self.confidence[r])
    }
    /// Row `r` as it was pushed (its brand as this snapshot numbers it), to copy it into
    /// another snapshot.
    pub fn row(&self, r: usize) -> RowBuilder {
        let text = |c: TextColumn| self.row_text(c, r).to_string();
        let last_verified = self.last_verified[r];
        RowBuilder {
            brand: self.brand_of_row(r as u32),
            lat: self.lat[r],
            lng: self.lng[r],
            id: self.id[r],
            name: text(TextColumn::Name),
            address: text(TextColumn::Address),
            city: text(TextColumn::City),
            state: text(TextColumn::State),
            postcode: text(TextColumn::Postcode),
            phone: text(TextColumn::Phone),
            opening_hours: text(TextColumn::OpeningHours),
            country: self.row_country(r).to_string(),
            last_updated: self.last_updated[r],
            confidence: self.confidence[r],
            provenance: self.row_has_provenance(r),
            last_verified: (last_verified != NULL_TIME).then_some(last_verified),
            storefront: self.row_storefront(r),
            sources: self.row_sources(r),
            community_only: self.row_is_community_only(r),
            aliases: self.row_aliases(r).map(|(s, a)| (s, a.to_string())).collect(),
        }
    }

    pub fn row_aliases(&self, r: usize) -> impl Iterator<Item = (SourceType, &str)> {
        let (a, b) = (self.alias_start[r] as usize, self.alias_start[r + 1] as usize);
        (a..b).map(move |i| (SourceType::from_u8(self.alias_source[i]).unwrap(), self.strings.get(self.alias_id[i])))
    }
}
