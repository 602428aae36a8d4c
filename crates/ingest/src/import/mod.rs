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
/// The UTF-8 byte-order mark some tools write before JSON text (JSON's RFC lets a reader
/// ignore it; serde_json does not).
pub(crate) const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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
/// are repeatable. Hidden files and partial downloads (`.part`) are not inputs. Links are
/// followed, but a folder or a file reached twice is read once: a link back up the tree would
/// otherwise be walked without end, and a file linked beside itself imported twice.
pub(crate) fn input_files(path: &Path, exts: &[&str]) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(path.display(), e))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(not_a_regular_file(path));
    }
    if meta.is_file() {
        // A file named on its own is the whole input: empty, it is a download cut short, not
        // a spider that found nothing (those are counted inside a folder or a zip), and an
        // import of it would replace the snapshot with nothing from that source.
        if meta.len() == 0 {
            return Err(IngestError::file(path.display(), "is empty (0 bytes): a download that did not finish? Fetch it again"));
        }
        return Ok(vec![path.to_path_buf()]);
    }
    let real = |p: &Path| std::fs::canonicalize(p).map_err(|e| IngestError::io(p.display(), e));
    let mut seen = std::collections::HashSet::new();
    let mut files = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    seen.insert(real(path)?);
    while let Some(dir) = dirs.pop() {
        // In name order, so which of two paths to one file is read does not depend on the disk.
        let mut entries = std::fs::read_dir(&dir)
            .and_then(|d| d.map(|e| e.map(|e| e.path())).collect::<std::io::Result<Vec<_>>>())
            .map_err(|e| IngestError::io(dir.display(), e))?;
        entries.sort();
        for p in entries {
            // A name that is not UTF-8 is read too (it used to be passed over without a word);
            // reports show it with U+FFFD in place of its bad bytes.
            let Some(name) = p.file_name().map(|n| n.to_string_lossy()) else { continue };
            if name.starts_with('.') {
                continue;
            }
            let wanted = p.is_dir() || exts.iter().any(|x| name.ends_with(x));
            // A link whose target is gone is named by the read that fails on it, as before.
            if !wanted || (p.exists() && !seen.insert(real(&p)?)) {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if p.exists() && !p.is_file() {
                return Err(not_a_regular_file(&p));
            } else {
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

/// A pipe, socket or device (or a link to one) among the inputs: reading one blocks until a
/// writer comes, or never ends (`/dev/zero`), so it is refused by name before any work.
fn not_a_regular_file(path: &Path) -> IngestError {
    IngestError::file(path.display(), "is not a regular file (a pipe, socket or device): imports read files; save the download to a file first")
}

#[cfg(test)]
mod tests {
    use super::input_files;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;

    /// Links back up the tree (to the folder itself, to its parent) and a file linked beside
    /// itself: each folder and file is listed once, and the walk ends. A name that is not UTF-8
    /// is listed too.
    #[test]
    fn a_folder_with_link_loops_lists_each_file_once() {
        let dir = crate::test_dir::TestDir::new("input-files-loops");
        std::fs::write(dir.join("a.geojsonseq"), "{}\n").unwrap();
        symlink("a.geojsonseq", dir.join("b.geojsonseq")).unwrap();
        symlink(".", dir.join("self")).unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        symlink("..", dir.join("sub").join("back")).unwrap();
        std::fs::write(dir.join("sub").join("c.geojsonseq"), "{}\n").unwrap();
        let odd = dir.join(std::ffi::OsStr::from_bytes(b"bad\xff.geojsonseq"));
        std::fs::write(&odd, "{}\n").unwrap();
        let files = input_files(&dir, &[".geojsonseq"]).unwrap();
        assert_eq!(files, vec![dir.join("a.geojsonseq"), odd, dir.join("sub").join("c.geojsonseq")]);
    }

    /// An empty file inside a folder is listed (an importer counts it); named on its own, it is
    /// refused, naming it.
    #[test]
    fn an_empty_file_named_on_its_own_is_refused() {
        let dir = crate::test_dir::TestDir::new("input-files-empty");
        let empty = dir.join("planet.osm.pbf");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(input_files(&dir, &[".osm.pbf"]).unwrap(), vec![empty.clone()]);
        let refused = input_files(&empty, &[".osm.pbf"]).unwrap_err().to_string();
        assert!(refused.contains("planet.osm.pbf") && refused.contains("is empty (0 bytes)"), "{refused}");
    }

    /// A named pipe among the inputs (reading it would wait for a writer forever) and a link to
    /// a device that never ends are refused by name, in a folder and on their own.
    #[test]
    fn pipes_and_devices_are_refused_by_name() {
        let dir = crate::test_dir::TestDir::new("input-files-special");
        std::fs::write(dir.join("a.geojson"), "{}").unwrap();
        let fifo = dir.join("b.geojson");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        for input in [&*dir, fifo.as_path()] {
            let refused = input_files(input, &[".geojson"]).unwrap_err().to_string();
            assert!(refused.contains("b.geojson") && refused.contains("not a regular file"), "{refused}");
        }
        std::fs::remove_file(&fifo).unwrap();
        symlink("/dev/zero", dir.join("c.geojson")).unwrap();
        let refused = input_files(&dir, &[".geojson"]).unwrap_err().to_string();
        assert!(refused.contains("c.geojson") && refused.contains("not a regular file"), "{refused}");
    }
}
