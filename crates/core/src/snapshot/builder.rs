//! Building a snapshot: rows pushed in any order are interned, sorted by brand, and written
//! as one file whose bytes depend only on the rows given.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rayon::iter::{IntoParallelRefIterator, IntoParallelRefMutIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;

use super::file::{to_json, SectionWriter};
use super::{TextColumn, NULL_TIME};
use crate::error::Result;
use crate::model::{is_servable, SourceMask, SourceType, StorefrontType, FLAG_COMMUNITY_ONLY, FLAG_PROVENANCE};
use crate::records::{BrandRecord, CityRecord, SnapshotMeta, SourceImport, TickerRecord};
use crate::strings::{relayout, SharedStrings};

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
    /// `opening_hours`, normal form; empty for none.
    pub opening_hours: String,
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

impl RowBuilder {
    /// Whether a data format may serve the row.
    pub fn is_servable(&self) -> bool {
        is_servable(self.community_only, self.confidence)
    }

    /// The row's value for a text column.
    pub fn text(&self, c: TextColumn) -> &str {
        match c {
            TextColumn::Name => &self.name,
            TextColumn::Address => &self.address,
            TextColumn::City => &self.city,
            TextColumn::State => &self.state,
            TextColumn::Postcode => &self.postcode,
            TextColumn::Phone => &self.phone,
            TextColumn::OpeningHours => &self.opening_hours,
        }
    }
}

/// A row after interning: fixed size, cheap to sort.
struct PackedRow {
    brand: u32,
    country: u16,
    lat: f64,
    lng: f64,
    id: u64,
    text: [u32; TextColumn::ALL.len()],
    last_updated: i64,
    last_verified: i64,
    confidence: f32,
    storefront: u8,
    sources: u8,
    flags: u8,
    alias_range: (u32, u32),
    /// The row's place in the order rows were pushed: the sort's last key, so an unstable sort
    /// (no scratch buffer beside the rows) orders equal keys as a stable one would. It fits in
    /// the struct's padding.
    seq: u32,
}

/// The JSON sections the rows' order does not change (meta, cities, tickers, countries), made
/// beside the sort.
fn fixed_sections(meta: &SnapshotMeta, cities: &[CityRecord], tickers: &[TickerRecord], countries: &[String]) -> Result<[Vec<u8>; 4]> {
    Ok([to_json("meta", meta)?, to_json("cities", cities)?, to_json("tickers", tickers)?, to_json("countries", countries)?])
}

/// Rows packed for a [`SnapshotBuilder`] off its thread (see [`RowPacker`]): their text
/// interned, their countries and source ids numbered within the batch.
pub struct PackedRows {
    /// The pool the text went into: a batch goes only to the builder whose packer made it.
    pool: usize,
    rows: Vec<PackedRow>,
    /// The batch's countries; a row's `country` is a place in this list until it is pushed.
    countries: Vec<String>,
    alias_source: Vec<u8>,
    alias_id: Vec<u32>,
}

impl PackedRows {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Each row's id and place, in the order the rows were packed.
    pub fn ids_and_places(&self) -> impl Iterator<Item = (u64, f64, f64)> + '_ {
        self.rows.iter().map(|r| (r.id, r.lat, r.lng))
    }
}

/// Packs rows for a [`SnapshotBuilder`] on any thread, so that interning their text (a
/// build's every row, on one thread before) is spread over the cores that made the rows.
/// Every packer must be dropped before the builder writes.
#[derive(Clone)]
pub struct RowPacker {
    strings: Arc<SharedStrings>,
}

impl RowPacker {
    pub fn pack(&self, rows: &[RowBuilder]) -> PackedRows {
        let mut out = PackedRows {
            pool: Arc::as_ptr(&self.strings) as usize,
            rows: Vec::with_capacity(rows.len()),
            countries: Vec::new(),
            alias_source: Vec::new(),
            alias_id: Vec::new(),
        };
        // A brand's rows mostly name the country of the row before; a big chain's, a hundred.
        let mut places: HashMap<&str, u16> = HashMap::new();
        let mut last = None;
        for r in rows {
            let country = match last {
                Some(i) if out.countries[i as usize] == r.country => i,
                _ => *places.entry(r.country.as_str()).or_insert_with(|| {
                    out.countries.push(r.country.clone());
                    (out.countries.len() - 1) as u16
                }),
            };
            last = Some(country);
            let row = pack_row(&self.strings, r, country, &mut out.alias_source, &mut out.alias_id);
            out.rows.push(row);
        }
        out
    }
}

/// One row's fixed-size form; its source ids go to the ends of `alias_source` and `alias_id`.
fn pack_row(strings: &SharedStrings, r: &RowBuilder, country: u16, alias_source: &mut Vec<u8>, alias_id: &mut Vec<u32>) -> PackedRow {
    let start = alias_source.len() as u32;
    // The row's own texts under its shard's lock, released before any text is interned: a
    // text's shard may be this one, and a thread cannot lock a shard it holds.
    let text = {
        let mut unique = strings.unique(r.id);
        for (s, id) in &r.aliases {
            alias_source.push(*s as u8);
            alias_id.push(unique.append(id));
        }
        TextColumn::ALL.map(|c| if c.interned() { 0 } else { unique.append(r.text(c)) })
    };
    let mut flags = 0;
    if r.community_only {
        flags |= FLAG_COMMUNITY_ONLY;
    }
    if r.provenance {
        flags |= FLAG_PROVENANCE;
    }
    PackedRow {
        brand: r.brand,
        country,
        lat: r.lat,
        lng: r.lng,
        id: r.id,
        text: TextColumn::ALL.map(|c| if c.interned() { strings.intern(r.text(c)) } else { text[c as usize] }),
        last_updated: r.last_updated,
        last_verified: r.last_verified.unwrap_or(NULL_TIME),
        confidence: r.confidence,
        storefront: r.storefront.map_or(StorefrontType::NULL, |t| t as u8),
        sources: r.sources.0,
        flags,
        alias_range: (start, alias_source.len() as u32),
        seq: 0,
    }
}

/// Collects rows in any order and writes a snapshot whose bytes depend only on the rows given.
pub struct SnapshotBuilder {
    meta: SnapshotMeta,
    brands: Vec<BrandRecord>,
    cities: Vec<CityRecord>,
    tickers: Vec<TickerRecord>,
    countries: Vec<String>,
    country_ids: HashMap<String, u16>,
    strings: Arc<SharedStrings>,
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
            strings: Arc::default(),
            rows: Vec::new(),
            alias_source: Vec::new(),
            alias_id: Vec::new(),
        }
    }

    pub fn brand_count(&self) -> usize {
        self.brands.len()
    }

    /// A packer for rows to [`push_packed`](Self::push_packed) later, usable on any thread.
    /// Every packer must be dropped before [`write`](Self::write), which panics otherwise.
    pub fn packer(&self) -> RowPacker {
        RowPacker { strings: Arc::clone(&self.strings) }
    }

    fn country_id(&mut self, code: &str) -> u16 {
        match self.country_ids.get(code) {
            Some(&c) => c,
            None => {
                let next = self.countries.len() as u16;
                self.countries.push(code.to_string());
                self.country_ids.insert(code.to_string(), next);
                next
            }
        }
    }

    pub fn push(&mut self, r: &RowBuilder) {
        assert!((r.brand as usize) < self.brands.len(), "row names brand {} of {}", r.brand, self.brands.len());
        let country = self.country_id(&r.country);
        let mut row = pack_row(&self.strings, r, country, &mut self.alias_source, &mut self.alias_id);
        row.seq = self.rows.len() as u32;
        self.rows.push(row);
    }

    /// Adds rows a [`RowPacker`] of this builder packed, after those pushed before.
    pub fn push_packed(&mut self, p: PackedRows) {
        assert_eq!(p.pool, Arc::as_ptr(&self.strings) as usize, "rows packed by another snapshot's packer");
        if let Some(r) = p.rows.iter().find(|r| r.brand as usize >= self.brands.len()) {
            panic!("row names brand {} of {}", r.brand, self.brands.len());
        }
        let countries: Vec<u16> = p.countries.iter().map(|c| self.country_id(c)).collect();
        let shift = self.alias_source.len() as u32;
        self.alias_source.extend_from_slice(&p.alias_source);
        self.alias_id.extend_from_slice(&p.alias_id);
        for mut row in p.rows {
            row.country = countries[row.country as usize];
            row.alias_range = (row.alias_range.0 + shift, row.alias_range.1 + shift);
            row.seq = self.rows.len() as u32;
            self.rows.push(row);
        }
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    /// Rows the data formats will serve (not community-only, at least the confidence floor): an
    /// import whose rows are all the community map's is served on maps only.
    pub fn servable_rows(&self) -> u64 {
        self.rows.iter().filter(|r| is_servable(r.flags & FLAG_COMMUNITY_ONLY != 0, r.confidence)).count() as u64
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

    /// Each source's skipped rows, once the build knows them all (reconciliation drops second
    /// copies of a record after the imports).
    pub fn set_skipped_by_source(&mut self, skipped: std::collections::BTreeMap<String, u64>) {
        self.meta.skipped_by_source = skipped;
    }

    /// Sorts, fills the brand ranges and writes the file atomically (temp file + rename), so a
    /// server watching the folder never sees half a snapshot.
    pub fn write(mut self, path: &Path) -> Result<SnapshotMeta> {
        // The country table in code order, not the order rows first named each country, so the
        // bytes do not depend on the order rows were pushed in.
        let mut order: Vec<u16> = (0..self.countries.len() as u16).collect();
        order.sort_by(|&a, &b| self.countries[a as usize].cmp(&self.countries[b as usize]));
        let mut renumber = vec![0u16; order.len()];
        for (new, &old) in order.iter().enumerate() {
            renumber[old as usize] = new as u16;
        }
        self.countries = order.iter().map(|&old| std::mem::take(&mut self.countries[old as usize])).collect();
        for r in &mut self.rows {
            r.country = renumber[r.country as usize];
        }
        // Country ids now follow the codes' order, so comparing ids compares codes. The sort runs
        // on every core, in place (a merge sort's scratch copy of the rows set a scale-10
        // build's peak), its last key the push order, so the order is a stable sort's; the
        // sections that do not depend on it are made meanwhile.
        let (rows, meta, cities, tickers, countries) = (&mut self.rows, &self.meta, &self.cities, &self.tickers, &self.countries);
        let fixed = rayon::join(
            || rows.par_sort_unstable_by_key(|r| (r.brand, r.country, r.lat.to_bits(), r.lng.to_bits(), r.id, r.seq)),
            || fixed_sections(meta, cities, tickers, countries),
        )
        .1?;
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
                if is_servable(r.flags & FLAG_COMMUNITY_ONLY != 0, r.confidence) {
                    rec.verified_count += 1;
                }
                i += 1;
            }
            rec.row_start = start as u32;
            rec.row_end = i as u32;
        }

        // The pool is re-laid in row order (see `strings::relayout`), each row's text then its source
        // ids, on every core.
        let strings = Arc::try_unwrap(self.strings).expect("every RowPacker of a snapshot is dropped before it is written");
        let interned = strings.finish();
        let (rows, alias_ids) = (&self.rows, &self.alias_id);
        let (new_ids, relaid) = relayout(&interned, rows.len(), |i, f| {
            let r = &rows[i];
            r.text.iter().for_each(|&t| f(t));
            alias_ids[r.alias_range.0 as usize..r.alias_range.1 as usize].iter().for_each(|&id| f(id));
        });
        self.rows.par_iter_mut().for_each(|r| r.text.iter_mut().for_each(|t| *t = new_ids.id(&interned, *t)));
        let mut alias_start = Vec::with_capacity(self.rows.len() + 1);
        let mut alias_source = Vec::with_capacity(self.alias_source.len());
        for r in &self.rows {
            alias_start.push(alias_source.len() as u32);
            alias_source.extend_from_slice(&self.alias_source[r.alias_range.0 as usize..r.alias_range.1 as usize]);
        }
        alias_start.push(alias_source.len() as u32);
        let alias_id: Vec<u32> = self
            .rows
            .par_iter()
            .flat_map_iter(|r| alias_ids[r.alias_range.0 as usize..r.alias_range.1 as usize].iter().map(|&id| new_ids.id(&interned, id)))
            .collect();
        drop(new_ids);
        (self.alias_source, self.alias_id) = (Vec::new(), Vec::new());
        // Only now, the old-to-new table gone (see `relayout`).
        let strings = relaid.lay_out();
        let rows = &self.rows;
        let n = rows.len();

        // Each column is made from the rows as it is written, never held whole beside them.
        let mut w = SectionWriter::default();
        let [meta, cities, tickers, countries] = fixed;
        w.json_made("meta", meta);
        w.json("brands", &self.brands)?;
        w.json_made("cities", cities);
        w.json_made("tickers", tickers);
        w.json_made("countries", countries);
        w.made("str_blob", strings.blob_len(), |sink| strings.write_blob(sink));
        w.pod("str_offsets", strings.offsets());
        // Only past 4 GiB of text: under it the file is the one it always was.
        if !strings.wraps().is_empty() {
            w.pod("str_wraps", strings.wraps());
        }
        w.column("lat", n, |i| rows[i].lat);
        w.column("lng", n, |i| rows[i].lng);
        w.column("id", n, |i| rows[i].id);
        for c in TextColumn::ALL {
            w.column(c.key(), n, move |i| rows[i].text[c as usize]);
        }
        w.column("country", n, |i| rows[i].country);
        w.column("last_updated", n, |i| rows[i].last_updated);
        w.column("last_verified", n, |i| rows[i].last_verified);
        w.column("confidence", n, |i| rows[i].confidence);
        w.column("storefront", n, |i| rows[i].storefront);
        w.column("sources", n, |i| rows[i].sources);
        w.column("flags", n, |i| rows[i].flags);
        w.pod("alias_start", &alias_start);
        w.raw("alias_source", &alias_source);
        w.pod("alias_id", &alias_id);
        w.finish(path)?;
        Ok(self.meta)
    }
}
