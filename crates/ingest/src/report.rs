//! `storemap data report`: the dataset's figures, and de-duplication quality against the
//! generator's ground truth when there is one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use storemap_core::{BrandRecord, Filters, Snapshot};

use crate::error::{IngestError, Result};
use crate::footprint::Footprints;
use crate::land::LandMask;
use crate::reference::{read_csv, Ticker};
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
    /// coverage_confidence against the synthetic world's truth (absent without one).
    pub coverage: Option<CoverageScore>,
    /// The last refresh's change feed against the synthetic world's truth (absent until a
    /// synthetic folder has been refreshed; see `feed_score`).
    pub changes: Option<crate::feed_score::ChangeScore>,
    /// How far the rows stand from land (absent without the reference borders).
    pub land: Option<LandScore>,
    /// Per ticker: the countries with most verified rows beside the published ones (empty
    /// without the project's tables).
    pub ticker_countries: Vec<TickerCountries>,
    /// Where the brands the table has no counts for stand against their home market (absent
    /// without the project's tables).
    pub home_markets: Option<HomeMarkets>,
    /// Why the folder's synthetic truth scored nothing (dedup, realism, coverage and changes
    /// absent) although the snapshot is synthetic: it was built from another world (see
    /// [`truth_for`]).
    pub truth_not_used: Option<String>,
}

/// The truth files that score `snapshot`, or why there are none. A synthetic snapshot is
/// scored against `data_dir/sources/truth.csv` only when the folder's world (its stamp) is the
/// one the snapshot was built from: after `data rollback` to a build of another seed, scale or
/// as-of, the files describe other stores, and scores against them would be wrong, not low.
/// A folder whose world has no stamp is scored as it is.
pub fn truth_for(data_dir: &Path, snapshot: &Snapshot) -> (Option<PathBuf>, Option<String>) {
    let meta = snapshot.meta();
    if !meta.synthetic {
        return (None, None);
    }
    let sources = data_dir.join("sources");
    let truth = Some(sources.join("truth.csv"));
    let Some((scale, seed, as_of)) = crate::world::stamped(&sources) else {
        return (truth, None);
    };
    let as_of = storemap_core::format_iso(as_of);
    if meta.scale == Some(scale) && meta.seed == Some(seed) && meta.as_of == as_of {
        return (truth, None);
    }
    let built =
        format!("scale {}, seed {}, as of {}", meta.scale.map_or("?".into(), |s| s.to_string()), meta.seed.map_or("?".into(), |s| s.to_string()), meta.as_of);
    let why = format!(
        "this snapshot was built from the synthetic world of {built}, and the folder's sources hold scale {scale}, seed {seed}, as of {as_of} (after a rollback, or a build whose sources were replaced): nothing is scored against their truth"
    );
    (None, Some(why))
}

/// Fills what the project's tables (`data/`) give: each ticker's countries beside its published
/// ones, and the brands without counts against their home markets.
pub fn with_tables(report: &mut Report, snapshot: &Snapshot, tables: &Path) -> Result<()> {
    let read = |f: &str| tables.join(f);
    let footprints = Footprints::new(&read_csv(&read("footprints.csv"))?, &[], &read_csv(&read("home-cities.csv"))?)
        .with_world_totals(&read_csv(&read("world-totals.csv"))?)
        .with_brand_homes(&read_csv(&read("brand-homes.csv"))?);
    report.ticker_countries = ticker_countries(snapshot, &footprints);
    report.home_markets = Some(home_markets(snapshot, &footprints, &read_csv(&read("tickers.csv"))?));
    Ok(())
}

/// Countries with their verified rows, most first.
pub type Served = Vec<(String, u64)>;

/// A brand's verified rows by country.
fn served_countries<'a>(snapshot: &'a Snapshot, b: &BrandRecord) -> HashMap<&'a str, u64> {
    let mut served: HashMap<&str, u64> = HashMap::new();
    for r in (b.row_start as usize..b.row_end as usize).filter(|&r| snapshot.row_is_verified(r)) {
        *served.entry(snapshot.row_country(r)).or_default() += 1;
    }
    served
}

/// A brand's top country says little below this many verified rows.
pub const HOME_MARKET_MIN_ROWS: u64 = 20;

/// The brands without a row in `footprints.csv` whose home market the tables name (see
/// [`Footprint::named_home`], then the ticker's exchange), with at least
/// [`HOME_MARKET_MIN_ROWS`] verified rows: is home where most of them are?
#[derive(Debug, Serialize, PartialEq)]
pub struct HomeMarkets {
    /// [`HOME_MARKET_MIN_ROWS`], for readers of the JSON.
    pub min_rows: u64,
    pub brands: u64,
    /// Those whose home has the most verified rows.
    pub home_first: u64,
    /// The verified rows of those based outside the United States, and the share of them in it
    /// (placed by population alone, the US came first for every worldwide brand).
    pub rows_of_brands_based_abroad: u64,
    pub us_share_of_those: f64,
    /// The biggest of those whose home is not first (up to ten): brand, home, served top three.
    pub home_not_first: Vec<(String, String, Served)>,
}

/// See [`HomeMarkets`]. `tickers` gives the exchange's country of a brand no table homes.
pub fn home_markets(snapshot: &Snapshot, footprints: &Footprints, tickers: &[Ticker]) -> HomeMarkets {
    let listing: HashMap<&str, &str> = tickers.iter().filter_map(|t| t.listing_country().map(|c| (t.wikidata.as_str(), c))).collect();
    let mut out = HomeMarkets {
        min_rows: HOME_MARKET_MIN_ROWS,
        brands: 0,
        home_first: 0,
        rows_of_brands_based_abroad: 0,
        us_share_of_those: 0.0,
        home_not_first: Vec::new(),
    };
    let mut us = 0u64;
    let mut missed: Vec<(u64, String, String, Served)> = Vec::new();
    for b in snapshot.brands().iter().filter(|b| b.verified_count as u64 >= out.min_rows) {
        let Some(q) = b.wikidata.as_deref() else { continue };
        let fp = footprints.get(q);
        if fp.is_some_and(|f| f.has_counts() || !f.absent.is_empty()) {
            continue;
        }
        let Some(home) = fp.and_then(|f| f.named_home()).or_else(|| listing.get(q).copied()) else { continue };
        let served = served_countries(snapshot, b);
        let total: u64 = served.values().sum();
        let top = top3(served.iter().map(|(c, n)| (c.to_string(), *n)).collect());
        out.brands += 1;
        if top.first().is_some_and(|(c, _)| c == home) {
            out.home_first += 1;
        } else {
            missed.push((total, b.name.clone(), home.to_string(), top));
        }
        if home != "US" {
            out.rows_of_brands_based_abroad += total;
            us += served.get("US").copied().unwrap_or(0);
        }
    }
    out.us_share_of_those = us as f64 / out.rows_of_brands_based_abroad.max(1) as f64;
    missed.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    out.home_not_first = missed.into_iter().take(10).map(|(_, b, h, t)| (b, h, t)).collect();
    out
}

/// Distances are measured up to this far; a row beyond it counts as beyond.
const SEA_LIMIT_M: f64 = 50_000.0;

/// Rows off the coast: a pin in a harbour is a few hundred metres out, a store at sea is not.
#[derive(Debug, Serialize, PartialEq)]
pub struct LandScore {
    pub rows: u64,
    pub beyond_2_km: u64,
    pub beyond_10_km: u64,
    pub share_beyond_2_km: f64,
    /// The farthest row from land, in km (capped at 50).
    pub farthest_km: f64,
}

pub fn land_score(snapshot: &Snapshot, land: &LandMask) -> LandScore {
    let n = snapshot.row_count();
    let (mut beyond_2, mut beyond_10, mut farthest) = (0u64, 0u64, 0f64);
    for r in 0..n {
        let (lat, lng) = snapshot.row_lat_lng(r);
        let d = land.distance_to_land_m(lat, lng, SEA_LIMIT_M).unwrap_or(SEA_LIMIT_M);
        beyond_2 += (d > 2_000.0) as u64;
        beyond_10 += (d > 10_000.0) as u64;
        farthest = farthest.max(d);
    }
    LandScore {
        rows: n as u64,
        beyond_2_km: beyond_2,
        beyond_10_km: beyond_10,
        share_beyond_2_km: beyond_2 as f64 / n.max(1) as f64,
        farthest_km: farthest / 1000.0,
    }
}

#[derive(Debug, Serialize, PartialEq)]
pub struct TickerCountries {
    pub ticker: String,
    pub brand: String,
    /// The three countries with most verified rows, with their counts.
    pub served: Vec<(String, u64)>,
    /// The three biggest published counts (`data/footprints.csv`), at full size.
    pub published: Vec<(String, u64)>,
    /// Whether the served top country is the published one (`null` where none is published).
    pub top_matches: Option<bool>,
}

fn top3(mut v: Vec<(String, u64)>) -> Vec<(String, u64)> {
    v.retain(|(_, n)| *n > 0);
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(3);
    v
}

/// Each ticker's primary brand: where its verified rows are, beside where the chain publishes
/// most stores, read as the generator reads the table (the last row for a country winning; a
/// count for several countries together is one country's only where one member is left).
pub fn ticker_countries(snapshot: &Snapshot, published: &Footprints) -> Vec<TickerCountries> {
    snapshot
        .tickers()
        .iter()
        .filter_map(|t| {
            let b = snapshot.brands().get(t.brand as usize)?;
            let served = top3(served_countries(snapshot, b).into_iter().map(|(c, n)| (c.to_string(), n)).collect());
            let real = top3(
                b.wikidata.as_deref().and_then(|q| published.get(q)).map_or(Vec::new(), |f| f.counts.iter().map(|(c, n)| (c.clone(), u64::from(*n))).collect()),
            );
            let top_matches = real.first().map(|(c, _)| served.first().is_some_and(|(s, _)| s == c));
            Some(TickerCountries { ticker: t.ticker.clone(), brand: b.name.clone(), served, published: real, top_matches })
        })
        .collect()
}

/// How many brands (by true open stores) the coverage score covers, each in its countries.
pub const COVERAGE_BRANDS: usize = 500;

/// `coverage_confidence` as a JSON request for one brand in one country gets it, against the
/// true recall there: verified rows over the generator's open stores.
#[derive(Debug, Serialize, PartialEq)]
pub struct CoverageScore {
    /// Brand × country pairs scored (an estimate and at least one true open store).
    pub pairs: u64,
    /// Pairs the service answers `null` for (fewer than 5 storefronts, or one source).
    pub not_estimated: u64,
    /// Spearman's rank correlation of predicted and true recall.
    pub spearman: f64,
    pub mean_absolute_error: f64,
    /// Mean predicted minus mean true recall: positive when the estimate errs high.
    pub bias: f64,
    /// By predicted decile: how many pairs, their mean predicted and mean true recall.
    pub calibration: Vec<CalibrationBin>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct CalibrationBin {
    pub from: f64,
    pub to: f64,
    pub pairs: u64,
    pub mean_predicted: f64,
    pub mean_observed: f64,
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
    /// Nobody lists the chain's size, so the line covers only the countries with a published
    /// count: `true_open`, `verified` and `real` there (its other markets are estimated).
    pub published_only: bool,
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
        coverage: match truth.map(|p| p.with_file_name(BRAND_TRUTH_FILE)) {
            Some(p) if p.exists() => Some(coverage_scores(snapshot, &p)?),
            _ => None,
        },
        changes: None,
        land: None,
        ticker_countries: Vec::new(),
        home_markets: None,
        truth_not_used: None,
    })
}

/// Scores `coverage_confidence` for the [`COVERAGE_BRANDS`] brands with the most true open
/// stores, each in every country it has open stores in.
pub fn coverage_scores(snapshot: &Snapshot, brand_truth: &Path) -> Result<CoverageScore> {
    let name = brand_truth.display().to_string();
    let mut r = csv::Reader::from_path(brand_truth).map_err(|e| IngestError::file(&name, e))?;
    let mut by_brand: HashMap<String, Vec<(String, u64)>> = HashMap::new();
    for row in r.deserialize::<BrandTruth>() {
        let row = row.map_err(|e| IngestError::file(&name, e))?;
        if row.open > 0 {
            by_brand.entry(row.brand).or_default().push((row.country, row.open));
        }
    }
    let mut brands: Vec<(String, Vec<(String, u64)>)> = by_brand.into_iter().collect();
    brands.sort_by(|a, b| {
        let total = |v: &[(String, u64)]| v.iter().map(|c| c.1).sum::<u64>();
        total(&b.1).cmp(&total(&a.1)).then_with(|| a.0.cmp(&b.0))
    });
    brands.truncate(COVERAGE_BRANDS);
    let index: HashMap<&str, u32> = snapshot.brands().iter().enumerate().map(|(i, b)| (b.name.as_str(), i as u32)).collect();
    let (mut predicted, mut observed, mut not_estimated) = (Vec::new(), Vec::new(), 0u64);
    for (brand, countries) in &brands {
        let Some(&b) = index.get(brand.as_str()) else { continue };
        for (country, open) in countries {
            let f = Filters { country: Some(country.clone()), verified_only: true, ..Filters::default() };
            let q = snapshot.query(b, &f).map_err(|e| IngestError::Invalid(e.to_string()))?;
            match q.sightings.coverage(q.rows.len() as u32) {
                Some(c) => {
                    predicted.push(c);
                    observed.push((q.rows.len() as f64 / *open as f64).min(1.0));
                }
                None => not_estimated += 1,
            }
        }
    }
    Ok(score(&predicted, &observed, not_estimated))
}

/// The figures of [`CoverageScore`] from paired predictions and observations.
pub fn score(predicted: &[f64], observed: &[f64], not_estimated: u64) -> CoverageScore {
    let n = predicted.len();
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    let mae = mean(&predicted.iter().zip(observed).map(|(p, o)| (p - o).abs()).collect::<Vec<_>>());
    let calibration = (0..10)
        .map(|d| {
            let (from, to) = (d as f64 / 10.0, (d + 1) as f64 / 10.0);
            // The last decile includes 1.0.
            let inside: Vec<usize> = (0..n).filter(|&i| predicted[i] >= from && (predicted[i] < to || (d == 9 && predicted[i] <= 1.0))).collect();
            let pick = |v: &[f64]| mean(&inside.iter().map(|&i| v[i]).collect::<Vec<_>>());
            CalibrationBin { from, to, pairs: inside.len() as u64, mean_predicted: pick(predicted), mean_observed: pick(observed) }
        })
        .collect();
    CoverageScore {
        pairs: n as u64,
        not_estimated,
        spearman: spearman(predicted, observed),
        mean_absolute_error: mae,
        bias: mean(predicted) - mean(observed),
        calibration,
    }
}

/// Ranks from 1, ties given the mean of the ranks they span.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation: Pearson's correlation of the ranks (ties averaged). 0 when
/// either side has no spread.
pub fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    if va == 0.0 || vb == 0.0 {
        0.0
    } else {
        cov / (va * vb).sqrt()
    }
}

/// The [`REALISM_BRANDS`] brands with the most true open stores, by `truth-brands.csv`.
pub fn realism(snapshot: &Snapshot, brand_truth: &Path) -> Result<Vec<Realism>> {
    #[derive(Default)]
    struct Truth {
        open: u64,
        real: Option<u32>,
        /// Open stores, and the published counts, in the countries that have one.
        published: HashMap<String, (u64, u64)>,
    }
    let name = brand_truth.display().to_string();
    let mut r = csv::Reader::from_path(brand_truth).map_err(|e| IngestError::file(&name, e))?;
    let mut brands: HashMap<String, Truth> = HashMap::new();
    for row in r.deserialize::<BrandTruth>() {
        let row = row.map_err(|e| IngestError::file(&name, e))?;
        let e = brands.entry(row.brand).or_default();
        e.open += row.open;
        e.real = e.real.or(row.real);
        if let Some(n) = row.published {
            e.published.insert(row.country, (row.open, u64::from(n)));
        }
    }
    let scale = snapshot.meta().scale.unwrap_or(1.0);
    let by_name: HashMap<&str, &storemap_core::BrandRecord> = snapshot.brands().iter().map(|b| (b.name.as_str(), b)).collect();
    let mut lines: Vec<(u64, Realism)> = brands
        .into_iter()
        .map(|(brand, t)| {
            let record = by_name.get(brand.as_str());
            let published_only = t.real.is_none() && !t.published.is_empty();
            let (true_open, verified, real) = if published_only {
                let verified = record.map_or(0, |b| {
                    (b.row_start as usize..b.row_end as usize)
                        .filter(|&r| snapshot.row_is_verified(r) && t.published.contains_key(snapshot.row_country(r)))
                        .count()
                });
                let (open, real) = t.published.values().fold((0, 0), |(o, p), (open, n)| (o + open, p + n));
                (open, verified as u64, Some(real))
            } else {
                (t.open, record.map_or(0, |b| u64::from(b.verified_count)), t.real.map(u64::from))
            };
            let real = real.map(|n| n as f64 * scale);
            let ratio = |x: u64| real.filter(|&r| r > 0.0).map(|r| x as f64 / r);
            (t.open, Realism { true_ratio: ratio(true_open), verified_ratio: ratio(verified), brand, true_open, verified, real, published_only })
        })
        .collect();
    // The biggest chains in the world, however much of them is compared.
    lines.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.brand.cmp(&b.1.brand)));
    Ok(lines.into_iter().take(REALISM_BRANDS).map(|(_, line)| line).collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_by_hand() {
        // Same order: 1; reversed: -1.
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0, 40.0]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0], &[4.0, 3.0, 2.0, 1.0]) + 1.0).abs() < 1e-12);
        // Ranks 1..5 against 2,1,4,3,5: d² = 1+1+1+1+0 = 4; 1 - 6·4 / (5·24) = 0.8.
        assert!((spearman(&[1.0, 2.0, 3.0, 4.0, 5.0], &[0.2, 0.1, 0.4, 0.3, 0.5]) - 0.8).abs() < 1e-12);
        // Ties share their mean rank: [1, 2.5, 2.5, 4].
        assert_eq!(ranks(&[0.1, 0.5, 0.5, 0.9]), vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), 0.0, "no spread");
    }

    #[test]
    fn score_by_hand() {
        let s = score(&[0.95, 0.55, 0.15, 1.0], &[0.85, 0.65, 0.15, 0.9], 3);
        assert_eq!((s.pairs, s.not_estimated), (4, 3));
        assert!((s.mean_absolute_error - 0.075).abs() < 1e-12);
        assert!((s.bias - 0.025).abs() < 1e-12, "errs high by 0.025");
        let bins: Vec<(u64, f64)> = s.calibration.iter().map(|b| (b.pairs, b.mean_observed)).collect();
        assert_eq!(bins[1], (1, 0.15));
        assert_eq!(bins[5], (1, 0.65));
        assert_eq!(bins[9].0, 2, "0.95 and 1.0 in the top decile");
        assert!((bins[9].1 - 0.875).abs() < 1e-12);
        assert_eq!(s.calibration.iter().map(|b| b.pairs).sum::<u64>(), 4);
    }
}
