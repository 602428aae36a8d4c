//! `.osm.pbf`, the file OpenStreetMap extracts are published as, read with the `osmpbf` crate.
//!
//! A PBF holds nodes, then ways (lists of node ids), then relations (lists of members), so a
//! building's position needs its nodes, which come before the way that names them. Three
//! passes, each decoding the file in parallel and keeping only what later passes need:
//! 1. relations: place-tagged multipolygons and the ids of their outer ways;
//! 2. ways: place-tagged ways and those outer ways, with their node ids;
//! 3. nodes: place-tagged nodes become rows; the nodes the ways name give their positions.
//!
//! Memory grows with the places and the nodes they name, not with the extract.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use osmpbf::{Element, ElementReader, RelMemberType};

use super::{classify, place_row, Batcher, Kind, Seen};
use crate::error::{IngestError, Result};
use crate::import::geometry::{self, Lonlat};
use crate::source_row::{Skip, Skipped};
use crate::ImportReport;

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

fn open(file: &Path, name: &str) -> Result<ElementReader<std::io::BufReader<std::fs::File>>> {
    ElementReader::from_path(file).map_err(|e| IngestError::file(name, format!("not a readable .osm.pbf: {e}")))
}

/// One parallel pass: `pick` maps each element to what it keeps.
fn pass(file: &Path, name: &str, pick: impl for<'a> Fn(Element<'a>) -> Option<Found> + Sync + Send) -> Result<Vec<Found>> {
    open(file, name)?
        .par_map_reduce(
            |e| pick(e).map_or_else(Vec::new, |f| vec![f]),
            Vec::new,
            |mut a, mut b| {
                if a.len() < b.len() {
                    std::mem::swap(&mut a, &mut b);
                }
                a.append(&mut b);
                a
            },
        )
        .map_err(|e| IngestError::file(name, format!("not a readable .osm.pbf: {e}")))
}

pub(super) fn read(file: &Path, name: &str, report: &mut ImportReport, seen: &mut Seen, out: &mut Batcher) -> Result<()> {
    // Pass 1: relations.
    let mut relations = Vec::new();
    for f in pass(file, name, |e| match e {
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
    })? {
        match f {
            Found::Relation { id, tags, outer } => relations.push((id, tags, outer)),
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 1 keeps relations"),
        }
    }
    let outer_ways: HashSet<i64> = relations.iter().flat_map(|(_, _, o)| o.iter().copied()).collect();

    // Pass 2: ways.
    let mut place_ways = Vec::new();
    let mut member_ways: HashMap<i64, Vec<i64>> = HashMap::new();
    for f in pass(file, name, |e| match e {
        Element::Way(w) => {
            let kind = classify(w.tags());
            let member = outer_ways.contains(&w.id());
            match kind {
                Kind::Place => Some(Found::Way { id: w.id(), tags: Some(tag_map(w.tags())), refs: w.refs().collect() }),
                _ if member => Some(Found::Way { id: w.id(), tags: None, refs: w.refs().collect() }),
                Kind::NotStorefront => Some(Found::Skipped(Skip::NotStorefront)),
                Kind::Ignore => None,
            }
        }
        _ => None,
    })? {
        match f {
            Found::Way { id, tags, refs } => {
                if outer_ways.contains(&id) {
                    member_ways.insert(id, refs.clone());
                }
                if let Some(tags) = tags {
                    place_ways.push((id, tags, refs));
                }
            }
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 2 keeps ways"),
        }
    }
    let needed: HashSet<i64> = place_ways.iter().flat_map(|(_, _, r)| r.iter().copied()).chain(member_ways.values().flatten().copied()).collect();

    // Pass 3: nodes.
    let mut place_nodes = Vec::new();
    let mut located: HashMap<i64, Lonlat> = HashMap::with_capacity(needed.len());
    let node = |id: i64, lng: f64, lat: f64, kind: Kind, tags: &dyn Fn() -> TagMap| -> Option<Found> {
        match kind {
            Kind::Place => Some(Found::Node { id, tags: tags(), pos: (lng, lat) }),
            _ if needed.contains(&id) => Some(Found::Location { id, pos: (lng, lat) }),
            Kind::NotStorefront => Some(Found::Skipped(Skip::NotStorefront)),
            Kind::Ignore => None,
        }
    };
    for f in pass(file, name, |e| match e {
        Element::DenseNode(n) => node(n.id(), n.lon(), n.lat(), classify(n.tags()), &|| tag_map(n.tags())),
        Element::Node(n) => node(n.id(), n.lon(), n.lat(), classify(n.tags()), &|| tag_map(n.tags())),
        _ => None,
    })? {
        match f {
            Found::Node { id, tags, pos } => {
                if needed.contains(&id) {
                    located.insert(id, pos);
                }
                place_nodes.push((id, tags, pos));
            }
            Found::Location { id, pos } => {
                located.insert(id, pos);
            }
            Found::Skipped(s) => count(report, s),
            _ => unreachable!("pass 3 keeps nodes"),
        }
    }

    // Rows in a fixed order (the passes finish blocks in any order): nodes, ways, relations.
    place_nodes.sort_by_key(|n| n.0);
    place_ways.sort_by_key(|w| w.0);
    relations.sort_by_key(|r| r.0);
    let locate = |refs: &[i64]| -> std::result::Result<Vec<Lonlat>, Skipped> {
        refs.iter()
            .map(|r| located.get(r).copied().ok_or_else(|| Skipped::new(Skip::BadGeometry, format!("node {r} is not in the extract"))))
            .collect()
    };
    let mut emit = |kind: char, id: i64, tags: TagMap, pos: std::result::Result<Lonlat, Skipped>, report: &mut ImportReport| {
        report.rows_read += 1;
        let row = pos.and_then(|pos| {
            if seen.first(kind, id) {
                place_row(kind, id, tags, pos)
            } else {
                Err(Skipped::new(Skip::DuplicateId, "the same object again"))
            }
        });
        match row {
            Ok(row) => {
                report.rows_kept += 1;
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
    };
    for (id, tags, pos) in place_nodes {
        emit('n', id, tags, Ok(pos), report);
    }
    for (id, tags, refs) in place_ways {
        let pos = locate(&refs).and_then(|coords| geometry::line_point(&coords));
        emit('w', id, tags, pos, report);
    }
    for (id, tags, outer) in relations {
        let pos = relation_point(&outer, &member_ways, &located);
        emit('r', id, tags, pos, report);
    }
    Ok(())
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
