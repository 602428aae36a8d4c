//! Importers, one per source, each reading its publisher's own format and field names.
//! Every importer returns the rows it could read and an `ImportReport` of what it skipped;
//! only an unreadable file is an error.

mod atp;
mod fields;
mod fsq;
mod geometry;
mod osm;
mod overture;
pub(crate) mod parquet;
mod wkb;

/// Rows an importer hands on at a time: enough for matching to spread over the cores, few
/// enough that the rows being made are a small part of a build's memory (100,000 at a time
/// from OpenStreetMap and a whole row group from the Parquet files set a scale-0.1 build's
/// peak; with the four imports at once, 16,384 from each still made it 0.62 GiB against 0.58 at
/// 4,096, in the same time). The batches out at once grow with the threads, not the input (a
/// few per thread), so on 16 cores a smaller batch holds less: 1,024 rows, with 1,024-row
/// Parquet jobs, took a scale-0.1 build from 0.66 to 0.61 GiB by the 16-core emulation
/// (bench/RESULTS.md), each batch still milliseconds of matching.
const BATCH_ROWS: usize = 1_024;

use std::path::{Path, PathBuf};

use crate::error::{IngestError, Result};
use crate::SourceRow;

/// Collects an importer's rows and hands them to its sink [`BATCH_ROWS`] at a time.
pub(crate) struct Batcher<'s> {
    rows: Vec<SourceRow>,
    sink: &'s mut dyn FnMut(Vec<SourceRow>),
    /// Rows handed on so far.
    pub handed: u64,
}

impl<'s> Batcher<'s> {
    pub fn new(sink: &'s mut dyn FnMut(Vec<SourceRow>)) -> Batcher<'s> {
        Batcher { rows: Vec::new(), sink, handed: 0 }
    }

    pub fn push(&mut self, row: SourceRow) {
        self.rows.push(row);
        if self.rows.len() == BATCH_ROWS {
            self.flush();
        }
    }

    pub fn extend(&mut self, rows: impl IntoIterator<Item = SourceRow>) {
        rows.into_iter().for_each(|r| self.push(r));
    }

    /// Hands on the rows collected so far (so none wait past the end of a file or an import).
    pub fn flush(&mut self) {
        if !self.rows.is_empty() {
            self.handed += self.rows.len() as u64;
            // The next batch starts at its full size: grown from empty, its rows were copied
            // once more as it doubled, on the importer's thread, the one that bounds an import.
            (self.sink)(std::mem::replace(&mut self.rows, Vec::with_capacity(BATCH_ROWS)));
        }
    }
}

pub use atp::{import_atp, import_atp_into};
pub use fields::PLACE_KEYS;
pub use fsq::{import_fsq, import_fsq_into};
pub use osm::{import_osm, import_osm_into};
pub use overture::{import_overture, import_overture_into};

/// A file, or every file with one of `exts` below a folder, subfolders included (Overture's
/// release is a hive-partitioned tree, `theme=places/type=place/*.parquet`), sorted so imports
/// are repeatable. Hidden files and partial downloads (`.part`) are not inputs.
pub(crate) fn input_files(path: &Path, exts: &[&str]) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(path.display(), e))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| IngestError::io(dir.display(), e))? {
            let p = entry.map_err(|e| IngestError::io(dir.display(), e))?.path();
            let Some(name) = p.file_name().and_then(|n| n.to_str()) else { continue };
            if name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if exts.iter().any(|x| name.ends_with(x)) {
                files.push(p);
            }
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(IngestError::file(path.display(), format!("no {} files in this folder", exts.join("/"))));
    }
    Ok(files)
}
