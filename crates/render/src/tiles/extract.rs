//! Cutting a region out of a PMTiles archive that may be remote, as `pmtiles extract` does: only
//! the header, the directories that hold the region's tiles and those tiles are read, so a
//! country comes out of a 100 GB planet build with a few hundred requests. The work is a state
//! machine that asks for byte ranges and is fed them, so the reading (HTTP range requests or a
//! local file, asynchronous in the service) stays with the caller and everything about the
//! format stays here, testable without a network.
//!
//! ```text
//! let (mut ex, mut want) = Extract::new(&first_16k, region)?;
//! while !want.is_empty() { want = ex.feed(read_each(&want))?; }
//! ex.finish(out)?;
//! ```

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::pmtiles::{
    decompress, parse_directory, tile_id, Compression, Entry, Header, PmtilesError, Result, TileType, HEADER_BYTES, MAX_DEPTH, MAX_DIRECTORY_BYTES,
    MAX_TILE_BYTES,
};

/// What the caller reads first: the spec keeps the header and the root directory within the
/// first 16 KiB.
pub const HEAD_BYTES: u64 = 16_384;
/// Tiles at most this far apart (and no further than the useful bytes already in the range) are
/// read as one range: fewer requests for a few wasted bytes.
const GAP_BYTES: u64 = 256 << 10;
/// One range at most this long (a request's worth).
const MAX_RANGE_BYTES: u64 = 32 << 20;
/// Ranges asked for in one round at most, so the caller holds a bounded amount in memory.
const RANGES_PER_ROUND: usize = 16;
/// Tiles an extract may hold: a country to zoom 15 is a few million; more is a mistake.
const MAX_TILES: usize = 50_000_000;

/// The region: a box and the zooms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    /// West, south, east, north (degrees); west greater than east crosses the antimeridian.
    pub bbox: [f64; 4],
    pub min_zoom: u8,
    pub max_zoom: u8,
}

/// A byte range of the source archive to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub offset: u64,
    pub length: u64,
}

/// What an extract wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub tiles: u64,
    pub tile_contents: u64,
    pub bytes: u64,
    pub min_zoom: u8,
    pub max_zoom: u8,
    /// West, south, east, north.
    pub bounds: [f64; 4],
}

/// A leaf directory to read: its bytes, the tile ids its parent entry gives it (every entry in it
/// must lie in `start..end`), and its depth.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    range: Range,
    start: u64,
    end: u64,
    depth: usize,
}

/// Where the state machine is: what it asked for last, so it knows what it is fed.
enum Asked {
    /// The root directory and the metadata.
    RootAndMetadata,
    /// Leaf directories, as queued.
    Leaves(Vec<Leaf>),
    /// Tile data: each range and the source tiles (offset, length) inside it.
    Tiles(Vec<(Range, Vec<(u64, u32)>)>),
    Done,
}

pub struct Extract {
    header: Header,
    region: Region,
    /// Every tile id the region holds, sorted.
    wanted: Vec<u64>,
    metadata: Vec<u8>,
    /// Found tiles: id and its source bytes (offset in the tile data section, length).
    found: Vec<(u64, u64, u32)>,
    /// Leaf directories still to read.
    leaves: Vec<Leaf>,
    /// Offsets of every leaf directory queued: a tree names each once, and one named again is
    /// a loop or a fan of loops (64 names of one leaf, four deep, made a 215-byte archive read
    /// 270,000 leaves).
    leaves_seen: HashSet<u64>,
    /// Tile ranges still to read, in source order.
    ranges: Vec<(Range, Vec<(u64, u32)>)>,
    asked: Asked,
    /// Tile contents written so far, by source offset: (offset in `data`, length).
    written: HashMap<u64, (u64, u32)>,
    data: BufWriter<File>,
    data_path: PathBuf,
    data_len: u64,
    /// Bytes the caller was asked for.
    pub bytes_asked: u64,
}

/// The extract's header bounds (west, south, east, north) and center longitude: the box within
/// the source's where the two overlap, else the box as asked (a low zoom's tile can hold both
/// without their overlapping, and a clip would turn them inside out). The format has no way to
/// say a box crosses the antimeridian, and readers take west greater than east as an empty box
/// (this crate's own street maps drew nothing from such an archive), so a box across it is
/// written as every longitude between its latitudes, with its center where the box's is, near
/// 180.
fn header_bounds(bbox: [f64; 4], source: [f64; 4]) -> ([f64; 4], f64) {
    let [w, s, e, n] = bbox;
    let (s, n) = if s.max(source[1]) <= n.min(source[3]) { (s.max(source[1]), n.min(source[3])) } else { (s, n) };
    if w > e {
        let center = w + (e - w + 360.0) / 2.0;
        return ([-180.0, s, 180.0, n], if center > 180.0 { center - 360.0 } else { center });
    }
    // A source across the antimeridian (another tool's) is not clipped to.
    let (w, e) = if source[0] <= source[2] && w.max(source[0]) <= e.min(source[2]) { (w.max(source[0]), e.min(source[2])) } else { (w, e) };
    ([w, s, e, n], (w + e) / 2.0)
}

/// West-to-east tile columns of a box at zoom z (one or two runs across the antimeridian), and
/// its rows.
fn tile_span(bbox: [f64; 4], z: u8) -> (Vec<(u32, u32)>, (u32, u32)) {
    let n = 1u32 << z;
    let col = |lng: f64| (((lng + 180.0) / 360.0 * f64::from(n)).floor().max(0.0) as u32).min(n - 1);
    let row = |lat: f64| ((crate::camera::world(lat, 0.0).1 / 256.0 * f64::from(n)).floor().max(0.0) as u32).min(n - 1);
    let [w, s, e, nth] = bbox;
    let cols = if w <= e { vec![(col(w), col(e))] } else { vec![(col(w), n - 1), (0, col(e))] };
    (cols, (row(nth), row(s)))
}

impl Extract {
    /// Starts from the archive's first bytes (at least the header; [`HEAD_BYTES`] holds the root
    /// directory too). `data_path` is where tile contents are kept until `finish` (beside the
    /// output, so it is on the same disk). Returns what to read next.
    pub fn new(head: &[u8], region: Region, data_path: &Path) -> Result<(Extract, Vec<Range>)> {
        let header = Header::parse(head)?;
        let [w, s, e, n] = region.bbox;
        if !(-180.0..=180.0).contains(&w) || !(-180.0..=180.0).contains(&e) || !(-90.0..=90.0).contains(&s) || !(-90.0..=90.0).contains(&n) || s > n {
            return Err(PmtilesError::Unsupported(format!("the box {w},{s},{e},{n} is not west,south,east,north in degrees")));
        }
        if region.min_zoom > region.max_zoom {
            return Err(PmtilesError::Unsupported(format!("zooms {}..{}", region.min_zoom, region.max_zoom)));
        }
        let region = Region { min_zoom: region.min_zoom.max(header.min_zoom), max_zoom: region.max_zoom.min(header.max_zoom), ..region };
        let mut wanted = Vec::new();
        for z in region.min_zoom..=region.max_zoom {
            let (cols, (y0, y1)) = tile_span(region.bbox, z);
            for (x0, x1) in cols {
                let count = (u64::from(x1 - x0) + 1) * (u64::from(y1 - y0) + 1);
                if wanted.len() as u64 + count > MAX_TILES as u64 {
                    return Err(PmtilesError::Unsupported(format!("more than {MAX_TILES} tiles: a smaller box or a lower --maxzoom")));
                }
                for x in x0..=x1 {
                    for y in y0..=y1 {
                        wanted.extend(tile_id(z, x, y));
                    }
                }
            }
        }
        wanted.sort_unstable();
        wanted.dedup();
        let io = |e: std::io::Error| PmtilesError::Io { path: data_path.display().to_string(), message: e.to_string() };
        let data = BufWriter::new(File::create(data_path).map_err(io)?);
        let mut ex = Extract {
            header,
            region,
            wanted,
            metadata: Vec::new(),
            found: Vec::new(),
            leaves: Vec::new(),
            leaves_seen: HashSet::new(),
            ranges: Vec::new(),
            asked: Asked::RootAndMetadata,
            written: HashMap::new(),
            data,
            data_path: data_path.to_path_buf(),
            data_len: 0,
            bytes_asked: head.len() as u64,
        };
        let h = &ex.header;
        let root = Range { offset: h.root_offset, length: h.root_length };
        let meta = Range { offset: h.metadata_offset, length: h.metadata_length };
        for r in [root, meta] {
            if r.length > MAX_DIRECTORY_BYTES {
                return Err(PmtilesError::Damaged(format!("{} bytes at {}: more than a directory or metadata may be", r.length, r.offset)));
            }
        }
        // Both inside the first bytes (the usual case): nothing to ask for yet.
        let inside = |r: Range| r.offset.checked_add(r.length).is_some_and(|end| end <= head.len() as u64);
        if inside(root) && inside(meta) {
            let slice = |r: Range| head[r.offset as usize..(r.offset + r.length) as usize].to_vec();
            let (a, b) = (slice(root), slice(meta));
            let next = ex.feed(vec![a, b])?;
            return Ok((ex, next));
        }
        ex.bytes_asked += root.length + meta.length;
        Ok((ex, vec![root, meta]))
    }

    /// The bytes of the ranges last asked for, in the same order; returns what to read next
    /// (nothing when it is time to `finish`).
    pub fn feed(&mut self, chunks: Vec<Vec<u8>>) -> Result<Vec<Range>> {
        match std::mem::replace(&mut self.asked, Asked::Done) {
            Asked::RootAndMetadata => {
                let [root, meta]: [Vec<u8>; 2] = chunks.try_into().map_err(|_| PmtilesError::Damaged("fed the wrong number of ranges".into()))?;
                self.metadata = decompress(&meta, self.header.internal_compression, MAX_DIRECTORY_BYTES)?;
                let entries = parse_directory(&decompress(&root, self.header.internal_compression, MAX_DIRECTORY_BYTES)?)?;
                self.walk(&entries, u64::MAX, 0)?;
            }
            Asked::Leaves(asked) => {
                if chunks.len() != asked.len() {
                    return Err(PmtilesError::Damaged("fed the wrong number of ranges".into()));
                }
                for (leaf, bytes) in asked.into_iter().zip(chunks) {
                    check_len(leaf.range, &bytes)?;
                    let entries = parse_directory(&decompress(&bytes, self.header.internal_compression, MAX_DIRECTORY_BYTES)?)?;
                    if entries.first().is_some_and(|e| e.tile_id < leaf.start) || entries.last().is_some_and(|e| e.tile_id >= leaf.end) {
                        return Err(PmtilesError::Damaged(format!(
                            "the leaf directory at byte {} holds tile ids outside the span {}..{} its parent gives it",
                            leaf.range.offset, leaf.start, leaf.end
                        )));
                    }
                    self.walk(&entries, leaf.end, leaf.depth)?;
                }
            }
            Asked::Tiles(asked) => {
                if chunks.len() != asked.len() {
                    return Err(PmtilesError::Damaged("fed the wrong number of ranges".into()));
                }
                for ((range, tiles), bytes) in asked.into_iter().zip(chunks) {
                    check_len(range, &bytes)?;
                    for (offset, length) in tiles {
                        let at = (self.header.data_offset + offset - range.offset) as usize;
                        let body = &bytes[at..at + length as usize];
                        self.data.write_all(body).map_err(|e| PmtilesError::Io { path: self.data_path.display().to_string(), message: e.to_string() })?;
                        self.written.insert(offset, (self.data_len, length));
                        self.data_len += u64::from(length);
                    }
                }
            }
            Asked::Done => return Err(PmtilesError::Damaged("fed after the extract was done".into())),
        }
        Ok(self.next_round())
    }

    /// Sorts a directory's entries: leaves whose id span holds a wanted tile are queued, tile
    /// entries give the wanted ids in their run. `end` is where the directory's last entry's
    /// span ends (the parent's next entry). A leaf's entries were checked to lie in the span
    /// its parent gives it, so the spans never overlap and no tile is found twice.
    fn walk(&mut self, entries: &[Entry], end: u64, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(PmtilesError::Damaged(format!("leaf directories nest more than {MAX_DEPTH} deep (a loop?)")));
        }
        for (i, e) in entries.iter().enumerate() {
            let next = entries.get(i + 1).map_or(end, |n| n.tile_id);
            // A run that reaches past the next entry is cut there, so no id is found twice.
            let span_end = if e.run_length == 0 { next } else { e.tile_id.saturating_add(u64::from(e.run_length)).min(next) };
            let lo = self.wanted.partition_point(|&id| id < e.tile_id);
            let hi = self.wanted.partition_point(|&id| id < span_end);
            if lo == hi {
                continue;
            }
            if e.run_length == 0 {
                let offset = self.header.leaf_offset.checked_add(e.offset).ok_or_else(|| PmtilesError::Damaged("a leaf offset overflows".into()))?;
                if u64::from(e.length) > MAX_DIRECTORY_BYTES {
                    return Err(PmtilesError::Damaged(format!("a leaf directory of {} bytes", e.length)));
                }
                if !self.leaves_seen.insert(offset) {
                    return Err(PmtilesError::Damaged(format!("the leaf directory at byte {offset} is named twice (a loop?)")));
                }
                self.leaves.push(Leaf { range: Range { offset, length: u64::from(e.length) }, start: e.tile_id, end: next, depth: depth + 1 });
            } else {
                if u64::from(e.length) > MAX_TILE_BYTES {
                    continue;
                }
                for &id in &self.wanted[lo..hi] {
                    self.found.push((id, e.offset, e.length));
                }
            }
        }
        Ok(())
    }

    fn next_round(&mut self) -> Vec<Range> {
        if !self.leaves.is_empty() {
            let take: Vec<_> = self.leaves.drain(..self.leaves.len().min(RANGES_PER_ROUND * 4)).collect();
            let out = take.iter().map(|l| l.range).collect::<Vec<_>>();
            self.bytes_asked += out.iter().map(|r| r.length).sum::<u64>();
            self.asked = Asked::Leaves(take);
            return out;
        }
        if self.ranges.is_empty() && !self.found.is_empty() && self.written.is_empty() {
            self.plan_tiles();
        }
        if self.ranges.is_empty() {
            self.asked = Asked::Done;
            return Vec::new();
        }
        let take: Vec<_> = self.ranges.drain(..self.ranges.len().min(RANGES_PER_ROUND)).collect();
        let out: Vec<Range> = take.iter().map(|(r, _)| *r).collect();
        self.bytes_asked += out.iter().map(|r| r.length).sum::<u64>();
        self.asked = Asked::Tiles(take);
        out
    }

    /// The distinct tile contents the found tiles need, in source order, joined into ranges.
    fn plan_tiles(&mut self) {
        let mut contents: Vec<(u64, u32)> = self.found.iter().map(|&(_, o, l)| (o, l)).collect();
        contents.sort_unstable();
        contents.dedup();
        let mut ranges: Vec<(Range, Vec<(u64, u32)>)> = Vec::new();
        for (offset, length) in contents {
            let end = offset + u64::from(length);
            match ranges.last_mut() {
                // Joined when the bytes skipped are few: under GAP_BYTES and under what the
                // range already holds of use (at most half a read wasted).
                Some((r, tiles))
                    if offset.saturating_sub(r.offset + r.length) <= GAP_BYTES.min(tiles.iter().map(|t| u64::from(t.1)).sum())
                        && end - r.offset <= MAX_RANGE_BYTES =>
                {
                    r.length = r.length.max(end - r.offset);
                    tiles.push((offset, length));
                }
                _ => ranges.push((Range { offset, length: u64::from(length) }, vec![(offset, length)])),
            }
        }
        for (r, _) in &mut ranges {
            r.offset += self.header.data_offset;
        }
        // Ranges hold data-section offsets relative to the file from here on; tiles keep
        // theirs relative to the section.
        self.ranges = ranges;
    }

    /// Writes the extract: header, root directory, metadata, leaf directories, tile data.
    pub fn finish(mut self, out: &Path) -> Result<Summary> {
        if !matches!(self.asked, Asked::Done) {
            return Err(PmtilesError::Damaged("finish before every range was fed".into()));
        }
        let io = |p: &Path| {
            let p = p.display().to_string();
            move |e: std::io::Error| PmtilesError::Io { path: p.clone(), message: e.to_string() }
        };
        self.data.flush().map_err(io(&self.data_path))?;
        self.found.sort_unstable();
        self.found.dedup_by_key(|t| t.0);
        if self.found.is_empty() {
            let _ = std::fs::remove_file(&self.data_path);
            return Err(PmtilesError::Unsupported("the archive has no tile in that box at those zooms".into()));
        }
        // Entries: consecutive ids with the same contents make one run.
        let mut entries: Vec<Entry> = Vec::new();
        for &(id, source, _) in &self.found {
            let &(offset, length) = self.written.get(&source).ok_or_else(|| PmtilesError::Damaged(format!("tile {id}'s contents were never fed")))?;
            match entries.last_mut() {
                Some(e) if e.offset == offset && e.tile_id + u64::from(e.run_length) == id && e.run_length < u32::MAX => e.run_length += 1,
                _ => entries.push(Entry { tile_id: id, offset, length, run_length: 1 }),
            }
        }
        let (root, leaves) = directories(&entries)?;
        let metadata = gzip(&self.metadata)?;
        let zooms: Vec<u8> = self.found.iter().filter_map(|&(id, _, _)| zoom_of(id)).collect();
        let (min_zoom, max_zoom) = (*zooms.iter().min().unwrap_or(&0), *zooms.iter().max().unwrap_or(&0));
        let (bounds, center_lng) = header_bounds(self.region.bbox, self.header.bounds);
        let root_offset = HEADER_BYTES as u64;
        let metadata_offset = root_offset + root.len() as u64;
        let leaf_offset = metadata_offset + metadata.len() as u64;
        let data_offset = leaf_offset + leaves.len() as u64;
        let h = Header {
            root_offset,
            root_length: root.len() as u64,
            metadata_offset,
            metadata_length: metadata.len() as u64,
            leaf_offset,
            leaf_length: leaves.len() as u64,
            data_offset,
            data_length: self.data_len,
            addressed_tiles: self.found.len() as u64,
            tile_entries: entries.len() as u64,
            tile_contents: self.written.len() as u64,
            clustered: true,
            internal_compression: Compression::Gzip,
            tile_compression: self.header.tile_compression,
            tile_type: self.header.tile_type,
            min_zoom,
            max_zoom,
            bounds,
            center_zoom: self.header.center_zoom.clamp(min_zoom, max_zoom),
            center: [center_lng, (bounds[1] + bounds[3]) / 2.0],
        };
        let tmp = out.with_extension("pmtiles.part");
        {
            let mut f = BufWriter::new(File::create(&tmp).map_err(io(&tmp))?);
            f.write_all(&h.to_bytes()).map_err(io(&tmp))?;
            for part in [&root, &metadata, &leaves] {
                f.write_all(part).map_err(io(&tmp))?;
            }
            let mut data = File::open(&self.data_path).map_err(io(&self.data_path))?;
            data.seek(SeekFrom::Start(0)).map_err(io(&self.data_path))?;
            std::io::copy(&mut (&mut data).take(self.data_len), &mut f).map_err(io(&tmp))?;
            f.flush().map_err(io(&tmp))?;
            f.get_ref().sync_all().map_err(io(&tmp))?;
        }
        std::fs::rename(&tmp, out).map_err(io(out))?;
        let _ = std::fs::remove_file(&self.data_path);
        Ok(Summary { tiles: self.found.len() as u64, tile_contents: self.written.len() as u64, bytes: data_offset + self.data_len, min_zoom, max_zoom, bounds })
    }
}

fn check_len(range: Range, bytes: &[u8]) -> Result<()> {
    if bytes.len() as u64 != range.length {
        return Err(PmtilesError::Damaged(format!("asked for {} bytes at {}, got {}", range.length, range.offset, bytes.len())));
    }
    Ok(())
}

/// The zoom of a tile id (the inverse of the count of tiles below each zoom).
fn zoom_of(id: u64) -> Option<u8> {
    let mut below = 0u64;
    for z in 0..=super::pmtiles::MAX_ZOOM {
        let here = 1u64 << (2 * u32::from(z));
        if id < below + here {
            return Some(z);
        }
        below += here;
    }
    None
}

fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).and_then(|_| e.finish()).map_err(|e| PmtilesError::Damaged(format!("gzip: {e}")))
}

/// A directory's bytes, as the spec lays them out (before compression).
pub fn serialize_directory(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let put = |out: &mut Vec<u8>, mut v: u64| loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    };
    put(&mut out, entries.len() as u64);
    let mut last = 0;
    for e in entries {
        put(&mut out, e.tile_id - last);
        last = e.tile_id;
    }
    for e in entries {
        put(&mut out, u64::from(e.run_length));
    }
    for e in entries {
        put(&mut out, u64::from(e.length));
    }
    for (i, e) in entries.iter().enumerate() {
        let contiguous = i > 0 && e.offset == entries[i - 1].offset + u64::from(entries[i - 1].length);
        put(&mut out, if contiguous { 0 } else { e.offset + 1 });
    }
    out
}

/// The root directory and the leaf directories' bytes (gzip): all entries in the root when it
/// fits the spec's 16 KiB with the header, else leaves of as many entries as keep the root
/// small enough.
fn directories(entries: &[Entry]) -> Result<(Vec<u8>, Vec<u8>)> {
    let root = gzip(&serialize_directory(entries))?;
    if root.len() + HEADER_BYTES <= HEAD_BYTES as usize {
        return Ok((root, Vec::new()));
    }
    let mut per_leaf = 4096;
    loop {
        let mut leaves = Vec::new();
        let mut index = Vec::new();
        for chunk in entries.chunks(per_leaf) {
            let leaf = gzip(&serialize_directory(chunk))?;
            index.push(Entry { tile_id: chunk[0].tile_id, offset: leaves.len() as u64, length: leaf.len() as u32, run_length: 0 });
            leaves.extend(leaf);
        }
        let root = gzip(&serialize_directory(&index))?;
        if root.len() + HEADER_BYTES <= HEAD_BYTES as usize {
            return Ok((root, leaves));
        }
        per_leaf *= 2;
    }
}

impl Header {
    /// The 127 bytes of this header.
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[..7].copy_from_slice(b"PMTiles");
        b[7] = 3;
        let fields = [
            self.root_offset,
            self.root_length,
            self.metadata_offset,
            self.metadata_length,
            self.leaf_offset,
            self.leaf_length,
            self.data_offset,
            self.data_length,
            self.addressed_tiles,
            self.tile_entries,
            self.tile_contents,
        ];
        for (i, v) in fields.iter().enumerate() {
            b[8 + i * 8..16 + i * 8].copy_from_slice(&v.to_le_bytes());
        }
        b[96] = u8::from(self.clustered);
        b[97] = self.internal_compression.to_byte();
        b[98] = self.tile_compression.to_byte();
        b[99] = self.tile_type.to_byte();
        b[100] = self.min_zoom;
        b[101] = self.max_zoom;
        let deg = |v: f64| ((v * 1e7).round() as i32).to_le_bytes();
        for (i, v) in self.bounds.iter().enumerate() {
            b[102 + i * 4..106 + i * 4].copy_from_slice(&deg(*v));
        }
        b[118] = self.center_zoom;
        b[119..123].copy_from_slice(&deg(self.center[0]));
        b[123..127].copy_from_slice(&deg(self.center[1]));
        b
    }
}

impl Compression {
    pub fn to_byte(self) -> u8 {
        match self {
            Compression::Unknown => 0,
            Compression::None => 1,
            Compression::Gzip => 2,
            Compression::Brotli => 3,
            Compression::Zstd => 4,
        }
    }
}

impl TileType {
    pub fn to_byte(self) -> u8 {
        match self {
            TileType::Unknown => 0,
            TileType::Mvt => 1,
            TileType::Png => 2,
            TileType::Jpeg => 3,
            TileType::Webp => 4,
            TileType::Avif => 5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::header_bounds;

    #[test]
    fn header_bounds_are_the_box_within_the_source_and_a_box_across_the_antimeridian_is_every_longitude() {
        let world = [-180.0, -85.0, 180.0, 85.0];
        assert_eq!(header_bounds([5.9, 45.8, 10.5, 47.8], world), ([5.9, 45.8, 10.5, 47.8], 8.2));
        assert_eq!(header_bounds([5.0, 40.0, 12.0, 50.0], [7.0, 43.0, 8.0, 44.0]), ([7.0, 43.0, 8.0, 44.0], 7.5));
        // Across the antimeridian: 170 E to 170 W is centred on 180, 175 E to 165 W on 175 W,
        // and 100 W east round the world to 179 W on 40.5 E.
        assert_eq!(header_bounds([170.0, -20.0, -170.0, -10.0], world), ([-180.0, -20.0, 180.0, -10.0], 180.0));
        assert_eq!(header_bounds([175.0, -20.0, -165.0, -10.0], world).1, -175.0);
        assert_eq!(header_bounds([-100.0, -20.0, -179.0, -10.0], world).1, 40.5);
        // A source across the antimeridian is not clipped to; nor is one the box misses (its
        // tile at a low zoom holds both), in longitude or in latitude.
        assert_eq!(header_bounds([7.0, 43.0, 8.0, 44.0], [170.0, -85.0, 9.0, 85.0]).0, [7.0, 43.0, 8.0, 44.0]);
        assert_eq!(header_bounds([10.0, 0.0, 29.9, 1.0], [30.0, 10.0, 40.0, 20.0]).0, [10.0, 0.0, 29.9, 1.0]);
    }
}
