//! `storemap data report`: the dataset's figures, and de-duplication quality against the
//! generator's ground truth when there is one.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use storemap_core::Snapshot;

use crate::error::{IngestError, Result};
use crate::world::{BrandTruth, BRAND_TRUTH_FILE};

#[derive(Debug, Serialize, PartialEq)]
pub struct Dedup {
    pub precision: f64,
    pub recall: f64,
    pub predicted_pairs: u64,
    pub true_pairs: u64,
    pub correct_pairs: u64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub snapshot_version: String,
    pub as_of: String,
    pub synthetic: bool,
    pub pool_points: u64,
    pub verified_rows: u64,
    pub brands: u64,
    pub brands_with_verified_rows: u64,
    pub countries: u64,
    pub tickers: u64,
    pub rows_by_source: std::collections::BTreeMap<String, u64>,
    /// Per source: files and rows read, rows kept, rows skipped by reason, rows corroborated
    /// by another source (empty for snapshots built before the importers counted them).
    pub sources: std::collections::BTreeMap<String, storemap_core::SourceImport>,
    /// The `--country`/`--bbox` region the import was limited to.
    pub region: Option<String>,
    pub dedup: Option<Dedup>,
    /// The biggest brands of a synthetic world: their true stores and verified rows against
    /// their real size.
    pub realism: Vec<Realism>,
}

/// How many brands `realism` lists.
pub const REALISM_BRANDS: usize = 100;

/// One brand of a synthetic world: what the generator made, what the pipeline verified, and
/// the real chain's size, all at the build's scale; ratios against the real figure.
#[derive(Debug, Serialize, PartialEq)]
pub struct Realism {
    pub brand: String,
    pub true_open: u64,
    pub verified: u64,
    /// The real figure times the build's scale (`null` where the brand's size is not known).
    pub real: Option<f64>,
    pub true_ratio: Option<f64>,
    pub verified_ratio: Option<f64>,
}

pub fn report(snapshot: &Snapshot, truth: Option<&Path>) -> Result<Report> {
    let n = snapshot.row_count();
    let verified = (0..n).filter(|&r| snapshot.row_is_verified(r)).count() as u64;
    let mut countries: Vec<&str> = (0..n).map(|r| snapshot.row_country(r)).collect();
    countries.sort_unstable();
    countries.dedup();
    let meta = snapshot.meta();
    Ok(Report {
        snapshot_version: meta.snapshot_version.clone(),
        as_of: meta.as_of.clone(),
        synthetic: meta.synthetic,
        pool_points: n as u64,
        verified_rows: verified,
        brands: snapshot.brands().iter().filter(|b| b.pool_count() > 0).count() as u64,
        brands_with_verified_rows: snapshot.brands().iter().filter(|b| b.verified_count > 0).count() as u64,
        countries: countries.len() as u64,
        tickers: snapshot.tickers().len() as u64,
        rows_by_source: meta.rows_by_source.clone(),
        sources: meta.imports.clone(),
        region: meta.region.clone(),
        dedup: match truth {
            Some(p) if p.exists() => Some(dedup_scores(snapshot, p)?),
            _ => None,
        },
        realism: match truth.map(|p| p.with_file_name(BRAND_TRUTH_FILE)) {
            Some(p) if p.exists() => realism(snapshot, &p)?,
            _ => Vec::new(),
        },
    })
}

/// The [`REALISM_BRANDS`] brands with the most true open stores, by `truth-brands.csv`.
pub fn realism(snapshot: &Snapshot, brand_truth: &Path) -> Result<Vec<Realism>> {
    let name = brand_truth.display().to_string();
    let mut r = csv::Reader::from_path(brand_truth).map_err(|e| IngestError::file(&name, e))?;
    let mut brands: HashMap<String, (u64, Option<u32>)> = HashMap::new();
    for row in r.deserialize::<BrandTruth>() {
        let row = row.map_err(|e| IngestError::file(&name, e))?;
        let e = brands.entry(row.brand).or_insert((0, row.real));
        e.0 += row.open;
    }
    let scale = snapshot.meta().scale.unwrap_or(1.0);
    let verified: HashMap<&str, u64> = snapshot.brands().iter().map(|b| (b.name.as_str(), b.verified_count as u64)).collect();
    let mut lines: Vec<Realism> = brands
        .into_iter()
        .map(|(brand, (true_open, real))| {
            let verified = verified.get(brand.as_str()).copied().unwrap_or(0);
            let real = real.map(|n| n as f64 * scale);
            let ratio = |x: u64| real.filter(|&r| r > 0.0).map(|r| x as f64 / r);
            Realism { true_ratio: ratio(true_open), verified_ratio: ratio(verified), brand, true_open, verified, real }
        })
        .collect();
    lines.sort_by(|a, b| b.true_open.cmp(&a.true_open).then_with(|| a.brand.cmp(&b.brand)));
    lines.truncate(REALISM_BRANDS);
    Ok(lines)
}

fn pairs(k: u64) -> u64 {
    k * k.saturating_sub(1) / 2
}

/// Pairwise precision and recall: over every pair of source rows that reached the snapshot,
/// "in one reconciled row" against "the same true store".
pub fn dedup_scores(snapshot: &Snapshot, truth: &Path) -> Result<Dedup> {
    let name = truth.display().to_string();
    let mut r = csv::Reader::from_path(truth).map_err(|e| IngestError::file(&name, e))?;
    let mut store_of: HashMap<String, u32> = HashMap::new();
    let mut store_ids: HashMap<String, u32> = HashMap::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| IngestError::file(&name, e))?;
        let next = store_ids.len() as u32;
        let id = *store_ids.entry(rec[2].to_string()).or_insert(next);
        store_of.insert(format!("{}:{}", &rec[0], &rec[1]), id);
    }
    let (mut predicted, mut correct) = (0u64, 0u64);
    let mut per_store: HashMap<u32, u64> = HashMap::new();
    let mut in_row: HashMap<u32, u64> = HashMap::new();
    for row in 0..snapshot.row_count() {
        in_row.clear();
        let mut m = 0;
        for (s, id) in snapshot.row_aliases(row) {
            if let Some(&t) = store_of.get(&format!("{}:{id}", s.as_str())) {
                m += 1;
                *in_row.entry(t).or_default() += 1;
                *per_store.entry(t).or_default() += 1;
            }
        }
        predicted += pairs(m);
        correct += in_row.values().map(|&k| pairs(k)).sum::<u64>();
    }
    let true_pairs: u64 = per_store.values().map(|&k| pairs(k)).sum();
    let ratio = |a: u64, b: u64| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    Ok(Dedup { precision: ratio(correct, predicted), recall: ratio(correct, true_pairs), predicted_pairs: predicted, true_pairs, correct_pairs: correct })
}
