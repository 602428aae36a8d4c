//! Shared paths, the reference data (loaded once), fixture ground truth, temp folders and the
//! one synthetic build that `determinism` and `report` share.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use storemap_core::{parse_iso, RowBuilder, Snapshot, SourceType};
use storemap_ingest::density::PopulationGrid;
use storemap_ingest::land::LandMask;
use storemap_ingest::pipeline::{self, BuildOptions, BuildSummary, Phases, Reference, SNAPSHOT_FILE};
use storemap_ingest::reconcile::{ReconcileStats, Reconciler};
use storemap_ingest::reference::ReferencePaths;
use storemap_ingest::SourceRow;

/// The refresh time every test build uses.
pub const AS_OF_ISO: &str = "2026-11-01T00:00:00Z";

pub fn as_of() -> i64 {
    parse_iso(AS_OF_ISO).expect("AS_OF_ISO parses")
}

// ---------------------------------------------------------------------------------------------
// paths

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("test").join("fixtures")
}

/// `data/`: tickers.csv, categories.csv, misspellings.csv.
pub fn tables_dir() -> PathBuf {
    workspace_root().join("data")
}

/// A table of `data/` (footprints.csv, tickers.csv, ...) read as the pipeline reads it.
pub fn read_table<T: for<'de> serde::Deserialize<'de>>(file: &str) -> Vec<T> {
    storemap_ingest::reference::read_csv(&tables_dir().join(file)).unwrap_or_else(|e| panic!("data/{file}: {e}"))
}

/// `data/footprints.csv` read here, apart from the generator's reading of it: the last row for
/// a chain and a country (or group of countries) wins, and a row for several countries
/// together (`GB+IE`) counts, less its members' own rows, for the members without one.
#[derive(Default)]
pub struct PublishedTable {
    /// (wikidata, country) → (brand, count): a country's own row, or a group's rest where one
    /// member is left.
    pub by_country: std::collections::BTreeMap<(String, String), (String, u32)>,
    /// Groups with two members left or more: (wikidata, brand, members left, rest).
    pub groups: Vec<(String, String, Vec<String>, u32)>,
}

pub fn published_table() -> PublishedTable {
    #[derive(serde::Deserialize)]
    struct Row {
        brand: String,
        brand_wikidata: String,
        country: String,
        count: u32,
    }
    let rows: Vec<Row> = read_table::<Row>("footprints.csv")
        .into_iter()
        .filter(|r| !r.brand_wikidata.is_empty())
        .map(|mut r| {
            // A group's members in any order are one group.
            let mut members: Vec<&str> = r.country.split('+').collect();
            members.sort_unstable();
            r.country = members.join("+");
            r
        })
        .collect();
    // The last row per key, in the order keys first appear.
    let mut last: Vec<Row> = Vec::new();
    for r in rows {
        match last.iter_mut().find(|l| l.brand_wikidata == r.brand_wikidata && l.country == r.country) {
            Some(l) => *l = r,
            None => last.push(r),
        }
    }
    let mut t = PublishedTable::default();
    for r in last.iter().filter(|r| !r.country.contains('+')) {
        t.by_country.insert((r.brand_wikidata.clone(), r.country.clone()), (r.brand.clone(), r.count));
    }
    for r in last.iter().filter(|r| r.country.contains('+')) {
        let members: Vec<String> = r.country.split('+').map(str::to_string).collect();
        let own: u32 = members.iter().filter_map(|c| t.by_country.get(&(r.brand_wikidata.clone(), c.clone()))).map(|(_, n)| n).sum();
        let in_group = |c: &String| t.groups.iter().any(|(q, _, m, _)| q == &r.brand_wikidata && m.contains(c));
        let left: Vec<String> =
            members.iter().filter(|c| !t.by_country.contains_key(&(r.brand_wikidata.clone(), (*c).clone())) && !in_group(c)).cloned().collect();
        let rest = r.count.saturating_sub(own);
        if r.count == 0 {
            // An exit from every member without a row.
            for c in left {
                t.by_country.insert((r.brand_wikidata.clone(), c), (r.brand.clone(), 0));
            }
            continue;
        }
        if rest == 0 || left.is_empty() {
            continue;
        }
        if left.len() == 1 {
            t.by_country.insert((r.brand_wikidata.clone(), left[0].clone()), (r.brand.clone(), rest));
        } else {
            t.groups.push((r.brand_wikidata.clone(), r.brand.clone(), left, rest));
        }
    }
    t
}

/// Every file under `dir` whose path from `dir` `skip` does not name (a folder skipped is not
/// entered), with its bytes, sorted by path.
pub fn files_under(dir: &Path, skip: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).expect("under dir").display().to_string();
            if skip(&rel) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((rel, std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))));
            }
        }
    }
    out.sort();
    out
}

/// `STOREMAP_REFERENCE_DIR`, else `<root>/data/generated/reference`. Panics with the command that
/// produces it when it is missing.
pub fn reference_dir() -> PathBuf {
    let dir = match std::env::var_os("STOREMAP_REFERENCE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => workspace_root().join("data").join("generated").join("reference"),
    };
    if !dir.join("brands.jsonl").is_file() || !dir.join("countries.geojson").is_file() {
        panic!(
            "reference data not found in {} (no brands.jsonl / countries.geojson).\n\
             Generate it from the workspace root with:\n    \
             node --import tsx ts/data/reference.ts data/generated/reference\n\
             or point STOREMAP_REFERENCE_DIR at an existing copy.",
            dir.display()
        );
    }
    dir
}

pub fn reference_paths() -> ReferencePaths {
    ReferencePaths { extracted: reference_dir(), tables: tables_dir() }
}

// ---------------------------------------------------------------------------------------------
// reference data, loaded once per test binary (~1 s)

pub fn reference() -> &'static Reference {
    static REF: OnceLock<Reference> = OnceLock::new();
    REF.get_or_init(|| pipeline::load_reference(&reference_paths()).unwrap_or_else(|e| panic!("load_reference: {e}")))
}

/// The land mask the synthetic world places its stores with: the country index's grid.
pub fn land() -> &'static LandMask {
    reference().countries.land()
}

pub fn population() -> &'static PopulationGrid {
    static POP: OnceLock<PopulationGrid> = OnceLock::new();
    POP.get_or_init(|| PopulationGrid::new(&reference().cities))
}

/// Runs the reconciler over `rows` with the real catalog, countries and population grid.
pub fn reconcile(rows: &[SourceRow], multi_source: bool) -> (Vec<RowBuilder>, ReconcileStats) {
    let r = reference();
    Reconciler { catalog: &r.catalog, countries: &r.countries, population: population(), as_of: as_of(), multi_source, previous: None }.run(rows)
}

/// The catalog index of the brand with this wikidata id (panics if the catalog lacks it).
pub fn brand_index(qid: &str) -> u32 {
    reference().catalog.brands.iter().position(|b| b.wikidata.as_deref() == Some(qid)).unwrap_or_else(|| panic!("brand {qid} is not in the catalog")) as u32
}

// ---------------------------------------------------------------------------------------------
// ids

/// `source:id`, the form expected.json uses.
pub fn key(source: SourceType, id: &str) -> String {
    format!("{}:{id}", source.as_str())
}

pub fn row_key(r: &SourceRow) -> String {
    key(r.source(), &r.source_id)
}

pub fn alias_keys(r: &RowBuilder) -> std::collections::BTreeSet<String> {
    r.aliases.iter().map(|(s, id)| key(*s, id)).collect()
}

// ---------------------------------------------------------------------------------------------
// fixture ground truth

pub fn expected() -> &'static serde_json::Value {
    static EXPECTED: OnceLock<serde_json::Value> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        let path = fixtures_dir().join("expected.json");
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    })
}

/// expected.json `rows`.
pub fn expected_rows() -> &'static [serde_json::Value] {
    expected()["rows"].as_array().expect("expected.json: rows is an array")
}

pub fn members(row: &serde_json::Value) -> Vec<String> {
    row["members"].as_array().expect("members is an array").iter().map(|m| m.as_str().expect("member is a string").to_string()).collect()
}

/// The members of the expected row with this key.
pub fn members_of(row_key: &str) -> Vec<String> {
    let row = expected_rows().iter().find(|r| r["key"] == row_key).unwrap_or_else(|| panic!("expected.json has no row {row_key}"));
    members(row)
}

/// The one member of `row_key` from `source` (an id without the `source:` prefix).
pub fn member_id(row_key: &str, source: SourceType) -> String {
    let prefix = format!("{}:", source.as_str());
    let found: Vec<String> = members_of(row_key).into_iter().filter_map(|m| m.strip_prefix(&prefix).map(str::to_string)).collect();
    assert_eq!(found.len(), 1, "expected one {} member in {row_key}, found {found:?}", source.as_str());
    found.into_iter().next().unwrap()
}

// ---------------------------------------------------------------------------------------------
// temp folders

/// A fresh folder under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("storemap-it-{tag}-{}-{}-{nanos}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// synthetic builds

pub const SCALE: f64 = 0.01;
pub const SEED: u64 = 7;

/// Generates the synthetic world at `scale`/`seed` into `dir` and builds its snapshot.
pub fn build_synthetic(dir: &Path, scale: f64, seed: u64) -> BuildSummary {
    let opts = BuildOptions {
        data_dir: dir.to_path_buf(),
        reference: reference_paths(),
        as_of: as_of(),
        disabled: Vec::new(),
        multi_source: true,
        synthetic: Some((scale, seed)),
        region: Default::default(),
        keep_history: storemap_core::HISTORY_DEFAULT_KEEP,
        rewrite_history: false,
        record: Default::default(),
    };
    pipeline::build_synthetic(&opts, scale, seed, &mut Phases::new(false)).unwrap_or_else(|e| panic!("build_synthetic(scale {scale}, seed {seed}): {e}"))
}

/// The one scale-0.01 seed-7 build both `determinism` and `report` use. Its folder is removed
/// as soon as what the tests need has been read from it.
pub struct SharedBuild {
    pub summary: BuildSummary,
    /// `snapshot.smap`, byte for byte.
    pub snapshot_bytes: Vec<u8>,
    /// `report::report(&Snapshot::load(snapshot.smap), Some(sources/truth.csv))`, with the land
    /// score and the tickers' countries.
    pub report: storemap_ingest::report::Report,
    /// Rows of the loaded snapshot.
    pub snapshot_rows: usize,
    /// Data rows of `sources/truth.csv`.
    pub truth_rows: usize,
    /// Rows whose country no border placed them in.
    pub xx_rows: usize,
}

pub fn shared_build() -> &'static SharedBuild {
    static BUILD: OnceLock<SharedBuild> = OnceLock::new();
    BUILD.get_or_init(|| {
        let dir = TempDir::new("shared");
        let summary = build_synthetic(dir.path(), SCALE, SEED);
        let path = dir.path().join(SNAPSHOT_FILE);
        assert_eq!(Path::new(&summary.snapshot), path, "the snapshot goes to <data_dir>/{SNAPSHOT_FILE}");
        let snapshot_bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let snap = Snapshot::load(&path).unwrap_or_else(|e| panic!("Snapshot::load: {e}"));
        let truth = dir.path().join("sources").join("truth.csv");
        assert!(truth.is_file(), "the synthetic build writes {}", truth.display());
        let mut report = storemap_ingest::report::report(&snap, Some(&truth)).unwrap_or_else(|e| panic!("report: {e}"));
        // As `data report` fills them with the reference borders and the project's tables.
        report.land = Some(storemap_ingest::report::land_score(&snap, land()));
        storemap_ingest::report::with_tables(&mut report, &snap, &tables_dir()).unwrap_or_else(|e| panic!("the tables: {e}"));
        let xx_rows = (0..snap.row_count()).filter(|&r| snap.row_country(r) == "XX").count();
        let truth_rows = csv::Reader::from_path(&truth).expect("truth.csv opens").records().count();
        SharedBuild { summary, snapshot_bytes, report, snapshot_rows: snap.row_count(), truth_rows, xx_rows }
    })
}

// ---------------------------------------------------------------------------------------------
// geometry diagnostics

/// Distance in metres from a point to the nearest boundary edge of country `code` in
/// countries.geojson (equirectangular around the point; fine at the km scale). For failure
/// messages only: it parses the 20 MB file each call.
pub fn distance_to_country_edge_m(code: &str, lat: f64, lng: f64) -> Option<f64> {
    let path = reference_dir().join("countries.geojson");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    let kx = 6_371_008.8 * lat.to_radians().cos() * std::f64::consts::PI / 180.0;
    let ky = 6_371_008.8 * std::f64::consts::PI / 180.0;
    let xy = |p: &serde_json::Value| -> Option<(f64, f64)> { Some(((p.get(0)?.as_f64()? - lng) * kx, (p.get(1)?.as_f64()? - lat) * ky)) };
    let mut best: Option<f64> = None;
    for f in v["features"].as_array()? {
        if f.pointer("/properties/iso_a2").and_then(|c| c.as_str()) != Some(code) {
            continue;
        }
        let g = &f["geometry"];
        let polys: Vec<&serde_json::Value> = match g["type"].as_str() {
            Some("Polygon") => vec![&g["coordinates"]],
            Some("MultiPolygon") => g["coordinates"].as_array()?.iter().collect(),
            _ => continue,
        };
        for poly in polys {
            for ring in poly.as_array()? {
                let pts: Vec<(f64, f64)> = ring.as_array()?.iter().filter_map(xy).collect();
                for w in pts.windows(2) {
                    let ((ax, ay), (bx, by)) = (w[0], w[1]);
                    let (dx, dy) = (bx - ax, by - ay);
                    let len2 = dx * dx + dy * dy;
                    let t = if len2 == 0.0 { 0.0 } else { (-(ax * dx + ay * dy) / len2).clamp(0.0, 1.0) };
                    let (px, py) = (ax + t * dx, ay + t * dy);
                    let d = (px * px + py * py).sqrt();
                    best = Some(best.map_or(d, |b: f64| b.min(d)));
                }
            }
        }
    }
    best
}
