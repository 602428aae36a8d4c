//! A build in parts, for inputs bigger than one machine: `--shard K/N` reads every input, keeps
//! the rows of the brands shard K reconciles, and writes a part (`part.json` and `rows.bin`);
//! `merge` joins the N parts into the snapshot the one-process build writes, byte for byte.
//!
//! Shards split the brands, not the map. Reconciliation is per brand (a store's sightings are
//! of one brand), so a brand reconciled whole by one shard gives exactly the rows the one-process
//! build gives, with no margin along borders and no cluster that two shards both see. A split
//! by country cannot balance (the United States holds about a third of the rows) and its border
//! margins only approximate what anchor clustering does, whose chains have no fixed reach. The
//! brands are dealt largest first to the least-loaded shard by their published store counts, so
//! every shard computes the same partition from the catalog alone, before it reads a row.
//!
//! What a part leaves to the merge: the previous snapshot's ids (a store keeps its id across
//! refreshes, `identity`), which need the serving snapshot; the version hash, the history and
//! the write. A part's rows are in the order reconciliation made them, which the version and the
//! id continuation both depend on.

use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use storemap_core::{RowBuilder, SourceMask, SourceType, StorefrontType};

use crate::catalog::Catalog;
use crate::error::{IngestError, Result};
use crate::hash::fnv1a;
use crate::reconcile::ReconcileStats;
use crate::ImportReport;

/// The part layout's name and version; a merge refuses parts of another.
pub const PART_FORMAT: &str = "storemap-part/1";
pub const PART_MANIFEST: &str = "part.json";
pub const PART_ROWS: &str = "rows.bin";
/// More shards than this would each hold a handful of brands (and a merge opens every part at
/// once).
pub const MAX_SHARDS: u32 = 1024;
/// The read and write buffer of a part's rows: a merge holds one per part.
const PART_BUFFER: usize = 256 * 1024;
/// The smallest encoded row (no text, no source id): a manifest counting more rows than its
/// bytes can hold is damaged.
const MIN_ROW_BYTES: u64 = 4 + 8 + 8 + 8 + 8 * 4 + 8 + 4 + 1 + 8 + 1 + 1 + 4;
/// The weight of a brand the catalog has no store count for: about what such a brand has in
/// the synthetic world at scale 1 (a few dozen stores), so thousands of them weigh as they do.
pub const UNKNOWN_BRAND_WEIGHT: u64 = 40;

/// Shard `k` of `n`, counted from 1 as operators write it (`--shard 2/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl Shard {
    pub fn parse(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("--shard: {s:?} is not K/N with 1 <= K <= N <= {MAX_SHARDS} (for example 2/8)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n) = (k.trim().parse::<u32>().map_err(|_| bad())?, n.trim().parse::<u32>().map_err(|_| bad())?);
        if k == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Which brands this shard reconciles.
    pub fn brands(&self, catalog: &Catalog) -> Vec<bool> {
        partition(catalog, self.n).into_iter().map(|o| o == self.k - 1).collect()
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// What a brand weighs in the partition.
pub fn weight(known_stores: Option<u32>) -> u64 {
    known_stores.map_or(UNKNOWN_BRAND_WEIGHT, |k| u64::from(k.max(1)))
}

/// The shard (from 0) that reconciles each brand: largest first, each to the shard with the
/// least weight so far (the lower-numbered on a tie), so the same catalog and `n` always give
/// the same partition.
pub fn partition(catalog: &Catalog, n: u32) -> Vec<u32> {
    let mut order: Vec<usize> = (0..catalog.brands.len()).collect();
    order.sort_by_key(|&b| (std::cmp::Reverse(weight(catalog.brands[b].known_stores)), b));
    let mut load: BinaryHeap<std::cmp::Reverse<(u64, u32)>> = (0..n.max(1)).map(|s| std::cmp::Reverse((0, s))).collect();
    let mut owner = vec![0u32; catalog.brands.len()];
    for b in order {
        let std::cmp::Reverse((w, s)) = load.pop().expect("at least one shard");
        owner[b] = s;
        load.push(std::cmp::Reverse((w + weight(catalog.brands[b].known_stores), s)));
    }
    owner
}

/// What every part of one build must share: the merge refuses parts that differ in any of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fingerprint {
    pub as_of: i64,
    /// (scale, seed) of a synthetic build.
    pub synthetic: Option<(f64, u64)>,
    pub multi_source: bool,
    pub disabled: Vec<String>,
    pub region: Option<String>,
    /// The brand catalog (names, ids, store counts), which the partition and the brand numbers
    /// come from.
    pub catalog: String,
    /// Every reference file the build reads (the tables, brands, gazetteer, borders): matching,
    /// ids and the snapshot's own tables depend on all of them.
    pub reference: String,
    /// The program that made the part (a hash of its executable): the partition, matching and
    /// reconciliation are its code, and parts of two versions do not make one build.
    pub program: String,
    /// Each source read: its files' count and bytes (names and contents are not compared: a
    /// shared folder may be mounted anywhere, and hashing a planet per shard costs minutes).
    pub inputs: Vec<InputFiles>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InputFiles {
    pub source: String,
    pub files: u64,
    pub bytes: u64,
}

impl InputFiles {
    /// The files under `path` (itself when a file), counted as the importers list them (hidden
    /// files and partial downloads left out).
    pub fn of(source: SourceType, path: &Path) -> Result<InputFiles> {
        let mut out = InputFiles { source: source.as_str().to_string(), files: 0, bytes: 0 };
        for f in crate::import::input_files(path, &[""])? {
            out.files += 1;
            out.bytes += std::fs::metadata(&f).map_err(|e| IngestError::io(f.display(), e))?.len();
        }
        Ok(out)
    }
}

/// CRC-32 of the files, in order, each as its name, length and bytes (a missing file counts
/// as absent).
fn files_crc(files: impl IntoIterator<Item = PathBuf>) -> Result<u32> {
    let mut crc = crc32fast::Hasher::new();
    for f in files {
        crc.update(f.file_name().map(|n| n.as_encoded_bytes()).unwrap_or_default());
        match std::fs::read(&f) {
            Ok(bytes) => {
                crc.update(&(bytes.len() as u64).to_le_bytes());
                crc.update(&bytes);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => crc.update(b"absent"),
            Err(e) => return Err(IngestError::io(f.display(), e)),
        }
    }
    Ok(crc.finalize())
}

/// The reference data's fingerprint: the project's tables and the extracted files a build reads.
pub fn reference_fingerprint(paths: &crate::reference::ReferencePaths) -> Result<String> {
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&paths.tables)
        .map_err(|e| IngestError::io(paths.tables.display(), e))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    tables.sort();
    let extracted = ["brands.jsonl", "cities.csv", "zips.csv", "borders.bin", "countries.geojson", "regions.csv"].map(|f| paths.extracted.join(f));
    Ok(format!("{:08x}", files_crc(tables.into_iter().chain(extracted))?))
}

/// The running program's fingerprint: its executable's CRC-32, so any change of code is a
/// change of fingerprint.
pub fn program_fingerprint() -> Result<String> {
    let exe = std::env::current_exe().map_err(|e| IngestError::io("the running executable", e))?;
    Ok(format!("{}:{:08x}", env!("CARGO_PKG_VERSION"), files_crc([exe])?))
}

/// The catalog's fingerprint: every brand's id, name and store count, in order.
pub fn catalog_fingerprint(catalog: &Catalog) -> String {
    let mut text = String::new();
    for b in &catalog.brands {
        text.push_str(&format!("{}\t{}\t{:?}\n", b.nsi_id, b.name, b.known_stores));
    }
    format!("{}:{:016x}", catalog.brands.len(), fnv1a(text.as_bytes()))
}

/// `part.json`: written last, so a part without one is incomplete.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PartManifest {
    pub format: String,
    pub shard: Shard,
    pub fingerprint: Fingerprint,
    /// Brands this shard reconciles.
    pub brands: u64,
    /// Each source's import report; `rows_kept` counts this shard's brands only.
    pub imports: Vec<ImportReport>,
    /// Rows each importer produced (the snapshot meta's `rows_by_source`).
    pub imported: Vec<u64>,
    /// Per import: rows of brands other shards reconcile, left out here.
    pub other_shards: Vec<u64>,
    /// This shard's reconcile counts (no previous ids: the merge continues them).
    pub stats: ReconcileStats,
    pub rows: u64,
    pub rows_bytes: u64,
    /// CRC-32 of `rows.bin`.
    pub rows_crc: u32,
}

impl PartManifest {
    pub fn read(dir: &Path) -> Result<PartManifest> {
        let path = dir.join(PART_MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            IngestError::Invalid(format!("{}: not a complete part ({} could not be read: {e}); run its shard again", dir.display(), PART_MANIFEST))
        })?;
        let bad = |why: String| IngestError::Invalid(format!("{}: {why}; run its shard again", path.display()));
        // The format first: a part of another layout is named as such, not as a missing field.
        #[derive(serde::Deserialize)]
        struct Format {
            format: Option<String>,
        }
        let format = serde_json::from_str::<Format>(&text).map_err(|e| bad(format!("not a part manifest ({e})")))?.format;
        if format.as_deref() != Some(PART_FORMAT) {
            return Err(bad(format!("part format {format:?}, this storemap reads {PART_FORMAT:?}")));
        }
        let m: PartManifest = serde_json::from_str(&text).map_err(|e| bad(format!("not a part manifest ({e})")))?;
        if Shard::parse(&m.shard.to_string()).is_err() {
            return Err(bad(format!("shard {} is not K/N with 1 <= K <= N <= {MAX_SHARDS}", m.shard)));
        }
        let sources = m.fingerprint.inputs.len();
        if m.imports.len() != sources || m.imported.len() != sources || m.other_shards.len() != sources {
            return Err(bad("its import reports do not match its inputs".into()));
        }
        if m.imports.iter().zip(&m.fingerprint.inputs).any(|(r, i)| r.source != i.source) {
            return Err(bad("its import reports are not of its inputs".into()));
        }
        let on_disk = std::fs::metadata(dir.join(PART_ROWS)).map(|f| f.len()).ok();
        if on_disk != Some(m.rows_bytes) || m.rows.saturating_mul(MIN_ROW_BYTES) > m.rows_bytes {
            return Err(bad(format!("damaged part: {PART_ROWS} is not the {} bytes of {} rows the manifest says", m.rows_bytes, m.rows)));
        }
        Ok(m)
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(PART_MANIFEST);
        let tmp = dir.join(format!("{PART_MANIFEST}.tmp"));
        let text = serde_json::to_string_pretty(self).map_err(|e| IngestError::Invalid(e.to_string()))?;
        let mut f = std::fs::File::create(&tmp).map_err(|e| IngestError::io(tmp.display(), e))?;
        f.write_all(text.as_bytes()).and_then(|_| f.sync_all()).map_err(|e| IngestError::io(tmp.display(), e))?;
        std::fs::rename(&tmp, &path).map_err(|e| IngestError::io(path.display(), e))
    }
}

/// Writes a part's rows, in the order given.
pub struct PartWriter {
    dir: PathBuf,
    out: BufWriter<std::fs::File>,
    crc: crc32fast::Hasher,
    buf: Vec<u8>,
    pub rows: u64,
    bytes: u64,
    error: Option<std::io::Error>,
}

impl PartWriter {
    /// Marks `dir` as a part being made: an older part's manifest there is removed, so a run
    /// that dies leaves an incomplete part, never the old one beside new rows. Called before the
    /// long import, not only when the rows start.
    pub fn begin(dir: &Path) -> Result<()> {
        Self::check(dir)?;
        let io = |e| IngestError::io(dir.display(), e);
        std::fs::create_dir_all(dir).map_err(io)?;
        match std::fs::remove_file(dir.join(PART_MANIFEST)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        }
    }

    /// `dir` must be new, empty, or a part's (a retried shard writes its part again): a
    /// folder holding anything else, a data folder above all, is refused. Called before a
    /// shard's work begins, and again by `begin`.
    pub fn check(dir: &Path) -> Result<()> {
        let io = |e| IngestError::io(dir.display(), e);
        match std::fs::metadata(dir) {
            Ok(m) if !m.is_dir() => return Err(IngestError::Invalid(format!("--part {}: a file, not a folder", dir.display()))),
            Ok(_) => {
                for entry in std::fs::read_dir(dir).map_err(io)? {
                    let name = entry.map_err(io)?.file_name();
                    let name = name.to_string_lossy();
                    if ![PART_MANIFEST, PART_ROWS].contains(&name.as_ref()) && name != format!("{PART_MANIFEST}.tmp") {
                        return Err(IngestError::Invalid(format!(
                            "--part {}: it holds {name}, which no part writes; give a new or empty folder (or an earlier part, which is replaced)",
                            dir.display()
                        )));
                    }
                }
            }
            Err(_) => {}
        }
        Ok(())
    }

    /// Starts a part's rows in `dir` (see [`PartWriter::begin`]).
    pub fn create(dir: &Path) -> Result<PartWriter> {
        Self::begin(dir)?;
        let path = dir.join(PART_ROWS);
        let file = std::fs::File::create(&path).map_err(|e| IngestError::io(path.display(), e))?;
        Ok(PartWriter {
            dir: dir.to_path_buf(),
            out: BufWriter::with_capacity(1 << 20, file),
            crc: crc32fast::Hasher::new(),
            buf: Vec::new(),
            rows: 0,
            bytes: 0,
            error: None,
        })
    }

    pub fn push(&mut self, r: &RowBuilder) {
        if self.error.is_some() {
            return;
        }
        self.buf.clear();
        encode(r, &mut self.buf);
        self.crc.update(&self.buf);
        self.bytes += self.buf.len() as u64;
        self.rows += 1;
        if let Err(e) = self.out.write_all(&self.buf) {
            self.error = Some(e);
        }
    }

    /// Flushes the rows and writes the manifest (which fills in the counts and checksum).
    pub fn finish(mut self, mut manifest: PartManifest) -> Result<PartManifest> {
        let path = self.dir.join(PART_ROWS);
        if let Some(e) = self.error.take() {
            return Err(IngestError::io(path.display(), e));
        }
        self.out.flush().map_err(|e| IngestError::io(path.display(), e))?;
        self.out.get_ref().sync_all().map_err(|e| IngestError::io(path.display(), e))?;
        manifest.rows = self.rows;
        manifest.rows_bytes = self.bytes;
        manifest.rows_crc = self.crc.clone().finalize();
        manifest.write(&self.dir)?;
        Ok(manifest)
    }
}

/// Reads a part's rows back, checking the count, length and checksum at the end.
pub struct PartReader {
    path: PathBuf,
    input: BufReader<std::fs::File>,
    crc: crc32fast::Hasher,
    expected: (u64, u64, u32),
    read: (u64, u64),
    next: Option<RowBuilder>,
}

impl PartReader {
    pub fn open(dir: &Path, m: &PartManifest) -> Result<PartReader> {
        let path = dir.join(PART_ROWS);
        let file = std::fs::File::open(&path).map_err(|e| IngestError::io(path.display(), e))?;
        let mut r = PartReader {
            path,
            input: BufReader::with_capacity(PART_BUFFER, file),
            crc: crc32fast::Hasher::new(),
            expected: (m.rows, m.rows_bytes, m.rows_crc),
            read: (0, 0),
            next: None,
        };
        r.advance()?;
        Ok(r)
    }

    /// Reads the rest, for the damage check at the end: a part whose rows are out of order is
    /// more often damaged than mis-made, and damage is what the merge should then name.
    pub fn drain(&mut self) -> Result<()> {
        while self.take()?.is_some() {}
        Ok(())
    }

    /// The brand of the next row, if any.
    pub fn peek_brand(&self) -> Option<u32> {
        self.next.as_ref().map(|r| r.brand)
    }

    pub fn take(&mut self) -> Result<Option<RowBuilder>> {
        let row = self.next.take();
        if row.is_some() {
            self.advance()?;
        }
        Ok(row)
    }

    fn advance(&mut self) -> Result<()> {
        if self.read.0 == self.expected.0 {
            // Every row the manifest counts has been read: nothing may follow, and the bytes
            // must be the ones written.
            let mut rest = [0u8; 1];
            let more = self.input.read(&mut rest).map_err(|e| IngestError::io(self.path.display(), e))?;
            let crc = self.crc.clone().finalize();
            if more != 0 || self.read.1 != self.expected.1 || crc != self.expected.2 {
                return Err(self.damaged("its rows do not match the manifest's length and checksum"));
            }
            self.next = None;
            return Ok(());
        }
        let mut d = Decoder { input: &mut self.input, crc: &mut self.crc, bytes: 0 };
        let decoded = decode(&mut d);
        let bytes = d.bytes;
        let row = decoded.map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => self.damaged("it is shorter than the manifest says"),
            _ => self.damaged(&e.to_string()),
        })?;
        self.read.0 += 1;
        self.read.1 += bytes;
        self.next = Some(row);
        Ok(())
    }

    fn damaged(&self, why: &str) -> IngestError {
        IngestError::Invalid(format!("{}: damaged part: {why}; run its shard again", self.path.display()))
    }
}

/// Rows a part's feed may hold read and not yet taken (at least one brand's, however big, and
/// more while a taker waits for a brand further on: then the brands of the merge's few items in
/// flight). A merge of 64 parts otherwise holds at most some 64 x 16,384 rows ahead.
const FEED_AHEAD_ROWS: usize = 16_384;

/// A part's rows read on a thread of their own (`fill`) and handed out brand by brand to
/// whichever thread asks for a brand (`take`), so that a merge decodes its parts at once and
/// packs their brands on every core. Brands come in the part's order; a brand asked for that
/// the reader has gone past without meeting is one the part does not hold.
#[derive(Default)]
pub struct PartFeed {
    state: std::sync::Mutex<FeedState>,
    moved: std::sync::Condvar,
}

#[derive(Default)]
struct FeedState {
    ready: std::collections::VecDeque<(u32, Vec<RowBuilder>)>,
    rows: usize,
    /// The last brand handed in.
    upto: Option<u32>,
    /// Takers waiting for a brand the reader has not reached.
    waiting: usize,
    /// The reader has stopped: at the part's end, at an error or on `cancel`.
    ended: bool,
    failed: bool,
    cancelled: bool,
}

/// What `take` answers for a part whose reader failed (its error is what `fill` returned).
#[derive(Debug)]
pub struct FeedFailed;

impl PartFeed {
    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads `reader` to its end on the calling thread, brand by brand. `check(brand, last)`,
    /// asked before each brand is handed in (`last` the brand before it), refuses a brand the
    /// part should not hold there; the rest of the part is then read for the damage check first
    /// (a part out of order is more often damaged than mis-made, and damage is what to name).
    /// True when the part was read to its end, false when `cancel` stopped it first.
    pub fn fill(&self, mut reader: PartReader, check: &dyn Fn(u32, Option<u32>) -> Option<IngestError>) -> Result<bool> {
        // Ends the feed however the reader stops, a panic included, so no taker waits on.
        struct End<'a>(&'a PartFeed, bool);
        impl Drop for End<'_> {
            fn drop(&mut self) {
                let mut st = self.0.lock();
                st.ended = true;
                st.failed |= self.1;
                self.0.moved.notify_all();
            }
        }
        let mut end = End(self, true);
        let mut last = None;
        while let Some(b) = reader.peek_brand() {
            if let Some(refused) = check(b, last) {
                reader.drain()?;
                return Err(refused);
            }
            let mut rows = Vec::new();
            while reader.peek_brand() == Some(b) {
                rows.extend(reader.take()?);
            }
            last = Some(b);
            if !self.hand(b, rows) {
                end.1 = false;
                return Ok(false);
            }
        }
        end.1 = false;
        Ok(true)
    }

    /// Hands in a brand's rows once the rows held leave room, or at once while a taker waits
    /// for a brand further on: the rows held may then be ones no taker will come for (a merge
    /// stopping at another part's error), and the taker must not wait for room they never make.
    /// False when the feed was cancelled.
    fn hand(&self, brand: u32, rows: Vec<RowBuilder>) -> bool {
        let mut st = self.lock();
        while !st.cancelled && st.waiting == 0 && !st.ready.is_empty() && st.rows + rows.len() > FEED_AHEAD_ROWS {
            st = self.moved.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        if st.cancelled {
            return false;
        }
        st.rows += rows.len();
        st.ready.push_back((brand, rows));
        st.upto = Some(brand);
        self.moved.notify_all();
        true
    }

    /// Brand `brand`'s rows, once read: None when the part holds none.
    pub fn take(&self, brand: u32) -> std::result::Result<Option<Vec<RowBuilder>>, FeedFailed> {
        let mut st = self.lock();
        loop {
            if let Some(i) = st.ready.iter().position(|(b, _)| *b == brand) {
                let (_, rows) = st.ready.remove(i).expect("a position in the queue");
                st.rows -= rows.len();
                self.moved.notify_all();
                return Ok(Some(rows));
            }
            if st.failed || st.cancelled {
                return Err(FeedFailed);
            }
            if st.ended || st.upto.is_some_and(|u| u >= brand) {
                return Ok(None);
            }
            st.waiting += 1;
            self.moved.notify_all();
            st = self.moved.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting -= 1;
        }
    }

    /// Stops the reader at its next brand and answers every taker waiting or to come: for a
    /// merge that stops before every brand was taken.
    pub fn cancel(&self) {
        self.lock().cancelled = true;
        self.moved.notify_all();
    }
}

// The row codec: little-endian fixed-size numbers, text as a u32 length and UTF-8 bytes.

fn put_text(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn encode(r: &RowBuilder, out: &mut Vec<u8>) {
    out.extend_from_slice(&r.brand.to_le_bytes());
    out.extend_from_slice(&r.lat.to_le_bytes());
    out.extend_from_slice(&r.lng.to_le_bytes());
    out.extend_from_slice(&r.id.to_le_bytes());
    for s in [&r.name, &r.address, &r.city, &r.state, &r.postcode, &r.phone, &r.opening_hours, &r.country] {
        put_text(out, s);
    }
    out.extend_from_slice(&r.last_updated.to_le_bytes());
    out.extend_from_slice(&r.confidence.to_le_bytes());
    out.push(u8::from(r.provenance) | u8::from(r.community_only) << 1 | u8::from(r.last_verified.is_some()) << 2);
    out.extend_from_slice(&r.last_verified.unwrap_or(0).to_le_bytes());
    out.push(r.storefront.map_or(StorefrontType::NULL, |s| s as u8));
    out.push(r.sources.0);
    out.extend_from_slice(&(r.aliases.len() as u32).to_le_bytes());
    for (s, id) in &r.aliases {
        out.push(*s as u8);
        put_text(out, id);
    }
}

struct Decoder<'a, R: Read> {
    input: &'a mut R,
    crc: &'a mut crc32fast::Hasher,
    bytes: u64,
}

impl<R: Read> Decoder<'_, R> {
    fn bytes<const N: usize>(&mut self) -> std::io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.input.read_exact(&mut b)?;
        self.crc.update(&b);
        self.bytes += N as u64;
        Ok(b)
    }

    fn text(&mut self) -> std::io::Result<String> {
        let n = u32::from_le_bytes(self.bytes()?) as usize;
        // A length no row has is damage; refused before allocating it.
        if n > 1 << 24 {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a text field longer than 16 MiB"));
        }
        let mut b = vec![0u8; n];
        self.input.read_exact(&mut b)?;
        self.crc.update(&b);
        self.bytes += n as u64;
        String::from_utf8(b).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "text that is not UTF-8"))
    }
}

fn decode<R: Read>(d: &mut Decoder<R>) -> std::io::Result<RowBuilder> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let brand = u32::from_le_bytes(d.bytes()?);
    let lat = f64::from_le_bytes(d.bytes()?);
    let lng = f64::from_le_bytes(d.bytes()?);
    let id = u64::from_le_bytes(d.bytes()?);
    let mut text: [String; 8] = Default::default();
    for t in &mut text {
        *t = d.text()?;
    }
    let [name, address, city, state, postcode, phone, opening_hours, country] = text;
    let last_updated = i64::from_le_bytes(d.bytes()?);
    let confidence = f32::from_le_bytes(d.bytes()?);
    let [flags] = d.bytes::<1>()?;
    let last_verified = i64::from_le_bytes(d.bytes()?);
    let [storefront] = d.bytes::<1>()?;
    let [sources] = d.bytes::<1>()?;
    let n = u32::from_le_bytes(d.bytes()?) as usize;
    if n > 1 << 16 {
        return Err(invalid("a row with more than 65,536 source ids"));
    }
    let mut aliases = Vec::with_capacity(n);
    for _ in 0..n {
        let [s] = d.bytes::<1>()?;
        aliases.push((SourceType::from_u8(s).ok_or_else(|| invalid("an unknown source"))?, d.text()?));
    }
    Ok(RowBuilder {
        brand,
        lat,
        lng,
        id,
        name,
        address,
        city,
        state,
        postcode,
        phone,
        opening_hours,
        country,
        last_updated,
        confidence,
        provenance: flags & 1 != 0,
        last_verified: (flags & 4 != 0).then_some(last_verified),
        storefront: if storefront == StorefrontType::NULL {
            None
        } else {
            Some(StorefrontType::from_u8(storefront).ok_or_else(|| invalid("an unknown storefront type"))?)
        },
        sources: SourceMask(sources),
        community_only: flags & 2 != 0,
        aliases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_text_is_k_of_n_from_one() {
        assert_eq!(Shard::parse("2/8"), Ok(Shard { k: 2, n: 8 }));
        for bad in ["0/3", "4/3", "1/0", "x/2", "2", "1/5000", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_part_goes_to_a_new_empty_or_part_folder_and_nowhere_else() {
        let root = crate::test_dir::TestDir::new("part-begin");
        let part = root.join("part-1");
        PartWriter::begin(&part).expect("a new folder");
        PartWriter::begin(&part).expect("an empty one");
        std::fs::write(part.join(PART_MANIFEST), "{}").unwrap();
        std::fs::write(part.join(PART_ROWS), "").unwrap();
        PartWriter::begin(&part).expect("an earlier part, as a retried shard finds it");
        assert!(!part.join(PART_MANIFEST).exists(), "its manifest is gone until the new part is whole");
        // A data folder, or any folder with other files, is left as it is.
        let data = root.join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("snapshot.smap"), "served").unwrap();
        let e = PartWriter::begin(&data).unwrap_err().to_string();
        assert!(e.contains("snapshot.smap") && e.contains("no part writes"), "{e}");
        assert_eq!(std::fs::read_dir(&data).unwrap().count(), 1);
        let file = root.join("a-file");
        std::fs::write(&file, "x").unwrap();
        let e = PartWriter::begin(&file).unwrap_err().to_string();
        assert!(e.contains("a file, not a folder"), "{e}");
    }

    /// A manifest for rows written by hand: `PartWriter::finish` fills in the counts.
    fn blank_manifest() -> PartManifest {
        PartManifest {
            format: PART_FORMAT.into(),
            shard: Shard { k: 1, n: 1 },
            fingerprint: Fingerprint {
                as_of: 0,
                synthetic: None,
                multi_source: true,
                disabled: vec![],
                region: None,
                catalog: String::new(),
                reference: String::new(),
                program: String::new(),
                inputs: vec![],
            },
            brands: 0,
            imports: vec![],
            imported: vec![],
            other_shards: vec![],
            stats: ReconcileStats::default(),
            rows: 0,
            rows_bytes: 0,
            rows_crc: 0,
        }
    }

    #[test]
    fn rows_read_back_as_written_and_damage_is_named() {
        let rows = vec![
            RowBuilder {
                brand: 3,
                lat: 47.1234567890123,
                lng: -8.5,
                id: u64::MAX - 1,
                name: "Zürich HB".into(),
                opening_hours: "Mo-Su 06:00-22:00".into(),
                country: "CH".into(),
                last_updated: 1_795_000_000,
                confidence: 0.837_f32,
                provenance: true,
                last_verified: Some(-5),
                storefront: Some(StorefrontType::Pickup),
                sources: SourceMask(0b1011),
                community_only: false,
                aliases: vec![(SourceType::Atp, "a/1".into()), (SourceType::Overture, "08f".into())],
                ..Default::default()
            },
            RowBuilder { brand: 4, community_only: true, storefront: None, ..Default::default() },
        ];
        let dir = crate::test_dir::TestDir::new("part-test");
        let mut w = PartWriter::create(&dir).unwrap();
        for r in &rows {
            w.push(r);
        }
        let blank = blank_manifest();
        w.finish(blank).unwrap();
        let m = PartManifest::read(&dir).unwrap();
        assert_eq!(m.rows, 2);
        let mut r = PartReader::open(&dir, &m).unwrap();
        let mut back = Vec::new();
        while let Some(row) = r.take().unwrap() {
            back.push(row);
        }
        assert_eq!(format!("{back:?}"), format!("{rows:?}"));
        // One byte changed: the checksum at the end says so.
        let path = dir.join(PART_ROWS);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[6] ^= 0x40; // inside the first row's latitude
        std::fs::write(&path, &bytes).unwrap();
        let mut r = PartReader::open(&dir, &m).unwrap();
        let err = loop {
            match r.take() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a changed byte went unnoticed"),
                Err(e) => break e,
            }
        };
        assert!(err.to_string().contains("damaged part"), "{err}");
        // Cut short: named too.
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let err = (|| -> Result<()> {
            let mut r = PartReader::open(&dir, &m)?;
            while r.take()?.is_some() {}
            Ok(())
        })()
        .expect_err("a cut part must be refused");
        assert!(err.to_string().contains("shorter than the manifest"), "{err}");
    }

    /// A part of `brands` (one row each, its latitude its place in the part), written and opened.
    fn part_of(name: &str, brands: &[u32]) -> (crate::test_dir::TestDir, PartReader) {
        let dir = crate::test_dir::TestDir::new(&format!("feed-test-{name}"));
        let mut w = PartWriter::create(&dir).unwrap();
        for (i, &brand) in brands.iter().enumerate() {
            w.push(&RowBuilder { brand, lat: i as f64, ..Default::default() });
        }
        let m = w.finish(blank_manifest()).unwrap();
        let r = PartReader::open(&dir, &m).unwrap();
        (dir, r)
    }

    fn in_order(b: u32, last: Option<u32>) -> Option<IngestError> {
        last.is_some_and(|l| b < l).then(|| IngestError::Invalid(format!("brand {b} after {}", last.unwrap())))
    }

    #[test]
    fn a_feed_hands_each_brand_its_rows_whichever_thread_asks_first() {
        // Brands big enough that the reader waits for room (FEED_AHEAD_ROWS) while takers of
        // later brands wait for it: every brand 0..=12 asked for at once, the last ones first.
        let sizes = [(0, 3), (2, 20_000), (5, 1), (6, 30_000), (9, 7), (11, 5_000)];
        let brands: Vec<u32> = sizes.iter().flat_map(|&(b, n)| std::iter::repeat_n(b, n)).collect();
        let (_dir, reader) = part_of("order", &brands);
        let feed = PartFeed::default();
        let got: Vec<(u32, Option<Vec<RowBuilder>>)> = std::thread::scope(|s| {
            let filled = s.spawn(|| feed.fill(reader, &in_order));
            let takers: Vec<_> = (0..=12u32)
                .rev()
                .map(|b| {
                    (
                        b,
                        s.spawn({
                            let feed = &feed;
                            move || feed.take(b).unwrap()
                        }),
                    )
                })
                .collect();
            let got = takers.into_iter().map(|(b, t)| (b, t.join().unwrap())).collect();
            assert!(filled.join().unwrap().unwrap(), "read to its end");
            got
        });
        let mut first = 0;
        let mut expected: std::collections::HashMap<u32, (usize, usize)> = std::collections::HashMap::new();
        for &(b, n) in &sizes {
            expected.insert(b, (first, n));
            first += n;
        }
        for (b, rows) in got {
            match (expected.get(&b), rows) {
                (Some(&(first, n)), Some(rows)) => {
                    assert_eq!(rows.len(), n, "brand {b}");
                    assert!(rows.iter().enumerate().all(|(i, r)| r.brand == b && r.lat == (first + i) as f64), "brand {b}: its rows in the part's order");
                }
                (None, None) => {}
                (want, rows) => panic!("brand {b}: wanted {want:?}, got {:?} rows", rows.map(|r| r.len())),
            }
        }
    }

    #[test]
    fn a_feed_refused_or_damaged_fails_its_takers_and_names_the_damage_first() {
        // Out of order: the brand handed in before is still taken; a brand past it fails.
        let (dir, reader) = part_of("refused", &[3, 3, 1, 4]);
        let feed = PartFeed::default();
        let err = feed.fill(reader, &in_order).unwrap_err();
        assert!(err.to_string().contains("brand 1 after 3"), "{err}");
        assert_eq!(feed.take(3).unwrap().map(|r| r.len()), Some(2));
        assert!(feed.take(4).is_err(), "a brand past the refusal");
        // The same part with a byte of its last row changed: the damage is what fill names.
        let path = dir.join(PART_ROWS);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 20;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        let m = PartManifest::read(&dir).unwrap();
        let feed = PartFeed::default();
        let err = feed.fill(PartReader::open(&dir, &m).unwrap(), &in_order).unwrap_err();
        assert!(err.to_string().contains("damaged part"), "{err}");
    }

    #[test]
    fn a_taker_past_a_brand_nobody_takes_is_answered() {
        // Brand 0 fills the feed and is never taken (its taker never ran: a merge stopping at
        // another part's error); a taker of brand 2 still gets its rows, then learns brand 3 is
        // not there, and the reader reaches the part's end.
        let brands: Vec<u32> = std::iter::repeat_n(0, FEED_AHEAD_ROWS).chain(std::iter::repeat_n(1, FEED_AHEAD_ROWS)).chain([2, 2]).collect();
        let (_dir, reader) = part_of("skipped", &brands);
        let feed = PartFeed::default();
        std::thread::scope(|s| {
            let filled = s.spawn(|| feed.fill(reader, &in_order));
            assert_eq!(feed.take(2).unwrap().map(|r| r.len()), Some(2));
            assert_eq!(feed.take(3).unwrap().map(|r| r.len()), None);
            assert!(filled.join().unwrap().unwrap(), "read to its end");
        });
    }

    #[test]
    fn a_cancelled_feed_stops_its_reader_and_answers_its_takers() {
        // Two brands too big to be held at once, and no taker: the reader waits for room.
        let brands: Vec<u32> = std::iter::repeat_n(0, FEED_AHEAD_ROWS).chain(std::iter::repeat_n(1, FEED_AHEAD_ROWS)).collect();
        let (_dir, reader) = part_of("cancel", &brands);
        let feed = PartFeed::default();
        std::thread::scope(|s| {
            let filled = s.spawn(|| feed.fill(reader, &in_order));
            // The reader holds brand 0 and waits for room to hand brand 1 (or is about to).
            while feed.lock().upto != Some(0) {
                std::thread::yield_now();
            }
            feed.cancel();
            assert!(!filled.join().unwrap().unwrap(), "stopped by the cancel");
        });
        assert!(feed.take(7).is_err(), "a taker of a brand never read");
        assert_eq!(feed.take(0).unwrap().map(|r| r.len()), Some(FEED_AHEAD_ROWS), "a brand read before the cancel is still there");
        assert_eq!(feed.lock().upto, Some(0), "brand 1 was never handed in");
    }
}
