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

/// Objects already taken, by type and id, across every file of one import.
#[derive(Default)]
pub(crate) struct Seen(HashSet<(char, i64), foldhash::fast::FixedState>);

impl Seen {
    /// True the first time an object is offered.
    pub fn first(&mut self, kind: char, id: i64) -> bool {
        self.0.insert((kind, id))
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

/// Streams the rows of a file or a folder of files (`.osm.pbf` and GeoJSON sequences) to `sink`.
pub fn import_osm_into(path: &Path, sink: &mut dyn FnMut(Vec<SourceRow>)) -> Result<ImportReport> {
    let mut report = ImportReport::new(SourceType::Osm);
    let mut seen = Seen::default();
    let mut out = Batcher::new(sink);
    for file in super::input_files(path, &[".osm.pbf", ".pbf", ".geojsonseq", ".geojsonl", ".jsonl", ".geojsons"])? {
        let name = file.display().to_string();
        report.files += 1;
        if std::fs::metadata(&file).map_err(|e| IngestError::io(&name, e))?.len() == 0 {
            report.files_empty += 1;
            continue;
        }
        if is_pbf(&file) {
            pbf::read(&file, &name, &mut report, &mut seen, &mut out)?;
        } else {
            geojsonseq::read(&file, &name, &mut report, &mut seen, &mut out)?;
        }
    }
    out.flush();
    Ok(report)
}
