//! Reading a snapshot file: its sections into columns, then the checks that make a corrupt
//! file fail here instead of inside a request.

use std::path::Path;

use super::columns::TimeColumn;
use super::file::SectionReader;
use super::{Snapshot, TextColumn, TextColumns};
use crate::aliases::AliasIndex;
use crate::error::{CoreError, Result};
use crate::gazetteer::Gazetteer;
use crate::records::{BrandRecord, CityRecord, SnapshotMeta, TickerRecord};
use crate::strings::{StringPool, EMPTY};

impl Snapshot {
    pub fn load(path: &Path) -> Result<Snapshot> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| CoreError::Io { path: p.clone(), source: e })?;
        Snapshot::from_bytes(&p, &bytes)
    }

    /// A snapshot file's build facts alone, without its columns, once the file is checked as a
    /// load checks it first (its header, section table and checksum): which world a synthetic
    /// build was (`data refresh` asks), whether a file is whole before a rollback serves it.
    /// Read a piece at a time, holding a megabyte, not the snapshot.
    pub fn read_meta(path: &Path) -> Result<SnapshotMeta> {
        super::file::check_file(path, true)
    }

    /// The build facts alone, from the header, the section table and the meta section, without
    /// reading the rest: what a build asks of the snapshot it would replace before it starts (a
    /// planet's is gigabytes; the build reads and checks it whole later, when it carries the
    /// ids over).
    pub fn peek_meta(path: &Path) -> Result<SnapshotMeta> {
        super::file::check_file(path, false)
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
        let wraps = if r.has("str_wraps") { r.pod("str_wraps", None)? } else { Vec::new() };
        let strings = StringPool::from_parts(blob, r.pod("str_offsets", None)?, wraps).ok_or_else(|| bad("string pool offsets are invalid".into()))?;
        let lat: Vec<f64> = r.pod("lat", None)?;
        let n = Some(lat.len());
        let alias_start: Vec<u32> = r.pod("alias_start", Some(lat.len() + 1))?;
        let alias_source: Vec<u8> = r.pod("alias_source", None)?;
        let alias_id: Vec<u32> = r.pod("alias_id", Some(alias_source.len()))?;
        let mut s = Snapshot {
            lng: r.pod("lng", n)?,
            id: r.pod("id", n)?,
            text: text_columns(&r, n)?,
            country: r.pod("country", n)?,
            last_updated: TimeColumn::new(r.pod("last_updated", n)?),
            last_verified: TimeColumn::new(r.pod("last_verified", n)?),
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
            cities: Gazetteer::new(&cities),
            tickers,
            countries,
            strings,
            aliases: AliasIndex::default(),
        };
        s.validate().map_err(bad)?;
        s.aliases = AliasIndex::build(&s.brands, &s.tickers);
        Ok(s)
    }
}

/// The text columns, each read from its own section. Files before version 3 have no hours:
/// every row's are empty.
fn text_columns(r: &SectionReader, rows: Option<usize>) -> Result<TextColumns> {
    let mut cols: TextColumns = Default::default();
    for c in TextColumn::ALL {
        cols[c as usize] = match c {
            TextColumn::OpeningHours if r.version < 3 => vec![EMPTY; rows.unwrap_or(0)],
            _ => r.pod(c.key(), rows)?,
        };
    }
    Ok(cols)
}
