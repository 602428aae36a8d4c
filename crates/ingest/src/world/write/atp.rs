//! AllThePlaces as its exporter writes a run: one FeatureCollection per spider
//! (`atp/<spider>.geojson`), each feature with the exporter's id, `ref`, `@spider` and tags.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use storemap_core::{format_iso, DAY_S};

use super::tags::Tags;
use super::{create, round7, Sighted};
use crate::catalog::CatalogBrand;
use crate::error::{IngestError, Result};

pub(super) struct AtpWriter {
    dir: PathBuf,
    spiders: HashSet<String>,
}

impl AtpWriter {
    pub(super) fn new(dir: &Path) -> Result<AtpWriter> {
        let dir = dir.join("atp");
        std::fs::create_dir_all(&dir).map_err(|e| IngestError::io(dir.display(), e))?;
        Ok(AtpWriter { dir, spiders: HashSet::new() })
    }

    /// The folder the spider files go to.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Names the spider of a brand AllThePlaces sees (a name no earlier brand took). Brands
    /// are named in rank order, one at a time, so a clash is always settled the same way.
    pub(super) fn name(&mut self, brand: &CatalogBrand) -> String {
        spider_name(brand, &mut self.spiders)
    }
}

/// Writes a spider's file, rendered by [`Spider::file`], into the folder of spider files.
pub(super) fn write(dir: &Path, spider: &str, file: &[u8]) -> Result<()> {
    let mut w = create(&dir.join(format!("{spider}.geojson")))?;
    w.write_all(file).and_then(|()| w.flush()).map_err(|e| IngestError::io("sources", e))
}

/// One brand's spider run: its name and the features it found.
pub(super) struct Spider<'a> {
    name: &'a str,
    /// The features so far, each written out as JSON when it is pushed, joined by commas. Held
    /// as JSON values until the file was made, a feature took about 2 KiB, and every core renders
    /// a brand at once: 16 threads held 1.5 GiB more than 2 did at scale 1 (bench/RESULTS.md).
    features: Vec<u8>,
}

impl<'a> Spider<'a> {
    pub(super) fn new(name: &'a str) -> Spider<'a> {
        Spider { name, features: Vec::new() }
    }

    pub(super) fn name(&self) -> &str {
        self.name
    }

    /// Adds one sighting to the spider's file; returns the feature id.
    pub(super) fn push(&mut self, x: &Sighted) -> Result<String> {
        let reference = x.store.number.to_string();
        let id = atp_feature_id(&reference, self.name);
        let mut props = serde_json::to_value(Tags::new(x.brand, x.s, x.store, x.city, x.hours.as_deref())).unwrap_or_default();
        if let Some(p) = props.as_object_mut() {
            p.insert("ref".into(), reference.clone().into());
            p.insert("@spider".into(), self.name.into());
            p.insert("branch".into(), crate::world::town::name(x.city).into());
            if x.s.closed_marker {
                p.insert("end_date".into(), format_iso(x.as_of - 30 * DAY_S)[..10].into());
            }
        }
        let feature = serde_json::json!({
            "type": "Feature", "id": id, "properties": props,
            "geometry": {"type": "Point", "coordinates": [round7(x.s.lng), round7(x.s.lat)]}
        });
        if !self.features.is_empty() {
            self.features.push(b',');
        }
        serde_json::to_writer(&mut self.features, &feature).map_err(|e| IngestError::Invalid(e.to_string()))?;
        Ok(id)
    }

    /// The spider's file: one FeatureCollection with the run's attributes. Its keys in the
    /// order serde_json writes an object's (sorted), as when the whole collection was one value.
    pub(super) fn file(self, as_of: i64) -> Result<Vec<u8>> {
        let attributes = serde_json::json!({
            "@spider": self.name,
            "spider:collection_time": format_iso(as_of - 2 * DAY_S),
            "spider:lineage": "S_ATP_BRANDS",
            "license": "CC0-1.0",
        });
        let mut out = Vec::with_capacity(self.features.len() + 256);
        out.extend_from_slice(br#"{"dataset_attributes":"#);
        serde_json::to_writer(&mut out, &attributes).map_err(|e| IngestError::Invalid(e.to_string()))?;
        out.extend_from_slice(br#","features":["#);
        out.extend_from_slice(&self.features);
        out.extend_from_slice(br#"],"type":"FeatureCollection"}"#);
        Ok(out)
    }
}

/// ATP's feature id: URL-safe base64 of SHA-1 over ref and spider name.
pub fn atp_feature_id(reference: &str, spider: &str) -> String {
    let digest = sha1_smol::Sha1::from(format!("{reference}{spider}")).digest().bytes();
    base64_url(&digest)
}

fn base64_url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn spider_name(brand: &CatalogBrand, taken: &mut HashSet<String>) -> String {
    let slug: String = brand.name.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let slug = slug.split('_').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("_");
    let mut name = if slug.is_empty() { brand.nsi_id.replace('-', "_") } else { slug };
    if taken.contains(&name) {
        name = format!("{name}_{}", brand.nsi_id.rsplit('-').next().unwrap_or("x"));
    }
    taken.insert(name.clone());
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atp_ids_match_the_exporter() {
        // The fixture generator computed this id for ref 195500290142 of spider mcdonalds_us
        // the way ATP's exporter does.
        assert_eq!(atp_feature_id("195500290142", "mcdonalds_us"), "n0WRrRis-MCpv4YfeGQFEl8NyEo=");
        assert_eq!(base64_url(b"\xfb\xff"), "-_8=");
    }
}
