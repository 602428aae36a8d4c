//! The file format: an 8-byte magic, the format version, a section table (name, offset,
//! length), each section 8-byte aligned, and last a CRC-32 of everything before it. Written to
//! a temp file of its own and renamed into place; read back with every bound checked.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use rayon::iter::{IndexedParallelIterator, ParallelIterator};
use rayon::slice::ParallelSliceMut;
use serde::{Deserialize, Serialize};

use super::{CHECKSUM_SECTION, FORMAT_VERSION, MAGIC, OLDEST_READABLE};
use crate::error::{CoreError, Result};

/// Where a made section writes its bytes.
pub(super) type Sink<'s> = dyn FnMut(&[u8]) -> std::io::Result<()> + 's;
/// What makes a section's bytes into a sink.
pub(super) type Maker<'a> = Box<dyn Fn(&mut Sink<'_>) -> std::io::Result<()> + 'a>;

/// A section's bytes: given (borrowed, or owned when small), or made as the file is written (a
/// column drawn from the rows a slice at a time), so the writer never holds a second copy of
/// the snapshot: at scale 10 that copy was 10 GB on top of the rows.
pub(super) enum Body<'a> {
    Bytes(std::borrow::Cow<'a, [u8]>),
    /// The length, and what writes exactly that many bytes to the sink it is given.
    Made(usize, Maker<'a>),
}

impl Body<'_> {
    fn len(&self) -> usize {
        match self {
            Body::Bytes(b) => b.len(),
            Body::Made(n, _) => *n,
        }
    }
}

/// Values of a column one core makes at a time.
const COLUMN_SLICE: usize = 1 << 16;
/// Values of a column made (on every core) and written at a time: 16 slices, at most 8 MB held.
const COLUMN_WINDOW: usize = COLUMN_SLICE * 16;

/// Bytes handed to the file's writer thread at a time.
const WRITE_CHUNK: usize = 1 << 20;

/// What the maker's sends fail with once the writer has stopped (on its own error).
const WRITER_STOPPED: std::io::ErrorKind = std::io::ErrorKind::BrokenPipe;

/// Gathers bytes into chunks and hands each full one to the writer thread. Dropping it (made
/// or failed) closes the channel, which ends the writer.
struct Chunked {
    buf: Vec<u8>,
    to_file: std::sync::mpsc::SyncSender<Vec<u8>>,
}

impl Chunked {
    fn send(&mut self) -> std::io::Result<()> {
        let full = std::mem::replace(&mut self.buf, Vec::with_capacity(WRITE_CHUNK));
        // A closed channel means the writer stopped on an error, which the join reports.
        self.to_file.send(full).map_err(|_| std::io::Error::new(WRITER_STOPPED, "the snapshot writer stopped"))
    }

    fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let room = WRITE_CHUNK - self.buf.len();
            let (now, rest) = bytes.split_at(room.min(bytes.len()));
            self.buf.extend_from_slice(now);
            bytes = rest;
            if self.buf.len() == WRITE_CHUNK {
                self.send()?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.send()
    }
}

/// A JSON section's bytes.
pub(super) fn to_json<T: Serialize + ?Sized>(name: &str, v: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(v).map_err(|e| CoreError::Snapshot { path: name.into(), message: e.to_string() })
}

#[derive(Default)]
pub(super) struct SectionWriter<'a> {
    sections: Vec<([u8; 16], Body<'a>)>,
}

impl<'a> SectionWriter<'a> {
    fn push(&mut self, name: &str, body: Body<'a>) {
        let mut n = [0u8; 16];
        n[..name.len()].copy_from_slice(name.as_bytes());
        self.sections.push((n, body));
    }
    pub(super) fn raw(&mut self, name: &str, bytes: &'a [u8]) {
        self.push(name, Body::Bytes(std::borrow::Cow::Borrowed(bytes)));
    }
    pub(super) fn pod<T: bytemuck::Pod>(&mut self, name: &str, v: &'a [T]) {
        // Little-endian on every platform we build for; the magic check would catch a
        // big-endian reader through the version field.
        self.raw(name, bytemuck::cast_slice(v));
    }
    /// A section of `len` bytes that `make` writes to the sink it is given.
    pub(super) fn made(&mut self, name: &str, len: usize, make: impl Fn(&mut Sink<'_>) -> std::io::Result<()> + 'a) {
        self.push(name, Body::Made(len, Box::new(make)));
    }
    /// A column of `n` values, `value(i)` each, made as it is written: a window of slices at a
    /// time, the window's slices on every core (a value is a field read from rows about a
    /// hundred bytes apart, a cache miss each; one thread making every column was a third of
    /// writing a snapshot).
    pub(super) fn column<T: bytemuck::Pod + Send>(&mut self, name: &str, n: usize, value: impl Fn(usize) -> T + Sync + 'a) {
        let made = move |sink: &mut Sink<'_>| {
            let mut window: Vec<T> = Vec::with_capacity(COLUMN_WINDOW.min(n));
            for start in (0..n).step_by(COLUMN_WINDOW) {
                window.clear();
                window.resize(n.min(start + COLUMN_WINDOW) - start, T::zeroed());
                window.par_chunks_mut(COLUMN_SLICE).enumerate().for_each(|(k, slice)| {
                    let from = start + k * COLUMN_SLICE;
                    slice.iter_mut().enumerate().for_each(|(j, v)| *v = value(from + j));
                });
                sink(bytemuck::cast_slice(&window))?;
            }
            Ok(())
        };
        self.push(name, Body::Made(n * std::mem::size_of::<T>(), Box::new(made)));
    }
    pub(super) fn json<T: Serialize>(&mut self, name: &str, v: &T) -> Result<()> {
        self.json_made(name, to_json(name, v)?);
        Ok(())
    }
    /// A JSON section already made by [`to_json`] (elsewhere, meanwhile).
    pub(super) fn json_made(&mut self, name: &str, bytes: Vec<u8>) {
        self.push(name, Body::Bytes(std::borrow::Cow::Owned(bytes)));
    }
    pub(super) fn finish(mut self, path: &Path) -> Result<()> {
        let io = |e| CoreError::Io { path: path.display().to_string(), source: e };
        // A placeholder, filled in once everything before it has been hashed.
        self.push(CHECKSUM_SECTION, Body::Bytes(std::borrow::Cow::Owned(vec![0u8; 8])));
        let header_len = 16 + self.sections.len() * 32;
        let mut offset = align8(header_len);
        let mut table = Vec::with_capacity(header_len);
        table.extend_from_slice(MAGIC);
        table.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        table.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (name, body) in &self.sections {
            table.extend_from_slice(name);
            table.extend_from_slice(&(offset as u64).to_le_bytes());
            table.extend_from_slice(&(body.len() as u64).to_le_bytes());
            offset = align8(offset + body.len());
        }
        // A temp file of this build alone: two builds into one folder never write one file.
        let tmp = temp_path(path);
        let written = (|| {
            let file = std::fs::File::create(&tmp)?;
            // The bytes go to the file from a thread of their own, a megabyte at a time, while
            // the next are made: the kernel's copy into the page cache was a third of this
            // step, done between the columns on the one thread that makes them.
            std::thread::scope(|scope| {
                let (to_file, from_maker) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
                let writer = scope.spawn(move || -> std::io::Result<std::fs::File> {
                    let mut file = file;
                    for buf in from_maker {
                        file.write_all(&buf)?;
                    }
                    Ok(file)
                });
                let made = (|| {
                    let mut out = Chunked { buf: Vec::with_capacity(WRITE_CHUNK), to_file };
                    let mut crc = crc32fast::Hasher::new();
                    crc.update(&table);
                    out.write_all(&table)?;
                    let mut written = table.len();
                    let last = self.sections.len() - 1;
                    for (i, (name, body)) in self.sections.iter().enumerate() {
                        let pad = &[0u8; 8][..align8(written) - written];
                        crc.update(pad);
                        out.write_all(pad)?;
                        if i == last {
                            let mut sum = [0u8; 8];
                            sum[..4].copy_from_slice(&crc.clone().finalize().to_le_bytes());
                            out.write_all(&sum)?;
                        } else {
                            let mut n = 0usize;
                            let mut sink = |bytes: &[u8]| {
                                crc.update(bytes);
                                n += bytes.len();
                                out.write_all(bytes)
                            };
                            match body {
                                Body::Bytes(b) => sink(b)?,
                                Body::Made(_, make) => make(&mut sink)?,
                            }
                            if n != body.len() {
                                let name = String::from_utf8_lossy(name).trim_end_matches('\0').to_string();
                                return Err(std::io::Error::other(format!("section {name} made {n} bytes where its length is {}", body.len())));
                            }
                        }
                        written += pad.len() + body.len();
                    }
                    out.flush()
                })();
                let wrote = writer.join().unwrap_or_else(|_| Err(std::io::Error::other("the snapshot writer thread panicked")));
                match (wrote, made) {
                    // Synced only when whole: a failed file is removed, not flushed to disk.
                    (Ok(file), Ok(())) => file.sync_all(),
                    // The writer's error is why the maker's sends failed.
                    (Err(w), Err(m)) if m.kind() == WRITER_STOPPED => Err(w),
                    (_, Err(m)) => Err(m),
                    (Err(w), Ok(())) => Err(w),
                }
            })
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

/// A file's header: its format version and section table, each section checked to end within
/// the file. One reading for a file held whole ([`SectionReader`]) and one read a piece at a
/// time ([`check_file`]).
struct Header {
    version: u32,
    table: HashMap<String, (usize, usize)>,
}

/// Bytes of a section table entry, and of the fixed part before the table; the most sections
/// a table may list.
const ENTRY: usize = 32;
const FIXED: usize = 16;
const MAX_SECTIONS: usize = 1024;

impl Header {
    /// Bytes of the header `head` starts with, once its first 16 are read (None: too short to tell).
    fn len(head: &[u8]) -> Option<usize> {
        (head.len() >= FIXED).then(|| FIXED + (u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize).min(MAX_SECTIONS + 1) * ENTRY)
    }

    fn read(path: &str, head: &[u8], file_len: usize) -> Result<Header> {
        let bad = |m: &str| CoreError::Snapshot { path: path.into(), message: m.into() };
        if head.len() < FIXED || &head[..8] != MAGIC {
            return Err(bad("not a storemap snapshot (bad magic)"));
        }
        let version = u32::from_le_bytes(head[8..12].try_into().unwrap());
        if !(OLDEST_READABLE..=FORMAT_VERSION).contains(&version) {
            return Err(bad(&format!("format version {version}, this build reads {OLDEST_READABLE} to {FORMAT_VERSION}")));
        }
        let n = u32::from_le_bytes(head[12..16].try_into().unwrap()) as usize;
        if n > MAX_SECTIONS || head.len() < FIXED + n * ENTRY {
            return Err(bad("truncated section table"));
        }
        let mut table = HashMap::new();
        for i in 0..n {
            let e = &head[FIXED + i * ENTRY..FIXED + (i + 1) * ENTRY];
            let name = String::from_utf8_lossy(&e[..16]).trim_end_matches('\0').to_string();
            let off = u64::from_le_bytes(e[16..24].try_into().unwrap()) as usize;
            let len = u64::from_le_bytes(e[24..32].try_into().unwrap()) as usize;
            if off.checked_add(len).is_none_or(|end| end > file_len) {
                return Err(bad(&format!("section {name} runs past the end of the file")));
            }
            table.insert(name, (off, len));
        }
        Ok(Header { version, table })
    }

    /// Where the checksum is (None before format 2), checked to be the file's last 8 bytes.
    fn checksum_at(&self, path: &str, file_len: usize) -> Result<Option<usize>> {
        if self.version < 2 {
            return Ok(None);
        }
        let bad = |m: &str| CoreError::Snapshot { path: path.into(), message: m.into() };
        let (off, len) = *self.table.get(CHECKSUM_SECTION).ok_or_else(|| bad("missing checksum"))?;
        if len != 8 || off + len != file_len {
            return Err(bad("the checksum is not the file's last section"));
        }
        Ok(Some(off))
    }

    fn check_sum(path: &str, sum: &[u8], actual: u32) -> Result<()> {
        let stored = u32::from_le_bytes(sum[..4].try_into().unwrap());
        // Every byte counts: the four after the sum must be the zeros written.
        if stored != actual || sum[4..8] != [0u8; 4] {
            return Err(CoreError::Snapshot {
                path: path.into(),
                message: format!(
                    "checksum mismatch (file says {stored:08x}, content is {actual:08x}): the file is damaged or was changed; rebuild it or roll back"
                ),
            });
        }
        Ok(())
    }
}

/// A snapshot file checked as a load checks it first (its header, its section table and, with
/// `whole`, its checksum, read a piece at a time), and its `meta` section: what a rollback asks
/// of the file it is about to serve, without holding gigabytes of snapshot to ask it.
pub(super) fn check_file<T: for<'de> Deserialize<'de>>(path: &Path, whole: bool) -> Result<T> {
    use std::io::{Read, Seek, SeekFrom};
    let name = path.display().to_string();
    let io = |e| CoreError::Io { path: name.clone(), source: e };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let file_len = file.metadata().map_err(io)?.len() as usize;
    let mut head = vec![0u8; FIXED.min(file_len)];
    file.read_exact(&mut head).map_err(io)?;
    if let Some(n) = Header::len(&head) {
        head.resize(n.min(file_len), 0);
        file.read_exact(&mut head[FIXED..]).map_err(io)?;
    }
    let header = Header::read(&name, &head, file_len)?;
    if let Some(off) = header.checksum_at(&name, file_len)?.filter(|_| whole) {
        let mut crc = crc32fast::Hasher::new();
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut left = off;
        let mut piece = vec![0u8; 1 << 20];
        while left > 0 {
            let n = left.min(piece.len());
            file.read_exact(&mut piece[..n]).map_err(io)?;
            crc.update(&piece[..n]);
            left -= n;
        }
        let mut sum = [0u8; 8];
        file.read_exact(&mut sum).map_err(io)?;
        Header::check_sum(&name, &sum, crc.finalize())?;
    }
    let (off, len) = *header.table.get("meta").ok_or_else(|| CoreError::Snapshot { path: name.clone(), message: "missing section meta".into() })?;
    let mut bytes = vec![0u8; len];
    file.seek(SeekFrom::Start(off as u64)).map_err(io)?;
    file.read_exact(&mut bytes).map_err(io)?;
    serde_json::from_slice(&bytes).map_err(|e| CoreError::Snapshot { path: name.clone(), message: format!("section meta: {e}") })
}

impl<'a> SectionReader<'a> {
    pub(super) fn new(path: &'a str, bytes: &'a [u8]) -> Result<Self> {
        let header = Header::read(path, bytes, bytes.len())?;
        if let Some(off) = header.checksum_at(path, bytes.len())? {
            Header::check_sum(path, &bytes[off..], crc32fast::hash(&bytes[..off]))?;
        }
        Ok(SectionReader { path, version: header.version, bytes, table: header.table })
    }

    /// Whether the file has section `name` (one that only some files need).
    pub(super) fn has(&self, name: &str) -> bool {
        self.table.contains_key(name)
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

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("storemap-core-file-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn sections_many_write_chunks_long_read_back_whole() {
        // Sections that span several of the writer thread's chunks, given and made, each read
        // back byte for byte under the file's checksum.
        let dir = scratch("chunks");
        let path = dir.join("snapshot.smap");
        let given: Vec<u8> = (0..WRITE_CHUNK * 3 + 12_345).map(|i| (i * 7 % 251) as u8).collect();
        // A column of two windows and part of a third: each window's slices made on every core.
        let values: Vec<u32> = (0..(COLUMN_WINDOW * 2 + COLUMN_SLICE * 5 + 3) as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let mut w = SectionWriter::default();
        w.raw("given", &given);
        w.column("made", values.len(), |i| values[i]);
        w.made("pieces", 1_000_003, |sink| (0..1_000_003u32).step_by(1000).try_for_each(|i| sink(&vec![(i % 256) as u8; 1000.min(1_000_003 - i as usize)])));
        w.finish(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let r = SectionReader::new("t", &bytes).unwrap();
        assert_eq!(r.bytes("given").unwrap(), &given[..]);
        assert_eq!(r.pod::<u32>("made", Some(values.len())).unwrap(), values);
        let pieces = r.bytes("pieces").unwrap();
        assert_eq!(pieces.len(), 1_000_003);
        assert!(pieces.chunks(1000).enumerate().all(|(k, c)| c.iter().all(|&b| b == ((k * 1000) % 256) as u8)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_section_of_the_wrong_length_fails_the_write_and_leaves_nothing() {
        let dir = scratch("short");
        let path = dir.join("snapshot.smap");
        std::fs::write(&path, b"the snapshot being served").unwrap();
        let big = vec![1u8; WRITE_CHUNK * 2];
        let mut w = SectionWriter::default();
        w.raw("big", &big);
        w.made("short", 10, |sink| sink(b"12345"));
        let e = w.finish(&path).unwrap_err().to_string();
        assert!(e.contains("section short made 5 bytes where its length is 10"), "{e}");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, vec![std::ffi::OsString::from("snapshot.smap")], "no temp file left beside the snapshot");
        assert_eq!(std::fs::read(&path).unwrap(), b"the snapshot being served");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
