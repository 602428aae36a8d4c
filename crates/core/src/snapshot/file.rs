//! The file format: an 8-byte magic, the format version, a section table (name, offset,
//! length), each section 8-byte aligned, and last a CRC-32 of everything before it. Written to
//! a temp file of its own and renamed into place; read back with every bound checked.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CHECKSUM_SECTION, FORMAT_VERSION, MAGIC, OLDEST_READABLE};
use crate::error::{CoreError, Result};

#[derive(Default)]
pub(super) struct SectionWriter {
    sections: Vec<([u8; 16], Vec<u8>)>,
}

impl SectionWriter {
    pub(super) fn raw(&mut self, name: &str, bytes: &[u8]) {
        let mut n = [0u8; 16];
        n[..name.len()].copy_from_slice(name.as_bytes());
        self.sections.push((n, bytes.to_vec()));
    }
    pub(super) fn pod<T: bytemuck::Pod>(&mut self, name: &str, v: &[T]) {
        // Little-endian on every platform we build for; the magic check would catch a
        // big-endian reader through the version field.
        self.raw(name, bytemuck::cast_slice(v));
    }
    pub(super) fn json<T: Serialize>(&mut self, name: &str, v: &T) -> Result<()> {
        let bytes = serde_json::to_vec(v).map_err(|e| CoreError::Snapshot { path: name.into(), message: e.to_string() })?;
        self.raw(name, &bytes);
        Ok(())
    }
    pub(super) fn finish(mut self, path: &Path) -> Result<()> {
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
pub(crate) fn temp_path(path: &Path) -> std::path::PathBuf {
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

pub(super) struct SectionReader<'a> {
    path: &'a str,
    /// The file's format version.
    pub(super) version: u32,
    bytes: &'a [u8],
    table: HashMap<String, (usize, usize)>,
}

impl<'a> SectionReader<'a> {
    pub(super) fn new(path: &'a str, bytes: &'a [u8]) -> Result<Self> {
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
        Ok(SectionReader { path, version, bytes, table })
    }

    pub(super) fn bytes(&self, name: &str) -> Result<&'a [u8]> {
        let (off, len) = *self.table.get(name).ok_or_else(|| CoreError::Snapshot { path: self.path.into(), message: format!("missing section {name}") })?;
        Ok(&self.bytes[off..off + len])
    }

    /// Copies a column out of the file buffer; the copy is what aligns it.
    pub(super) fn pod<T: bytemuck::Pod>(&self, name: &str, expect_len: Option<usize>) -> Result<Vec<T>> {
        let b = self.bytes(name)?;
        let size = std::mem::size_of::<T>();
        if b.len() % size != 0 || expect_len.is_some_and(|n| b.len() / size != n) {
            return Err(CoreError::Snapshot { path: self.path.into(), message: format!("column {name} has the wrong length") });
        }
        Ok(bytemuck::pod_collect_to_vec(b))
    }

    pub(super) fn json<T: for<'de> Deserialize<'de>>(&self, name: &str) -> Result<T> {
        serde_json::from_slice(self.bytes(name)?).map_err(|e| CoreError::Snapshot { path: self.path.into(), message: format!("section {name}: {e}") })
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
