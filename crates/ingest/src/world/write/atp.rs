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
    /// The current brand's spider and its features, written when the brand is done.
    spider: Option<String>,
    features: Vec<serde_json::Value>,
}

impl AtpWriter {
    pub(super) fn new(dir: &Path) -> Result<AtpWriter> {
        std::fs::create_dir_all(dir.join("atp")).map_err(|e| IngestError::io(dir.display(), e))?;
        Ok(AtpWriter { dir: dir.to_path_buf(), spiders: HashSet::new(), spider: None, features: Vec::new() })
    }

    /// Starts a brand: it gets a spider (a unique name) when AllThePlaces sees any of it.
    pub(super) fn begin(&mut self, brand: &CatalogBrand, seen: bool) {
        self.spider = seen.then(|| spider_name(brand, &mut self.spiders));
        self.features.clear();
    }

    /// The current brand's spider name ("" when it has none).
    pub(super) fn spider(&self) -> &str {
        self.spider.as_deref().unwrap_or_default()
    }

    /// Adds one sighting to the brand's spider file; returns the feature id.
    pub(super) fn push(&mut self, x: &Sighted) -> String {
        let spider = self.spider().to_string();
        let reference = x.store.number.to_string();
        let id = atp_feature_id(&reference, &spider);
        let mut props = serde_json::to_value(Tags::new(x.brand, x.s, x.store, x.city)).unwrap_or_default();
        if let Some(p) = props.as_object_mut() {
            p.insert("ref".into(), reference.clone().into());
            p.insert("@spider".into(), spider.into());
            p.insert("branch".into(), x.city.name.clone().into());
            if x.s.closed_marker {
                p.insert("end_date".into(), format_iso(x.as_of - 30 * DAY_S)[..10].into());
            }
        }
        self.features.push(serde_json::json!({
            "type": "Feature", "id": id, "properties": props,
            "geometry": {"type": "Point", "coordinates": [round7(x.s.lng), round7(x.s.lat)]}
        }));
        id
    }

    /// Writes the brand's spider file, if it has a spider.
    pub(super) fn end(&mut self, as_of: i64) -> Result<()> {
        let Some(spider) = self.spider.take() else { return Ok(()) };
        let coll = serde_json::json!({
            "type": "FeatureCollection",
            "dataset_attributes": {
                "@spider": spider,
                "spider:collection_time": format_iso(as_of - 2 * DAY_S),
                "spider:lineage": "S_ATP_BRANDS",
                "license": "CC0-1.0",
            },
            "features": std::mem::take(&mut self.features),
        });
        let mut w = create(&self.dir.join(format!("atp/{spider}.geojson")))?;
        serde_json::to_writer(&mut w, &coll).map_err(|e| IngestError::Invalid(e.to_string()))?;
        w.flush().map_err(|e| IngestError::io("sources", e))
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
