//! The stores nearest a point: of one brand, of several, or of any brand, nearest first, each
//! with its great-circle distance. Answered from R-trees over the data rows (confidence at the
//! floor or above, not community-only), one per brand and one over every brand, each built the
//! first time a request needs it and kept for the snapshot's life: a query reads a few tree
//! nodes, never a scan.
//!
//! Points are kept as 3-D positions on the sphere (`LocalMetric`): the straight-line (chord)
//! distance between two of them grows with the arc between them, so the tree's nearest by
//! chord is the nearest by great circle, anywhere on Earth, across the antimeridian and the
//! poles alike.

use std::sync::OnceLock;

use rstar::primitives::GeomWithData;
use rstar::RTree;

use crate::error::{CoreError, Result};
use crate::format::{write_nearby, Format, WriteOptions};
use crate::geodesy::{haversine_m, LocalMetric};
use crate::model::SourceMask;
use crate::open_at::{OpenAt, OpenCheck};
use crate::query::number_text;
use crate::serve::{Answer, Budget, Refusal};
use crate::snapshot::{Snapshot, TextColumn};

/// Stores a request gets when it does not say, and the most it may ask for.
pub const NEARBY_DEFAULT_LIMIT: u32 = 10;
pub const NEARBY_MAX_LIMIT: u32 = 500;
/// With `open_at`, the nearest stores looked at per brand, open or not: a request for the ten
/// open stores nearest a point where few give hours must not read a whole continent's.
pub const NEARBY_OPEN_SCAN: usize = 5_000;

pub(crate) type Tree = RTree<GeomWithData<[f64; 3], u32>>;

/// A snapshot's spatial index for nearest-store queries (built lazily, shared by threads).
#[derive(Debug)]
pub struct NearbyIndex {
    by_brand: Vec<OnceLock<Tree>>,
    all: OnceLock<Tree>,
}

/// A nearest-store request.
#[derive(Debug, Clone)]
pub struct NearbyQuery {
    /// Brand indices; empty for stores of any brand.
    pub brands: Vec<u32>,
    pub lat: f64,
    pub lng: f64,
    /// At most this many stores (1 to `NEARBY_MAX_LIMIT`).
    pub limit: u32,
    /// Only stores within this many metres.
    pub radius_m: Option<f64>,
    pub format: Format,
    pub provenance: bool,
    /// CSV: the opening_hours column.
    pub hours_column: bool,
    /// The document's `brand`.
    pub brand_label: String,
    pub budget: Budget,
    /// Only stores open at this moment (of the `NEARBY_OPEN_SCAN` nearest per brand).
    pub open_at: Option<OpenAt>,
}

fn tree_of(snap: &Snapshot, rows: impl Iterator<Item = usize>) -> Tree {
    let points = rows.filter(|&r| snap.row_is_verified(r)).map(|r| GeomWithData::new(LocalMetric::project(snap.lat[r], snap.lng[r]), r as u32)).collect();
    RTree::bulk_load(points)
}

impl NearbyIndex {
    pub fn new(snap: &Snapshot) -> NearbyIndex {
        NearbyIndex { by_brand: (0..snap.brands.len()).map(|_| OnceLock::new()).collect(), all: OnceLock::new() }
    }

    pub(crate) fn tree(&self, snap: &Snapshot, brand: Option<u32>) -> &Tree {
        match brand {
            Some(b) => self.by_brand[b as usize].get_or_init(|| {
                let rec = &snap.brands[b as usize];
                tree_of(snap, rec.row_start as usize..rec.row_end as usize)
            }),
            None => self.all.get_or_init(|| tree_of(snap, 0..snap.row_count())),
        }
    }

    /// The `limit` data rows of `brands` (any brand when empty) nearest `(lat, lng)`, within
    /// `radius_m` if given: (row, metres), nearest first, equal distances by row.
    pub fn nearest(&self, snap: &Snapshot, brands: &[u32], lat: f64, lng: f64, limit: u32, radius_m: Option<f64>) -> Result<Vec<(u32, f64)>> {
        self.nearest_open(snap, brands, (lat, lng), limit, radius_m, None)
    }

    /// As [`NearbyIndex::nearest`], of the stores `open` finds open (looking at most at
    /// `NEARBY_OPEN_SCAN` per brand); stores of unknown hours it passes are counted in it.
    pub fn nearest_open<'a>(
        &self,
        snap: &'a Snapshot,
        brands: &[u32],
        (lat, lng): (f64, f64),
        limit: u32,
        radius_m: Option<f64>,
        mut open: Option<&mut (OpenCheck<'a>, u32)>,
    ) -> Result<Vec<(u32, f64)>> {
        if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lng) {
            return Err(CoreError::InvalidFilter("lat must be within [-90, 90] and lng within [-180, 180]".into()));
        }
        if limit == 0 || limit > NEARBY_MAX_LIMIT {
            return Err(CoreError::InvalidFilter(format!("limit must be 1 to {NEARBY_MAX_LIMIT}")));
        }
        if radius_m.is_some_and(|m| m.is_nan() || m <= 0.0) {
            return Err(CoreError::InvalidFilter("radius must be positive".into()));
        }
        if !brands.is_empty() {
            snap.check_brands(brands)?;
        }
        let trees: Vec<&Tree> = if brands.is_empty() { vec![self.tree(snap, None)] } else { brands.iter().map(|&b| self.tree(snap, Some(b))).collect() };
        let here = LocalMetric::project(lat, lng);
        let mut found: Vec<(u32, f64)> = Vec::new();
        for tree in trees {
            let (mut taken, mut last_chord2) = (0usize, 0.0);
            for (looked, (p, chord2)) in tree.nearest_neighbor_iter_with_distance_2(&here).enumerate() {
                // Past the limit, only stores as near as the last one taken (a tie at the
                // boundary is settled by row below, not by the tree's order).
                if taken >= limit as usize && chord2 > last_chord2 * (1.0 + 1e-12) + 1e-9 {
                    break;
                }
                if open.is_some() && looked >= NEARBY_OPEN_SCAN {
                    break;
                }
                let r = p.data as usize;
                let d = haversine_m(lat, lng, snap.lat[r], snap.lng[r]);
                if let Some(m) = radius_m {
                    if d > m {
                        break;
                    }
                }
                if let Some((check, unknown)) = open.as_deref_mut() {
                    if !check.admits(snap.row_text(TextColumn::OpeningHours, r), snap.lat[r], snap.lng[r], unknown) {
                        continue;
                    }
                }
                found.push((p.data, d));
                taken += 1;
                last_chord2 = chord2;
            }
        }
        found.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        found.truncate(limit as usize);
        Ok(found)
    }

    /// Answers a nearest-store request: priced and timed like a data request before a byte is
    /// written.
    pub fn answer(&self, snap: &Snapshot, q: &NearbyQuery) -> Result<Answer> {
        let region = match q.radius_m {
            Some(m) => format!("within {} km of {}, {}", number_text(m / 1000.0), number_text(q.lat), number_text(q.lng)),
            None => format!("near {}, {}", number_text(q.lat), number_text(q.lng)),
        };
        if q.budget.passed() {
            return Ok(Answer::refused(Refusal::Deadline, 0, 0, region));
        }
        let mut open = q.open_at.map(|at| (OpenCheck::new(at), 0u32));
        let rows = self.nearest_open(snap, &q.brands, (q.lat, q.lng), q.limit, q.radius_m, open.as_mut())?;
        let hours_unknown = open.map(|(_, n)| n);
        let count = rows.len() as u32;
        if let Some(why) = q.budget.refusal(count) {
            return Ok(Answer::refused(why, count, count, region));
        }
        let mut sources = SourceMask::default();
        for &(r, _) in &rows {
            sources.0 |= snap.sources[r as usize];
        }
        let opts = WriteOptions {
            provenance: q.provenance,
            brand_label: q.brand_label.clone(),
            region: region.clone(),
            coverage: None,
            open_at: q.open_at,
            hours_unknown,
            hours_column: q.hours_column,
        };
        let body = write_nearby(snap, &rows, q.brands.len() != 1, q.format, &opts);
        Ok(Answer { body, count, total: count, sources, region, coverage: None, refused: None, hours_unknown })
    }
}
