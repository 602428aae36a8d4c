//! A basemap archive opened for drawing: its schema and attribution worked out once, and its
//! tiles decoded and sorted into what a street map draws ([`TileShapes`]), kept in a cache
//! bounded in bytes. A tile that fails to read or decode is skipped and counted; the first
//! failure's reason is kept for the status endpoint, so a damaged archive is reported once, not
//! once per request.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::classify::{classify, Area, Class, Line, Schema};
use super::mvt;
use super::pmtiles::{Archive, Compression, PmtilesError, Result, TileType, MAX_TILE_BYTES};

/// The decoded-tile cache's size when the operator names none.
pub const DEFAULT_CACHE_BYTES: u64 = 64 << 20;

/// The attribution of OpenStreetMap-derived tiles whose archive names none: both schemas are
/// made from OpenStreetMap, whose licence asks for it.
pub const OSM_ATTRIBUTION: &str = "© OpenStreetMap contributors";

/// Tile coordinates as points, in the tile's own extent.
pub type Part = Vec<(i32, i32)>;

/// One tile, sorted into what is drawn: each area kind's rings, each line kind's lines, and the
/// place names.
#[derive(Debug, Default)]
pub struct TileShapes {
    pub extent: u32,
    /// Indexed like `Area::ALL`: every ring of every feature of that kind.
    pub areas: [Vec<Part>; Area::ALL.len()],
    /// Indexed like `Line::ALL`, then [open, tunnel].
    pub lines: [[Vec<Part>; 2]; Line::ALL.len()],
    /// Name, rank (larger first), position.
    pub places: Vec<(String, u32, (i32, i32))>,
    /// Whether the tile draws the sea itself: OpenMapTiles tiles with `ocean` water know the
    /// coast, so their land is drawn too; those without leave the land to Natural Earth.
    pub ocean: bool,
    /// Roughly what it holds in memory, for the cache's bound.
    pub bytes: u64,
}

impl TileShapes {
    /// Sorts decoded layers.
    pub fn from_layers(schema: Schema, layers: &[mvt::Layer]) -> TileShapes {
        let mut t = TileShapes { extent: layers.first().map_or(4096, |l| l.extent), ..TileShapes::default() };
        for layer in layers {
            // Layers of one tile share an extent in practice; one that differs is scaled to the
            // first's.
            let (num, den) = (i64::from(t.extent), i64::from(layer.extent));
            let rescale = |p: &Part| -> Part { p.iter().map(|&(x, y)| ((i64::from(x) * num / den) as i32, (i64::from(y) * num / den) as i32)).collect() };
            for f in &layer.features {
                let Some(class) = classify(schema, layer, f) else { continue };
                match class {
                    Class::Area(a) => {
                        if a == Area::Water && schema == Schema::OpenMapTiles && layer.tag(f, "class").and_then(|v| v.as_str()) == Some("ocean") {
                            t.ocean = true;
                        }
                        let at = Area::ALL.iter().position(|&k| k == a).expect("every area is in ALL");
                        t.areas[at].extend(f.parts.iter().filter(|p| p.len() >= 3).map(rescale));
                    }
                    Class::Line { line, tunnel } => {
                        let at = Line::ALL.iter().position(|&k| k == line).expect("every line is in ALL");
                        t.lines[at][usize::from(tunnel)].extend(f.parts.iter().filter(|p| p.len() >= 2).map(rescale));
                    }
                    Class::Place { name, rank } => {
                        if let Some(&p) = f.parts.first().and_then(|p| p.first()) {
                            let p = rescale(&vec![p])[0];
                            t.places.push((name, rank, p));
                        }
                    }
                }
            }
        }
        let points: usize = t.areas.iter().flatten().chain(t.lines.iter().flatten().flatten()).map(|p| p.len() + 3).sum();
        t.bytes = (points * 8 + t.places.iter().map(|p| p.0.len() + 40).sum::<usize>() + 512) as u64;
        t
    }
}

/// What the status endpoint reports of the basemap.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TileStats {
    /// Tiles read and decoded since start.
    pub decoded: u64,
    /// Tiles that could not be read or decoded, or were too large: skipped.
    pub failed: u64,
    /// The first failure's reason.
    pub first_error: Option<String>,
    /// Bytes the decoded-tile cache holds now.
    pub cached_bytes: u64,
}

#[derive(Clone)]
struct Weigh;

impl quick_cache::Weighter<(u8, u32, u32), Option<Arc<TileShapes>>> for Weigh {
    fn weight(&self, _: &(u8, u32, u32), v: &Option<Arc<TileShapes>>) -> u64 {
        v.as_ref().map_or(16, |t| t.bytes)
    }
}

/// What an archive holds, from its header and metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveInfo {
    pub schema: Schema,
    pub min_zoom: u8,
    pub max_zoom: u8,
    /// West, south, east, north.
    pub bounds: [f64; 4],
    /// Longitude, latitude, zoom.
    pub center: [f64; 3],
    pub attribution: String,
    pub name: Option<String>,
    pub tile_compression: &'static str,
    pub addressed_tiles: u64,
    pub tile_contents: u64,
    pub bytes: u64,
}

/// An archive of vector tiles, ready to draw from.
pub struct VectorTiles {
    archive: Archive,
    pub schema: Schema,
    /// Plain text, for the image's corner and the X-Attribution header.
    pub attribution: String,
    name: Option<String>,
    cache_bytes: u64,
    /// Absent tiles are cached too (as None): the view around an extract asks for them again
    /// and again.
    cache: quick_cache::sync::Cache<(u8, u32, u32), Option<Arc<TileShapes>>, Weigh>,
    decoded: AtomicU64,
    failed: AtomicU64,
    first_error: Mutex<Option<String>>,
    /// Whether the first failure has been handed to the service's log.
    reported: AtomicBool,
}

impl VectorTiles {
    /// Opens an archive of Mapbox Vector Tiles of either schema, with a decoded-tile cache of
    /// at most `cache_bytes`.
    pub fn open(path: &Path, cache_bytes: u64) -> Result<VectorTiles> {
        let archive = Archive::open(path)?;
        if !matches!(archive.header.tile_type, TileType::Mvt | TileType::Unknown) {
            return Err(PmtilesError::Unsupported(format!("{} tiles (a street map is drawn from vector tiles)", archive.header.tile_type.name())));
        }
        // Refused here, not tile by tile: every tile would fail, and the map would quietly be
        // Natural Earth's.
        if !matches!(archive.header.tile_compression, Compression::Gzip | Compression::None | Compression::Unknown) {
            return Err(PmtilesError::Unsupported(format!("{} tile compression (gzip or none are read)", archive.header.tile_compression.name())));
        }
        let meta = archive.metadata()?;
        let schema = schema_of(&meta)
            .ok_or_else(|| PmtilesError::Unsupported("its layers are neither the Protomaps basemap's nor OpenMapTiles' (metadata vector_layers)".into()))?;
        let attribution =
            meta.get("attribution").and_then(|a| a.as_str()).map(plain_text).filter(|a| !a.is_empty()).unwrap_or_else(|| OSM_ATTRIBUTION.to_string());
        let name = meta.get("name").and_then(|n| n.as_str()).map(str::to_string);
        Ok(VectorTiles {
            archive,
            schema,
            attribution,
            name,
            cache_bytes: cache_bytes.max(1 << 20),
            cache: quick_cache::sync::Cache::with_weighter(1024, cache_bytes.max(1 << 20), Weigh),
            decoded: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            first_error: Mutex::new(None),
            reported: AtomicBool::new(false),
        })
    }

    /// The decoded-tile cache's bound, in bytes.
    pub fn cache_bytes(&self) -> u64 {
        self.cache_bytes
    }

    pub fn min_zoom(&self) -> u8 {
        self.archive.header.min_zoom
    }

    pub fn max_zoom(&self) -> u8 {
        self.archive.header.max_zoom
    }

    /// West, south, east, north, degrees.
    pub fn bounds(&self) -> [f64; 4] {
        self.archive.header.bounds
    }

    /// Tile z/x/y sorted for drawing; None when the archive has none there or it could not be
    /// read (counted in the stats).
    pub fn get(&self, z: u8, x: u32, y: u32) -> Option<Arc<TileShapes>> {
        let load = || -> std::result::Result<Option<Arc<TileShapes>>, ()> {
            match self.load(z, x, y) {
                Ok(t) => Ok(t),
                Err(e) => {
                    self.failed.fetch_add(1, Ordering::Relaxed);
                    let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
                    first.get_or_insert_with(|| format!("tile {z}/{x}/{y}: {e}"));
                    // A failed tile is remembered as absent: it is reported once, not read again.
                    Ok(None)
                }
            }
        };
        self.cache.get_or_insert_with(&(z, x, y), load).ok().flatten()
    }

    fn load(&self, z: u8, x: u32, y: u32) -> std::result::Result<Option<Arc<TileShapes>>, String> {
        let Some(bytes) = self.archive.tile(z, x, y).map_err(|e| e.to_string())? else { return Ok(None) };
        if bytes.len() as u64 > MAX_TILE_BYTES {
            return Err(format!("{} bytes, more than {MAX_TILE_BYTES}", bytes.len()));
        }
        let layers = mvt::decode(&bytes).map_err(|e| e.to_string())?;
        self.decoded.fetch_add(1, Ordering::Relaxed);
        Ok(Some(Arc::new(TileShapes::from_layers(self.schema, &layers))))
    }

    /// What the archive holds.
    pub fn info(&self) -> ArchiveInfo {
        let h = &self.archive.header;
        ArchiveInfo {
            schema: self.schema,
            min_zoom: h.min_zoom,
            max_zoom: h.max_zoom,
            bounds: h.bounds,
            center: [h.center[0], h.center[1], f64::from(h.center_zoom)],
            attribution: self.attribution.clone(),
            name: self.name.clone(),
            tile_compression: h.tile_compression.name(),
            addressed_tiles: h.addressed_tiles,
            tile_contents: h.tile_contents,
            bytes: self.archive.file_bytes(),
        }
    }

    /// The first tile failure, the first time it is asked for after it happened, and never
    /// again: the service logs it once; the count goes on in the stats.
    pub fn take_first_error(&self) -> Option<String> {
        let first = self.first_error.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        (!self.reported.swap(true, Ordering::Relaxed)).then_some(first)
    }

    pub fn stats(&self) -> TileStats {
        TileStats {
            decoded: self.decoded.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            first_error: self.first_error.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            cached_bytes: self.cache.weight(),
        }
    }
}

/// The schema named by the metadata's `vector_layers` (TileJSON), which tilemaker and the
/// MBTiles converters leave as a JSON string under `json`.
pub fn schema_of(meta: &serde_json::Value) -> Option<Schema> {
    let layers = match meta.get("vector_layers") {
        Some(l) => l.clone(),
        None => serde_json::from_str::<serde_json::Value>(meta.get("json")?.as_str()?).ok()?.get("vector_layers")?.clone(),
    };
    let ids: Vec<&str> = layers.as_array()?.iter().filter_map(|l| l.get("id")?.as_str()).collect();
    Schema::of_layers(ids)
}

/// An attribution as plain text: archives carry HTML links (`<a href=...>© OpenStreetMap</a>`).
pub fn plain_text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out.replace("&copy;", "©").replace("&amp;", "&").replace("&nbsp;", " ").replace("&lt;", "<").replace("&gt;", ">");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}
