//! The build: reference data -> catalog -> import the four sources -> reconcile -> snapshot.
//! `build_synthetic` first generates the synthetic world; `import_sources` is the whole path
//! for real extracts, and the synthetic build goes through it too.

use std::path::{Path, PathBuf};
use std::time::Instant;

use std::sync::Arc;

use storemap_core::{brand_identity, format_iso, CityRecord, PackedRows, RowBuilder, RowPacker, SnapshotBuilder, SnapshotMeta, SourceImport, SourceType};

use crate::catalog::Catalog;
use crate::countries::CountryIndex;
use crate::density::PopulationGrid;
use crate::error::{IngestError, Result};
use crate::footprint::Footprints;
use crate::hash::fnv1a_parts;
use crate::history::{self, HistoryUpdate};
use crate::identity::PreviousIds;
use crate::import;
use crate::reconcile::{BrandBuckets, Matched, ReconcileStats, Reconciler};
use crate::reference::{read_brands, read_csv, read_json, City, ReferencePaths, Zip};
use crate::shard::{
    catalog_fingerprint, partition, program_fingerprint, reference_fingerprint, FeedFailed, Fingerprint, InputFiles, PartFeed, PartManifest, PartReader,
    PartWriter, Shard, PART_FORMAT,
};
use crate::{ImportReport, Skip};

pub use storemap_core::{PREVIOUS_SNAPSHOT_FILE, SNAPSHOT_FILE};

/// The part of the world an import keeps (`--country`, `--bbox`): rows elsewhere are
/// skipped as `out_of_region` as they arrive, so a planet-sized input builds one country
/// within the machine's memory.
#[derive(Debug, Clone, Default)]
pub struct Region {
    /// ISO 3166-1 alpha-2 codes, upper case.
    pub countries: Vec<String>,
    /// South, west, north, east in degrees; west > east crosses the antimeridian.
    pub bbox: Option<[f64; 4]>,
}

impl Region {
    pub fn is_whole_world(&self) -> bool {
        self.countries.is_empty() && self.bbox.is_none()
    }

    /// As the operator gave it, for the snapshot's meta.
    pub fn describe(&self) -> Option<String> {
        let mut parts: Vec<String> = self.countries.clone();
        if let Some([s, w, n, e]) = self.bbox {
            parts.push(format!("bbox {s},{w},{n},{e}"));
        }
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    fn in_bbox(&self, lat: f64, lng: f64) -> bool {
        match self.bbox {
            None => true,
            Some([s, w, n, e]) => (s..=n).contains(&lat) && if w <= e { (w..=e).contains(&lng) } else { lng >= w || lng <= e },
        }
    }

    /// Inside the bbox and, when countries are given, in one of them by the borders (the
    /// row's own country tag decides only where the borders say nothing, out at sea).
    pub fn contains(&self, countries: &CountryIndex, row: &crate::SourceRow) -> bool {
        if !self.in_bbox(row.lat, row.lng) {
            return false;
        }
        if self.countries.is_empty() {
            return true;
        }
        let code = countries.locate(row.lat, row.lng).or(row.country.as_deref());
        code.is_some_and(|c| self.countries.iter().any(|x| x == c))
    }
}

#[derive(Debug, Clone, Default)]
pub struct SourcePaths {
    pub osm: Option<PathBuf>,
    pub overture: Option<PathBuf>,
    pub fsq: Option<PathBuf>,
    pub atp: Option<PathBuf>,
}

impl SourcePaths {
    /// The layout the generator writes under a folder.
    pub fn under(dir: &Path) -> SourcePaths {
        SourcePaths { osm: Some(dir.join("osm")), overture: Some(dir.join("overture")), fsq: Some(dir.join("fsq")), atp: Some(dir.join("atp")) }
    }

    fn get(&self, s: SourceType) -> Option<&PathBuf> {
        match s {
            SourceType::Osm => self.osm.as_ref(),
            SourceType::Overture => self.overture.as_ref(),
            SourceType::Fsq => self.fsq.as_ref(),
            SourceType::Atp => self.atp.as_ref(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub data_dir: PathBuf,
    pub reference: ReferencePaths,
    pub as_of: i64,
    pub disabled: Vec<SourceType>,
    pub multi_source: bool,
    /// Set for the generated dataset.
    pub synthetic: Option<(f64, u64)>,
    pub region: Region,
    /// Snapshots the id history keeps (see `history`).
    pub keep_history: usize,
    /// Accept an `as_of` earlier than the snapshot it replaces, dropping the history's entries
    /// from that time on (see `check_as_of`).
    pub rewrite_history: bool,
    /// What becomes of the folder's import record once the snapshot is in place.
    pub record: Record,
}

/// The data folder's import record (`import.json`: what a data import read, so that a refresh
/// reads the same again) is the command's that started the pipeline, but it must change with
/// the snapshot: written after the pipeline returned, a command killed in between left the
/// record of the import before. So the pipeline moves it, right after the snapshot's swap,
/// under the folder's lock and [`COMMIT`].
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Record {
    /// Left as it is (a run by hand, a benchmark).
    #[default]
    Keep,
    /// The file the command wrote becomes the record (a data import). Its content is read when
    /// the pipeline starts and written at the swap, so a file removed meanwhile (another
    /// command's clean-up) cannot fail the command after its snapshot is in place.
    Take { from: PathBuf, content: Vec<u8> },
    /// The record is removed: the snapshot is no import's (a build or a merge).
    Forget,
}

/// The import record's name in a data folder.
pub const IMPORT_RECORD_FILE: &str = "import.json";
/// The record of the snapshot kept as the previous one (`null` when it had none), so that a
/// rollback brings back the record with the snapshot. A folder without it (written before it
/// was kept) has its record left alone by a rollback.
pub const PREVIOUS_IMPORT_RECORD_FILE: &str = "import.prev.json";

/// Held while the snapshot is swapped in and the record moved with it: a stop asked for
/// meanwhile (the command that started the pipeline is gone) waits for both, so the folder is
/// never left with the new snapshot and the old record.
pub static COMMIT: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Record {
    /// After the snapshot's swap: `kept_previous`, the snapshot replaced was kept as the
    /// previous one, and its record goes with it.
    fn apply(&self, data_dir: &Path, kept_previous: bool) -> Result<()> {
        if *self == Record::Keep {
            return Ok(());
        }
        let record = data_dir.join(IMPORT_RECORD_FILE);
        if kept_previous {
            set_aside(&record, &data_dir.join(PREVIOUS_IMPORT_RECORD_FILE))?;
        }
        match self {
            Record::Keep => Ok(()),
            Record::Take { from, content } => {
                // Named after the command's pending file (its host and pid): unique on a shared
                // disk, and swept with it by the next import if a kill leaves it.
                let mut next = from.clone().into_os_string();
                next.push(".tmp");
                let next = PathBuf::from(next);
                std::fs::write(&next, content).map_err(|e| IngestError::io(next.display(), e))?;
                std::fs::rename(&next, &record).map_err(|e| IngestError::io(record.display(), e))?;
                // The snapshot and its record are in place: a pending file that will not go
                // is the next import's to sweep, not this command's failure.
                if let Err(e) = remove_if_there(from) {
                    eprintln!("storemap: {e} (left for the next import to clear)");
                }
                Ok(())
            }
            Record::Forget => remove_if_there(&record),
        }
    }
}

/// Moves a record to `to`, or writes `null` there when there is none.
fn set_aside(record: &Path, to: &Path) -> Result<()> {
    match std::fs::rename(record, to) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::write(to, "null\n").map_err(|e| IngestError::io(to.display(), e)),
        other => other.map_err(|e| IngestError::io(record.display(), e)),
    }
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(IngestError::io(path.display(), e)),
        _ => Ok(()),
    }
}

/// A rollback's swap of the two records, when the folder keeps the previous one.
fn swap_records(data_dir: &Path) -> Result<()> {
    let (current, previous) = (data_dir.join(IMPORT_RECORD_FILE), data_dir.join(PREVIOUS_IMPORT_RECORD_FILE));
    if !previous.is_file() {
        return Ok(());
    }
    let aside = data_dir.join(format!("{IMPORT_RECORD_FILE}.rollback"));
    set_aside(&current, &aside)?;
    std::fs::rename(&previous, &current).map_err(|e| IngestError::io(current.display(), e))?;
    std::fs::rename(&aside, &previous).map_err(|e| IngestError::io(previous.display(), e))?;
    // "No record" is a file only while it is the previous snapshot's.
    if std::fs::read(&current).map_err(|e| IngestError::io(current.display(), e))?.trim_ascii() == b"null" {
        remove_if_there(&current)?;
    }
    Ok(())
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildSummary {
    pub snapshot: String,
    pub snapshot_version: String,
    pub rows: u64,
    /// Of them, the rows json, csv and geojson serve (the rest only maps draw).
    pub servable_rows: u64,
    pub imports: Vec<ImportReport>,
    pub reconcile: ReconcileStats,
    pub world: Option<crate::world::WorldSummary>,
    pub history: HistoryUpdate,
    pub seconds: std::collections::BTreeMap<String, f64>,
    pub cpu_seconds: std::collections::BTreeMap<String, PhaseCpu>,
}

/// The loaded reference data every step needs.
pub struct Reference {
    pub catalog: Catalog,
    pub cities: Vec<City>,
    pub zips: Vec<Zip>,
    pub countries: CountryIndex,
}

/// The tables and the border index at once, each one thread's work.
pub fn load_reference(paths: &ReferencePaths) -> Result<Reference> {
    std::thread::scope(|s| {
        let countries = s.spawn(|| load_countries(&paths.extracted));
        let tables = load_tables(paths);
        let (catalog, cities, zips) = tables?;
        let countries = countries.join().map_err(|_| IngestError::Invalid("the border index panicked".into()))??;
        Ok(Reference { catalog, cities, zips, countries })
    })
}

/// Everything but the borders: the catalog, and beside it the gazetteer and the ZIPs.
fn load_tables(paths: &ReferencePaths) -> Result<(Catalog, Vec<City>, Vec<Zip>)> {
    let ex = &paths.extracted;
    std::thread::scope(|s| {
        let places = s.spawn(|| -> Result<(Vec<City>, Vec<Zip>)> { Ok((read_csv(&ex.join("cities.csv"))?, read_csv(&ex.join("zips.csv"))?)) });
        let catalog = load_catalog(paths);
        let places = places.join();
        // The catalog's error first, as when the tables were read one after another; a panic
        // reading the places goes on as a panic.
        let catalog = catalog?;
        let (cities, zips) = places.unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        Ok((catalog, cities, zips))
    })
}

/// The brand catalog from the name-suggestion index's brands and the project's tables.
fn load_catalog(paths: &ReferencePaths) -> Result<Catalog> {
    let ex = &paths.extracted;
    let nsi = read_brands(&ex.join("brands.jsonl"))?;
    let catalog = Catalog::build(
        &nsi,
        &read_csv(&paths.tables.join("categories.csv"))?,
        &read_csv(&paths.tables.join("tickers.csv"))?,
        &read_csv(&paths.tables.join("misspellings.csv"))?,
        &Footprints::new(
            &read_csv(&paths.tables.join("footprints.csv"))?,
            &read_csv(&paths.tables.join("atp-presence.csv"))?,
            &read_csv(&paths.tables.join("home-cities.csv"))?,
        )
        .with_osm_coverage(&read_csv(&paths.tables.join("osm-coverage.csv"))?)
        .with_world_totals(&read_csv(&paths.tables.join("world-totals.csv"))?)
        .with_brand_homes(&read_csv(&paths.tables.join("brand-homes.csv"))?),
    )
    .with_market_regions(&read_csv(&ex.join("regions.csv"))?);
    Ok(catalog)
}

/// The borders as the reference step wrote them: the precise ring file, else the drawing
/// atlas' shapes. Read once, made into the country index (which is the land mask too).
enum Borders {
    Bin(Vec<u8>),
    GeoJson(serde_json::Value),
}

impl Borders {
    fn read(dir: &Path) -> Result<Borders> {
        let bin = dir.join("borders.bin");
        if bin.exists() {
            return Ok(Borders::Bin(std::fs::read(&bin).map_err(|e| IngestError::io(bin.display(), e))?));
        }
        Ok(Borders::GeoJson(read_json(&dir.join("countries.geojson"))?))
    }

    fn countries(&self) -> Result<CountryIndex> {
        match self {
            Borders::Bin(b) => CountryIndex::from_borders_bin(b),
            Borders::GeoJson(v) => CountryIndex::from_geojson(v),
        }
    }
}

/// The country index, whose grid is also the land mask the synthetic world places its stores
/// with.
pub fn load_countries(dir: &Path) -> Result<CountryIndex> {
    // A damaged file names the folder, and the way out (`ensureReference` extracts a folder
    // that is gone again; one of the right format but damaged it cannot tell).
    Borders::read(dir)?.countries().map_err(|e| {
        IngestError::Invalid(format!("{}: {e}: the reference data is damaged; remove that folder and the next command extracts it again", dir.display()))
    })
}

/// Resident and peak memory from /proc (Linux), for the phase log: a full-size build must fit
/// in the machine's memory, and this says which phase sets the peak.
fn memory_note() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return String::new() };
    let field = |k: &str| status.lines().find(|l| l.starts_with(k)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse::<f64>().ok());
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(rss), Some(hwm)) => format!(", RSS {:.2} GiB, peak {:.2} GiB", rss / 1048576.0, hwm / 1048576.0),
        _ => String::new(),
    }
}

/// The CPU a phase took: the whole process's, and the calling thread's alone. The calling
/// thread's part is what no other core can take (the files written in order, the rows packed
/// into the snapshot), so it bounds the phase's time however many cores there are.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct PhaseCpu {
    pub process: f64,
    pub calling_thread: f64,
    /// The longest piece of the phase one thread did alone: an item of a parallel step (a
    /// brand's world, a brand's reconciliation: wall seconds on its thread, which overstate
    /// its CPU where threads outnumber the cores), or a source's import thread (its own CPU,
    /// the work it shares with no other core). More cores do not take the phase below it.
    pub longest_item: f64,
}

/// CPU seconds (user and system) from a /proc stat file: its 14th and 15th fields, in the
/// kernel's clock ticks (USER_HZ, 100 a second on Linux whatever the kernel's own tick).
fn cpu_ticks(path: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(path) else { return 0.0 };
    // The command name (field 2) may hold spaces: count from the closing parenthesis.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (field(11) + field(12)) / 100.0
}

fn cpu_now() -> PhaseCpu {
    PhaseCpu { process: cpu_ticks("/proc/self/stat"), calling_thread: cpu_ticks("/proc/thread-self/stat"), longest_item: 0.0 }
}

/// Progress on stderr: one line per phase with its time (a spinner on a terminal).
pub struct Phases {
    start: Instant,
    pub seconds: std::collections::BTreeMap<String, f64>,
    pub cpu: std::collections::BTreeMap<String, PhaseCpu>,
    bar: Option<indicatif::ProgressBar>,
    /// Run at the end of each phase: the binary's allocator hands back what the phase freed
    /// (this crate does not know which allocator it runs on).
    release: Option<fn()>,
}

impl Phases {
    /// `release` run at the end of every phase, before its memory is reported.
    pub fn releasing_with(mut self, release: fn()) -> Phases {
        self.release = Some(release);
        self
    }

    pub fn new(show: bool) -> Phases {
        let bar = (show && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
            let b = indicatif::ProgressBar::new_spinner();
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        });
        Phases { start: Instant::now(), seconds: Default::default(), cpu: Default::default(), bar, release: None }
    }

    pub fn run<T>(&mut self, name: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some(b) = &self.bar {
            b.set_message(format!("{name}…"));
        }
        let (t, cpu) = (Instant::now(), cpu_now());
        crate::parallel::take_longest_item();
        let out = f()?;
        if let Some(release) = self.release {
            release();
        }
        let secs = t.elapsed().as_secs_f64();
        let after = cpu_now();
        let longest_item = (crate::parallel::take_longest_item().as_secs_f64() * 1000.0).round() / 1000.0;
        let used = PhaseCpu { process: after.process - cpu.process, calling_thread: after.calling_thread - cpu.calling_thread, longest_item };
        self.seconds.insert(name.to_string(), (secs * 1000.0).round() / 1000.0);
        self.cpu.insert(name.to_string(), used);
        let line = format!(
            "{name}: {secs:.1}s (total {:.1}s), CPU {:.1}s (calling thread {:.1}s, longest item {:.2}s){}",
            self.start.elapsed().as_secs_f64(),
            used.process,
            used.calling_thread,
            used.longest_item,
            memory_note()
        );
        self.print(line);
        Ok(out)
    }

    /// Records a time measured inside phase `within` by one of its threads (a source's import
    /// beside the others'), with its log line: that thread's own CPU is a piece of `within` one
    /// thread did alone (see [`PhaseCpu::longest_item`]).
    pub fn note_thread(&mut self, name: &str, secs: f64, within: &str, own_cpu: f64) {
        if let Some(c) = self.cpu.get_mut(within) {
            c.longest_item = c.longest_item.max(own_cpu);
        }
        self.seconds.insert(name.to_string(), (secs * 1000.0).round() / 1000.0);
        self.print(format!("  {name}: {secs:.1}s, its own thread's CPU {own_cpu:.1}s"));
    }

    /// Records a time measured inside another phase, with its log line.
    pub fn note(&mut self, name: &str, secs: f64) {
        self.seconds.insert(name.to_string(), (secs * 1000.0).round() / 1000.0);
        self.print(format!("  {name}: {secs:.1}s"));
    }

    fn print(&self, line: String) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// A row counter shown beside the phase's name on a terminal (silent elsewhere).
    pub fn ticker(&self, label: &str) -> Ticker {
        Ticker { bar: self.bar.clone(), label: label.to_string(), rows: 0 }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Counts rows as an import streams them, for the spinner's message.
pub struct Ticker {
    bar: Option<indicatif::ProgressBar>,
    label: String,
    rows: u64,
}

impl Ticker {
    pub fn add(&mut self, rows: usize) {
        self.rows += rows as u64;
        if let Some(b) = &self.bar {
            b.set_message(format!("{}… {} rows", self.label, self.rows));
        }
    }
}

/// Generates the synthetic world into `data_dir/sources` and loads the reference data the
/// import needs. With `reuse` (a shard's build), a folder that already holds this very world
/// (its stamp, `world::generated`) is read as it is, and a world generated here is stamped.
fn generate_world(opts: &BuildOptions, scale: f64, seed: u64, reuse: bool, phases: &mut Phases) -> Result<(Reference, crate::world::WorldSummary)> {
    let tables = opts.reference.clone();
    let sources_dir = opts.data_dir.join("sources");
    let Reference { catalog, cities, zips, countries } = phases.run("load reference", || load_reference(&tables))?;
    // Only a shard looks for a world already there, so only a shard pays for the
    // fingerprints (the reference files and its own executable, about 120 MB read).
    let origin = if reuse { Some(format!("{}/{}", reference_fingerprint(&tables)?, program_fingerprint()?)) } else { None };
    let world = match origin.as_deref().and_then(|o| crate::world::generated(&sources_dir, scale, seed, opts.as_of, o)) {
        Some(world) => {
            phases.note("generate sources (already there)", 0.0);
            world
        }
        None => {
            keep_previous_truth(&opts.data_dir)?;
            crate::world::unstamp(&sources_dir)?;
            let land = countries.land();
            let world = phases.run("generate sources", || crate::world::generate(&catalog, &cities, &zips, land, &sources_dir, scale, seed, opts.as_of))?;
            // Every world is stamped; only a shard's carries the fingerprints `generated`
            // compares, so a one-process build's world is never taken for a shard's.
            crate::world::stamp(&sources_dir, scale, seed, opts.as_of, origin.as_deref().unwrap_or(""), &world)?;
            world
        }
    };
    Ok((Reference { catalog, cities, zips, countries }, world))
}

pub fn build_synthetic(opts: &BuildOptions, scale: f64, seed: u64, phases: &mut Phases) -> Result<BuildSummary> {
    check_as_of(&opts.data_dir, opts.as_of, opts.synthetic, opts.rewrite_history, "--as-of")?;
    let (reference, world) = generate_world(opts, scale, seed, false, phases)?;
    let mut summary = import_with(&reference, &SourcePaths::under(&opts.data_dir.join("sources")), opts, phases)?;
    summary.world = Some(world);
    Ok(summary)
}

/// Shard `shard` of a synthetic build: the world generated whole (it is one function of scale,
/// seed and date, so every shard generates the same one; shards run one after another in one
/// data folder generate it once), this shard's brands reconciled into a part at `part_dir`.
pub fn build_synthetic_part(opts: &BuildOptions, scale: f64, seed: u64, shard: Shard, part_dir: &Path, phases: &mut Phases) -> Result<PartSummary> {
    PartWriter::check(part_dir)?;
    let (reference, _) = generate_world(opts, scale, seed, true, phases)?;
    import_part(&reference, &SourcePaths::under(&opts.data_dir.join("sources")), opts, shard, part_dir, phases)
}

fn check_region(reference: &Reference, opts: &BuildOptions) -> Result<()> {
    match opts.region.countries.iter().find(|c| !reference.countries.knows(c)) {
        Some(c) => Err(IngestError::Invalid(format!("--country: {c} is not a country the borders know"))),
        None => Ok(()),
    }
}

pub fn import_sources(paths: &SourcePaths, opts: &BuildOptions, phases: &mut Phases) -> Result<BuildSummary> {
    check_as_of(&opts.data_dir, opts.as_of, opts.synthetic, opts.rewrite_history, "--as-of")?;
    let reference = phases.run("load reference", || load_reference(&opts.reference))?;
    check_region(&reference, opts)?;
    import_with(&reference, paths, opts, phases)
}

/// Shard `shard` of an import of real extracts, as a part at `part_dir` (see `shard`).
pub fn import_sources_part(paths: &SourcePaths, opts: &BuildOptions, shard: Shard, part_dir: &Path, phases: &mut Phases) -> Result<PartSummary> {
    PartWriter::check(part_dir)?;
    let reference = phases.run("load reference", || load_reference(&opts.reference))?;
    check_region(&reference, opts)?;
    import_part(&reference, paths, opts, shard, part_dir, phases)
}

/// One source's import: its report, the rows it gave each brand, and how long it took.
struct ImportedSource {
    report: ImportReport,
    buckets: BrandBuckets,
    /// Rows read outside the build's region, dropped before matching.
    outside: u64,
    seconds: f64,
    /// The CPU of the thread that read the source (not the cores it handed batches to).
    thread_cpu: f64,
}

/// Batches of rows each import has out for matching at once, per core: enough that no core
/// waits for the next, few enough that they are a small part of a build's memory (a batch is
/// 1,024 rows, `import::BATCH_ROWS`).
const MATCHING_AHEAD_PER_CORE: usize = 1;

/// Reads one source's files, matching rows to brands as they arrive (in batches, a few out at
/// once), so the fields only matching needs are released as the reading goes on. With `keep` (a
/// shard's brands) the other brands' rows are counted and dropped as they are matched.
fn import_source(
    source: SourceType,
    path: &Path,
    reference: &Reference,
    opts: &BuildOptions,
    keep: Option<Arc<Vec<bool>>>,
    mut ticker: Ticker,
) -> Result<ImportedSource> {
    let (started, thread_cpu) = (Instant::now(), cpu_ticks("/proc/thread-self/stat"));
    let (catalog, countries, region) = (&reference.catalog, &reference.countries, &opts.region);
    let mut buckets = BrandBuckets::new(catalog.brands.len());
    if let Some(keep) = &keep {
        buckets = buckets.only(keep.clone());
    }
    let keep = keep.as_deref().map(Vec::as_slice);
    let mut outside = 0u64;
    // The import's thread reads its files in order; the rows it reads are matched to brands
    // and packed on every core, and taken into the buckets here in the order they were read.
    let matched = |mut batch: Vec<crate::SourceRow>| {
        let before = batch.len();
        if !region.is_whole_world() {
            batch.retain(|r| region.contains(countries, r));
        }
        (before - batch.len(), Matched::new(catalog, countries, keep, batch))
    };
    let take = |(out, m): (usize, Matched)| {
        outside += out as u64;
        ticker.add(m.rows() as usize);
        buckets.take(m);
    };
    let report = crate::parallel::in_order(MATCHING_AHEAD_PER_CORE, matched, take, |submit| match source {
        SourceType::Osm => import::import_osm_into(path, &mut |b| submit(b)),
        SourceType::Atp => import::import_atp_into(path, &mut |b| submit(b)),
        SourceType::Overture => import::import_overture_into(path, &mut |b| submit(b)),
        SourceType::Fsq => import::import_fsq_into(path, &mut |b| submit(b)),
    })?;
    buckets.shrink_to_fit();
    Ok(ImportedSource { report, buckets, outside, seconds: started.elapsed().as_secs_f64(), thread_cpu: cpu_ticks("/proc/thread-self/stat") - thread_cpu })
}

/// The sources' rows by brand, and what each import did.
struct Imported {
    buckets: BrandBuckets,
    /// Each source's report, `rows_kept` after the region and brand checks (and, in a shard,
    /// without the brands other shards reconcile).
    imports: Vec<ImportReport>,
    /// Rows each importer produced, before the region and brand checks (the meta's
    /// `rows_by_source`, as it has always counted).
    imported: Vec<u64>,
    /// Per import: rows of brands other shards reconcile.
    other_shards: Vec<u64>,
}

fn sources_to_read<'a>(paths: &'a SourcePaths, opts: &BuildOptions) -> Vec<(SourceType, &'a PathBuf)> {
    [SourceType::Atp, SourceType::Overture, SourceType::Fsq, SourceType::Osm]
        .into_iter()
        .filter(|s| !opts.disabled.contains(s))
        .filter_map(|s| paths.get(s).map(|p| (s, p)))
        .collect()
}

fn import_all(reference: &Reference, paths: &SourcePaths, opts: &BuildOptions, keep: Option<Arc<Vec<bool>>>, phases: &mut Phases) -> Result<Imported> {
    let sources = sources_to_read(paths, opts);
    // The sources are read at once, each on a thread of its own (a source's files are read in
    // order; its rows are matched to brands on every core): on one core this costs nothing, on
    // two the imports take the longest one's time instead of their sum. Each source fills its
    // own buckets, joined below in this fixed order, so a brand's rows come in the order a
    // one-at-a-time import gave them and the snapshot is the same byte for byte.
    let done: Vec<ImportedSource> = match sources.as_slice() {
        [(source, path)] => {
            let label = format!("import {}", source.as_str());
            let ticker = phases.ticker(&label);
            vec![phases.run(&label, || import_source(*source, path, reference, opts, keep, ticker))?]
        }
        _ => {
            let tickers: Vec<Ticker> = sources.iter().map(|(s, _)| phases.ticker(&format!("import {}", s.as_str()))).collect();
            let done = phases.run("import sources", || {
                std::thread::scope(|scope| {
                    let running: Vec<_> = sources
                        .iter()
                        .zip(tickers)
                        .map(|(&(source, path), ticker)| {
                            let keep = keep.clone();
                            // Named for profilers and `top -H`: "import osm" and so on.
                            std::thread::Builder::new()
                                .name(format!("import {}", source.as_str()))
                                .spawn_scoped(scope, move || import_source(source, path, reference, opts, keep, ticker))
                                .map_err(|e| IngestError::Invalid(format!("could not start the {} import's thread: {e}", source.as_str())))
                        })
                        .collect();
                    // Every thread joined before any error is returned (a scope left with a
                    // panicked thread unjoined would panic itself).
                    let joined: Vec<Result<_>> =
                        running.into_iter().map(|h| h.and_then(|h| h.join().map_err(|_| IngestError::Invalid("an import thread panicked".into())))).collect();
                    joined.into_iter().map(|j| j.and_then(|done| done)).collect::<Result<Vec<_>>>()
                })
            })?;
            // Each source's own time, beside the others (they overlap).
            for ((source, _), d) in sources.iter().zip(&done) {
                phases.note_thread(&format!("import {} (alongside the others)", source.as_str()), d.seconds, "import sources", d.thread_cpu);
            }
            done
        }
    };
    let mut out = Imported { buckets: BrandBuckets::new(reference.catalog.brands.len()), imports: Vec::new(), imported: Vec::new(), other_shards: Vec::new() };
    for ((source, _), d) in sources.iter().zip(done) {
        let mut report = d.report;
        out.imported.push(report.rows_kept);
        report.unkeep(Skip::OutOfRegion, d.outside);
        for reason in [Skip::NotStorefront, Skip::OutOfScope, Skip::NoBrandMatch] {
            report.unkeep(reason, d.buckets.unmatched.get(&(*source, reason)).copied().unwrap_or(0));
        }
        report.rows_kept -= d.buckets.other_shards.min(report.rows_kept);
        out.other_shards.push(d.buckets.other_shards);
        out.buckets.append(d.buckets);
        out.imports.push(report);
    }
    Ok(out)
}

/// What a build's snapshot is of: its date, world and options (and, for a shard's part, the
/// catalog and inputs every part must share).
fn fingerprint(opts: &BuildOptions) -> Fingerprint {
    Fingerprint {
        as_of: opts.as_of,
        synthetic: opts.synthetic,
        multi_source: opts.multi_source,
        disabled: opts.disabled.iter().map(|s| s.as_str().to_string()).collect(),
        region: opts.region.describe(),
        catalog: String::new(),
        reference: String::new(),
        program: String::new(),
        inputs: Vec::new(),
    }
}

fn snapshot_meta(fp: &Fingerprint, imports: &[ImportReport], imported: &[u64]) -> SnapshotMeta {
    SnapshotMeta {
        // Set when the snapshot is written, once every row has been seen.
        snapshot_version: String::new(),
        as_of: format_iso(fp.as_of),
        synthetic: fp.synthetic.is_some(),
        scale: fp.synthetic.map(|s| s.0),
        seed: fp.synthetic.map(|s| s.1),
        rows_by_source: imports.iter().zip(imported).map(|(r, &n)| (r.source.clone(), n)).collect(),
        // Set by `Assembler::finish`, when reconciliation has counted its duplicates too.
        skipped_by_source: Default::default(),
        disabled_sources: fp.disabled.clone(),
        multi_source: fp.multi_source,
        imports: Default::default(),
        region: fp.region.clone(),
        atp_spider_licences: imports
            .iter()
            .flat_map(|r| r.declared_licences.iter())
            .map(|(licence, spiders)| {
                let mut spiders = spiders.clone();
                spiders.sort();
                spiders.dedup();
                (licence.clone(), spiders)
            })
            .collect(),
    }
}

fn city_records(cities: &[City]) -> Vec<CityRecord> {
    cities
        .iter()
        .map(|c| CityRecord {
            name: c.name.clone(),
            country: c.country.clone(),
            admin1: c.admin1.clone(),
            lat: c.lat,
            lng: c.lng,
            population: c.population,
            also: c.also.clone(),
        })
        .collect()
}

/// Where a snapshot goes and what it continues.
struct Target<'a> {
    data_dir: &'a Path,
    as_of: i64,
    synthetic: Option<(f64, u64)>,
    keep_history: usize,
    record: &'a Record,
}

/// The snapshot being made: each brand's rows are packed (their text interned) by a
/// [`BrandPacker`], in a build on the thread that reconciled them, in a merge as each brand is
/// read, and go into the builder in reconciliation's order; the version hashes every row's id
/// and position in that order.
struct Assembler {
    builder: SnapshotBuilder,
    meta: SnapshotMeta,
    cities: Vec<CityRecord>,
    brands: Vec<storemap_core::BrandRecord>,
    hash: u64,
    corroborated: std::collections::BTreeMap<SourceType, u64>,
    served: Vec<u64>,
}

/// A brand's rows as a worker leaves them for the [`Assembler`].
struct AssembledBrand {
    packed: PackedRows,
    /// Ids of the rows a data format may serve, in row order.
    served: Vec<u64>,
    corroborated: std::collections::BTreeMap<SourceType, u64>,
}

/// Packs brands' rows for an [`Assembler`] on any thread.
struct BrandPacker(RowPacker);

impl BrandPacker {
    fn pack(&self, rows: &[RowBuilder]) -> AssembledBrand {
        let mut corroborated = std::collections::BTreeMap::new();
        for r in rows {
            if r.sources.iter().count() >= 2 {
                for (s, _) in &r.aliases {
                    *corroborated.entry(*s).or_default() += 1;
                }
            }
        }
        AssembledBrand { packed: self.0.pack(rows), served: rows.iter().filter(|r| r.is_servable()).map(|r| r.id).collect(), corroborated }
    }
}

impl Assembler {
    fn new(meta: SnapshotMeta, catalog: &Catalog, cities: &[City], rows_hint: u64) -> Assembler {
        let cities = city_records(cities);
        let mut builder = SnapshotBuilder::new(meta.clone(), catalog.brand_records(), cities.clone(), catalog.tickers.clone());
        builder.reserve(rows_hint as usize);
        Assembler { builder, meta, cities, brands: catalog.brand_records(), hash: 0, corroborated: Default::default(), served: Vec::new() }
    }

    /// A packer to drop before [`finish`](Self::finish).
    fn packer(&self) -> BrandPacker {
        BrandPacker(self.builder.packer())
    }

    fn push(&mut self, b: AssembledBrand) {
        self.served.extend_from_slice(&b.served);
        for (id, lat, lng) in b.packed.ids_and_places() {
            self.hash = fnv1a_parts(&[&self.hash.to_le_bytes(), &id.to_le_bytes(), &lat.to_bits().to_le_bytes(), &lng.to_bits().to_le_bytes()]);
        }
        for (s, n) in b.corroborated {
            *self.corroborated.entry(s).or_default() += n;
        }
        self.builder.push_packed(b.packed);
    }

    /// The version, the history and the file. `had_previous`: the build continued the ids of
    /// the snapshot it replaces (which the history then continues too).
    fn finish(
        mut self,
        target: &Target,
        mut imports: Vec<ImportReport>,
        stats: ReconcileStats,
        had_previous: bool,
        phases: &mut Phases,
    ) -> Result<BuildSummary> {
        let path = target.data_dir.join(SNAPSHOT_FILE);
        for report in &mut imports {
            report.rows_corroborated = SourceType::parse(&report.source).and_then(|s| self.corroborated.get(&s).copied()).unwrap_or(0);
            // Second copies of one record were dropped at reconciliation, where the places
            // files' and AllThePlaces' ids are compared: skipped, as OpenStreetMap's are at import.
            if let Some(&d) = stats.duplicates_by_source.get(&report.source) {
                report.unkeep(Skip::DuplicateId, d);
            }
        }
        let n = self.builder.row_count() as u64;
        let servable = self.builder.servable_rows();
        // An import that kept nothing must not replace the snapshot a server is serving.
        if n == 0 {
            return Err(nothing_kept(&path, &imports));
        }
        self.builder.set_imports(imports.iter().map(|r| (r.source.clone(), source_import(r))).collect());
        self.builder.set_skipped_by_source(imports.iter().map(|r| (r.source.clone(), r.rows_skipped)).collect());
        let version = format!("{}-{:08x}", format_iso(target.as_of).replace([':', '-'], ""), self.hash & 0xffff_ffff);
        self.builder.set_version(&version);
        // The history first: a history a step ahead of the snapshot (the write below failed) is
        // put right by the next build, and the service reads it only up to the snapshot it serves.
        let built = history::Built { as_of: target.as_of, version: &version, served: self.served, brands: self.brands, cities: self.cities, meta: &self.meta };
        let history = phases.run("record history", || {
            let previous_snapshot = had_previous.then(|| previous_snapshot(&path, target.synthetic)).flatten();
            history::record(target.data_dir, previous_snapshot.as_ref(), built, target.keep_history)
        })?;
        let builder = self.builder;
        phases.run("write snapshot", || {
            std::fs::create_dir_all(target.data_dir).map_err(|e| IngestError::io(target.data_dir.display(), e))?;
            let _commit = COMMIT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let kept_previous = path.exists();
            keep_previous(&path, &target.data_dir.join(PREVIOUS_SNAPSHOT_FILE))?;
            builder.write(&path)?;
            target.record.apply(target.data_dir, kept_previous)
        })?;
        Ok(BuildSummary {
            snapshot: path.display().to_string(),
            snapshot_version: version,
            rows: n,
            servable_rows: servable,
            imports,
            reconcile: stats,
            world: None,
            history,
            seconds: phases.seconds.clone(),
            cpu_seconds: phases.cpu.clone(),
        })
    }
}

fn reconciler<'a>(reference: &'a Reference, population: &'a PopulationGrid, opts: &BuildOptions, previous: Option<&'a PreviousIds>) -> Reconciler<'a> {
    Reconciler { catalog: &reference.catalog, countries: &reference.countries, population, as_of: opts.as_of, multi_source: opts.multi_source, previous }
}

fn import_with(reference: &Reference, paths: &SourcePaths, opts: &BuildOptions, phases: &mut Phases) -> Result<BuildSummary> {
    let Imported { buckets, imports, imported, .. } = import_all(reference, paths, opts, None, phases)?;
    let path = opts.data_dir.join(SNAPSHOT_FILE);
    if buckets.stats.rows_in == 0 {
        return Err(nothing_kept(&path, &imports));
    }
    let population = PopulationGrid::new(&reference.cities);
    // Only the previous snapshot's ids are kept through the reconcile, the build's peak; the
    // history reads the snapshot again afterwards (about a gigabyte at scale 1 not held twice).
    let previous = phases.run("read previous snapshot", || Ok(previous_snapshot(&path, opts.synthetic).as_ref().map(PreviousIds::from_snapshot)))?;
    let reconciler = reconciler(reference, &population, opts, previous.as_ref());
    // Reconciled rows are fewer than source rows (about 70 % of them), never more: room for as
    // many costs address space only, while room for 70 % was outgrown by a few thousand rows at
    // scale 1 and the row vector's doubling (a second copy of 650 MB) set the build's peak.
    let mut assembler = Assembler::new(snapshot_meta(&fingerprint(opts), &imports, &imported), &reference.catalog, &reference.cities, buckets.stats.rows_in);
    let packer = assembler.packer();
    let stats = phases.run("reconcile", || Ok(reconciler.run_buckets(buckets, &|rows| packer.pack(&rows), &mut |b| assembler.push(b))))?;
    drop(packer);
    let had_previous = previous.is_some();
    drop(previous);
    let target = Target { data_dir: &opts.data_dir, as_of: opts.as_of, synthetic: opts.synthetic, keep_history: opts.keep_history, record: &opts.record };
    assembler.finish(&target, imports, stats, had_previous, phases)
}

/// What a shard's run wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PartSummary {
    pub part: String,
    pub shard: String,
    pub brands: u64,
    pub rows: u64,
    pub imports: Vec<ImportReport>,
    pub reconcile: ReconcileStats,
    pub seconds: std::collections::BTreeMap<String, f64>,
}

fn import_part(reference: &Reference, paths: &SourcePaths, opts: &BuildOptions, shard: Shard, part_dir: &Path, phases: &mut Phases) -> Result<PartSummary> {
    PartWriter::begin(part_dir)?;
    let keep = Arc::new(shard.brands(&reference.catalog));
    let brands = keep.iter().filter(|&&k| k).count() as u64;
    let mut fp = fingerprint(opts);
    fp.catalog = catalog_fingerprint(&reference.catalog);
    fp.reference = reference_fingerprint(&opts.reference)?;
    fp.program = program_fingerprint()?;
    fp.inputs = sources_to_read(paths, opts).into_iter().map(|(s, p)| InputFiles::of(s, p)).collect::<Result<_>>()?;
    let Imported { buckets, imports, imported, other_shards } = import_all(reference, paths, opts, Some(keep), phases)?;
    let population = PopulationGrid::new(&reference.cities);
    // No previous ids here: which previous row a new one continues is decided by the merge,
    // which has the serving snapshot.
    let reconciler = reconciler(reference, &population, opts, None);
    let mut writer = PartWriter::create(part_dir)?;
    let stats = phases.run("reconcile", || {
        Ok(reconciler.run_buckets(buckets, &|rows| rows, &mut |rows| {
            for r in &rows {
                writer.push(r);
            }
        }))
    })?;
    let manifest = PartManifest {
        format: PART_FORMAT.to_string(),
        shard,
        fingerprint: fp,
        brands,
        imports,
        imported,
        other_shards,
        stats,
        rows: 0,
        rows_bytes: 0,
        rows_crc: 0,
    };
    let m = phases.run("write part", || writer.finish(manifest))?;
    Ok(PartSummary {
        part: part_dir.display().to_string(),
        shard: shard.to_string(),
        brands,
        rows: m.rows,
        imports: m.imports,
        reconcile: m.stats,
        seconds: phases.seconds.clone(),
    })
}

/// Where a merge writes: the data folder whose snapshot it replaces (and continues).
#[derive(Debug, Clone)]
pub struct MergeOptions {
    pub data_dir: PathBuf,
    pub reference: ReferencePaths,
    pub keep_history: usize,
    /// As `BuildOptions::rewrite_history`.
    pub rewrite_history: bool,
    /// As `BuildOptions::record`.
    pub record: Record,
}

/// The differences between two fingerprints, by field, for a refusal's message.
fn differences(a: &Fingerprint, b: &Fingerprint) -> Vec<String> {
    let (a, b) = (serde_json::to_value(a).unwrap_or_default(), serde_json::to_value(b).unwrap_or_default());
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else { return vec!["everything".into()] };
    // Times as people write them, not the seconds the manifest keeps.
    let show = |k: &str, v: Option<&serde_json::Value>| match (k, v.and_then(|v| v.as_i64())) {
        ("as_of", Some(t)) => format_iso(t),
        _ => v.cloned().unwrap_or_default().to_string(),
    };
    a.iter().filter(|(k, v)| b.get(*k) != Some(v)).map(|(k, v)| format!("{k} {} against {}", show(k, Some(v)), show(k, b.get(k)))).collect()
}

/// Brands packed ahead of the one the snapshot takes next, per core (see `Reconciler::run_buckets`).
const MERGE_AHEAD_PER_CORE: usize = 4;

/// A brand's rows from its part, packed, with the ids they kept by source id and by place (None
/// for a brand no part holds).
type MergedBrand = Option<(AssembledBrand, (u64, u64))>;

/// Joins every part of a sharded build into the snapshot the one-process build writes from the
/// same inputs (rows, ids, version, history and report alike). Refuses, naming them, parts that
/// are missing, given twice, incomplete, damaged, or of another build; the serving snapshot is
/// replaced only by a complete merge.
pub fn merge_parts(parts: &[PathBuf], opts: &MergeOptions, phases: &mut Phases) -> Result<BuildSummary> {
    let refuse = |m: String| IngestError::Invalid(format!("merge refused: {m}"));
    if parts.is_empty() {
        return Err(refuse("no parts given".into()));
    }
    let mut manifests: Vec<(PathBuf, PartManifest)> = parts.iter().map(|p| Ok((p.clone(), PartManifest::read(p)?))).collect::<Result<_>>()?;
    let (first_path, first) = (manifests[0].0.clone(), manifests[0].1.clone());
    let n = first.shard.n;
    for (p, m) in &manifests[1..] {
        if m.shard.n != n {
            return Err(refuse(format!(
                "{} is shard {} and {} is shard {}: parts of one build share N",
                first_path.display(),
                first.shard,
                p.display(),
                m.shard
            )));
        }
        if m.fingerprint != first.fingerprint {
            return Err(refuse(format!(
                "{} and {} are parts of different builds ({})",
                first_path.display(),
                p.display(),
                differences(&first.fingerprint, &m.fingerprint).join("; ")
            )));
        }
    }
    manifests.sort_by_key(|(_, m)| m.shard.k);
    if let Some(w) = manifests.windows(2).find(|w| w[0].1.shard.k == w[1].1.shard.k) {
        return Err(refuse(format!("shard {} is given twice: {} and {}", w[0].1.shard, w[0].0.display(), w[1].0.display())));
    }
    let missing: Vec<String> = (1..=n).filter(|k| !manifests.iter().any(|(_, m)| m.shard.k == *k)).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        return Err(refuse(format!(
            "missing shard{} {}: run {} and merge again",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            if missing.len() > 1 { "them" } else { "it" }
        )));
    }
    // Every part read the same inputs: the same rows per source, however they were split.
    for (p, m) in &manifests {
        let whole = |m: &PartManifest| m.imports.iter().zip(&m.other_shards).map(|(r, o)| (r.source.clone(), r.rows_read, r.rows_kept + o)).collect::<Vec<_>>();
        if whole(m) != whole(&first) || m.imported != first.imported || m.stats.rows_in != first.stats.rows_in {
            return Err(refuse(format!("{} read other rows than {} ({:?} against {:?})", p.display(), first_path.display(), whole(m), whole(&first))));
        }
    }
    // The rows each source kept, summed over the parts, are what one process keeps: a brand
    // no part or two parts reconciled would show here.
    for (i, whole) in first.imports.iter().zip(&first.other_shards).map(|(r, o)| r.rows_kept + o).enumerate() {
        let sum: u64 = manifests.iter().map(|(_, m)| m.imports[i].rows_kept).sum();
        if sum != whole {
            return Err(refuse(format!(
                "the parts keep {sum} {} rows between them where the build kept {whole}: they split the brands differently",
                first.imports[i].source
            )));
        }
    }
    let here = reference_fingerprint(&opts.reference)?;
    if here != first.fingerprint.reference {
        return Err(refuse(format!("the parts were built with other reference data ({}) than this merge reads ({here})", first.fingerprint.reference)));
    }
    let program = program_fingerprint()?;
    if program != first.fingerprint.program {
        return Err(refuse(format!("the parts were built by another storemap ({}) than this one ({program})", first.fingerprint.program)));
    }
    check_as_of(&opts.data_dir, first.fingerprint.as_of, first.fingerprint.synthetic, opts.rewrite_history, "the parts' as-of")?;
    let (catalog, cities, _) = phases.run("load reference", || load_tables(&opts.reference))?;
    let catalog_now = catalog_fingerprint(&catalog);
    if catalog_now != first.fingerprint.catalog {
        return Err(refuse(format!(
            "the parts were built with another brand catalog ({}) than the reference data here ({catalog_now})",
            first.fingerprint.catalog
        )));
    }
    let owner = partition(&catalog, n);
    for (p, m) in &manifests {
        let mine = owner.iter().filter(|&&o| o == m.shard.k - 1).count() as u64;
        if m.brands != mine {
            return Err(refuse(format!("{} reconciled {} brands where shard {} has {mine}", p.display(), m.brands, m.shard)));
        }
    }

    let fp = &first.fingerprint;
    let mut imports = first.imports.clone();
    for (r, o) in imports.iter_mut().zip(&first.other_shards) {
        r.rows_kept += o;
    }
    let mut stats = ReconcileStats {
        rows_in: first.stats.rows_in,
        rows_unbranded: first.stats.rows_unbranded,
        unbranded_samples: first.stats.unbranded_samples.clone(),
        ..Default::default()
    };
    for (_, m) in &manifests {
        stats.clusters += m.stats.clusters;
        stats.linked_by_record_id += m.stats.linked_by_record_id;
        stats.countries_backfilled += m.stats.countries_backfilled;
        stats.duplicate_source_ids += m.stats.duplicate_source_ids;
        for (source, d) in &m.stats.duplicates_by_source {
            *stats.duplicates_by_source.entry(source.clone()).or_default() += d;
        }
    }
    let path = opts.data_dir.join(SNAPSHOT_FILE);
    let previous = phases.run("read previous snapshot", || Ok(previous_snapshot(&path, fp.synthetic).as_ref().map(PreviousIds::from_snapshot)))?;
    stats.previous_rows = previous.as_ref().map_or(0, |p| p.rows() as u64);
    let rows: u64 = manifests.iter().map(|(_, m)| m.rows).sum();
    let mut assembler = Assembler::new(snapshot_meta(fp, &imports, &first.imported), &catalog, &cities, rows);
    let packer = assembler.packer();
    phases.run("merge parts", || {
        let readers: Vec<PartReader> = manifests.iter().map(|(p, m)| PartReader::open(p, m)).collect::<Result<_>>()?;
        let feeds: Vec<PartFeed> = readers.iter().map(|_| PartFeed::default()).collect();
        // What a part may hold next: a brand its shard reconciles, after the ones before it.
        let check = |o: usize| {
            let (p, m) = &manifests[o];
            let owner = &owner;
            move |b: u32, last: Option<u32>| {
                if last.is_some_and(|l| b < l) {
                    return Some(refuse(format!("{} (shard {}) holds its rows out of brand order", p.display(), m.shard)));
                }
                (owner.get(b as usize) != Some(&(o as u32))).then(|| {
                    refuse(format!(
                        "{} (shard {}) holds rows of brand {b}, which shard {}/{n} reconciles, or holds them out of order",
                        p.display(),
                        m.shard,
                        owner.get(b as usize).map_or(0, |o| o + 1)
                    ))
                })
            }
        };
        let brands: Vec<u32> = (0..owner.len() as u32).collect();
        let ahead = MERGE_AHEAD_PER_CORE * crate::parallel::threads();
        let mut failed = false;
        // The feeds are cancelled however the merge of them ends (a panic included, a failed
        // spawn among them), so no reader waits on for room that no taker will make.
        struct Cancel<'a>(&'a [PartFeed]);
        impl Drop for Cancel<'_> {
            fn drop(&mut self) {
                self.0.iter().for_each(PartFeed::cancel);
            }
        }
        let read = std::thread::scope(|s| {
            let cancel = Cancel(&feeds);
            // Each part decoded on a thread of its own, in its order.
            let threads: Vec<_> = readers
                .into_iter()
                .zip(&feeds)
                .enumerate()
                .map(|(o, (reader, feed))| {
                    let check = check(o);
                    s.spawn(move || feed.fill(reader, &check))
                })
                .collect();
            // Brand by brand in catalog order, as the one-process build reconciles them; each
            // brand's rows from the one part that reconciled it, in the order they were made,
            // their ids continued and their text interned on every core, handed to the snapshot
            // in brand order.
            crate::parallel::parallel_stream(
                &brands,
                |next, i| i < next + ahead,
                |&b| {
                    let Some(mut rows) = feeds[owner[b as usize] as usize].take(b)? else { return Ok(None) };
                    let kept = match &previous {
                        Some(p) => {
                            let brand = &catalog.brands[b as usize];
                            p.assign(brand_identity(brand.wikidata.as_deref(), Some(&brand.nsi_id), &brand.name), &mut rows)
                        }
                        None => (0, 0),
                    };
                    Ok(Some((packer.pack(&rows), kept)))
                },
                |brand: std::result::Result<MergedBrand, FeedFailed>| match brand {
                    Ok(Some((packed, (by_id, by_place)))) => {
                        stats.ids_kept_by_source_id += by_id;
                        stats.ids_kept_by_place += by_place;
                        assembler.push(packed);
                        std::ops::ControlFlow::Continue(())
                    }
                    Ok(None) => std::ops::ControlFlow::Continue(()),
                    Err(FeedFailed) => {
                        // The other parts' readers stop too, and takers waiting on them return.
                        failed = true;
                        feeds.iter().for_each(PartFeed::cancel);
                        std::ops::ControlFlow::Break(())
                    }
                },
            );
            drop(cancel);
            // Every reader joined before any error is looked at: a panic in one outranks the
            // others' errors.
            let joined: Vec<_> = threads.into_iter().map(|t| t.join()).collect();
            joined.into_iter().map(|j| j.unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect::<Result<Vec<bool>>>()
        });
        // A feed fails only with its reader's error, which `read` returns first; and every brand
        // a part may hold was asked for, so each was read to its end.
        let read_whole = read?;
        assert!(!failed && read_whole.iter().all(|&whole| whole), "a part's feed stopped with no error from its reader");
        Ok(())
    })?;
    drop(packer);
    let had_previous = previous.is_some();
    drop(previous);
    let target = Target { data_dir: &opts.data_dir, as_of: fp.as_of, synthetic: fp.synthetic, keep_history: opts.keep_history, record: &opts.record };
    assembler.finish(&target, imports, stats, had_previous, phases)
}

/// Whether a build of `synthetic` (None: real data) continues a snapshot of `meta`: its ids
/// and history carry over only within one world.
fn same_world(meta: &SnapshotMeta, synthetic: Option<(f64, u64)>) -> bool {
    let was = meta.synthetic.then(|| (meta.scale.unwrap_or(f64::NAN), meta.seed.unwrap_or(u64::MAX)));
    was == synthetic
}

/// A build as of a time earlier than the snapshot it continues would cut the id history back
/// to that time (`IdHistory::push` replaces the entries from it on), erasing the change feed's
/// later weeks without a word: an operator's typo in `--as-of`, or a clock set back. Refused
/// unless asked for. Checked before anything is read or generated. A snapshot that cannot be
/// read, or of another world, is not continued, so it holds no history to lose.
fn check_as_of(data_dir: &Path, as_of: i64, synthetic: Option<(f64, u64)>, rewrite_history: bool, what: &str) -> Result<()> {
    let path = data_dir.join(SNAPSHOT_FILE);
    if rewrite_history || !path.exists() {
        return Ok(());
    }
    let Ok(meta) = storemap_core::Snapshot::peek_meta(&path) else { return Ok(()) };
    match storemap_core::parse_iso(&meta.as_of) {
        Some(served) if served > as_of && same_world(&meta, synthetic) => Err(IngestError::Invalid(format!(
            "{what} {} is earlier than the snapshot served now ({}): the change history from {} on would be dropped. \
             Build as of {} or later, or add --rewrite-history to drop it",
            format_iso(as_of),
            meta.as_of,
            format_iso(as_of),
            meta.as_of
        ))),
        _ => Ok(()),
    }
}

/// The snapshot a build is about to replace, whose ids its stores keep (see `identity`) and
/// which the history continues (see `history`). None when there is none, when it is another
/// world (real data after a synthetic one, or another synthetic scale or seed: a store there is
/// not a store here), or when it cannot be read (a damaged file is replaced anyway; its stores
/// then get fresh ids and the history starts over).
fn previous_snapshot(path: &Path, synthetic: Option<(f64, u64)>) -> Option<storemap_core::Snapshot> {
    if !path.exists() {
        return None;
    }
    match storemap_core::Snapshot::load(path) {
        Ok(s) => same_world(s.meta(), synthetic).then_some(s),
        Err(e) => {
            eprintln!("storemap: the snapshot being replaced could not be read ({e}); its stores' ids are not carried over");
            None
        }
    }
}

/// Keeps the last synthetic build's `truth.csv` beside the history before the generator replaces
/// the sources: the sightings of stores the next build no longer sees, which scoring the change
/// feed needs (`feed_score`).
fn keep_previous_truth(data_dir: &Path) -> Result<()> {
    let truth = data_dir.join("sources").join("truth.csv");
    if !truth.exists() {
        return Ok(());
    }
    let dir = data_dir.join(storemap_core::HISTORY_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| IngestError::io(dir.display(), e))?;
    let to = dir.join(crate::feed_score::PREVIOUS_TRUTH_FILE);
    std::fs::copy(&truth, &to).map(|_| ()).map_err(|e| IngestError::io(to.display(), e))
}

/// Swaps the serving snapshot and the one the last build replaced (`snapshot.prev.smap`), by
/// renames in one folder, holding the folder's lock so that no build, import or merge moves
/// either file meanwhile: a server watching the file picks the swap up like a refresh. The
/// current file is linked aside first, so the rename over it is atomic: a server never finds
/// the serving path missing. Returns the two paths.
pub fn rollback(data_dir: &Path) -> Result<(PathBuf, PathBuf)> {
    if !data_dir.is_dir() {
        return Err(IngestError::Invalid(format!("{}: no such data folder", data_dir.display())));
    }
    let _lock = crate::folder_lock::FolderLock::acquire(data_dir)?;
    let current = data_dir.join(SNAPSHOT_FILE);
    let previous = data_dir.join(PREVIOUS_SNAPSHOT_FILE);
    if !previous.exists() {
        return Err(IngestError::Invalid(format!("no previous snapshot to roll back to: {} does not exist (a build or import keeps one)", previous.display())));
    }
    // Checked before anything moves (its sections and checksum, as a server's load does
    // first): a damaged file swapped in would stop the next server start, while the one
    // serving now kept the old snapshot and said nothing.
    if !previous.is_file() {
        return Err(IngestError::Invalid(format!("{}: not a snapshot file; nothing rolled back", previous.display())));
    }
    storemap_core::Snapshot::read_meta(&previous).map_err(|e| IngestError::Invalid(format!("{e}; nothing rolled back")))?;
    let aside = data_dir.join(format!("{SNAPSHOT_FILE}.rollback"));
    let io = |p: &Path, e: std::io::Error| IngestError::io(p.display(), e);
    match std::fs::remove_file(&aside) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&aside, e)),
        _ => {}
    }
    // The snapshots and their records swap together, whatever stops the command meanwhile.
    let _commit = COMMIT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let had_current = current.exists();
    if had_current {
        std::fs::hard_link(&current, &aside).map_err(|e| io(&aside, e))?;
    }
    std::fs::rename(&previous, &current).map_err(|e| io(&current, e))?;
    if had_current {
        std::fs::rename(&aside, &previous).map_err(|e| io(&previous, e))?;
    }
    swap_records(data_dir)?;
    Ok((current, previous))
}

/// An import that kept nothing must not replace the snapshot a server is serving.
fn nothing_kept(path: &Path, imports: &[ImportReport]) -> IngestError {
    // No import at all: every source given was disabled (STOREMAP_DISABLED_SOURCES).
    let why = if imports.is_empty() {
        "no source was read (every one given is disabled)".to_string()
    } else {
        imports
            .iter()
            .map(|r| {
                // Why: a source whose every file failed read no row at all, and its files'
                // errors are the only reason (a spider cut short, a NaN where a number goes).
                let failed = if r.files_failed > 0 {
                    format!(", {} of {} files failed ({})", r.files_failed, r.files, r.errors.iter().take(3).cloned().collect::<Vec<_>>().join("; "))
                } else {
                    String::new()
                };
                format!("{} read {} rows, skipped {:?}{failed}", r.source, r.rows_read, r.skipped)
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    IngestError::Invalid(format!("the import kept no rows, so no snapshot was written and {} is unchanged: {why}", path.display()))
}

fn source_import(r: &ImportReport) -> SourceImport {
    SourceImport {
        files: r.files as u64,
        files_empty: r.files_empty as u64,
        files_failed: r.files_failed as u64,
        rows_read: r.rows_read,
        rows_kept: r.rows_kept,
        skipped: r.skipped.clone(),
        rows_corroborated: r.rows_corroborated,
        rows_with_hours: r.rows_with_hours,
        hours_invalid: r.hours_invalid,
    }
}

/// The serving snapshot becomes the previous one (a hard link: the running server keeps
/// reading its file, and the new one is renamed over `path` afterwards).
fn keep_previous(path: &Path, previous: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let io = |e| IngestError::io(previous.display(), e);
    match std::fs::remove_file(previous) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
        _ => {}
    }
    if std::fs::hard_link(path, previous).is_err() {
        std::fs::copy(path, previous).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Phases;

    static RELEASED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[test]
    fn each_phase_ends_by_releasing_what_it_freed() {
        fn release() {
            RELEASED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let mut phases = Phases::new(false).releasing_with(release);
        let seen = phases.run("first", || Ok(RELEASED.load(std::sync::atomic::Ordering::SeqCst))).unwrap();
        assert_eq!(seen, 0, "released before the phase's work");
        assert_eq!(RELEASED.load(std::sync::atomic::Ordering::SeqCst), 1);
        phases.run("second", || Ok(())).unwrap();
        assert_eq!(RELEASED.load(std::sync::atomic::Ordering::SeqCst), 2);
        // A phase that fails has nothing to report and releases nothing more.
        assert!(phases.run("third", || Err::<(), _>(crate::error::IngestError::Invalid("no".into()))).is_err());
        assert_eq!(RELEASED.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    /// A snapshot file of no rows whose version is `version`.
    fn snapshot_named(path: &std::path::Path, version: &str) {
        let meta = storemap_core::SnapshotMeta { snapshot_version: version.into(), ..Default::default() };
        storemap_core::SnapshotBuilder::new(meta, Vec::new(), Vec::new(), Vec::new()).write(path).unwrap();
    }

    fn version_of(path: &std::path::Path) -> String {
        storemap_core::Snapshot::read_meta(path).unwrap().snapshot_version
    }

    /// A data folder `name` with a current and a previous snapshot: the folder and the two paths.
    fn two_snapshots(name: &str) -> (crate::test_dir::TestDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = crate::test_dir::TestDir::new(name);
        let (current, previous) = (dir.join(super::SNAPSHOT_FILE), dir.join(super::PREVIOUS_SNAPSHOT_FILE));
        snapshot_named(&current, "current");
        snapshot_named(&previous, "previous");
        (dir, current, previous)
    }

    #[test]
    fn a_rollback_swaps_the_two_snapshots_and_waits_for_no_writer() {
        let (dir, current, previous) = two_snapshots("rollback-lock");
        // While a build holds the folder, a rollback is refused and moves nothing.
        let writer = crate::folder_lock::FolderLock::acquire(&dir).unwrap();
        let refused = super::rollback(&dir).unwrap_err().to_string();
        assert!(refused.contains("another build, import or merge is writing"), "{refused}");
        assert_eq!(version_of(&current), "current");
        drop(writer);
        super::rollback(&dir).unwrap();
        assert_eq!((version_of(&current), version_of(&previous)), ("previous".into(), "current".into()));
        // Twice is undone.
        super::rollback(&dir).unwrap();
        assert_eq!(version_of(&current), "current");
        // Nothing to roll back to.
        std::fs::remove_file(&previous).unwrap();
        assert!(super::rollback(&dir).unwrap_err().to_string().starts_with("no previous snapshot to roll back to"));
    }

    /// The record a data import wrote becomes import.json at the swap, the one replaced goes with
    /// the previous snapshot, and the command's file is removed; that file gone meanwhile (another
    /// command cleared it) changes nothing, since its content was read when the pipeline started.
    #[test]
    fn a_taken_record_is_written_from_what_was_read_at_start() {
        let dir = crate::test_dir::TestDir::new("record-take");
        let (record, previous) = (dir.join(super::IMPORT_RECORD_FILE), dir.join(super::PREVIOUS_IMPORT_RECORD_FILE));
        std::fs::write(&record, "{\"osm\":\"/old\"}\n").unwrap();
        let from = dir.join("import.json.host.1.next");
        let take = super::Record::Take { from: from.clone(), content: b"{\"osm\":\"/new\"}\n".to_vec() };
        take.apply(&dir, true).unwrap();
        assert_eq!(std::fs::read_to_string(&record).unwrap(), "{\"osm\":\"/new\"}\n");
        assert_eq!(std::fs::read_to_string(&previous).unwrap(), "{\"osm\":\"/old\"}\n");
        // With the command's file there, it is taken away; and no temporary file is left.
        std::fs::write(&from, "{}").unwrap();
        take.apply(&dir, false).unwrap();
        assert!(!from.exists());
        let mut left: Vec<String> = std::fs::read_dir(&*dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        assert_eq!(left, [super::IMPORT_RECORD_FILE, super::PREVIOUS_IMPORT_RECORD_FILE]);
    }

    #[test]
    fn damaged_borders_name_their_folder_and_the_way_out() {
        let dir = crate::test_dir::TestDir::new("borders-damaged");
        // One country, one ring that says it has 1,000 points and has none.
        let mut b = b"SMBORDR1".to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend(b"CH");
        b.extend(1u32.to_le_bytes());
        b.extend(0u16.to_le_bytes());
        b.extend([0, 0]);
        b.extend(1000u32.to_le_bytes());
        std::fs::write(dir.join("borders.bin"), &b).unwrap();
        let e = super::load_countries(&dir).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(&dir.display().to_string()) && e.contains("ring runs past the end") && e.contains("remove that folder"), "{e}");
    }

    /// An import that kept nothing because every file of a source failed says which files and
    /// why, not only that it read no rows.
    #[test]
    fn nothing_kept_names_the_files_that_failed() {
        let failed = crate::ImportReport {
            source: "atp".into(),
            files: 2,
            files_failed: 2,
            errors: vec![
                "in/denner_ch.geojson: not a GeoJSON FeatureCollection, skipped: expected value at line 1 column 2072".into(),
                "in/x.geojson: …".into(),
            ],
            ..Default::default()
        };
        let clean = crate::ImportReport { source: "osm".into(), files: 1, rows_read: 5, ..Default::default() };
        let message = super::nothing_kept(std::path::Path::new("d/snapshot.smap"), &[failed, clean]).to_string();
        assert!(message.contains("atp read 0 rows, skipped {}, 2 of 2 files failed (in/denner_ch.geojson: not a GeoJSON FeatureCollection"), "{message}");
        assert!(message.contains("osm read 5 rows, skipped {}") && !message.contains("osm read 5 rows, skipped {}, "), "{message}");
    }

    /// A previous snapshot cut short, or changed, or a folder in its place: refused, naming it,
    /// with both files where they were and nothing left beside them.
    #[test]
    fn a_rollback_to_a_damaged_snapshot_is_refused_and_moves_nothing() {
        let (dir, current, previous) = two_snapshots("rollback-damaged");
        let whole = std::fs::read(&previous).unwrap();
        let mut flipped = whole.clone();
        flipped[whole.len() / 2] ^= 0x20;
        for (what, bytes) in [("cut short", whole[..whole.len() - 9].to_vec()), ("one byte changed", flipped)] {
            std::fs::write(&previous, &bytes).unwrap();
            let refused = super::rollback(&dir).unwrap_err().to_string();
            assert!(refused.contains(&previous.display().to_string()) && refused.ends_with("nothing rolled back"), "{what}: {refused}");
            assert_eq!(version_of(&current), "current", "{what}");
            assert_eq!(std::fs::read(&previous).unwrap(), bytes, "{what}");
        }
        std::fs::remove_file(&previous).unwrap();
        std::fs::create_dir(&previous).unwrap();
        let refused = super::rollback(&dir).unwrap_err().to_string();
        assert!(refused.contains("not a snapshot file"), "{refused}");
        // (The folder's lock file aside.)
        let mut left: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).filter(|n| !n.starts_with('.')).collect();
        left.sort();
        assert_eq!(left, [super::PREVIOUS_SNAPSHOT_FILE, super::SNAPSHOT_FILE]);
    }
}
