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
use std::path::Path;

use storemap_core::{format_iso, SourceType, DAY_S};

use super::brand::{BrandWorld, Sighting, TrueStore};
use super::hours;
use super::BrandTruth;
use crate::catalog::CatalogBrand;
use crate::error::{IngestError, Result};
use crate::hash::fnv1a;
use crate::reference::City;

pub use atp::atp_feature_id;
pub use spread::{spread_overture, Spread, SpreadSummary, WORLD};

pub struct SourceWriters {
    osm: osm::OsmWriter,
    atp: atp::AtpWriter,
    /// Parquet rows waiting for a row group of their own, and the files they go to (each
    /// written on a thread of its own).
    overture: overture::OvertureColumns,
    fsq: fsq::FsqColumns,
    overture_file: parquet::GroupWriter<overture::OvertureColumns>,
    fsq_file: parquet::GroupWriter<fsq::FsqColumns>,
    truth: BufWriter<File>,
    /// `truth-churn.csv`: openings and closures since the survey.
    churn: BufWriter<File>,
    /// `truth-brands.csv`: each brand's true stores per country beside its published count.
    brand_truth: csv::Writer<File>,
    seed: u64,
    as_of: i64,
    pub counts: [u64; 4],
}

/// One brand's share of every file the generator writes, rendered apart from the writers.
#[derive(Default)]
pub struct BrandFiles {
    osm: Vec<u8>,
    overture: overture::OvertureColumns,
    fsq: fsq::FsqColumns,
    truth: Vec<u8>,
    churn: Vec<u8>,
    brand_truth: Vec<BrandTruth>,
    counts: [u64; 4],
}

/// Moves the columns of one struct of column vectors after another's. The pattern names every
/// field, so a column added to the struct and not here fails to compile.
macro_rules! append_columns {
    ($self:ident, $other:ident: $ty:ident; $($f:ident),+ $(,)?) => {{
        let $ty { $(mut $f),+ } = $other;
        $( $self.$f.append(&mut $f); )+
    }};
}
pub(super) use append_columns;

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
    /// The store's opening hours as this source publishes them (OSM and ATP only).
    hours: Option<String>,
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

/// Renders brands into their share of each file; see [`SourceWriters::renderer`].
#[derive(Clone)]
pub struct Renderer {
    seed: u64,
    as_of: i64,
    /// The folder of AllThePlaces' spider files.
    atp_dir: std::path::PathBuf,
}

impl Renderer {
    /// Renders a brand's share of every file, touching no writer: brands render on every core
    /// at once and are written in rank order by [`SourceWriters::write`], so the files are the
    /// same byte for byte whatever the thread count. A brand's AllThePlaces spider file is its
    /// own (its name given in rank order before it renders): it is written here, on the core
    /// that rendered it, and not in turn (creating some 800 files took a quarter of a second of
    /// the one thread that writes in rank order).
    pub fn render(&self, brand: &CatalogBrand, world: &BrandWorld, cities: &[City], spider: Option<&str>) -> Result<BrandFiles> {
        let io = |e| IngestError::io("sources", e);
        let mut out = BrandFiles::default();
        let mut by_country: std::collections::BTreeMap<&str, (u64, u64)> = std::collections::BTreeMap::new();
        for s in &world.stores {
            let e = by_country.entry(s.country.as_str()).or_default();
            e.0 += 1;
            e.1 += u64::from(!s.closed);
        }
        out.brand_truth = by_country
            .into_iter()
            .map(|(country, (stores, open))| BrandTruth {
                brand: brand.name.clone(),
                wikidata: brand.wikidata.clone().unwrap_or_default(),
                country: country.to_string(),
                stores,
                open,
                published: brand.footprint.iter().find(|(c, _)| c == country).map(|(_, n)| *n),
                real: brand.known_stores.filter(|_| brand.listed),
            })
            .collect();
        for s in world.stores.iter().filter(|s| s.opened.is_some() || s.closed_at.is_some()) {
            let iso = |t: Option<i64>| t.map(format_iso).unwrap_or_default();
            writeln!(out.churn, "{}#{},{},{}", brand.nsi_id, s.number, iso(s.opened), iso(s.closed_at)).map_err(io)?;
        }
        let mut atp = spider.map(atp::Spider::new);
        for s in &world.sightings {
            let store = &world.stores[s.store as usize];
            let store_key = format!("{}#{}", brand.nsi_id, store.number);
            let seen = format_iso(self.as_of - s.days_ago as i64 * DAY_S);
            let hours = matches!(s.source, SourceType::Osm | SourceType::Atp)
                .then(|| hours::published(s.source, &hours::true_hours(brand, store, &store_key, self.seed), &store_key, spider.unwrap_or_default(), self.seed))
                .flatten();
            let x =
                Sighted { brand, s, store, city: &cities[store.city as usize], store_key: &store_key, seen: &seen, hours, seed: self.seed, as_of: self.as_of };
            let source_id = match s.source {
                SourceType::Osm => osm::node(&mut out.osm, &x)?,
                SourceType::Atp => {
                    atp.as_mut().ok_or_else(|| IngestError::Invalid(format!("{}: an AllThePlaces sighting without a spider", brand.name)))?.push(&x)?
                }
                SourceType::Overture => out.overture.push(&x, spider.unwrap_or_default()),
                SourceType::Fsq => out.fsq.push(&x),
            };
            out.counts[s.source as usize] += 1;
            writeln!(out.truth, "{},{},{},{}", s.source.as_str(), source_id, store_key, store.closed).map_err(io)?;
        }
        if let Some(spider) = atp {
            let name = spider.name().to_string();
            atp::write(&self.atp_dir, &name, &spider.file(self.as_of)?)?;
        }
        Ok(out)
    }
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
            osm,
            atp,
            overture: overture::OvertureColumns::default(),
            fsq: fsq::FsqColumns::default(),
            overture_file: parquet::GroupWriter::spawn(dir.join("overture/places.parquet"), overture::overture_frame, |c| c.len() == 0)?,
            fsq_file: parquet::GroupWriter::spawn(dir.join("fsq/places.parquet"), fsq::fsq_frame, |c| c.len() == 0)?,
            truth,
            churn,
            brand_truth,
            seed,
            as_of,
            counts: [0; 4],
        })
    }

    /// Names the spider of a brand AllThePlaces sees, before the brand is rendered: names are
    /// given in rank order, one brand at a time (two brands may want the same one).
    pub fn spider(&mut self, brand: &CatalogBrand, world: &BrandWorld) -> Option<String> {
        world.sightings.iter().any(|s| s.source == SourceType::Atp).then(|| self.atp.name(brand))
    }

    /// What rendering a brand needs of the writers (brands render on every core while the
    /// writers write the ones before them).
    pub fn renderer(&self) -> Renderer {
        Renderer { seed: self.seed, as_of: self.as_of, atp_dir: self.atp.dir().to_path_buf() }
    }

    /// Writes a rendered brand after the ones written before it.
    pub fn write(&mut self, files: BrandFiles) -> Result<()> {
        let io = |e| IngestError::io("sources", e);
        for row in files.brand_truth {
            self.brand_truth.serialize(row).map_err(|e| IngestError::file("truth-brands.csv", e))?;
        }
        self.churn.write_all(&files.churn).map_err(io)?;
        self.osm.write(&files.osm)?;
        self.overture.append(files.overture);
        self.fsq.append(files.fsq);
        let group = parquet::Layout::default().row_group_rows;
        if self.overture.len() >= group {
            self.overture_file.write(std::mem::take(&mut self.overture))?;
        }
        if self.fsq.len() >= group {
            self.fsq_file.write(std::mem::take(&mut self.fsq))?;
        }
        self.truth.write_all(&files.truth).map_err(io)?;
        for (total, n) in self.counts.iter_mut().zip(files.counts) {
            *total += n;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<[u64; 4]> {
        let io = |e| IngestError::io("sources", e);
        self.osm.finish()?;
        self.truth.flush().map_err(io)?;
        self.churn.flush().map_err(io)?;
        self.brand_truth.flush().map_err(io)?;
        // Both files' last groups are written at once.
        self.overture_file.last(self.overture);
        self.fsq_file.last(self.fsq);
        let (overture, fsq) = (self.overture_file.wait(), self.fsq_file.wait());
        overture.and(fsq)?;
        Ok(self.counts)
    }
}
