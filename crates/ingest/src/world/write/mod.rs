//! Writes sightings in each publisher's real format, one module per source as `import/` reads
//! them: OSM as an osmium GeoJSON sequence, ATP as one FeatureCollection per spider, Overture
//! and Foursquare as Parquet with their real column names and nesting. The ground truth goes to
//! separate CSVs the pipeline never reads.

mod atp;
mod fsq;
mod osm;
mod overture;
mod parquet;
mod spread;
mod tags;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use storemap_core::{format_iso, SourceType, DAY_S};

use super::brand::{BrandWorld, Sighting, TrueStore};
use super::BrandTruth;
use crate::catalog::CatalogBrand;
use crate::error::{IngestError, Result};
use crate::hash::fnv1a;
use crate::reference::City;

pub use atp::atp_feature_id;
pub use spread::{spread_overture, Spread, SpreadSummary, WORLD};

pub struct SourceWriters {
    dir: PathBuf,
    osm: osm::OsmWriter,
    atp: atp::AtpWriter,
    overture: overture::OvertureColumns,
    fsq: fsq::FsqColumns,
    truth: BufWriter<File>,
    /// `truth-churn.csv`: openings and closures since the survey.
    churn: BufWriter<File>,
    /// `truth-brands.csv`: each brand's true stores per country beside its published count.
    brand_truth: csv::Writer<File>,
    seed: u64,
    as_of: i64,
    pub counts: [u64; 4],
}

/// One sighting with what every writer needs to put it in its format.
struct Sighted<'a> {
    brand: &'a CatalogBrand,
    s: &'a Sighting,
    store: &'a TrueStore,
    city: &'a City,
    /// The store's identity across sources (`<nsi id>#<number>`), from which ids derive.
    store_key: &'a str,
    /// When the source last saw it (ISO time).
    seen: &'a str,
    seed: u64,
    as_of: i64,
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| IngestError::io(parent.display(), e))?;
    }
    let f = File::create(path).map_err(|e| IngestError::io(path.display(), e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

fn hex_id(seed: u64, tag: &str, key: &str, digits: usize) -> String {
    let a = fnv1a(format!("{seed}/{tag}/{key}").as_bytes());
    let b = fnv1a(format!("{key}/{tag}/{seed}").as_bytes());
    format!("{a:016x}{b:016x}")[..digits].to_string()
}

fn round7(v: f64) -> f64 {
    (v * 1e7).round() / 1e7
}

fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

impl SourceWriters {
    pub fn new(dir: &Path, seed: u64, as_of: i64) -> Result<SourceWriters> {
        // A previous build's files (an ATP spider that no longer exists, say) must not leak
        // into this one: the folder is the generator's alone.
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| IngestError::io(dir.display(), e))?;
        }
        let osm = osm::OsmWriter::new(dir)?;
        let atp = atp::AtpWriter::new(dir)?;
        let mut truth = create(&dir.join("truth.csv"))?;
        writeln!(truth, "source,source_id,store,closed").map_err(|e| IngestError::io("truth.csv", e))?;
        let mut churn = create(&dir.join(super::CHURN_TRUTH_FILE))?;
        writeln!(churn, "store,opened,closed").map_err(|e| IngestError::io(super::CHURN_TRUTH_FILE, e))?;
        let path = dir.join(super::BRAND_TRUTH_FILE);
        let brand_truth = csv::Writer::from_path(&path).map_err(|e| IngestError::file(path.display(), e))?;
        Ok(SourceWriters {
            dir: dir.to_path_buf(),
            osm,
            atp,
            overture: overture::OvertureColumns::default(),
            fsq: fsq::FsqColumns::default(),
            truth,
            churn,
            brand_truth,
            seed,
            as_of,
            counts: [0; 4],
        })
    }

    pub fn write_brand(&mut self, brand: &CatalogBrand, world: &BrandWorld, cities: &[City]) -> Result<()> {
        let io = |e| IngestError::io("sources", e);
        let mut by_country: std::collections::BTreeMap<&str, (u64, u64)> = std::collections::BTreeMap::new();
        for s in &world.stores {
            let e = by_country.entry(s.country.as_str()).or_default();
            e.0 += 1;
            e.1 += u64::from(!s.closed);
        }
        for (country, (stores, open)) in by_country {
            let row = BrandTruth {
                brand: brand.name.clone(),
                wikidata: brand.wikidata.clone().unwrap_or_default(),
                country: country.to_string(),
                stores,
                open,
                published: brand.footprint.iter().find(|(c, _)| c == country).map(|(_, n)| *n),
                real: brand.known_stores.filter(|_| brand.listed),
            };
            self.brand_truth.serialize(row).map_err(|e| IngestError::file("truth-brands.csv", e))?;
        }
        for s in world.stores.iter().filter(|s| s.opened.is_some() || s.closed_at.is_some()) {
            let iso = |t: Option<i64>| t.map(format_iso).unwrap_or_default();
            writeln!(self.churn, "{}#{},{},{}", brand.nsi_id, s.number, iso(s.opened), iso(s.closed_at)).map_err(io)?;
        }
        self.atp.begin(brand, world.sightings.iter().any(|s| s.source == SourceType::Atp));
        for s in &world.sightings {
            let store = &world.stores[s.store as usize];
            let store_key = format!("{}#{}", brand.nsi_id, store.number);
            let seen = format_iso(self.as_of - s.days_ago as i64 * DAY_S);
            let x = Sighted { brand, s, store, city: &cities[store.city as usize], store_key: &store_key, seen: &seen, seed: self.seed, as_of: self.as_of };
            let source_id = match s.source {
                SourceType::Osm => self.osm.write(&x)?,
                SourceType::Atp => self.atp.push(&x),
                SourceType::Overture => self.overture.push(&x, self.atp.spider()),
                SourceType::Fsq => self.fsq.push(&x),
            };
            self.counts[s.source as usize] += 1;
            writeln!(self.truth, "{},{},{},{}", s.source.as_str(), source_id, store_key, store.closed).map_err(io)?;
        }
        self.atp.end(self.as_of)
    }

    pub fn finish(mut self) -> Result<[u64; 4]> {
        let io = |e| IngestError::io("sources", e);
        self.osm.finish()?;
        self.truth.flush().map_err(io)?;
        self.churn.flush().map_err(io)?;
        self.brand_truth.flush().map_err(io)?;
        let o = std::mem::take(&mut self.overture);
        parquet::write_parquet(&self.dir.join("overture/places.parquet"), overture::overture_frame(o))?;
        let f = std::mem::take(&mut self.fsq);
        parquet::write_parquet(&self.dir.join("fsq/places.parquet"), fsq::fsq_frame(f))?;
        Ok(self.counts)
    }
}
