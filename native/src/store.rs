//! A loaded snapshot and its lookups: brands, names, per-country counts, facts about the build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use storemap_core::{ChangeFeed, NearbyIndex, Snapshot, SourceImport};

use crate::error::{guarded, run, settle, Code, Failure, Outcome};

/// The change feed of a snapshot's data folder: the history read up to the snapshot, none
/// (the folder has no history that reaches it), or why it could not be read. A history that
/// cannot be read never stops the snapshot from serving; only the feed says so.
#[derive(Debug)]
pub(crate) enum Feed {
    Ready(Arc<ChangeFeed>),
    Absent,
    Unreadable(String),
}

/// A loaded snapshot and its data folder's change feed. Cheap to share: queries borrow them
/// through an `Arc`.
#[napi]
pub struct Store {
    pub(crate) inner: Arc<Snapshot>,
    pub(crate) feed: Arc<Feed>,
    /// Nearest-store trees, built as requests need them.
    pub(crate) nearby: Arc<NearbyIndex>,
    path: String,
}

pub struct Loaded {
    snapshot: Snapshot,
    feed: Feed,
}

fn load(path: &str) -> Outcome<Loaded> {
    guarded(|| {
        let path = PathBuf::from(path);
        let snapshot = Snapshot::load(&path)?;
        let feed = match ChangeFeed::load(path.parent().unwrap_or(Path::new(".")), &snapshot) {
            Ok(Some(feed)) => Feed::Ready(Arc::new(feed)),
            Ok(None) => Feed::Absent,
            Err(e) => Feed::Unreadable(e.to_string()),
        };
        Ok(Loaded { snapshot, feed })
    })
}

impl Store {
    fn new(loaded: Loaded, path: String) -> Store {
        let nearby = Arc::new(NearbyIndex::new(&loaded.snapshot));
        Store { inner: Arc::new(loaded.snapshot), feed: Arc::new(loaded.feed), nearby, path }
    }
}

pub struct LoadTask {
    path: String,
}

impl Task for LoadTask {
    type Output = Outcome<Loaded>;
    type JsValue = Store;
    fn compute(&mut self) -> napi::Result<Outcome<Loaded>> {
        Ok(load(&self.path))
    }
    fn resolve(&mut self, env: Env, output: Outcome<Loaded>) -> napi::Result<Store> {
        Ok(Store::new(settle(env, output)?, std::mem::take(&mut self.path)))
    }
}

/// Loads a snapshot file on the libuv pool.
#[napi(ts_return_type = "Promise<Store>")]
pub fn load_store(path: String) -> AsyncTask<LoadTask> {
    AsyncTask::new(LoadTask { path })
}

/// Loads a snapshot file on the calling thread (CLI tools and tests).
#[napi]
pub fn load_store_sync(path: String) -> Result<Store, Code> {
    let loaded = load(&path)?;
    Ok(Store::new(loaded, path))
}

/// Which world a snapshot was built from: a synthetic build's scale and seed.
#[napi(object)]
pub struct SnapshotWorld {
    pub synthetic: bool,
    pub scale: Option<f64>,
    pub seed: Option<f64>,
}

/// A snapshot file's world, read from its build facts alone (not loaded: a scale-1 snapshot
/// loaded is a gigabyte the caller would hold until its next garbage collection).
#[napi]
pub fn snapshot_world_sync(path: String) -> Result<SnapshotWorld, Code> {
    run(|| {
        let m = storemap_core::Snapshot::read_meta(std::path::Path::new(&path))?;
        Ok(SnapshotWorld { synthetic: m.synthetic, scale: m.scale, seed: m.seed.map(|v| v as f64) })
    })
}

#[napi(object)]
pub struct CountryCount {
    pub country: String,
    pub location_count: u32,
}

#[napi(object)]
pub struct Resolved {
    pub brand: u32,
    pub name: String,
    /// name, variant, alt_name or ticker.
    pub by: String,
}

#[napi(object)]
pub struct BrandInfo {
    pub index: u32,
    pub name: String,
    pub wikidata: Option<String>,
    pub ticker: Option<String>,
    /// The listed company the brand's ticker is (its parent), where it has one.
    pub company: Option<String>,
    pub category: Option<String>,
    /// Rows a data format can serve (confidence >= 0.6, not community-only).
    pub location_count: u32,
    /// Every reconciled row, community-only included (what images draw).
    pub pool_count: u32,
}

/// What one source's import read, kept and skipped (`rows_read == rows_kept + Σ skipped`).
#[napi(object)]
pub struct ImportInfo {
    pub files: f64,
    #[napi(js_name = "files_empty")]
    pub files_empty: f64,
    #[napi(js_name = "files_failed")]
    pub files_failed: f64,
    #[napi(js_name = "rows_read")]
    pub rows_read: f64,
    #[napi(js_name = "rows_kept")]
    pub rows_kept: f64,
    pub skipped: BTreeMap<String, f64>,
    /// Kept rows that ended in a reconciled row with another source.
    #[napi(js_name = "rows_corroborated")]
    pub rows_corroborated: f64,
}

/// Facts about a snapshot's build and its size. Keys are the snapshot file's own (snake_case),
/// as `data report` and the status endpoint show them.
#[napi(object)]
pub struct SnapshotInfo {
    /// Identifies the content; caches key on it.
    #[napi(js_name = "snapshot_version")]
    pub snapshot_version: String,
    /// The build's reference time.
    #[napi(js_name = "as_of")]
    pub as_of: String,
    /// True for the generated default dataset.
    pub synthetic: bool,
    pub scale: Option<f64>,
    pub seed: Option<f64>,
    /// Rows read per source, before reconciliation.
    #[napi(js_name = "rows_by_source")]
    pub rows_by_source: BTreeMap<String, f64>,
    #[napi(js_name = "skipped_by_source")]
    pub skipped_by_source: BTreeMap<String, f64>,
    #[napi(js_name = "disabled_sources")]
    pub disabled_sources: Vec<String>,
    #[napi(js_name = "multi_source")]
    pub multi_source: bool,
    /// Licences AllThePlaces spiders declared, to the spiders declaring each.
    #[napi(js_name = "atp_spider_licences")]
    pub atp_spider_licences: BTreeMap<String, Vec<String>>,
    pub imports: BTreeMap<String, ImportInfo>,
    /// The region an import was limited to, as given.
    pub region: Option<String>,
    pub rows: u32,
    pub brands: u32,
    pub tickers: u32,
    /// The change feed's reach: the as-of of the oldest snapshot its history holds (the
    /// earliest `since` it answers); absent without a readable history.
    #[napi(js_name = "changes_since")]
    pub changes_since: Option<String>,
    /// Why there is no change feed: the folder has no history, or it cannot be read.
    #[napi(js_name = "changes_unavailable")]
    pub changes_unavailable: Option<String>,
}

fn counts(m: &BTreeMap<String, u64>) -> BTreeMap<String, f64> {
    m.iter().map(|(k, v)| (k.clone(), *v as f64)).collect()
}

fn import_info(i: &SourceImport) -> ImportInfo {
    ImportInfo {
        files: i.files as f64,
        files_empty: i.files_empty as f64,
        files_failed: i.files_failed as f64,
        rows_read: i.rows_read as f64,
        rows_kept: i.rows_kept as f64,
        skipped: counts(&i.skipped),
        rows_corroborated: i.rows_corroborated as f64,
    }
}

#[napi]
impl Store {
    #[napi(getter)]
    pub fn path(&self) -> String {
        self.path.clone()
    }

    /// The snapshot's build facts and size.
    #[napi]
    pub fn info(&self) -> Result<SnapshotInfo, Code> {
        run(|| {
            let s = &self.inner;
            let m = s.meta();
            Ok(SnapshotInfo {
                snapshot_version: m.snapshot_version.clone(),
                as_of: m.as_of.clone(),
                synthetic: m.synthetic,
                scale: m.scale,
                seed: m.seed.map(|v| v as f64),
                rows_by_source: counts(&m.rows_by_source),
                skipped_by_source: counts(&m.skipped_by_source),
                disabled_sources: m.disabled_sources.clone(),
                multi_source: m.multi_source,
                atp_spider_licences: m.atp_spider_licences.clone(),
                imports: m.imports.iter().map(|(k, v)| (k.clone(), import_info(v))).collect(),
                region: m.region.clone(),
                rows: s.row_count() as u32,
                brands: s.brands().len() as u32,
                tickers: s.tickers().len() as u32,
                changes_since: match &*self.feed {
                    Feed::Ready(f) => Some(storemap_core::format_iso(f.reaches_back_to())),
                    _ => None,
                },
                changes_unavailable: match &*self.feed {
                    Feed::Ready(_) => None,
                    Feed::Absent => Some("no history".into()),
                    Feed::Unreadable(why) => Some(why.clone()),
                },
            })
        })
    }

    #[napi]
    pub fn resolve(&self, name: String) -> Result<Option<Resolved>, Code> {
        run(|| {
            Ok(self.inner.aliases().resolve(&name).map(|r| Resolved {
                brand: r.brand,
                name: self.inner.brands()[r.brand as usize].name.clone(),
                by: r.by.as_str().into(),
            }))
        })
    }

    /// The brand a ticker names, as `resolve` answers it, even where the text is also a
    /// brand's name ("BP", "EVgo"): for a parameter that takes tickers only.
    #[napi]
    pub fn resolve_ticker(&self, ticker: String) -> Result<Option<Resolved>, Code> {
        run(|| {
            Ok(self.inner.aliases().ticker(&ticker).map(|brand| Resolved {
                brand,
                name: self.inner.brands()[brand as usize].name.clone(),
                by: storemap_core::ResolvedBy::Ticker.as_str().into(),
            }))
        })
    }

    #[napi]
    pub fn is_ticker(&self, text: String) -> Result<bool, Code> {
        run(|| Ok(self.inner.aliases().is_ticker(&text)))
    }

    /// Close matches for a name that resolves to nothing, best first.
    #[napi]
    pub fn suggest(&self, name: String, limit: Option<u32>) -> Result<Vec<BrandInfo>, Code> {
        run(|| Ok(self.inner.aliases().suggest(&name, limit.unwrap_or(5) as usize).into_iter().map(|s| self.brand_info(s.brand)).collect()))
    }

    /// Storefronts the data formats serve, by country, most first (ties by code).
    #[napi]
    pub fn country_counts(&self, index: u32) -> Result<Vec<CountryCount>, Code> {
        run(|| {
            let counts = self.inner.country_counts(index).ok_or_else(|| Failure::invalid(format!("no brand {index}")))?;
            Ok(counts.into_iter().map(|(country, location_count)| CountryCount { country, location_count }).collect())
        })
    }

    #[napi]
    pub fn brand(&self, index: u32) -> Result<Option<BrandInfo>, Code> {
        run(|| Ok(((index as usize) < self.inner.brands().len()).then(|| self.brand_info(index))))
    }

    fn brand_info(&self, index: u32) -> BrandInfo {
        let b = &self.inner.brands()[index as usize];
        let listed = self.inner.ticker_record_of(index);
        BrandInfo {
            index,
            name: b.name.clone(),
            wikidata: b.wikidata.clone(),
            ticker: listed.map(|t| t.ticker.clone()),
            company: listed.map(|t| t.company.clone()).filter(|c| !c.is_empty()),
            category: b.category.clone(),
            location_count: b.verified_count,
            pool_count: b.pool_count(),
        }
    }
}

/// The sources a row can come from, as rows, headers and configuration name them.
#[napi(string_enum = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Atp,
    Fsq,
    Osm,
    Overture,
}

/// Exhaustive over the core's enum: a source added there does not compile here until it is
/// named for JavaScript too.
impl From<storemap_core::SourceType> for SourceKind {
    fn from(t: storemap_core::SourceType) -> SourceKind {
        match t {
            storemap_core::SourceType::Atp => SourceKind::Atp,
            storemap_core::SourceType::Fsq => SourceKind::Fsq,
            storemap_core::SourceType::Osm => SourceKind::Osm,
            storemap_core::SourceType::Overture => SourceKind::Overture,
        }
    }
}

/// The data's fixed rules and names, for the service's schemas and documents: their one home is
/// the core crate.
#[napi(object)]
pub struct DataDefaults {
    /// Data formats serve rows with at least this confidence (and no community-only rows).
    pub confidence_floor: f64,
    /// The serving snapshot's file name in a data folder.
    pub snapshot_file: String,
    /// The snapshot a build replaced, kept for rollback.
    pub previous_snapshot_file: String,
    /// The folder of past snapshots' ids and departures a build keeps (the change feed's).
    pub history_dir: String,
    /// The most worker threads a build may be asked for (`STOREMAP_THREADS`).
    pub max_build_threads: u32,
    /// The snapshot format this build writes, and the oldest it still reads.
    pub snapshot_format: u32,
    pub oldest_snapshot_format: u32,
    /// CSV's columns, in order.
    pub csv_columns: Vec<String>,
    /// The column `include_hours` adds after them.
    pub csv_hours_column: String,
    /// Nearest-store requests: stores given when none is asked for, and the most.
    pub nearby_default_limit: u32,
    pub nearby_max_limit: u32,
    /// With `open_at`, the nearest stores of each brand a nearest-store request looks at.
    pub nearby_open_scan: u32,
    /// Overlap requests: the distance when none is given and the largest, in metres; the most
    /// pairs one answer lists; how many brands one request compares.
    pub overlap_default_distance_m: f64,
    pub overlap_max_distance_m: f64,
    pub overlap_max_pairs: u32,
    pub overlap_min_brands: u32,
    pub overlap_max_brands: u32,
}

#[napi]
pub fn data_defaults() -> DataDefaults {
    DataDefaults {
        // The f32's shortest decimal (0.6), not its widened binary value (0.6000000238...).
        confidence_floor: storemap_core::CONFIDENCE_FLOOR.to_string().parse().unwrap_or(storemap_core::CONFIDENCE_FLOOR as f64),
        snapshot_file: storemap_core::SNAPSHOT_FILE.into(),
        previous_snapshot_file: storemap_core::PREVIOUS_SNAPSHOT_FILE.into(),
        history_dir: storemap_core::HISTORY_DIR.into(),
        max_build_threads: storemap_core::MAX_BUILD_THREADS as u32,
        snapshot_format: storemap_core::FORMAT_VERSION,
        oldest_snapshot_format: storemap_core::OLDEST_READABLE,
        csv_columns: storemap_core::CSV_HEADER.trim_end().split(',').map(String::from).collect(),
        csv_hours_column: storemap_core::HOURS_COLUMN.into(),
        nearby_default_limit: storemap_core::NEARBY_DEFAULT_LIMIT,
        nearby_max_limit: storemap_core::NEARBY_MAX_LIMIT,
        nearby_open_scan: storemap_core::NEARBY_OPEN_SCAN as u32,
        overlap_default_distance_m: storemap_core::OVERLAP_DEFAULT_DISTANCE_M,
        overlap_max_distance_m: storemap_core::OVERLAP_MAX_DISTANCE_M,
        overlap_max_pairs: storemap_core::OVERLAP_MAX_PAIRS,
        overlap_min_brands: storemap_core::OVERLAP_MIN_BRANDS as u32,
        overlap_max_brands: storemap_core::OVERLAP_MAX_BRANDS as u32,
    }
}
