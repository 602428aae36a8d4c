//! The small tables a snapshot carries beside its row columns: the build's facts, brands,
//! cities and tickers. Their own module, so brand resolution (`aliases`) and the snapshot
//! format can both use them without needing each other.

use serde::{Deserialize, Serialize};

/// Facts about the build, written once by the pipeline.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct SnapshotMeta {
    /// Identifies this snapshot's content; caches key on it.
    pub snapshot_version: String,
    /// Reference time of the build (the refresh time stamped into `last_updated`).
    pub as_of: String,
    /// True for the generated default dataset.
    pub synthetic: bool,
    pub scale: Option<f64>,
    pub seed: Option<u64>,
    /// Rows read per source (before reconciliation), keyed by source_type.
    pub rows_by_source: std::collections::BTreeMap<String, u64>,
    /// Rows the importers skipped, with reasons, keyed by source_type.
    pub skipped_by_source: std::collections::BTreeMap<String, u64>,
    /// Sources that were configured off for this build.
    pub disabled_sources: Vec<String>,
    pub multi_source: bool,
    /// Licences AllThePlaces spiders declared, to the spiders declaring each (sorted).
    #[serde(default)]
    pub atp_spider_licences: std::collections::BTreeMap<String, Vec<String>>,
    /// What each source's import read, kept and skipped (by reason), keyed by source_type.
    #[serde(default)]
    pub imports: std::collections::BTreeMap<String, SourceImport>,
    /// The region an import was limited to (`--country`, `--bbox`), as given.
    #[serde(default)]
    pub region: Option<String>,
}

/// One source's import, as `data report` shows it. Every row read is kept or skipped for
/// exactly one reason: `rows_read == rows_kept + Σ skipped`.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct SourceImport {
    pub files: u64,
    pub files_empty: u64,
    pub files_failed: u64,
    pub rows_read: u64,
    pub rows_kept: u64,
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// Kept rows that ended in a reconciled row with another source.
    pub rows_corroborated: u64,
    /// Rows the importer took (before the pipeline's region and brand checks) with
    /// `opening_hours` the grammar reads, and those whose hours it did not read (dropped).
    /// Absent from snapshots written before hours were read: 0.
    #[serde(default)]
    pub rows_with_hours: u64,
    #[serde(default)]
    pub hours_invalid: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BrandRecord {
    /// Canonical name, unique in the snapshot.
    pub name: String,
    pub wikidata: Option<String>,
    pub nsi_id: Option<String>,
    pub category: Option<String>,
    /// Other names that resolve to this brand (NSI match names, names in other scripts).
    pub alt_names: Vec<String>,
    /// Filled by the builder.
    #[serde(default)]
    pub row_start: u32,
    #[serde(default)]
    pub row_end: u32,
    /// Rows a data format may serve (confidence >= floor and not community-only).
    #[serde(default)]
    pub verified_count: u32,
}

/// What names a brand across refreshes and catalog versions (its stores keep their ids within
/// it): its wikidata id, else its name-suggestion-index id, else its name.
pub fn brand_identity<'a>(wikidata: Option<&'a str>, nsi_id: Option<&'a str>, name: &'a str) -> &'a str {
    wikidata.filter(|w| !w.is_empty()).or(nsi_id.filter(|n| !n.is_empty())).unwrap_or(name)
}

impl BrandRecord {
    pub fn new(name: impl Into<String>) -> BrandRecord {
        BrandRecord { name: name.into(), wikidata: None, nsi_id: None, category: None, alt_names: Vec::new(), row_start: 0, row_end: 0, verified_count: 0 }
    }
    pub fn pool_count(&self) -> u32 {
        self.row_end - self.row_start
    }

    /// What names the brand across catalog versions: see [`brand_identity`].
    pub fn identity(&self) -> &str {
        brand_identity(self.wikidata.as_deref(), self.nsi_id.as_deref(), &self.name)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CityRecord {
    pub name: String,
    pub country: String,
    pub admin1: String,
    pub lat: f64,
    pub lng: f64,
    pub population: u64,
    /// The city's other name, its English one beside the local one (Munich, München); a
    /// `city` filter finds the city, and its rows, by either. Empty for most cities, and
    /// absent from a snapshot written before it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub also: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TickerRecord {
    pub ticker: String,
    pub exchange: String,
    /// Index into the brand table: the portfolio's primary brand.
    pub brand: u32,
    pub company: String,
    /// Other brands of the portfolio (by name), for documentation.
    pub portfolio: Vec<String>,
}
