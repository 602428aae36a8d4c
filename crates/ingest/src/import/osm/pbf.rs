//! `.osm.pbf`, the file OpenStreetMap extracts are published as, read with the `osmpbf` crate.
//!
//! A PBF holds nodes, then ways (lists of node ids), then relations (lists of members), so a
//! building's position needs its nodes, which come before the way that names them. Three
//! passes, each decoding a group of blocks at a time in parallel and handing what it found to
//! the next step in file order. Every writer we know of (osmium, osmosis, osmx; the planet and
//! Geofabrik's extracts) sorts by type then id, one type to a block, so each pass reads only its
//! own blocks: the blocks' offsets come from their headers alone, the first way block and the
//! first relation block are found by binary search, and every block a pass decodes is checked
//! to be of its type; a file that is not sorted that way is read by three passes over every
//! block instead (or, when that shows only once point places have gone out, refused with the
//! command that sorts it). A country extract is nine parts nodes, so the passes for relations
//! and ways cost little and every block is decoded about once.
//! 1. relations: place-tagged multipolygons and the ids of their outer ways;
//! 2. ways: place-tagged ways (already as rows, waiting for a position) and those outer ways,
//!    with their node ids;
//! 3. nodes: place-tagged nodes become rows and go to the sink at once; the nodes the ways
//!    name give the ways and relations their positions, which go out last.
//!
//! Memory grows with the tagged areas and the nodes they name, not with the extract nor with
//! its point places.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use osmpbf::{BlobDecode, BlobReader, BlobType, ByteOffset, Element, PrimitiveBlock, RelMemberType};
use rayon::prelude::*;

use super::{classify, duplicate, place_row, Batcher, Kind, Seen};
use crate::error::{IngestError, Result};
use crate::import::geometry::{self, Lonlat};
use crate::source_row::{Skip, Skipped};
use crate::{ImportReport, SourceRow};

type TagMap = serde_json::Map<String, serde_json::Value>;

fn tag_map<'a>(tags: impl Iterator<Item = (&'a str, &'a str)>) -> TagMap {
    tags.map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string()))).collect()
}

/// What a pass keeps of one object. Every record a pass counts ends as one of these.
enum Found {
    Relation { id: i64, tags: TagMap, outer: Vec<i64> },
    Way { id: i64, tags: Option<TagMap>, refs: Vec<i64> },
    Node { id: i64, tags: TagMap, pos: Lonlat },
    Location { id: i64, pos: Lonlat },
    Skipped(Skip),
}

/// Blocks decoded at once: enough for both cores, few enough that what they hold is small.
const GROUP: usize = 64;

fn unreadable(name: &str, e: impl std::fmt::Display) -> IngestError {
    IngestError::file(name, format!("not a readable .osm.pbf: {e}"))
}

/// A block that would not decode, named: osmpbf reads raw and zlib blocks only, and calls one
/// compressed any other way (the format allows lz4, zstd, lzma; osmium writes lz4 when asked)
/// "empty", which sends an operator looking for a download cut short.
fn undecodable(file: &Path, name: &str, offset: Option<ByteOffset>, e: osmpbf::Error) -> IngestError {
    other_compression(file, name, offset, &e).unwrap_or_else(|| unreadable(name, e))
}

/// The error for a block compressed in a way osmpbf does not read, when that is what `e` is.
fn other_compression(file: &Path, name: &str, offset: Option<ByteOffset>, e: &osmpbf::Error) -> Option<IngestError> {
    if !matches!(e.kind(), osmpbf::ErrorKind::Blob(osmpbf::BlobError::Empty)) {
        return None;
    }
    let at = offset?.0;
    let c = compression(file, at)?;
    Some(unreadable(
        name,
        format!("its block at byte {at} is compressed with {c}, which this reader does not read: write it again with zlib (`osmium cat IN.osm.pbf -o OUT.osm.pbf`) and import that"),
    ))
}

/// The compression a block's Blob names, read from its fields (fileformat.proto: 4 lzma,
/// 5 bzip2, 6 lz4, 7 zstd); None for raw, zlib or what cannot be read.
fn compression(file: &Path, at: u64) -> Option<&'static str> {
    use std::io::{Read, Seek, SeekFrom};
    fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let c = *b.get(*i)?;
            *i += 1;
            v |= u64::from(c & 0x7f) << shift;
            if c < 0x80 {
                return Some(v);
            }
        }
        None
    }
    // The first field of each message: a Blob holds one payload field (and raw_size).
    fn fields(b: &[u8]) -> Option<Vec<(u64, u64)>> {
        let (mut i, mut out) = (0, Vec::new());
        while i < b.len() {
            let tag = varint(b, &mut i)?;
            let v = match tag & 7 {
                0 => varint(b, &mut i)?,
                2 => {
                    let n = varint(b, &mut i)?;
                    i = i.checked_add(usize::try_from(n).ok()?)?;
                    n
                }
                _ => return None,
            };
            out.push((tag >> 3, v));
        }
        (i == b.len()).then_some(out)
    }
    let mut f = File::open(file).ok()?;
    f.seek(SeekFrom::Start(at)).ok()?;
    let mut len = [0u8; 4];
    f.read_exact(&mut len).ok()?;
    let mut header = vec![0u8; usize::try_from(u32::from_be_bytes(len)).ok()?.min(64 * 1024)];
    f.read_exact(&mut header).ok()?;
    let size = fields(&header)?.into_iter().find(|&(field, _)| field == 3)?.1;
    let mut blob = vec![0u8; usize::try_from(size).ok()?.min(64 << 20)];
    f.read_exact(&mut blob).ok()?;
    fields(&blob)?.into_iter().find_map(|(field, _)| match field {
        4 => Some("lzma"),
        5 => Some("bzip2"),
        6 => Some("lz4"),
        7 => Some("zstd"),
        _ => None,
    })
}

/// Element types, as bits of a block's contents.
const NODES: u8 = 1;
const WAYS: u8 = 2;
const RELATIONS: u8 = 4;

fn kinds(block: &PrimitiveBlock) -> u8 {
    block.groups().fold(0, |k, g| {
        k | if g.dense_nodes().next().is_some() || g.nodes().next().is_some() { NODES } else { 0 }
            | if g.ways().next().is_some() { WAYS } else { 0 }
            | if g.relations().next().is_some() { RELATIONS } else { 0 }
    })
}

/// Which blocks a pass reads: every block in file order, or (a file sorted by type) the data
/// blocks at these offsets, each checked to hold only `kind`.
enum Blocks<'a> {
    All,
    Sorted { reader: &'a mut BlobReader<BufReader<File>>, offsets: &'a [ByteOffset], kind: u8 },
}

/// A sorted pass met a block of another type: the file is not sorted by type.
struct Unsorted;

/// One pass: `pick` maps each element to what it keeps (in parallel, a group of blocks at a
/// time); `take` receives the finds in file order. A sorted pass checks a group's blocks before
/// any of its finds are taken.
fn pass(
    file: &Path,
    name: &str,
    blocks: Blocks,
    pick: impl for<'a> Fn(Element<'a>) -> Option<Found> + Sync + Send,
    mut take: impl FnMut(Found),
) -> Result<std::result::Result<(), Unsorted>> {
    let decode = |blob: &osmpbf::Blob, kind: Option<u8>| -> Result<std::result::Result<Vec<Found>, Unsorted>> {
        match blob.decode() {
            Ok(BlobDecode::OsmData(block)) => {
                if kind.is_some_and(|k| kinds(&block) & !k != 0) {
                    return Ok(Err(Unsorted));
                }
                Ok(Ok(block.elements().filter_map(&pick).collect()))
            }
            Ok(_) => Ok(Ok(Vec::new())),
            Err(e) => Err(undecodable(file, name, blob.offset(), e)),
        }
    };
    match blocks {
        Blocks::All => {
            let mut blobs = BlobReader::from_path(file).map_err(|e| unreadable(name, e))?;
            loop {
                let group = blobs.by_ref().take(GROUP).collect::<std::result::Result<Vec<_>, _>>().map_err(|e| unreadable(name, e))?;
                if group.is_empty() {
                    return Ok(Ok(()));
                }
                let found = group.par_iter().map(|b| decode(b, None)).collect::<Result<Vec<_>>>()?;
                found.into_iter().flat_map(|f| f.unwrap_or_default()).for_each(&mut take);
            }
        }
        Blocks::Sorted { reader, offsets, kind } => {
            for chunk in offsets.chunks(GROUP) {
                let group = chunk.iter().map(|&o| reader.blob_from_offset(o)).collect::<std::result::Result<Vec<_>, _>>().map_err(|e| unreadable(name, e))?;
                let found = group.par_iter().map(|b| decode(b, Some(kind))).collect::<Result<Vec<_>>>()?;
                let Ok(found) = found.into_iter().collect::<std::result::Result<Vec<_>, Unsorted>>() else { return Ok(Err(Unsorted)) };
                found.into_iter().flatten().for_each(&mut take);
            }
            Ok(Ok(()))
        }
    }
}

/// A file sorted by type: its data blocks' offsets (from the headers, nothing decompressed) and
/// where its way blocks and relation blocks begin, found by binary search. Whether it really is
/// sorted shows as the passes read their blocks.
struct Layout {
    reader: BlobReader<BufReader<File>>,
    offsets: Vec<ByteOffset>,
    first_way: usize,
    first_relation: usize,
}

fn layout(file: &Path, name: &str) -> Result<Layout> {
    let mut reader = BlobReader::seekable_from_path(file).map_err(|e| unreadable(name, e))?;
    let mut offsets = Vec::new();
    let mut header_block = None;
    // Where the last block read ends: skipping a block seeks past it, which succeeds beyond
    // the file's end, and the reader takes 1-3 bytes of a next block's length for a clean end.
    let mut end = 0u64;
    while let Some(h) = reader.next_header_skip_blob() {
        let (header, offset) = h.map_err(|e| unreadable(name, e))?;
        let offset = offset.ok_or_else(|| unreadable(name, "a block without an offset"))?;
        match header.blob_type() {
            BlobType::OsmData => offsets.push(offset),
            BlobType::OsmHeader if header_block.is_none() => header_block = Some(offset),
            _ => {}
        }
        end = reader.seek_raw(std::io::SeekFrom::Current(0)).map_err(|e| unreadable(name, e))?;
    }
    check_whole(file, name, end, header_block.is_some())?;
    // The header block is decoded, so damage there is named as anywhere else (the passes decode
    // only the data blocks).
    if let Some(at) = header_block {
        let blob = reader.blob_from_offset(at).map_err(|e| unreadable(name, format!("its OSMHeader block: {e}")))?;
        // osmium compresses the header as it does the data: lz4 shows here first.
        let header = blob
            .to_headerblock()
            .map_err(|e| other_compression(file, name, Some(at), &e).unwrap_or_else(|| unreadable(name, format!("its OSMHeader block: {e}"))))?;
        required_features(name, header.required_features())?;
    }
    // The highest type in each probed block, decoded once however often the searches ask.
    let mut probed: HashMap<usize, u8> = HashMap::new();
    let mut highest = |reader: &mut BlobReader<BufReader<File>>, i: usize| -> Result<u8> {
        if let Some(&k) = probed.get(&i) {
            return Ok(k);
        }
        let blob = reader.blob_from_offset(offsets[i]).map_err(|e| unreadable(name, e))?;
        let k = match blob.decode().map_err(|e| undecodable(file, name, Some(offsets[i]), e))? {
            BlobDecode::OsmData(block) => kinds(&block),
            _ => 0,
        };
        // Only the highest bit: what a block holds at most.
        let k = if k >= RELATIONS {
            RELATIONS
        } else if k >= WAYS {
            WAYS
        } else {
            k
        };
        probed.insert(i, k);
        Ok(k)
    };
    let mut first_at_least = |reader: &mut BlobReader<BufReader<File>>, kind: u8| -> Result<usize> {
        let (mut lo, mut hi) = (0, offsets.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if highest(reader, mid)? >= kind {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo)
    };
    let first_relation = first_at_least(&mut reader, RELATIONS)?;
    let first_way = first_at_least(&mut reader, WAYS)?.min(first_relation);
    Ok(Layout { reader, offsets, first_way, first_relation })
}

/// The features a file's header says a reader must understand (the format's own rule: a reader
/// that does not know one must not read the file). A history file (`HistoricalInformation`,
/// what `.osh.pbf` downloads are) holds every version of each object, deleted ones included:
/// read as an extract it would give each store many times and shops long gone.
fn required_features(name: &str, features: &[String]) -> Result<()> {
    const UNDERSTOOD: [&str; 2] = ["OsmSchema-V0.6", "DenseNodes"];
    if features.iter().any(|f| f == "HistoricalInformation") {
        return Err(unreadable(name, "it is a history file (HistoricalInformation: every version of every object, deleted ones too): import a current extract, or `osmium time-filter` it to one date first"));
    }
    let unknown: Vec<&str> = features.iter().map(String::as_str).filter(|f| !UNDERSTOOD.contains(f)).collect();
    if !unknown.is_empty() {
        return Err(unreadable(
            name,
            format!(
                "its header requires features this reader does not know ({}); the PBF format says such a file must not be read without them",
                unknown.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The blocks' lengths add up to the file's: a download cut short, inside a block or inside the
/// 4-byte length of the next one, is refused rather than read as a smaller extract.
fn check_whole(file: &Path, name: &str, end: u64, has_header: bool) -> Result<()> {
    let len = std::fs::metadata(file).map_err(|e| IngestError::io(name, e))?.len();
    if !has_header {
        return Err(unreadable(name, "it has no OSMHeader block (cut short?)"));
    }
    if end > len {
        return Err(unreadable(name, format!("cut short: its last block ends at byte {end}, past the file's {len} bytes")));
    }
    if end < len {
        return Err(unreadable(name, format!("{} bytes after its last block at byte {end} are not a whole block (cut short, or damaged)", len - end)));
    }
    Ok(())
}

pub(super) fn read(file: &Path, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) -> Result<()> {
    let before = report.clone();
    let mut layout = layout(file, name)?;
    match read_passes(file, name, Some(&mut layout), report, seen, out)? {
        Ok(()) => Ok(()),
        Err(Unsorted) => {
            // Found by the relation or way pass, before any row went out: read it the slow way.
            *report = before;
            read_passes(file, name, None, report, seen, out)?.map_err(|_| unreachable!("every block is read"))
        }
    }
}

/// The blocks a pass of `kind` reads.
fn blocks<'a>(sorted: &'a mut Option<&mut Layout>, kind: u8) -> Blocks<'a> {
    match sorted.as_deref_mut() {
        None => Blocks::All,
        Some(l) => {
            let range = match kind {
                RELATIONS => l.first_relation..l.offsets.len(),
                WAYS => l.first_way..l.first_relation,
                _ => 0..l.first_way,
            };
            Blocks::Sorted { reader: &mut l.reader, offsets: &l.offsets[range], kind }
        }
    }
}

/// The three passes, over the blocks of their type when `sorted` is given, else over every block.
fn read_passes(
    file: &Path,
    name: &str,
    mut sorted: Option<&mut Layout>,
    report: &mut ImportReport,
    seen: &mut Seen,
    out: &mut Batcher,
) -> Result<std::result::Result<(), Unsorted>> {
    // Pass 1: relations.
    let mut relations = Vec::new();
    if let Err(u) = pass(
        file,
        name,
        blocks(&mut sorted, RELATIONS),
        |e| match e {
            Element::Relation(r) => match classify(r.tags()) {
                Kind::Ignore => None,
                Kind::NotStorefront => Some(Found::Skipped(Skip::NotStorefront)),
                Kind::Place if r.tags().any(|(k, v)| k == "type" && v == "multipolygon") => Some(Found::Relation {
                    id: r.id(),
                    tags: tag_map(r.tags().filter(|(k, _)| *k != "type")),
                    outer: r
                        .members()
                        .filter(|m| m.member_type == RelMemberType::Way && matches!(m.role(), Ok("outer") | Ok("")))
                        .map(|m| m.member_id)
                        .collect(),
                }),
                // A place-tagged relation that is not an area (a route, a site): no position.
                Kind::Place => Some(Found::Skipped(Skip::BadGeometry)),
            },
            _ => None,
        },
        |f| match f {
            Found::Relation { id, tags, outer } => relations.push((id, tags, outer)),
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 1 keeps relations"),
        },
    )? {
        return Ok(Err(u));
    }
    let outer_ways: HashSet<i64> = relations.iter().flat_map(|(_, _, o)| o.iter().copied()).collect();

    // Pass 2: ways. A place way's row is made now (its tags dropped), its position later.
    let mut place_ways: Vec<(i64, std::result::Result<SourceRow, Skipped>, Vec<i64>)> = Vec::new();
    let mut member_ways: HashMap<i64, Vec<i64>> = HashMap::new();
    if let Err(u) = pass(
        file,
        name,
        blocks(&mut sorted, WAYS),
        |e| match e {
            Element::Way(w) => match classify(w.tags()) {
                Kind::Place => Some(Found::Way { id: w.id(), tags: Some(tag_map(w.tags())), refs: w.refs().collect() }),
                _ if outer_ways.contains(&w.id()) => Some(Found::Way { id: w.id(), tags: None, refs: w.refs().collect() }),
                Kind::NotStorefront => Some(Found::Skipped(Skip::NotStorefront)),
                Kind::Ignore => None,
            },
            _ => None,
        },
        |f| match f {
            Found::Way { id, tags, refs } => {
                if outer_ways.contains(&id) {
                    member_ways.insert(id, refs.clone());
                }
                if let Some(tags) = tags {
                    place_ways.push((id, place_row('w', id, tags, (0.0, 0.0)), refs));
                }
            }
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 2 keeps ways"),
        },
    )? {
        return Ok(Err(u));
    }
    let needed: HashSet<i64> = place_ways.iter().flat_map(|(_, _, r)| r.iter().copied()).chain(member_ways.values().flatten().copied()).collect();

    // Pass 3: nodes. Place nodes go out as they come.
    let mut located: HashMap<i64, Lonlat> = HashMap::with_capacity(needed.len());
    let node = |id: i64, lng: f64, lat: f64, kind: Kind, tags: &dyn Fn() -> TagMap| -> Option<Found> {
        match kind {
            Kind::Place => Some(Found::Node { id, tags: tags(), pos: (lng, lat) }),
            _ if needed.contains(&id) => Some(Found::Location { id, pos: (lng, lat) }),
            Kind::NotStorefront => Some(Found::Skipped(Skip::NotStorefront)),
            Kind::Ignore => None,
        }
    };
    let mut emitted = false;
    let nodes = pass(
        file,
        name,
        blocks(&mut sorted, NODES),
        |e| match e {
            Element::DenseNode(n) => node(n.id(), n.lon(), n.lat(), classify(n.tags()), &|| tag_map(n.tags())),
            Element::Node(n) => node(n.id(), n.lon(), n.lat(), classify(n.tags()), &|| tag_map(n.tags())),
            _ => None,
        },
        |f| match f {
            Found::Node { id, tags, pos } => {
                if needed.contains(&id) {
                    located.insert(id, pos);
                }
                let row = geometry::checked(pos).and_then(|pos| place_row('n', id, tags, pos));
                emit(name, 'n', id, row, report, seen, out);
                emitted = true;
            }
            Found::Location { id, pos } => {
                located.insert(id, pos);
            }
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 3 keeps nodes"),
        },
    )?;
    if let Err(u) = nodes {
        if !emitted {
            return Ok(Err(u));
        }
        // Some point places already went to the build: reading again would count them twice.
        return Err(IngestError::file(
            name,
            "its blocks are not sorted by type (nodes, then ways, then relations) as OpenStreetMap files are published; \
             sort it with `osmium sort IN.osm.pbf -o OUT.osm.pbf` and import that",
        ));
    }

    // Areas, once their nodes are known: ways, then relations.
    for (id, row, refs) in place_ways {
        let pos = refs
            .iter()
            .map(|r| located.get(r).copied().ok_or_else(|| Skipped::new(Skip::BadGeometry, format!("node {r} is not in the extract"))))
            .collect::<std::result::Result<Vec<_>, _>>()
            .and_then(|coords| geometry::line_point(&coords));
        emit(name, 'w', id, placed(row, pos), report, seen, out);
    }
    for (id, tags, outer) in relations {
        let row = relation_point(&outer, &member_ways, &located).and_then(|pos| place_row('r', id, tags, pos));
        emit(name, 'r', id, row, report, seen, out);
    }
    Ok(Ok(()))
}

/// A row made before its position was known, placed.
fn placed(row: std::result::Result<SourceRow, Skipped>, pos: std::result::Result<Lonlat, Skipped>) -> std::result::Result<SourceRow, Skipped> {
    let (mut row, (lng, lat)) = (row?, pos?);
    row.lng = lng;
    row.lat = lat;
    Ok(row)
}

/// One place object's end: a row (the first time the object is seen) or a counted skip.
fn emit(name: &str, kind: char, id: i64, row: std::result::Result<SourceRow, Skipped>, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) {
    report.rows_read += 1;
    let row = row.and_then(|r| if seen.first(kind, id) { Ok(r) } else { Err(duplicate()) });
    match row {
        Ok(row) => {
            report.rows_kept += 1;
            report.count_hours(&row);
            out.push(row);
        }
        Err(s) => {
            let what = match kind {
                'n' => "node",
                'w' => "way",
                _ => "relation",
            };
            report.skip_at(name, &format!("{what} {id}"), s)
        }
    }
}

fn count(report: &mut ImportReport, s: Skip) {
    report.rows_read += 1;
    report.count(s, 1);
}

/// A multipolygon's point: its outer ways joined into rings; where the extract cut a ring
/// open, the average of the vertices it has.
fn relation_point(outer: &[i64], ways: &HashMap<i64, Vec<i64>>, located: &HashMap<i64, Lonlat>) -> std::result::Result<Lonlat, Skipped> {
    let segments: Vec<Vec<Lonlat>> = outer
        .iter()
        .filter_map(|w| ways.get(w))
        .map(|refs| refs.iter().filter_map(|r| located.get(r).copied()).collect::<Vec<_>>())
        .filter(|s: &Vec<Lonlat>| s.len() >= 2)
        .collect();
    if segments.is_empty() {
        return Err(Skipped::new(Skip::BadGeometry, "multipolygon whose outer ways are not in the extract"));
    }
    let (rings, open) = geometry::join_rings(segments);
    if !rings.is_empty() {
        return geometry::polygons_point(&rings.into_iter().map(|r| vec![r]).collect::<Vec<_>>());
    }
    geometry::vertex_point(&open.concat())
}
