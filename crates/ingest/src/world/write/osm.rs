//! OpenStreetMap as `osmium export -f geojsonseq` writes it: one RS-prefixed GeoJSON feature a
//! line, tags as properties, `@type`/`@id` naming the OSM object.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use super::tags::Tags;
use super::{create, round7, Sighted};
use crate::error::{IngestError, Result};
use crate::hash::fnv1a;

pub(super) struct OsmWriter {
    out: BufWriter<File>,
}

/// A store's node id: like a real one, it stays the store's from build to build (stores opening
/// elsewhere in the file do not renumber it). Drawn from 2^52 values above 10^9, so it stays an
/// exact number in JavaScript and two of a full build's four million nodes share one about once
/// in 500 builds (the importer would skip the second as `duplicate_id`).
fn node_id(x: &Sighted) -> u64 {
    1_000_000_000 + fnv1a(format!("{}/osm/{}", x.seed, x.store_key).as_bytes()) % (1 << 52)
}

impl OsmWriter {
    pub(super) fn new(dir: &Path) -> Result<OsmWriter> {
        let mut out = create(&dir.join("osm/places.geojsonseq"))?;
        out.flush().map_err(|e| IngestError::io(dir.display(), e))?;
        Ok(OsmWriter { out })
    }

    /// Appends a brand's nodes, rendered by [`node`].
    pub(super) fn write(&mut self, lines: &[u8]) -> Result<()> {
        self.out.write_all(lines).map_err(|e| IngestError::io("sources", e))
    }

    pub(super) fn finish(mut self) -> Result<()> {
        self.out.flush().map_err(|e| IngestError::io("sources", e))
    }
}

/// Renders one sighting as a node line into `out`; returns its id as the truth file names it
/// (`n<id>`).
pub(super) fn node(out: &mut Vec<u8>, x: &Sighted) -> Result<String> {
    let id = node_id(x);
    let f = OsmFeature {
        kind: "Feature",
        geometry: Point { kind: "Point", coordinates: [round7(x.s.lng), round7(x.s.lat)] },
        properties: OsmProps { osm_type: "node", id, tags: Tags::new(x.brand, x.s, x.store, x.city, x.hours.as_deref()) },
    };
    out.push(0x1e);
    serde_json::to_writer(&mut *out, &f).map_err(|e| IngestError::Invalid(e.to_string()))?;
    out.push(b'\n');
    Ok(format!("n{id}"))
}

#[derive(Serialize)]
struct OsmFeature<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    geometry: Point,
    properties: OsmProps<'a>,
}

#[derive(Serialize)]
struct Point {
    #[serde(rename = "type")]
    kind: &'static str,
    coordinates: [f64; 2],
}

#[derive(Serialize)]
struct OsmProps<'a> {
    #[serde(rename = "@type")]
    osm_type: &'static str,
    #[serde(rename = "@id")]
    id: u64,
    #[serde(flatten)]
    tags: Tags<'a>,
}
