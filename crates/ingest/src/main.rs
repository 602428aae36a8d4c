//! `storemap-ingest`: the pipeline's command line. The `storemap` CLI (TypeScript) runs it for
//! `data build`, `data import`, `data refresh` and `data report`; it prints one JSON summary on
//! stdout and progress on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use storemap_core::{parse_iso, Snapshot, SourceType};
use storemap_ingest::folder_lock::FolderLock;
use storemap_ingest::pipeline::{self, BuildOptions, MergeOptions, Phases, Record, Region, SourcePaths, SNAPSHOT_FILE};
use storemap_ingest::reference::ReferencePaths;
use storemap_ingest::shard::Shard;

/// A build holds millions of small rows from several threads at once and frees them phase by
/// phase; glibc's per-thread arenas kept the freed memory fragmented and resident, so a
/// refresh peaked over the 8 GiB a scale-1 build may use. jemalloc returns it.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once at its start: memory freed and not reused within a second goes
/// back to the OS, purged by jemalloc's own background thread. By default it waits ten seconds
/// and purges only when the program allocates, and reconciliation frees the source rows
/// brand by brand while it builds the rows of the snapshot (scale 1: peak 2.79 GiB with these,
/// 2.94 without). `_RJEM_MALLOC_CONF` in the environment overrides them.
#[allow(unsafe_code)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &u8 = &b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0"[0];

/// Hands the pages every arena holds freed back to the OS now (jemalloc's
/// `arena.<MALLCTL_ARENAS_ALL>.purge`), where decay would wait up to `dirty_decay_ms`: run at
/// the end of each phase, so the next one does not start on the last one's garbage: on many
/// cores a phase takes less than that second (the imports half a second on 16), and jemalloc
/// keeps four arenas per core, each holding the pages freed into it.
fn release_freed() {
    // jemalloc skips the purge of an arena whose background thread is purging it at that
    // moment (`pac_decay_to_limit`: `decay->purging`), which left a phase's garbage resident
    // one time in ten; so the background threads are stopped for the purge (which waits for
    // them) and started again after, where they ran.
    let mut ran = false;
    let stopped = background_threads(Some(false), Some(&mut ran));
    // `arena.4096.purge`: 4096 is MALLCTL_ARENAS_ALL in jemalloc 5. The call takes and returns
    // nothing; it fails only for a name jemalloc does not know, which leaves nothing to do.
    #[allow(unsafe_code)]
    // SAFETY: a NUL-terminated name and null old/new pointers with zero length, as mallctl
    // documents for a command that reads and writes no value.
    unsafe {
        tikv_jemalloc_sys::mallctl(c"arena.4096.purge".as_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0);
    }
    if stopped && ran {
        background_threads(Some(true), None);
    }
}

/// jemalloc's `background_thread` switch: sets it to `set` (when given), and reads what it was
/// into `was` (when given). False where jemalloc refuses (a build without background threads).
fn background_threads(set: Option<bool>, was: Option<&mut bool>) -> bool {
    let mut set = set;
    let (old, mut old_len) = match was {
        Some(w) => (w as *mut bool as *mut std::ffi::c_void, std::mem::size_of::<bool>()),
        None => (std::ptr::null_mut(), 0),
    };
    let (new, new_len) = match set.as_mut() {
        Some(v) => (v as *mut bool as *mut std::ffi::c_void, std::mem::size_of::<bool>()),
        None => (std::ptr::null_mut(), 0),
    };
    let len = if old.is_null() { std::ptr::null_mut() } else { &mut old_len as *mut usize };
    #[allow(unsafe_code)]
    // SAFETY: `background_thread` is a bool; the old and new pointers are null or point to a
    // bool with its size, as mallctl documents.
    unsafe {
        tikv_jemalloc_sys::mallctl(c"background_thread".as_ptr(), old, len, new, new_len) == 0
    }
}

#[derive(Parser)]
#[command(name = "storemap-ingest", about = "storemap data pipeline")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where a snapshot goes and the reference data it is made with.
#[derive(Args, Clone)]
struct Folders {
    /// Where the snapshot (and generated sources) go.
    #[arg(long)]
    data_dir: PathBuf,
    /// Reference data extracted from npm packages (brands.jsonl, cities.csv, ...).
    #[arg(long)]
    reference: PathBuf,
    /// The project's data/ folder (tickers.csv, categories.csv, misspellings.csv).
    #[arg(long)]
    tables: PathBuf,
    /// Snapshots the id history keeps (what the change feed can reach back over).
    #[arg(long, default_value_t = storemap_core::HISTORY_DEFAULT_KEEP)]
    keep_history: usize,
    /// Accept an --as-of earlier than the snapshot served now: the history's entries from that
    /// time on are dropped (refused without it).
    #[arg(long)]
    rewrite_history: bool,
    /// Show a spinner on a terminal.
    #[arg(long)]
    progress: bool,
    /// Once the snapshot is in place, this file (in the data folder) becomes its import.json:
    /// the record of what a data import read, which the storemap command writes.
    #[arg(long, conflicts_with = "forget_record")]
    record: Option<PathBuf>,
    /// Once the snapshot is in place, the data folder's import.json is removed (a build's or a
    /// merge's snapshot is no import's).
    #[arg(long)]
    forget_record: bool,
}

impl Folders {
    fn reference_paths(&self) -> ReferencePaths {
        ReferencePaths { extracted: self.reference.clone(), tables: self.tables.clone() }
    }

    /// Read before any work: a record that is not there would fail after the snapshot's swap.
    fn record(&self) -> Result<Record, String> {
        match (&self.record, self.forget_record) {
            (Some(file), _) if !file.is_file() => Err(format!("--record: no file at {}", file.display())),
            (Some(file), _) => match std::fs::read(file) {
                Ok(content) => Ok(Record::Take { from: file.clone(), content }),
                Err(e) => Err(format!("--record: {}: {e}", file.display())),
            },
            (None, true) => Ok(Record::Forget),
            (None, false) => Ok(Record::Keep),
        }
    }
}

#[derive(Args, Clone)]
struct Common {
    #[command(flatten)]
    folders: Folders,
    /// Refresh time stamped into every row (ISO 8601); defaults to now.
    #[arg(long)]
    as_of: Option<String>,
    /// Sources to leave out, comma-separated (osm, overture, fsq, atp).
    #[arg(long, value_delimiter = ',')]
    disable: Vec<String>,
    /// Skip multi-source reconciliation: one row per source row, provenance null.
    #[arg(long)]
    single_source: bool,
    /// Build shard K of N (K from 1): reconcile only its brands and write a part to `--part`
    /// instead of a snapshot (`merge` joins the N parts).
    #[arg(long, requires = "part")]
    shard: Option<String>,
    /// Where a shard's part goes (a folder).
    #[arg(long, requires = "shard")]
    part: Option<PathBuf>,
}

impl Common {
    fn shard(&self) -> Result<Option<(Shard, PathBuf)>, String> {
        match (&self.shard, &self.part) {
            // Each process would stamp its own "now": the shards of one build must share a time.
            (Some(_), _) if self.as_of.is_none() => Err("--shard needs --as-of: every shard of one build stamps the same time".into()),
            (Some(s), Some(p)) => Ok(Some((Shard::parse(s)?, p.clone()))),
            _ => Ok(None),
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Generate the synthetic world and build its snapshot.
    Build {
        #[command(flatten)]
        common: Common,
        #[arg(long, default_value_t = 0.1)]
        scale: f64,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Build a snapshot from real extracts.
    Import {
        #[command(flatten)]
        common: Common,
        #[arg(long)]
        osm: Option<PathBuf>,
        #[arg(long)]
        overture: Option<PathBuf>,
        #[arg(long)]
        fsq: Option<PathBuf>,
        #[arg(long)]
        atp: Option<PathBuf>,
        /// Keep only stores in this country (ISO 3166-1 alpha-2); repeatable.
        #[arg(long = "country")]
        countries: Vec<String>,
        /// Keep only stores inside south,west,north,east (degrees).
        #[arg(long, allow_hyphen_values = true)]
        bbox: Option<String>,
    },
    /// Join the parts of a sharded build (`--shard K/N --part DIR`, every K once) into the
    /// data folder's snapshot: the one the one-process build writes from the same inputs.
    Merge {
        /// The part folders, every shard of one build once, in any order.
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        #[command(flatten)]
        folders: Folders,
    },
    /// Serve the snapshot the last build, import or merge replaced, and keep the current one as
    /// the previous (under the data folder's lock)
    Rollback {
        #[arg(long)]
        data_dir: PathBuf,
    },
    /// Print the dataset's figures as JSON.
    Report {
        #[arg(long)]
        data_dir: PathBuf,
        /// Reference data: with it the report measures how far rows stand from land.
        #[arg(long)]
        reference: Option<PathBuf>,
        /// The project's data/ folder: with it the report sets each ticker's served countries
        /// beside its published ones.
        #[arg(long)]
        tables: Option<PathBuf>,
    },
    /// For tests and benchmarks: a worldwide Overture file made of copies of a real one moved
    /// to every continent (storemap_ingest::world::WORLD), in row groups with bbox statistics.
    #[command(hide = true)]
    OvertureWorld {
        #[arg(long)]
        sample: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long, default_value_t = 5)]
        groups_per_copy: usize,
        /// Write no column statistics (a file that cannot be cut by area).
        #[arg(long)]
        no_statistics: bool,
    },
}

fn options(c: &Common, synthetic: Option<(f64, u64)>) -> Result<BuildOptions, String> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_err(|e| e.to_string())?.as_secs() as i64;
    let as_of = match &c.as_of {
        Some(t) => parse_iso(t).ok_or_else(|| format!("--as-of: not an ISO 8601 time: {t}"))?,
        None => now,
    };
    // A mistyped year (9999, 2062) would stamp every row with a time to come, and the next
    // import would be refused as going back in time; a planned as-of is never a year ahead.
    if as_of > now + storemap_core::AHEAD_MAX_S {
        return Err(format!(
            "--as-of: {} is more than a year after this machine's clock ({}): check the year (rows would be stamped with a time to come, and every later import refused as earlier)",
            c.as_of.as_deref().unwrap_or_default(),
            &storemap_core::format_iso(now)[..10]
        ));
    }
    let disabled =
        c.disable.iter().map(|s| SourceType::parse(s.trim()).ok_or_else(|| format!("--disable: unknown source {s}"))).collect::<Result<Vec<_>, _>>()?;
    Ok(BuildOptions {
        data_dir: c.folders.data_dir.clone(),
        reference: c.folders.reference_paths(),
        as_of,
        disabled,
        multi_source: !c.single_source,
        synthetic,
        region: Region::default(),
        keep_history: c.folders.keep_history,
        rewrite_history: c.folders.rewrite_history,
        record: c.folders.record()?,
    })
}

/// `--country` codes and `--bbox S,W,N,E`, checked for form (the pipeline checks the codes
/// against the borders once it has loaded them, before it reads any source).
fn region(countries: &[String], bbox: Option<&str>) -> Result<Region, String> {
    let mut codes = Vec::new();
    for c in countries.iter().flat_map(|c| c.split(',')) {
        let code = c.trim().to_ascii_uppercase();
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(format!("--country: {c:?} is not an ISO 3166-1 alpha-2 code"));
        }
        codes.push(code);
    }
    let bbox = match bbox {
        None => None,
        Some(b) => {
            let v: Vec<f64> = b
                .split(',')
                .map(|x| x.trim().parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("--bbox: {b:?} is not four numbers south,west,north,east"))?;
            let [s, w, n, e]: [f64; 4] = v.try_into().map_err(|_| format!("--bbox: {b:?} is not four numbers south,west,north,east"))?;
            if !((-90.0..=90.0).contains(&s) && (-90.0..=90.0).contains(&n) && s < n && (-180.0..=180.0).contains(&w) && (-180.0..=180.0).contains(&e)) {
                return Err(format!("--bbox: {b:?}: south must be below north, latitudes within ±90 and longitudes within ±180"));
            }
            Some([s, w, n, e])
        }
    };
    Ok(Region { countries: codes, bbox })
}

fn run(cli: Cli) -> Result<String, String> {
    let json = |v: &dyn erased::Json| v.to_json();
    match cli.command {
        Command::Build { common, scale, seed } => {
            let max = storemap_ingest::world::MAX_SCALE;
            if !(scale > 0.0 && scale <= max) {
                return Err(format!("--scale must be in (0, {max}]"));
            }
            let opts = options(&common, Some((scale, seed)))?;
            let mut phases = Phases::new(common.folders.progress).releasing_with(release_freed);
            // A shard writes the data folder's sources/ too, when the world there is not yet its
            // own (the shards of one build in one folder generate it once, one after another).
            let _lock = FolderLock::acquire(&opts.data_dir).map_err(|e| e.to_string())?;
            let out = match common.shard()? {
                Some((shard, part)) => pipeline::build_synthetic_part(&opts, scale, seed, shard, &part, &mut phases).map(|s| json(&s)),
                None => pipeline::build_synthetic(&opts, scale, seed, &mut phases).map(|s| json(&s)),
            };
            phases.finish();
            out.map_err(|e| e.to_string())
        }
        Command::Import { common, osm, overture, fsq, atp, countries, bbox } => {
            let mut opts = options(&common, None)?;
            opts.region = region(&countries, bbox.as_deref())?;
            let mut phases = Phases::new(common.folders.progress).releasing_with(release_freed);
            let paths = SourcePaths { osm, overture, fsq, atp };
            let out = match common.shard()? {
                Some((shard, part)) => pipeline::import_sources_part(&paths, &opts, shard, &part, &mut phases).map(|s| json(&s)),
                // A shard of an import only reads the data folder (its reference data).
                None => {
                    let _lock = FolderLock::acquire(&opts.data_dir).map_err(|e| e.to_string())?;
                    pipeline::import_sources(&paths, &opts, &mut phases).map(|s| json(&s))
                }
            };
            phases.finish();
            out.map_err(|e| e.to_string())
        }
        Command::Merge { parts, folders } => {
            let opts = MergeOptions {
                data_dir: folders.data_dir.clone(),
                reference: folders.reference_paths(),
                keep_history: folders.keep_history,
                rewrite_history: folders.rewrite_history,
                record: folders.record()?,
            };
            let _lock = FolderLock::acquire(&opts.data_dir).map_err(|e| e.to_string())?;
            let mut phases = Phases::new(folders.progress).releasing_with(release_freed);
            let out = pipeline::merge_parts(&parts, &opts, &mut phases).map(|s| json(&s));
            phases.finish();
            out.map_err(|e| e.to_string())
        }
        Command::Rollback { data_dir } => {
            let (current, previous) = pipeline::rollback(&data_dir).map_err(|e| e.to_string())?;
            Ok(json(&serde_json::json!({ "current": current.display().to_string(), "previous": previous.display().to_string() })))
        }
        Command::Report { data_dir, reference, tables } => {
            let snap = Snapshot::load(&data_dir.join(SNAPSHOT_FILE)).map_err(|e| e.to_string())?;
            // A synthetic world's truth scores only the snapshot built from it: after a real
            // import into a folder that held one, or a rollback to another world's build, its
            // truth files describe other stores.
            let (truth, not_used) = storemap_ingest::report::truth_for(&data_dir, &snap);
            let mut r = storemap_ingest::report::report(&snap, truth.as_deref()).map_err(|e| e.to_string())?;
            if truth.is_some() {
                r.changes = storemap_ingest::feed_score::change_score(&data_dir, &snap).map_err(|e| e.to_string())?;
            }
            r.truth_not_used = not_used;
            if let Some(dir) = reference {
                let countries = pipeline::load_countries(&dir).map_err(|e| e.to_string())?;
                r.land = Some(storemap_ingest::report::land_score(&snap, countries.land()));
            }
            if let Some(dir) = tables {
                storemap_ingest::report::with_tables(&mut r, &snap, &dir).map_err(|e| e.to_string())?;
            }
            Ok(json(&r))
        }
        Command::OvertureWorld { sample, out, groups_per_copy, no_statistics } => {
            let world = storemap_ingest::world::WORLD;
            let s = storemap_ingest::world::spread_overture(
                &sample,
                &out,
                &storemap_ingest::world::Spread { places: world, groups_per_copy, statistics: !no_statistics },
            )
            .map_err(|e| e.to_string())?;
            let copies: Vec<_> = world.iter().zip(&s.boxes).map(|(p, b)| serde_json::json!({"country": p.0, "bbox": b})).collect();
            Ok(json(&serde_json::json!({"rows_per_copy": s.rows_per_copy, "row_groups": s.row_groups, "copies": copies})))
        }
    }
}

mod erased {
    pub trait Json {
        fn to_json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn to_json(&self) -> String {
            serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
        }
    }
}

/// Set by the `storemap` CLI (`ts/data/ingest.ts`), which holds this process's stdin open and
/// never writes to it: when the CLI is gone, whatever stopped it (`kill -9`, the OOM killer, a
/// service manager killing the main process only), stdin reads end of file and the pipeline
/// stops too, instead of running on to replace the snapshot behind a command that no longer
/// records it. Not set, stdin is not watched (run by hand, stdin may be a terminal or empty).
const STOP_WITH_PARENT: &str = "STOREMAP_STOP_WITH_PARENT";

fn stop_with_parent() {
    if std::env::var_os(STOP_WITH_PARENT).is_none() {
        return;
    }
    let watch = || {
        use std::io::{Read, Write};
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 64];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        // Not eprintln!: stderr may be a pipe nobody reads any more, and a failed write must not
        // stop this thread short of the exit.
        let _ = writeln!(std::io::stderr(), "storemap-ingest: the command that started it has stopped; stopping too");
        // Not between the snapshot's swap and its record's: held until the process ends.
        let _commit = pipeline::COMMIT.lock();
        std::process::exit(1);
    };
    if let Err(e) = std::thread::Builder::new().name("parent watch".into()).spawn(watch) {
        eprintln!("storemap-ingest: cannot watch the command that started it: {e}");
        std::process::exit(1);
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    stop_with_parent();
    // Refused before any work, rather than read as the default by the first parallel step.
    if let Err(e) = storemap_ingest::parallel::threads_setting() {
        eprintln!("storemap-ingest: {e}");
        return ExitCode::FAILURE;
    }
    match run(cli) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("storemap-ingest: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// Resident memory in bytes, from /proc.
    fn resident() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kb: u64 = status.lines().find(|l| l.starts_with("VmRSS:")).and_then(|l| l.split_whitespace().nth(1)).unwrap().parse().unwrap();
        kb * 1024
    }

    #[test]
    fn what_a_phase_freed_goes_back_at_its_end() {
        // 256 MiB in blocks of 4 KiB, the size of the rows and strings a phase makes, each
        // written so its pages are resident; freed, they stay with jemalloc (decay would hand
        // them back over a second) until `release_freed` purges them.
        let blocks: Vec<Box<[u8]>> = (0..65_536).map(|i| vec![i as u8 | 1; 4096].into_boxed_slice()).collect();
        assert!(blocks.iter().all(|b| b[4095] != 0));
        let held = resident();
        drop(blocks);
        super::release_freed();
        let after = resident();
        assert!(held >= after + (192 << 20), "resident {} MiB holding the blocks, {} MiB after they were freed and purged", held >> 20, after >> 20);
        // The background threads, stopped for the purge, run again (the binary's options start them).
        let mut running = false;
        assert!(super::background_threads(None, Some(&mut running)));
        assert!(running, "the background threads were not started again");
    }
}
