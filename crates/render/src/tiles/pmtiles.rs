//! A synchronous reader of PMTiles version 3 archives (the Protomaps spec): the 127-byte header,
//! the root and leaf directories, the JSON metadata and one tile's bytes by z/x/y. The maintained
//! `pmtiles` crate is async-only (tokio, object stores); the render path is synchronous on the
//! libuv pool, and the format is small enough to read here with positioned reads.
//!
//! A file is untrusted input: every offset and length is checked against the file before it is
//! read, directories nest at most `MAX_DEPTH` deep (a leaf that points back at itself is refused,
//! not followed forever), and nothing larger than `MAX_DIRECTORY_BYTES` or `MAX_TILE_BYTES` is
//! read or inflated.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use thiserror::Error;

/// The header's fixed size.
pub const HEADER_BYTES: usize = 127;
/// Root, leaf, leaf of a leaf: the spec needs two levels; a deeper chain is a loop or an attack.
pub const MAX_DEPTH: usize = 4;
/// A directory larger than this (compressed or not) is refused: 21,845 entries, the spec's
/// largest useful directory, encode in well under 1 MiB.
pub const MAX_DIRECTORY_BYTES: u64 = 8 << 20;
/// A tile larger than this (compressed or not) is skipped by the caller: real basemap tiles are
/// under 1 MiB; the bound keeps one bad tile from taking the render's memory.
pub const MAX_TILE_BYTES: u64 = 16 << 20;
/// The deepest zoom a tile id can name in 64 bits.
pub const MAX_ZOOM: u8 = 31;
/// Bytes of parsed leaf directories kept: a city view needs one or two leaves, each a few
/// hundred KiB parsed; reading and inflating one again costs more than drawing a tile.
pub const LEAF_CACHE_BYTES: u64 = 16 << 20;

#[derive(Debug, Error, PartialEq)]
pub enum PmtilesError {
    /// Reading the archive or writing an extract's files: the message says which went wrong.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("not a PMTiles version 3 archive: {0}")]
    NotPmtiles(String),
    #[error("damaged archive: {0}")]
    Damaged(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
}

pub type Result<T> = std::result::Result<T, PmtilesError>;

/// How a directory, the metadata or a tile is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Unknown,
    None,
    Gzip,
    Brotli,
    Zstd,
}

impl Compression {
    fn from_byte(b: u8) -> Result<Self> {
        Ok(match b {
            0 => Compression::Unknown,
            1 => Compression::None,
            2 => Compression::Gzip,
            3 => Compression::Brotli,
            4 => Compression::Zstd,
            _ => return Err(PmtilesError::NotPmtiles(format!("compression {b} is not one the spec names"))),
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Unknown => "unknown",
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Brotli => "brotli",
            Compression::Zstd => "zstd",
        }
    }
}

/// What the tiles are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileType {
    Unknown,
    Mvt,
    Png,
    Jpeg,
    Webp,
    Avif,
}

impl TileType {
    fn from_byte(b: u8) -> Self {
        match b {
            1 => TileType::Mvt,
            2 => TileType::Png,
            3 => TileType::Jpeg,
            4 => TileType::Webp,
            5 => TileType::Avif,
            _ => TileType::Unknown,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TileType::Unknown => "unknown",
            TileType::Mvt => "mvt",
            TileType::Png => "png",
            TileType::Jpeg => "jpeg",
            TileType::Webp => "webp",
            TileType::Avif => "avif",
        }
    }
}

/// The header, as the spec lays it out (longitudes and latitudes in degrees).
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub root_offset: u64,
    pub root_length: u64,
    pub metadata_offset: u64,
    pub metadata_length: u64,
    pub leaf_offset: u64,
    pub leaf_length: u64,
    pub data_offset: u64,
    pub data_length: u64,
    pub addressed_tiles: u64,
    pub tile_entries: u64,
    pub tile_contents: u64,
    pub clustered: bool,
    pub internal_compression: Compression,
    pub tile_compression: Compression,
    pub tile_type: TileType,
    pub min_zoom: u8,
    pub max_zoom: u8,
    /// West, south, east, north.
    pub bounds: [f64; 4],
    pub center_zoom: u8,
    /// Longitude, latitude.
    pub center: [f64; 2],
}

impl Header {
    pub fn parse(b: &[u8]) -> Result<Header> {
        if b.len() < HEADER_BYTES || &b[..7] != b"PMTiles" {
            return Err(PmtilesError::NotPmtiles("no PMTiles magic at the start".into()));
        }
        if b[7] != 3 {
            return Err(PmtilesError::NotPmtiles(format!("version {}, this reader reads version 3", b[7])));
        }
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let deg_at = |o: usize| i32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes")) as f64 / 1e7;
        Ok(Header {
            root_offset: u64_at(8),
            root_length: u64_at(16),
            metadata_offset: u64_at(24),
            metadata_length: u64_at(32),
            leaf_offset: u64_at(40),
            leaf_length: u64_at(48),
            data_offset: u64_at(56),
            data_length: u64_at(64),
            addressed_tiles: u64_at(72),
            tile_entries: u64_at(80),
            tile_contents: u64_at(88),
            clustered: b[96] == 1,
            internal_compression: Compression::from_byte(b[97])?,
            tile_compression: Compression::from_byte(b[98])?,
            tile_type: TileType::from_byte(b[99]),
            min_zoom: b[100],
            max_zoom: b[101],
            bounds: [deg_at(102), deg_at(106), deg_at(110), deg_at(114)],
            center_zoom: b[118],
            center: [deg_at(119), deg_at(123)],
        })
    }
}

/// One directory entry. `run_length` 0: a leaf directory at `offset` in the leaf section;
/// otherwise the tiles `tile_id .. tile_id + run_length` all have the bytes at `offset` in the
/// tile data section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub tile_id: u64,
    pub offset: u64,
    pub length: u32,
    pub run_length: u32,
}

/// The tile id of z/x/y: the tiles of every lower zoom, then the position along zoom z's
/// Hilbert curve.
pub fn tile_id(z: u8, x: u32, y: u32) -> Option<u64> {
    if z > MAX_ZOOM || u64::from(x) >> z != 0 || u64::from(y) >> z != 0 {
        return None;
    }
    let below: u64 = ((1u64 << (2 * u32::from(z))) - 1) / 3;
    let n = 1u64 << z;
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    let mut d = 0u64;
    let mut s = n / 2;
    while s > 0 {
        let rx = u64::from(x & s > 0);
        let ry = u64::from(y & s > 0);
        d += s * s * ((3 * rx) ^ ry);
        // Rotate the quadrant so the curve's sub-square is in standard orientation.
        if ry == 0 {
            if rx == 1 {
                x = n - 1 - x;
                y = n - 1 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    Some(below + d)
}

fn varint(b: &[u8], pos: &mut usize) -> Result<u64> {
    super::varint(b, pos).ok_or_else(|| PmtilesError::Damaged("a directory ends inside a number, or one runs past 64 bits".into()))
}

/// A directory's entries from its uncompressed bytes.
pub fn parse_directory(b: &[u8]) -> Result<Vec<Entry>> {
    let mut pos = 0;
    let n = varint(b, &mut pos)?;
    // Each entry takes at least four bytes: a count larger than that is a lie.
    if n > b.len() as u64 / 4 + 1 {
        return Err(PmtilesError::Damaged(format!("a directory claims {n} entries in {} bytes", b.len())));
    }
    let n = n as usize;
    let mut entries = vec![Entry { tile_id: 0, offset: 0, length: 0, run_length: 0 }; n];
    let mut last = 0u64;
    for e in entries.iter_mut() {
        last = last.checked_add(varint(b, &mut pos)?).ok_or_else(|| PmtilesError::Damaged("tile ids overflow".into()))?;
        e.tile_id = last;
    }
    for e in entries.iter_mut() {
        e.run_length = u32::try_from(varint(b, &mut pos)?).map_err(|_| PmtilesError::Damaged("a run length over 32 bits".into()))?;
    }
    for e in entries.iter_mut() {
        e.length = u32::try_from(varint(b, &mut pos)?).map_err(|_| PmtilesError::Damaged("a length over 32 bits".into()))?;
    }
    for i in 0..n {
        let v = varint(b, &mut pos)?;
        entries[i].offset = if v == 0 && i > 0 {
            entries[i - 1].offset + u64::from(entries[i - 1].length)
        } else {
            v.checked_sub(1).ok_or_else(|| PmtilesError::Damaged("the first entry's offset is encoded as 0".into()))?
        };
    }
    if entries.windows(2).any(|w| w[1].tile_id <= w[0].tile_id) {
        return Err(PmtilesError::Damaged("directory entries are not in ascending tile id order".into()));
    }
    Ok(entries)
}

/// Decompresses `bytes`, refusing output past `limit`.
pub fn decompress(bytes: &[u8], compression: Compression, limit: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match compression {
        Compression::None | Compression::Unknown => out.extend_from_slice(bytes),
        Compression::Gzip => {
            flate2::read::GzDecoder::new(bytes).take(limit + 1).read_to_end(&mut out).map_err(|e| PmtilesError::Damaged(format!("gzip: {e}")))?;
        }
        other => return Err(PmtilesError::Unsupported(format!("{} compression (gzip or none are read)", other.name()))),
    }
    if out.len() as u64 > limit {
        return Err(PmtilesError::Damaged(format!("more than {limit} bytes once inflated")));
    }
    Ok(out)
}

#[derive(Clone)]
struct LeafWeigh;

impl quick_cache::Weighter<u64, Arc<Vec<Entry>>> for LeafWeigh {
    fn weight(&self, _: &u64, v: &Arc<Vec<Entry>>) -> u64 {
        (v.len() * std::mem::size_of::<Entry>()) as u64 + 64
    }
}

/// An open archive: the header, the root directory, the leaf directories read so far, and the
/// file for everything else. Reads are positioned (`pread`), not memory-mapped: a file cut
/// short under a mapping kills the process with SIGBUS, where a read returns an error.
pub struct Archive {
    path: String,
    file: File,
    len: u64,
    pub header: Header,
    root: Vec<Entry>,
    leaves: quick_cache::sync::Cache<u64, Arc<Vec<Entry>>, LeafWeigh>,
}

impl Archive {
    pub fn open(path: &Path) -> Result<Archive> {
        let shown = path.display().to_string();
        let io = |e: std::io::Error| PmtilesError::Io { path: shown.clone(), message: e.to_string() };
        // Before opening: a FIFO's open waits for a writer, and the server would never start.
        if !std::fs::metadata(path).map_err(io)?.is_file() {
            return Err(PmtilesError::NotPmtiles("not a regular file (a folder, a pipe or a device)".into()));
        }
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut head = [0u8; HEADER_BYTES];
        if len < HEADER_BYTES as u64 {
            return Err(PmtilesError::NotPmtiles(format!("{len} bytes, shorter than the header")));
        }
        file.read_exact_at(&mut head, 0).map_err(io)?;
        let header = Header::parse(&head)?;
        for (what, off, n) in [
            ("root directory", header.root_offset, header.root_length),
            ("metadata", header.metadata_offset, header.metadata_length),
            ("leaf directories", header.leaf_offset, header.leaf_length),
            ("tile data", header.data_offset, header.data_length),
        ] {
            if off.checked_add(n).is_none_or(|end| end > len) {
                return Err(PmtilesError::Damaged(format!("the {what} ({n} bytes at {off}) runs past the end of the file ({len} bytes)")));
            }
        }
        if header.min_zoom > header.max_zoom || header.max_zoom > MAX_ZOOM {
            return Err(PmtilesError::Damaged(format!("zooms {}..{}", header.min_zoom, header.max_zoom)));
        }
        let leaves = quick_cache::sync::Cache::with_weighter(64, LEAF_CACHE_BYTES, LeafWeigh);
        let mut archive = Archive { path: shown, file, len, header, root: Vec::new(), leaves };
        archive.root = archive.directory(archive.header.root_offset, archive.header.root_length)?;
        if archive.root.is_empty() {
            return Err(PmtilesError::Damaged("the root directory is empty".into()));
        }
        Ok(archive)
    }

    /// The file's size in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.len
    }

    fn read(&self, offset: u64, length: u64, limit: u64) -> Result<Vec<u8>> {
        if length > limit {
            return Err(PmtilesError::Damaged(format!("{length} bytes at {offset}: more than the {limit} read at once")));
        }
        if offset.checked_add(length).is_none_or(|end| end > self.len) {
            return Err(PmtilesError::Damaged(format!("{length} bytes at {offset} run past the end of the file ({} bytes)", self.len)));
        }
        let mut buf = vec![0u8; length as usize];
        self.file.read_exact_at(&mut buf, offset).map_err(|e| PmtilesError::Io { path: self.path.clone(), message: e.to_string() })?;
        Ok(buf)
    }

    fn directory(&self, offset: u64, length: u64) -> Result<Vec<Entry>> {
        let raw = self.read(offset, length, MAX_DIRECTORY_BYTES)?;
        parse_directory(&decompress(&raw, self.header.internal_compression, MAX_DIRECTORY_BYTES)?)
    }

    /// The JSON metadata, inflated.
    pub fn metadata(&self) -> Result<serde_json::Value> {
        let raw = self.read(self.header.metadata_offset, self.header.metadata_length, MAX_DIRECTORY_BYTES)?;
        let text = decompress(&raw, self.header.internal_compression, MAX_DIRECTORY_BYTES)?;
        if text.is_empty() {
            return Ok(serde_json::Value::Object(Default::default()));
        }
        serde_json::from_slice(&text).map_err(|e| PmtilesError::Damaged(format!("metadata is not JSON: {e}")))
    }

    /// Where tile `id`'s bytes are, following leaf directories; None when the archive has no
    /// such tile.
    pub fn find(&self, id: u64) -> Result<Option<(u64, u32)>> {
        let mut leaf: Option<Arc<Vec<Entry>>> = None;
        for _ in 0..MAX_DEPTH {
            let entries: &[Entry] = leaf.as_deref().map_or(&self.root, |l| l);
            // The last entry whose id is at most `id`.
            let i = entries.partition_point(|e| e.tile_id <= id);
            let Some(e) = i.checked_sub(1).map(|i| entries[i]) else { return Ok(None) };
            if e.run_length == 0 {
                let at = self.header.leaf_offset.checked_add(e.offset).ok_or_else(|| PmtilesError::Damaged("a leaf offset overflows".into()))?;
                let read = || self.directory(at, u64::from(e.length)).map(Arc::new);
                leaf = Some(self.leaves.get_or_insert_with(&at, read)?);
                continue;
            }
            if id - e.tile_id >= u64::from(e.run_length) {
                return Ok(None);
            }
            let at = self.header.data_offset.checked_add(e.offset).ok_or_else(|| PmtilesError::Damaged("a tile offset overflows".into()))?;
            return Ok(Some((at, e.length)));
        }
        Err(PmtilesError::Damaged(format!("leaf directories nest more than {MAX_DEPTH} deep (a loop?)")))
    }

    /// Tile z/x/y's bytes as stored (compressed as `header.tile_compression` says), or None.
    pub fn tile_raw(&self, z: u8, x: u32, y: u32) -> Result<Option<Vec<u8>>> {
        let Some(id) = tile_id(z, x, y) else { return Ok(None) };
        match self.find(id)? {
            Some((at, length)) => self.read(at, u64::from(length), MAX_TILE_BYTES).map(Some),
            None => Ok(None),
        }
    }

    /// Tile z/x/y's bytes, inflated.
    pub fn tile(&self, z: u8, x: u32, y: u32) -> Result<Option<Vec<u8>>> {
        match self.tile_raw(z, x, y)? {
            Some(raw) => decompress(&raw, self.header.tile_compression, MAX_TILE_BYTES).map(Some),
            None => Ok(None),
        }
    }
}
