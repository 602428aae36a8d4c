//! The serving snapshot: one versioned file that the pipeline writes and the service loads.
//!
//! Layout: an 8-byte magic, the format version, a section table (name, offset, length), then
//! each section 8-byte aligned. Row data is columnar, one little-endian array per field, so a
//! load is a read plus one typed copy per column (no per-row parsing). Small tables (brands,
//! cities, tickers, metadata) are JSON sections. Rows are sorted by brand, so a brand's rows are
//! one contiguous range and a query scans only that range.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::aliases::AliasIndex;
use crate::error::{CoreError, Result};
use crate::model::{SourceMask, SourceType, StorefrontType, CONFIDENCE_FLOOR, FLAG_COMMUNITY_ONLY, FLAG_PROVENANCE};
use crate::records::{BrandRecord, CityRecord, SnapshotMeta, SourceImport, TickerRecord};
use crate::strings::{PoolRelayout, StringPool, StringPoolBuilder};

/// The serving snapshot's file name in a data folder.
pub const SNAPSHOT_FILE: &str = "snapshot.smap";
/// The snapshot a build replaced, kept so an operator can roll back (`storemap data rollback`).
pub const PREVIOUS_SNAPSHOT_FILE: &str = "snapshot.prev.smap";

const MAGIC: &[u8; 8] = b"STOREMAP";
/// Bumped whenever the layout changes; a server refuses snapshots of another version.
pub const FORMAT_VERSION: u32 = 2;
/// Version 1 files (no checksum) still load, unverified, so an upgrade does not strand a
/// snapshot; everything written now is version 2.
const OLDEST_READABLE: u32 = 1;
/// The last section of a version 2 file: the CRC-32 of every byte before it (the header,
/// the section table with this entry, every other section), then four zero bytes. A file
/// cut short or changed on disk fails to load instead of serving wrong rows.
const CHECKSUM_SECTION: &str = "checksum";
/// Stored in the time columns for "no value".
pub(crate) const NULL_TIME: i64 = i64::MIN;

/// A loaded snapshot. Columns are public to the crate so the query and the writers read them
/// directly.
#[derive(Debug)]
pub struct Snapshot {
    pub(crate) meta: SnapshotMeta,
    pub(crate) brands: Vec<BrandRecord>,
    pub(crate) cities: Vec<CityRecord>,
    pub(crate) tickers: Vec<TickerRecord>,
    pub(crate) countries: Vec<String>,
    pub(crate) strings: StringPool,
    pub(crate) lat: Vec<f64>,
    pub(crate) lng: Vec<f64>,
    pub(crate) id: Vec<u64>,
    pub(crate) name: Vec<u32>,
    pub(crate) address: Vec<u32>,
    pub(crate) city: Vec<u32>,
    pub(crate) state: Vec<u32>,
    pub(crate) postcode: Vec<u32>,
    pub(crate) phone: Vec<u32>,
    pub(crate) country: Vec<u16>,
    pub(crate) last_updated: Vec<i64>,
    pub(crate) last_verified: Vec<i64>,
    pub(crate) confidence: Vec<f32>,
    pub(crate) storefront: Vec<u8>,
    pub(crate) sources: Vec<u8>,
    pub(crate) flags: Vec<u8>,
    pub(crate) alias_start: Vec<u32>,
    pub(crate) alias_source: Vec<u8>,
    pub(crate) alias_id: Vec<u32>,
    pub(crate) aliases: AliasIndex,
    /// Lower-cased gazetteer name -> indices into `cities`, for radius centres.
    pub(crate) city_index: HashMap<String, Vec<u32>>,
}

/// One row as the pipeline hands it to the builder.
#[derive(Debug, Clone, Default)]
pub struct RowBuilder {
    pub brand: u32,
    pub lat: f64,
    pub lng: f64,
    pub id: u64,
    pub name: String,
    pub address: String,
    pub city: String,
    pub state: String,
    pub postcode: String,
    pub phone: String,
    pub country: String,
    pub last_updated: i64,
    /// Reconciled confidence. Always set: the data formats' floor applies to every row.
    pub confidence: f32,
    /// False for a row the multi-source pipeline did not process: its five provenance fields
    /// are then served as null (its confidence still gates it).
    pub provenance: bool,
    pub last_verified: Option<i64>,
    pub storefront: Option<StorefrontType>,
    pub sources: SourceMask,
    pub community_only: bool,
    pub aliases: Vec<(SourceType, String)>,
}

/// A row after interning: fixed size, cheap to sort.
struct PackedRow {
    brand: u32,
    country: u16,
    lat: f64,
    lng: f64,
    id: u64,
    text: [u32; 6],
    last_updated: i64,
    last_verified: i64,
    confidence: f32,
    storefront: u8,
    sources: u8,
    flags: u8,
    alias_range: (u32, u32),
}

/// Collects rows in any order and writes a snapshot whose bytes depend only on the rows given.
pub struct SnapshotBuilder {
    meta: SnapshotMeta,
    brands: Vec<BrandRecord>,
    cities: Vec<CityRecord>,
    tickers: Vec<TickerRecord>,
    countries: Vec<String>,
    country_ids: HashMap<String, u16>,
    strings: StringPoolBuilder,
    rows: Vec<PackedRow>,
    alias_source: Vec<u8>,
    alias_id: Vec<u32>,
}

impl SnapshotBuilder {
    pub fn new(meta: SnapshotMeta, brands: Vec<BrandRecord>, cities: Vec<CityRecord>, tickers: Vec<TickerRecord>) -> Self {
        SnapshotBuilder {
            meta,
            brands,
            cities,
            tickers,
            countries: Vec::new(),
            country_ids: HashMap::new(),
            strings: StringPoolBuilder::default(),
            rows: Vec::new(),
            alias_source: Vec::new(),
            alias_id: Vec::new(),
        }
    }

    pub fn brand_count(&self) -> usize {
        self.brands.len()
    }

    pub fn push(&mut self, r: &RowBuilder) {
        assert!((r.brand as usize) < self.brands.len(), "row names brand {} of {}", r.brand, self.brands.len());
        let next = self.countries.len() as u16;
        let country = *self.country_ids.entry(r.country.clone()).or_insert_with(|| {
            self.countries.push(r.country.clone());
            next
        });
        let start = self.alias_source.len() as u32;
        for (s, id) in &r.aliases {
            self.alias_source.push(*s as u8);
            self.alias_id.push(self.strings.append_unique(id));
        }
        let mut flags = 0;
        if r.community_only {
            flags |= FLAG_COMMUNITY_ONLY;
        }
        if r.provenance {
            flags |= FLAG_PROVENANCE;
        }
        let s = &mut self.strings;
        self.rows.push(PackedRow {
            brand: r.brand,
            country,
            lat: r.lat,
            lng: r.lng,
            id: r.id,
            text: [s.intern(&r.name), s.append_unique(&r.address), s.intern(&r.city), s.intern(&r.state), s.intern(&r.postcode), s.append_unique(&r.phone)],
            last_updated: r.last_updated,
            last_verified: r.last_verified.unwrap_or(NULL_TIME),
            confidence: r.confidence,
            storefront: r.storefront.map_or(StorefrontType::NULL, |t| t as u8),
            sources: r.sources.0,
            flags,
            alias_range: (start, self.alias_source.len() as u32),
        });
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Reserves room for `rows` rows, so the column buffers grow once instead of doubling
    /// (and briefly holding two copies) all the way up.
    pub fn reserve(&mut self, rows: usize) {
        self.rows.reserve(rows);
        self.alias_source.reserve(rows * 2);
        self.alias_id.reserve(rows * 2);
    }

    /// The content version is known only once every row has been pushed.
    pub fn set_version(&mut self, version: &str) {
        self.meta.snapshot_version = version.to_string();
    }

    /// What each source's import did, known only once every row has been reconciled.
    pub fn set_imports(&mut self, imports: std::collections::BTreeMap<String, SourceImport>) {
        self.meta.imports = imports;
    }

    /// Sorts, fills the brand ranges and writes the file atomically (temp file + rename), so a
    /// server watching the folder never sees half a snapshot.
    pub fn write(mut self, path: &Path) -> Result<SnapshotMeta> {
        let countries = &self.countries;
        self.rows.sort_by(|a, b| {
            (a.brand, &countries[a.country as usize], a.lat.to_bits(), a.lng.to_bits(), a.id).cmp(&(
                b.brand,
                &countries[b.country as usize],
                b.lat.to_bits(),
                b.lng.to_bits(),
                b.id,
            ))
        });
        for b in &mut self.brands {
            b.row_start = 0;
            b.row_end = 0;
            b.verified_count = 0;
        }
        // Ranges are assigned in brand order, so row_start never decreases with the brand index
        // (a brand without rows gets an empty range at its place); `brand_of_row` relies on it.
        let mut i = 0;
        for (brand, rec) in self.brands.iter_mut().enumerate() {
            let start = i;
            while i < self.rows.len() && self.rows[i].brand as usize == brand {
                let r = &self.rows[i];
                if r.flags & FLAG_COMMUNITY_ONLY == 0 && r.confidence >= CONFIDENCE_FLOOR {
                    rec.verified_count += 1;
                }
                i += 1;
            }
            rec.row_start = start as u32;
            rec.row_end = i as u32;
        }

        // The pool is re-laid in row order (see PoolRelayout), each row's text then its source ids.
        let interned = std::mem::take(&mut self.strings).finish();
        let mut relayout = PoolRelayout::new(&interned);
        let mut alias_start = Vec::with_capacity(self.rows.len() + 1);
        let mut alias_source = Vec::with_capacity(self.alias_source.len());
        let mut alias_id = Vec::with_capacity(self.alias_id.len());
        for r in &mut self.rows {
            for t in &mut r.text {
                *t = relayout.id(*t);
            }
            alias_start.push(alias_source.len() as u32);
            let (a, b) = (r.alias_range.0 as usize, r.alias_range.1 as usize);
            alias_source.extend_from_slice(&self.alias_source[a..b]);
            alias_id.extend(self.alias_id[a..b].iter().map(|&id| relayout.id(id)));
        }
        alias_start.push(alias_source.len() as u32);
        let strings = relayout.finish();
        drop(interned);
        let (blob, offsets) = strings.parts();
        let rows = &self.rows;
        let col = |f: &dyn Fn(&PackedRow) -> u32| rows.iter().map(f).collect::<Vec<u32>>();

        let mut w = SectionWriter::default();
        w.json("meta", &self.meta)?;
        w.json("brands", &self.brands)?;
        w.json("cities", &self.cities)?;
        w.json("tickers", &self.tickers)?;
        w.json("countries", &self.countries)?;
        w.raw("str_blob", blob.as_bytes());
        w.pod("str_offsets", offsets);
        w.pod("lat", &rows.iter().map(|r| r.lat).collect::<Vec<_>>());
        w.pod("lng", &rows.iter().map(|r| r.lng).collect::<Vec<_>>());
        w.pod("id", &rows.iter().map(|r| r.id).collect::<Vec<_>>());
        for (k, name) in ["name", "address", "city", "state", "postcode", "phone"].iter().enumerate() {
            w.pod(name, &col(&|r| r.text[k]));
        }
        w.pod("country", &rows.iter().map(|r| r.country).collect::<Vec<_>>());
        w.pod("last_updated", &rows.iter().map(|r| r.last_updated).collect::<Vec<_>>());
        w.pod("last_verified", &rows.iter().map(|r| r.last_verified).collect::<Vec<_>>());
        w.pod("confidence", &rows.iter().map(|r| r.confidence).collect::<Vec<_>>());
        w.raw("storefront", &rows.iter().map(|r| r.storefront).collect::<Vec<_>>());
        w.raw("sources", &rows.iter().map(|r| r.sources).collect::<Vec<_>>());
        w.raw("flags", &rows.iter().map(|r| r.flags).collect::<Vec<_>>());
        w.pod("alias_start", &alias_start);
        w.raw("alias_source", &alias_source);
        w.pod("alias_id", &alias_id);
        w.finish(path)?;
        Ok(self.meta)
    }
}

#[derive(Default)]
struct SectionWriter {
    sections: Vec<([u8; 16], Vec<u8>)>,
}

impl SectionWriter {
    fn raw(&mut self, name: &str, bytes: &[u8]) {
        let mut n = [0u8; 16];
        n[..name.len()].copy_from_slice(name.as_bytes());
        self.sections.push((n, bytes.to_vec()));
    }
    fn pod<T: bytemuck::Pod>(&mut self, name: &str, v: &[T]) {
        // Little-endian on every platform we build for; the magic check would catch a
        // big-endian reader through the version field.
        self.raw(name, bytemuck::cast_slice(v));
    }
    fn json<T: Serialize>(&mut self, name: &str, v: &T) -> Result<()> {
        let bytes = serde_json::to_vec(v).map_err(|e| CoreError::Snapshot { path: name.into(), message: e.to_string() })?;
        self.raw(name, &bytes);
        Ok(())
    }
    fn finish(mut self, path: &Path) -> Result<()> {
        let io = |e| CoreError::Io { path: path.display().to_string(), source: e };
        // A placeholder, filled in once everything before it has been hashed.
        self.raw(CHECKSUM_SECTION, &[0u8; 8]);
        let header_len = 16 + self.sections.len() * 32;
        let mut offset = align8(header_len);
        let mut table = Vec::with_capacity(header_len);
        table.extend_from_slice(MAGIC);
        table.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        table.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (name, bytes) in &self.sections {
            table.extend_from_slice(name);
            table.extend_from_slice(&(offset as u64).to_le_bytes());
            table.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            offset = align8(offset + bytes.len());
        }
        // A temp file of this build alone: two builds into one folder never write one file.
        let tmp = temp_path(path);
        let written = (|| {
            let file = std::fs::File::create(&tmp)?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            let mut crc = crc32fast::Hasher::new();
            crc.update(&table);
            out.write_all(&table)?;
            let mut written = table.len();
            let last = self.sections.len() - 1;
            for (i, (_, bytes)) in self.sections.iter().enumerate() {
                let pad = &[0u8; 8][..align8(written) - written];
                crc.update(pad);
                out.write_all(pad)?;
                if i == last {
                    let mut sum = [0u8; 8];
                    sum[..4].copy_from_slice(&crc.clone().finalize().to_le_bytes());
                    out.write_all(&sum)?;
                } else {
                    crc.update(bytes);
                    out.write_all(bytes)?;
                }
                written += pad.len() + bytes.len();
            }
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}

/// `<file>.<pid>.<nanos>-<n>.tmp` beside the snapshot: unique per process and per call.
fn temp_path(path: &Path) -> std::path::PathBuf {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".{}.{nanos}-{n}.tmp", std::process::id()));
    path.with_file_name(name)
}

fn align8(n: usize) -> usize {
    (n + 7) & !7
}

struct SectionReader<'a> {
    path: &'a str,
    bytes: &'a [u8],
    table: HashMap<String, (usize, usize)>,
}

impl<'a> SectionReader<'a> {
    fn new(path: &'a str, bytes: &'a [u8]) -> Result<Self> {
        let bad = |m: &str| CoreError::Snapshot { path: path.into(), message: m.into() };
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad("not a storemap snapshot (bad magic)"));
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if !(OLDEST_READABLE..=FORMAT_VERSION).contains(&version) {
            return Err(bad(&format!("format version {version}, this build reads {OLDEST_READABLE} to {FORMAT_VERSION}")));
        }
        let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        if n > 1024 || bytes.len() < 16 + n * 32 {
            return Err(bad("truncated section table"));
        }
        let mut table = HashMap::new();
        for i in 0..n {
            let e = &bytes[16 + i * 32..16 + (i + 1) * 32];
            let name = String::from_utf8_lossy(&e[..16]).trim_end_matches('\0').to_string();
            let off = u64::from_le_bytes(e[16..24].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(e[24..32].try_into().unwrap()) as usize;
            if off.checked_add(len).is_none_or(|end| end > bytes.len()) {
                return Err(bad(&format!("section {name} runs past the end of the file")));
            }
            table.insert(name, (off, len));
        }
        if version >= 2 {
            let (off, len) = *table.get(CHECKSUM_SECTION).ok_or_else(|| bad("missing checksum"))?;
            if len != 8 || off + len != bytes.len() {
                return Err(bad("the checksum is not the file's last section"));
            }
            let stored = u32::from_le_bytes(bytes[off..off + 4].try_into().unwrap());
            let actual = crc32fast::hash(&bytes[..off]);
            // Every byte counts: the four after the sum must be the zeros written.
            if stored != actual || bytes[off + 4..] != [0u8; 4] {
                return Err(bad(&format!(
                    "checksum mismatch (file says {stored:08x}, content is {actual:08x}): the file is damaged or was changed; rebuild it or roll back"
                )));
            }
        }
        Ok(SectionReader { path, bytes, table })
    }

    fn bytes(&self, name: &str) -> Result<&'a [u8]> {
        let (off, len) = *self.table.get(name).ok_or_else(|| CoreError::Snapshot { path: self.path.into(), message: format!("missing section {name}") })?;
        Ok(&self.bytes[off..off + len])
    }

    /// Copies a column out of the file buffer; the copy is what aligns it.
    fn pod<T: bytemuck::Pod>(&self, name: &str, expect_len: Option<usize>) -> Result<Vec<T>> {
        let b = self.bytes(name)?;
        let size = std::mem::size_of::<T>();
        if b.len() % size != 0 || expect_len.is_some_and(|n| b.len() / size != n) {
            return Err(CoreError::Snapshot { path: self.path.into(), message: format!("column {name} has the wrong length") });
        }
        Ok(bytemuck::pod_collect_to_vec(b))
    }

    fn json<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Result<T> {
        serde_json::from_slice(self.bytes(name)?).map_err(|e| CoreError::Snapshot { path: self.path.into(), message: format!("section {name}: {e}") })
    }
}

impl Snapshot {
    pub fn load(path: &Path) -> Result<Snapshot> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| CoreError::Io { path: p.clone(), source: e })?;
        Snapshot::from_bytes(&p, &bytes)
    }

    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Snapshot> {
        let r = SectionReader::new(path, bytes)?;
        let bad = |m: String| CoreError::Snapshot { path: path.into(), message: m };
        let meta: SnapshotMeta = r.json("meta")?;
        let brands: Vec<BrandRecord> = r.json("brands")?;
        let cities: Vec<CityRecord> = r.json("cities")?;
        let tickers: Vec<TickerRecord> = r.json("tickers")?;
        let countries: Vec<String> = r.json("countries")?;
        let blob = String::from_utf8(r.bytes("str_blob")?.to_vec()).map_err(|_| bad("string pool is not UTF-8".into()))?;
        let strings = StringPool::from_parts(blob, r.pod("str_offsets", None)?).ok_or_else(|| bad("string pool offsets are invalid".into()))?;
        let lat: Vec<f64> = r.pod("lat", None)?;
        let n = Some(lat.len());
        let alias_start: Vec<u32> = r.pod("alias_start", Some(lat.len() + 1))?;
        let alias_source: Vec<u8> = r.pod("alias_source", None)?;
        let alias_id: Vec<u32> = r.pod("alias_id", Some(alias_source.len()))?;
        let mut s = Snapshot {
            lng: r.pod("lng", n)?,
            id: r.pod("id", n)?,
            name: r.pod("name", n)?,
            address: r.pod("address", n)?,
            city: r.pod("city", n)?,
            state: r.pod("state", n)?,
            postcode: r.pod("postcode", n)?,
            phone: r.pod("phone", n)?,
            country: r.pod("country", n)?,
            last_updated: r.pod("last_updated", n)?,
            last_verified: r.pod("last_verified", n)?,
            confidence: r.pod("confidence", n)?,
            storefront: r.pod("storefront", n)?,
            sources: r.pod("sources", n)?,
            flags: r.pod("flags", n)?,
            lat,
            alias_start,
            alias_source,
            alias_id,
            meta,
            brands,
            cities,
            tickers,
            countries,
            strings,
            aliases: AliasIndex::default(),
            city_index: HashMap::new(),
        };
        s.validate().map_err(bad)?;
        s.aliases = AliasIndex::build(&s.brands, &s.tickers);
        for (i, c) in s.cities.iter().enumerate() {
            s.city_index.entry(c.name.to_lowercase()).or_default().push(i as u32);
        }
        Ok(s)
    }

    /// Checks every index the query path follows, so a corrupt file fails at load, not as a
    /// panic inside a request.
    fn validate(&self) -> std::result::Result<(), String> {
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
        let text_ok =
            [&self.name, &self.address, &self.city, &self.state, &self.postcode, &self.phone, &self.alias_id].iter().all(|c| c.iter().all(|&id| id < strings));
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

    pub fn meta(&self) -> &SnapshotMeta {
        &self.meta
    }
    pub fn brands(&self) -> &[BrandRecord] {
        &self.brands
    }
    pub fn cities(&self) -> &[CityRecord] {
        &self.cities
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
        self.tickers.iter().find(|t| t.brand == brand).map(|t| t.ticker.as_str())
    }

    // Row accessors, for the pipeline's report and for tests.
    pub fn row_lat_lng(&self, r: usize) -> (f64, f64) {
        (self.lat[r], self.lng[r])
    }
    pub fn row_country(&self, r: usize) -> &str {
        &self.countries[self.country[r] as usize]
    }
    pub fn row_city(&self, r: usize) -> &str {
        self.strings.get(self.city[r])
    }
    pub fn row_state(&self, r: usize) -> &str {
        self.strings.get(self.state[r])
    }
    pub fn row_postcode(&self, r: usize) -> &str {
        self.strings.get(self.postcode[r])
    }
    pub fn row_name(&self, r: usize) -> &str {
        self.strings.get(self.name[r])
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
        !self.row_is_community_only(r) && self.confidence[r] >= CONFIDENCE_FLOOR
    }
    pub fn row_aliases(&self, r: usize) -> impl Iterator<Item = (SourceType, &str)> {
        let (a, b) = (self.alias_start[r] as usize, self.alias_start[r + 1] as usize);
        (a..b).map(move |i| (SourceType::from_u8(self.alias_source[i]).unwrap(), self.strings.get(self.alias_id[i])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_has_its_own_temp_file_beside_the_snapshot() {
        let target = Path::new("/data/snapshot.smap");
        let (a, b) = (temp_path(target), temp_path(target));
        assert_ne!(a, b, "two writes, even in one process, use two files");
        for t in [&a, &b] {
            assert_eq!(t.parent(), target.parent());
            let name = t.file_name().unwrap().to_string_lossy();
            assert!(name.starts_with(&format!("snapshot.smap.{}.", std::process::id())) && name.ends_with(".tmp"), "{name}");
        }
    }
}
