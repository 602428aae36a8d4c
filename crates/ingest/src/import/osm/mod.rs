//! OpenStreetMap: `.osm.pbf` extracts (read directly) and osmium GeoJSON sequences
//! (`osmium export -f geojsonseq -a type,id`). Both paths turn an OSM object — a node, a way
//! or a multipolygon relation — into at most one row: each object is counted once by type and
//! id (osmium writes every closed way twice), areas give a point on their surface, and only
//! objects tagged as places (`shop`, `amenity`, …) are rows; the rest is counted by reason.

mod geojsonseq;
mod pbf;

use std::collections::HashSet;
use std::path::Path;

use storemap_core::SourceType;

use super::fields::{Tags, PLACE_KEYS};
use super::geometry::Lonlat;
pub(crate) use super::Batcher;
use crate::error::{IngestError, Result};
use crate::source_row::{Skip, Skipped};
use crate::{ImportReport, SourceRow};

/// What an object's tags make of it, read without allocating (a planet has billions of
/// objects and almost all are neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing of interest: a way's untagged node, an unnamed road, a building outline.
    Ignore,
    /// Named, but not a place (a street, a river, a bus stop).
    NotStorefront,
    /// Tagged as a place (`shop=*`, `amenity=*`, …).
    Place,
}

pub(crate) fn classify<'a>(tags: impl Iterator<Item = (&'a str, &'a str)>) -> Kind {
    let (mut place, mut named) = (false, false);
    for (k, v) in tags {
        if PLACE_KEYS.contains(&k) && !matches!(v, "no" | "vacant" | "disused" | "") {
            place = true;
        }
        if k == "name" || k == "brand" {
            named = true;
        }
    }
    match (place, named) {
        (true, _) => Kind::Place,
        (false, true) => Kind::NotStorefront,
        (false, false) => Kind::Ignore,
    }
}

/// `n`, `w` or `r`: the object type as source ids spell it (`w123` is way 123).
pub(crate) fn type_letter(osm_type: &str) -> Option<char> {
    match osm_type {
        "node" | "n" => Some('n'),
        "way" | "w" => Some('w'),
        "relation" | "r" => Some('r'),
        _ => None,
    }
}

/// The row for a place object at `pos`; a reason when its tags give no name to match.
pub(crate) fn place_row(kind: char, id: i64, tags: serde_json::Map<String, serde_json::Value>, pos: Lonlat) -> std::result::Result<SourceRow, Skipped> {
    let tags: Tags = serde_json::from_value(serde_json::Value::Object(tags)).map_err(|e| Skipped::new(Skip::Invalid, format!("tags: {e}")))?;
    let mut row = SourceRow { source: Some(SourceType::Osm), source_id: format!("{kind}{id}"), lng: pos.0, lat: pos.1, ..SourceRow::default() };
    tags.fill(&mut row);
    if row.name.is_empty() {
        return Err(Skipped::new(Skip::NoBrandMatch, "a place with no name or brand tag"));
    }
    Ok(row)
}

/// Why an object's second copy is skipped (osmium writes every closed way twice; two extracts
/// overlap at their borders).
pub(crate) fn duplicate() -> Skipped {
    Skipped::new(Skip::DuplicateId, "the same object again")
}

/// Objects already taken, by type and id, across every file of one import, in shards by id: a
/// run of objects is checked shard by shard, each shard's on a core of its own, in the run's
/// order within it, so the first of two is the one kept whatever the shards (one set was most
/// of the thread that keeps a GeoJSON file's lines in order: millions of inserts, each a miss
/// in a table far bigger than the caches).
pub(crate) struct Seen(Vec<HashSet<(char, i64), foldhash::fast::FixedState>>);

/// Shards of [`Seen`]: a power of two.
const SEEN_SHARDS: usize = 64;

impl Default for Seen {
    fn default() -> Seen {
        Seen((0..SEEN_SHARDS).map(|_| HashSet::default()).collect())
    }
}

impl Seen {
    /// An object's shard, from its id by a multiplicative hash (the sets hash with foldhash; a
    /// shard taken from that hash's bits would leave those bits the same within a shard).
    fn shard(kind: char, id: i64) -> usize {
        ((id as u64 ^ kind as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SEEN_SHARDS.trailing_zeros())) as usize
    }

    /// True the first time an object is offered.
    pub fn first(&mut self, kind: char, id: i64) -> bool {
        self.0[Self::shard(kind, id)].insert((kind, id))
    }

    /// [`Seen::first`] of each object in turn: the same answers, the shards checked on every
    /// core.
    pub fn first_of_each(&mut self, objects: &[(char, i64)]) -> Vec<bool> {
        use rayon::prelude::*;
        let mut by_shard: Vec<Vec<u32>> = vec![Vec::new(); SEEN_SHARDS];
        for (i, &(kind, id)) in objects.iter().enumerate() {
            by_shard[Self::shard(kind, id)].push(i as u32);
        }
        let answers: Vec<Vec<(u32, bool)>> =
            self.0.par_iter_mut().zip(by_shard.par_iter()).map(|(set, mine)| mine.iter().map(|&i| (i, set.insert(objects[i as usize]))).collect()).collect();
        let mut first = vec![false; objects.len()];
        for (i, new) in answers.into_iter().flatten() {
            first[i as usize] = new;
        }
        first
    }
}

pub fn import_osm(path: &Path) -> Result<(Vec<SourceRow>, ImportReport)> {
    let mut rows = Vec::new();
    let report = import_osm_into(path, &mut |batch| rows.extend(batch))?;
    Ok((rows, report))
}

/// A PBF extract, by its name.
fn is_pbf(file: &Path) -> bool {
    file.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".pbf"))
}

enum Format {
    Pbf,
    GeoJsonSeq,
}

/// What a file holds, from its first bytes, so that a file of neither kind is refused by name
/// instead of having every line counted `invalid` (a gzip-compressed sequence, or a PBF named
/// `.txt`, gave an import with no OpenStreetMap rows and exit 0). A PBF's first block is its
/// header: a 4-byte length, then the block type `OSMHeader`. A GeoJSON sequence's first line
/// is a JSON object, maybe after RFC 8142's record separator.
fn sniff(file: &Path, name: &str) -> Result<Format> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let mut f = std::fs::File::open(file).map_err(|e| IngestError::io(name, e))?;
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]).map_err(|e| IngestError::io(name, e))? {
            0 => break,
            k => n += k,
        }
    }
    let head = &head[..n];
    if head.windows(9).any(|w| w == b"OSMHeader") {
        return Ok(Format::Pbf);
    }
    if is_pbf(file) {
        return Err(IngestError::file(name, "not an OpenStreetMap PBF file: it does not begin with an OSMHeader block"));
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Err(IngestError::file(name, "gzip-compressed: decompress it first (gunzip), then import the GeoJSON sequence"));
    }
    match head.strip_prefix(crate::import::UTF8_BOM).unwrap_or(head).iter().find(|b| !b.is_ascii_whitespace() && **b != 0x1e) {
        Some(b'{') => Ok(Format::GeoJsonSeq),
        _ => Err(IngestError::file(
            name,
            "neither an OpenStreetMap PBF file nor a GeoJSON sequence (osmium export -f geojsonseq): its first line is not a JSON object",
        )),
    }
}

/// Streams the rows of a file or a folder of files (`.osm.pbf` and GeoJSON sequences) to `sink`.
pub fn import_osm_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    let mut report = ImportReport::new(SourceType::Osm);
    let mut seen = Seen::default();
    let mut out = Batcher::new(sink);
    for file in super::input_files(path, &[".osm.pbf", ".pbf", ".geojsonseq", ".geojsonl", ".jsonl", ".geojsons"])? {
        let name = file.display().to_string();
        report.files += 1;
        if std::fs::metadata(&file).map_err(|e| IngestError::io(&name, e))?.len() == 0 {
            // An export of an area without places may be empty; a PBF never is (it begins with
            // its header), so an empty one is a download that failed, and its stores would read
            // as closed.
            if is_pbf(&file) {
                return Err(IngestError::file(&name, "0 bytes: an .osm.pbf always begins with its header; a download cut short? Fetch it again"));
            }
            report.files_empty += 1;
            continue;
        }
        match sniff(&file, &name)? {
            Format::Pbf => pbf::read(&file, &name, &mut report, &mut seen, &mut out)?,
            Format::GeoJsonSeq => geojsonseq::read(&file, &name, &mut report, &mut seen, &mut out)?,
        }
    }
    out.flush();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::Seen;

    #[test]
    fn runs_checked_shard_by_shard_answer_as_one_object_at_a_time() {
        // Objects of three types with many repeats (ids from a small range), in runs of uneven
        // length: each answer is what a plain set offered them one by one says.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let objects: Vec<(char, i64)> = (0..20_000).map(|_| (['n', 'w', 'r'][(next() % 3) as usize], (next() % 6_000) as i64)).collect();
        let mut plain = std::collections::HashSet::new();
        let want: Vec<bool> = objects.iter().map(|&o| plain.insert(o)).collect();
        assert!(want.iter().any(|&f| !f) && want.iter().any(|&f| f));
        let mut seen = Seen::default();
        let (mut got, mut at) = (Vec::new(), 0);
        while at < objects.len() {
            let len = ((next() % 700) as usize).min(objects.len() - at);
            got.extend(seen.first_of_each(&objects[at..at + len]));
            at += len;
        }
        assert_eq!(got, want);
        // One at a time after runs: the same sets.
        assert!(!seen.first(objects[0].0, objects[0].1));
        assert!(seen.first('n', 1_000_000));
    }
}
