//! Importers, one per source, each reading its publisher's own format and field names.
//! Every importer returns the rows it could read and an `ImportReport` of what it skipped;
//! only an unreadable file is an error.

mod atp;
mod fields;
mod fsq;
mod osm;
mod overture;
mod parquet;
mod wkb;

pub use atp::{import_atp, import_atp_into};
pub use fsq::import_fsq;
pub use osm::{import_osm, import_osm_into};
pub use overture::import_overture;

use std::path::{Path, PathBuf};

use crate::error::{IngestError, Result};

/// A file, or every file with one of `exts` in a folder (sorted, so imports are repeatable).
pub(crate) fn input_files(path: &Path, exts: &[&str]) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(path.display(), e))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| IngestError::io(path.display(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| exts.iter().any(|x| n.ends_with(x))))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(IngestError::file(path.display(), format!("no {} files in this folder", exts.join("/"))));
    }
    Ok(files)
}
