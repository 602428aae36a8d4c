//! Where chains sit close to each other: for two to five brands, every pair of data rows of
//! different brands within a distance (100 m by default, at most 5 km), with counts per
//! country and, per brand, how many of its stores have a partner: "how many Starbucks have a
//! Dunkin' within 200 m?". Read from the nearest-store index's per-brand trees: each store of
//! one brand looks among the other brand's stores within the distance, never a scan of pairs.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{CoreError, Result};
use crate::format::{write_overlap, Format, WriteOptions};
use crate::geodesy::{chord_m, haversine_m, LocalMetric};
use crate::model::SourceMask;
use crate::nearby::NearbyIndex;
use crate::pairs::{CountryOverlap, Overlap, Pair};
use crate::serve::{Answer, Budget, Refusal};
use crate::snapshot::Snapshot;

pub const OVERLAP_DEFAULT_DISTANCE_M: f64 = 100.0;
pub const OVERLAP_MAX_DISTANCE_M: f64 = 5_000.0;
pub const OVERLAP_MIN_BRANDS: usize = 2;
pub const OVERLAP_MAX_BRANDS: usize = 5;
/// Pairs one answer may list: past it the request is refused, to be narrowed (a country, a
/// shorter distance) rather than served as hundreds of megabytes.
pub const OVERLAP_MAX_PAIRS: u32 = 100_000;

#[derive(Debug, Clone)]
pub struct OverlapQuery {
    pub brands: Vec<u32>,
    pub distance_m: f64,
    /// ISO 3166-1 alpha-2, any case: pairs whose first store is in it.
    pub country: Option<String>,
    pub format: Format,
    pub provenance: bool,
    pub budget: Budget,
}

impl NearbyIndex {
    /// The pairs of `brands` within `distance_m`, with their counts.
    pub fn overlap(&self, snap: &Snapshot, brands: &[u32], distance_m: f64, country: Option<&str>, budget: &Budget) -> Result<Option<Overlap>> {
        if !(OVERLAP_MIN_BRANDS..=OVERLAP_MAX_BRANDS).contains(&brands.len()) {
            return Err(CoreError::InvalidFilter(format!("overlap needs {OVERLAP_MIN_BRANDS} to {OVERLAP_MAX_BRANDS} brands")));
        }
        if distance_m.is_nan() || distance_m <= 0.0 || distance_m > OVERLAP_MAX_DISTANCE_M {
            return Err(CoreError::InvalidFilter(format!("distance_m must be above 0 and at most {OVERLAP_MAX_DISTANCE_M}")));
        }
        snap.check_brands(brands)?;
        if (1..brands.len()).any(|i| brands[..i].contains(&brands[i])) {
            return Err(CoreError::InvalidFilter("the brands must be different companies".into()));
        }
        let in_country = |r: usize| country.is_none_or(|c| snap.row_country(r).eq_ignore_ascii_case(c));
        let search = chord_m(distance_m) * (1.0 + 1e-9);
        let mut out = Overlap { stores_with_partner: vec![0; brands.len()], ..Overlap::default() };
        let mut partnered: Vec<Vec<bool>> = brands.iter().map(|&b| vec![false; snap.brands[b as usize].pool_count() as usize]).collect();
        for i in 0..brands.len() {
            let rec = &snap.brands[brands[i] as usize];
            for j in i + 1..brands.len() {
                let other = self.tree(snap, Some(brands[j]));
                for a in rec.row_start as usize..rec.row_end as usize {
                    if !snap.row_is_verified(a) || !in_country(a) {
                        continue;
                    }
                    if a % 1024 == 0 && budget.passed() {
                        return Ok(None);
                    }
                    let mut near: Vec<Pair> = other
                        .locate_within_distance(LocalMetric::project(snap.lat[a], snap.lng[a]), search * search)
                        .map(|p| Pair {
                            a: a as u32,
                            b: p.data,
                            distance_m: haversine_m(snap.lat[a], snap.lng[a], snap.lat[p.data as usize], snap.lng[p.data as usize]),
                        })
                        .filter(|p| p.distance_m <= distance_m)
                        .collect();
                    near.sort_by(|x, y| x.distance_m.total_cmp(&y.distance_m).then(x.b.cmp(&y.b)));
                    for p in &near {
                        partnered[i][a - rec.row_start as usize] = true;
                        let jrec = &snap.brands[brands[j] as usize];
                        partnered[j][(p.b - jrec.row_start) as usize] = true;
                    }
                    out.pairs.extend(near);
                    if out.pairs.len() as u32 > OVERLAP_MAX_PAIRS {
                        return Err(CoreError::InvalidFilter(format!(
                            "more than {OVERLAP_MAX_PAIRS} pairs: narrow the request with a country or a shorter distance_m"
                        )));
                    }
                }
            }
        }
        // Counts per country, by the first store's country: each brand's distinct partnered rows
        // there (sets of the rows in pairs, not a mark per store of the brand per country).
        let mut by_country: BTreeMap<&str, (u32, Vec<BTreeSet<u32>>)> = BTreeMap::new();
        let brand_of = |r: u32| brands.iter().position(|&b| (snap.brands[b as usize].row_start..snap.brands[b as usize].row_end).contains(&r));
        for p in &out.pairs {
            let entry = by_country.entry(snap.row_country(p.a as usize)).or_insert_with(|| (0, vec![BTreeSet::new(); brands.len()]));
            entry.0 += 1;
            for r in [p.a, p.b] {
                if let Some(k) = brand_of(r) {
                    entry.1[k].insert(r);
                }
            }
        }
        out.stores_with_partner = partnered.iter().map(|v| v.iter().filter(|&&x| x).count() as u32).collect();
        out.by_country = by_country
            .into_iter()
            .map(|(c, (pairs, rows))| CountryOverlap { country: c.to_string(), pairs, stores_with_partner: rows.iter().map(|r| r.len() as u32).collect() })
            .collect();
        out.by_country.sort_by(|x, y| y.pairs.cmp(&x.pairs).then_with(|| x.country.cmp(&y.country)));
        Ok(Some(out))
    }

    /// Answers an overlap request: priced by pairs, and timed, before a byte is written.
    pub fn answer_overlap(&self, snap: &Snapshot, q: &OverlapQuery) -> Result<Answer> {
        let region = q.country.as_deref().map_or_else(|| "worldwide".to_string(), str::to_uppercase);
        if q.budget.passed() {
            return Ok(Answer::refused(Refusal::Deadline, 0, 0, region));
        }
        let Some(overlap) = self.overlap(snap, &q.brands, q.distance_m, q.country.as_deref(), &q.budget)? else {
            return Ok(Answer::refused(Refusal::Deadline, 0, 0, region));
        };
        let count = overlap.pairs.len() as u32;
        if let Some(why) = q.budget.refusal(count) {
            return Ok(Answer::refused(why, count, count, region));
        }
        let mut sources = SourceMask::default();
        for p in &overlap.pairs {
            sources.0 |= snap.sources[p.a as usize] | snap.sources[p.b as usize];
        }
        let names: Vec<&str> = q.brands.iter().map(|&b| snap.brands[b as usize].name.as_str()).collect();
        let opts = WriteOptions { provenance: q.provenance, brand_label: names.join(", "), region: region.clone(), coverage: None, ..WriteOptions::default() };
        let body = write_overlap(snap, &names, q.distance_m, &overlap, q.format, &opts);
        Ok(Answer { body, count, total: count, sources, region, coverage: None, refused: None, hours_unknown: None })
    }
}
