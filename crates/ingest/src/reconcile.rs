//! Reconciliation: per brand, rows of all sources are clustered within 100 m, merged field by
//! field in a source order chosen per brand and region, and scored.
//!
//! Clustering is greedy around anchors, not transitive: a row joins the nearest cluster whose
//! *anchor* (first, most precise member) is within 100 m and which has no row of the same
//! source yet. So a chain of rows 80 m apart never collapses into one, and two stores of one
//! brand in one source stay two however close they are. Rows Overture re-published from
//! AllThePlaces or Foursquare join the cluster of the row they came from, whatever the
//! distance, so a store never counts twice through Overture.

use std::collections::HashMap;
use std::sync::Mutex;

use storemap_core::{brand_identity, cluster, ClusterPoint, RowBuilder, SourceMask, SourceType, StorefrontType};

use crate::catalog::Catalog;
use crate::countries::CountryIndex;
use crate::density::PopulationGrid;
use crate::hash::fnv1a;
use crate::identity::PreviousIds;
use crate::parallel::parallel_stream;
use crate::Skip;
use crate::SourceRow;

/// The contract's de-duplication tolerance.
pub const TOLERANCE_M: f64 = storemap_core::DEDUP_TOLERANCE_M;

/// How much one source's sighting says that a store exists: retailer-published locators most,
/// the community map least. Combined as independent evidence: 1 - prod(1 - w).
pub fn source_weight(s: SourceType) -> f64 {
    match s {
        SourceType::Atp => 0.62,
        SourceType::Overture => 0.45,
        SourceType::Fsq => 0.35,
        SourceType::Osm => 0.30,
    }
}

/// What a sighting in a sparse region (see `density`) is worth relative to a dense one.
const SPARSE_PENALTY: f64 = 0.85;

/// The order in which sources anchor clusters: the most precise pins first.
fn anchor_rank(s: SourceType) -> u8 {
    match s {
        SourceType::Atp => 0,
        SourceType::Overture => 1,
        SourceType::Osm => 2,
        SourceType::Fsq => 3,
    }
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct ReconcileStats {
    pub rows_in: u64,
    /// Rows no brand of the catalog claimed (unbranded places, unknown chains).
    pub rows_unbranded: u64,
    pub unbranded_samples: Vec<String>,
    pub clusters: u64,
    pub linked_by_record_id: u64,
    pub countries_backfilled: u64,
    /// Rows of the snapshot this build replaced (whose ids it continues; see `identity`).
    pub previous_rows: u64,
    /// Rows that kept a previous row's id through a shared source id, and through its place.
    pub ids_kept_by_source_id: u64,
    pub ids_kept_by_place: u64,
    /// Source rows dropped as a second copy of one record: the same source and id within a
    /// brand (a file imported twice, a spider listing a store twice, a release's part left
    /// beside its replacement). OpenStreetMap's are skipped at its import already
    /// (`duplicate_id`); the places files and AllThePlaces carry ids only this step compares.
    #[serde(default)]
    pub duplicate_source_ids: u64,
    /// The same, by source (`osm`, `atp`, …): each source's import report counts them as
    /// skipped `duplicate_id`, not kept.
    #[serde(default)]
    pub duplicates_by_source: std::collections::BTreeMap<String, u64>,
}

pub struct Reconciler<'a> {
    pub catalog: &'a Catalog,
    pub countries: &'a CountryIndex,
    pub population: &'a PopulationGrid,
    /// The refresh time: every row's `last_updated`.
    pub as_of: i64,
    /// False: the legacy path, one row per source row, no provenance.
    pub multi_source: bool,
    /// The ids of the snapshot this build replaces, which its stores keep.
    pub previous: Option<&'a PreviousIds>,
}

pub use crate::bucket_row::{Bucket, BucketRow};

/// Unbranded rows kept as examples for the build's report.
const UNBRANDED_SAMPLES: usize = 20;

/// Source rows sorted into brands, as the importers' output is matched: rows no brand claims
/// are counted and dropped, and the fields only matching needed are released, so a full-size
/// build holds one compact copy of its rows.
pub struct BrandBuckets {
    pub rows: Vec<Bucket>,
    /// The rows of imports appended after this one, by brand, each import's apart: joined
    /// brand by brand as each is reconciled (`take_brand`), not when appended. Appending into
    /// `rows` grew every brand's vector while the old one was still held, and at scale 1 the
    /// build's peak was that join (5.3 GiB against 3.9 for the four imports' rows).
    later: Vec<Vec<Bucket>>,
    pub stats: ReconcileStats,
    /// Rows no brand claimed, by source and reason, for each source's import report.
    pub unmatched: std::collections::BTreeMap<(SourceType, Skip), u64>,
    /// A shard's brands (`shard`): rows of the others are counted here and dropped.
    keep: Option<std::sync::Arc<Vec<bool>>>,
    pub other_shards: u64,
}

impl BrandBuckets {
    pub fn new(brands: usize) -> BrandBuckets {
        BrandBuckets {
            rows: (0..brands).map(|_| Bucket::default()).collect(),
            later: Vec::new(),
            stats: ReconcileStats::default(),
            unmatched: Default::default(),
            keep: None,
            other_shards: 0,
        }
    }

    /// Keeps only the brands `keep` marks (a shard's), counting the other brands' rows.
    pub fn only(mut self, keep: std::sync::Arc<Vec<bool>>) -> BrandBuckets {
        self.keep = Some(keep);
        self
    }

    /// Moves another import's buckets after this one's: each brand's rows, then the counts
    /// (the first unbranded samples in the order the imports came).
    pub fn append(&mut self, other: BrandBuckets) {
        self.later.push(other.rows);
        self.later.extend(other.later);
        self.stats.rows_in += other.stats.rows_in;
        self.stats.rows_unbranded += other.stats.rows_unbranded;
        let room = UNBRANDED_SAMPLES.saturating_sub(self.stats.unbranded_samples.len());
        self.stats.unbranded_samples.extend(other.stats.unbranded_samples.into_iter().take(room));
        for (k, n) in other.unmatched {
            *self.unmatched.entry(k).or_default() += n;
        }
        self.other_shards += other.other_shards;
    }

    /// Whether any import gave brand `b` rows.
    fn has_rows(&self, b: usize) -> bool {
        self.row_count(b) > 0
    }

    /// Brand `b`'s rows over every import.
    fn row_count(&self, b: usize) -> usize {
        self.rows[b].len() + self.later.iter().map(|part| part[b].len()).sum::<usize>()
    }

    /// Brand `b`'s rows of every import, in the order the imports were appended, moved out
    /// (each import's bucket freed as it is read).
    pub fn take_brand(&mut self, b: usize) -> Bucket {
        let first = std::mem::take(&mut self.rows[b]);
        Bucket::concat(std::iter::once(first).chain(self.later.iter_mut().map(|part| std::mem::take(&mut part[b]))).collect())
    }

    /// Gives back the room each brand's bucket grew into: an import's buckets are complete
    /// once it ends, and held until their brand is reconciled.
    pub fn shrink_to_fit(&mut self) {
        self.rows.iter_mut().for_each(Bucket::shrink_to_fit);
    }

    /// Matches rows to brands and moves them into their buckets, on the calling thread (tests
    /// and small inputs; an import matches on every core with [`Matched::new`] and
    /// [`BrandBuckets::take`]).
    pub fn add(&mut self, catalog: &Catalog, countries: &CountryIndex, rows: Vec<SourceRow>) {
        let matched = Matched::new(catalog, countries, self.keep.as_deref().map(Vec::as_slice), rows);
        self.take(matched);
    }

    /// Adds a batch matched elsewhere: each brand's rows after the ones before, so batches
    /// taken in the order they were read give the buckets one matching at a time gives.
    pub fn take(&mut self, m: Matched) {
        self.stats.rows_in += m.rows_in;
        self.stats.rows_unbranded += m.rows_unbranded;
        let room = UNBRANDED_SAMPLES.saturating_sub(self.stats.unbranded_samples.len());
        self.stats.unbranded_samples.extend(m.unbranded_samples.into_iter().take(room));
        for (k, n) in m.unmatched {
            *self.unmatched.entry(k).or_default() += n;
        }
        self.other_shards += m.other_shards;
        // Copied even into an empty bucket: a batch's buckets are small and made on another
        // thread among rows freed at once; kept, they pinned the pages around them (an import
        // at scale 1 held 0.14 GiB more).
        for (b, bucket) in m.brands {
            self.rows[b as usize].append(bucket);
        }
    }
}

/// A batch of source rows matched to brands and packed into buckets of their own, on any
/// thread: the costly part of sorting rows into brands (the match, the copy of their text, the
/// freeing of the rows) done where it can run beside other batches, leaving
/// [`BrandBuckets::take`] a copy of bytes.
pub struct Matched {
    /// Each brand the batch has rows of, with those rows in the batch's order.
    brands: Vec<(u32, Bucket)>,
    rows_in: u64,
    rows_unbranded: u64,
    /// The first unbranded rows, described (at most [`UNBRANDED_SAMPLES`]).
    unbranded_samples: Vec<String>,
    unmatched: std::collections::BTreeMap<(SourceType, Skip), u64>,
    /// Rows of brands outside `keep`, counted and dropped.
    other_shards: u64,
}

impl Matched {
    /// Matches `rows`; with `keep` (a shard's brands) the other brands' rows are counted and
    /// dropped.
    pub fn new(catalog: &Catalog, countries: &CountryIndex, keep: Option<&[bool]>, rows: Vec<SourceRow>) -> Matched {
        let mut m = Matched {
            brands: Vec::new(),
            rows_in: rows.len() as u64,
            rows_unbranded: 0,
            unbranded_samples: Vec::new(),
            unmatched: Default::default(),
            other_shards: 0,
        };
        // Each brand's place in `brands`.
        let mut slot: HashMap<u32, usize, foldhash::fast::FixedState> = HashMap::default();
        for r in rows {
            match catalog.match_row(&r, countries) {
                Some(b) if keep.is_some_and(|k| !k[b as usize]) => m.other_shards += 1,
                Some(b) => {
                    let at = *slot.entry(b).or_insert_with(|| {
                        m.brands.push((b, Bucket::default()));
                        m.brands.len() - 1
                    });
                    m.brands[at].1.push(r);
                }
                None => {
                    if m.unbranded_samples.len() < UNBRANDED_SAMPLES {
                        m.unbranded_samples.push(format!(
                            "{}:{} {:?} ({})",
                            r.source().as_str(),
                            r.source_id,
                            r.name,
                            r.category.as_deref().unwrap_or("no category")
                        ));
                    }
                    m.rows_unbranded += 1;
                    *m.unmatched.entry((r.source(), catalog.unmatched(&r))).or_default() += 1;
                }
            }
        }
        m
    }

    /// Rows the batch held.
    pub fn rows(&self) -> u64 {
        self.rows_in
    }
}

/// Brands reconciled ahead of the one whose rows go into the snapshot next, per core, whatever
/// their size: every core stays busy past a big brand, and the rows made but not yet handed on
/// stay few.
const AHEAD_PER_CORE: usize = 2;

/// Past those, brands may start while the source rows from the next one to theirs are at most
/// this share of all: the many small brands after the big ones (each a moment's work, where two
/// per core left cores waiting on the thread that hands rows on) run ahead, big ones do not
/// (rows waiting cost memory, and the build's peak is near here).
const AHEAD_ROW_SHARE: u64 = 256;

/// And however many cores there are, the brands from the next one to theirs hold at most this
/// share of the source rows: each brand being reconciled holds its rows decoded and the rows
/// made of them (a few hundred bytes each), and with 16 threads the 16 biggest brands at once
/// set a scale-1 build's peak (bench/RESULTS.md, "Memory on many threads").
const WINDOW_ROW_SHARE: u64 = 24;

/// ... unless that is fewer than these: a small build still spreads over every core.
const WINDOW_MIN_ROWS: u64 = 16_384;

impl Reconciler<'_> {
    /// All rows at once: for tests and small imports.
    pub fn run(&self, rows: &[SourceRow]) -> (Vec<RowBuilder>, ReconcileStats) {
        let mut buckets = BrandBuckets::new(self.catalog.brands.len());
        buckets.add(self.catalog, self.countries, rows.to_vec());
        let mut out = Vec::new();
        let stats = self.run_buckets(buckets, &|rows| rows, &mut |rows| out.extend(rows));
        (out, stats)
    }

    /// Reconciles brand by brand on every core, handing each brand's finished rows to `pack` on
    /// the thread that made them (a snapshot's interning, spread over the cores) and what it
    /// made of them to `sink` in brand order; each brand's source rows are freed as soon as its
    /// rows are made. (In blocks of 256 brands, the first block, the biggest brands, held about
    /// a third of a build's source rows and the rows made of them at once, which set a scale-1
    /// build's peak; and each block waited for its slowest brand.)
    pub fn run_buckets<T: Send>(&self, mut buckets: BrandBuckets, pack: &(dyn Fn(Vec<RowBuilder>) -> T + Sync), sink: &mut dyn FnMut(T)) -> ReconcileStats {
        let mut stats = std::mem::take(&mut buckets.stats);
        stats.previous_rows = self.previous.map_or(0, |p| p.rows() as u64);
        let brands: Vec<u32> = (0..buckets.rows.len() as u32).filter(|&b| buckets.has_rows(b as usize)).collect();
        let ahead = AHEAD_PER_CORE * crate::parallel::threads();
        // Source rows before each brand of `brands`.
        let before = crate::parallel::running_totals(brands.iter().map(|&b| buckets.row_count(b as usize) as u64));
        let row_budget = before[brands.len()] / AHEAD_ROW_SHARE;
        let row_cap = (before[brands.len()] / WINDOW_ROW_SHARE).max(WINDOW_MIN_ROWS);
        let buckets = Mutex::new(buckets);
        parallel_stream(
            &brands,
            |next, i| (i < next + ahead && crate::parallel::ahead_within(&before, next, i, row_cap)) || before[i + 1] - before[next] <= row_budget,
            |&b| {
                let bucket = buckets.lock().unwrap_or_else(|e| e.into_inner()).take_brand(b as usize);
                let rows: Vec<BucketRow> = bucket.iter().collect();
                let idx: Vec<usize> = (0..rows.len()).collect();
                let (clusters, linked, duplicates) = self.cluster_brand(b, &idx, &rows);
                let n = clusters.len() as u64;
                let mut backfilled = 0;
                let mut built: Vec<RowBuilder> = clusters
                    .iter()
                    .map(|c| {
                        let r = &rows[c.members[0]];
                        let (row, filled) = self.merge(c, &rows, self.population.is_sparse(r.lat, r.lng));
                        backfilled += filled as u64;
                        row
                    })
                    .collect();
                drop(rows);
                drop(bucket);
                let kept = match self.previous {
                    Some(p) => {
                        let brand = &self.catalog.brands[b as usize];
                        p.assign(brand_identity(brand.wikidata.as_deref(), Some(&brand.nsi_id), &brand.name), &mut built)
                    }
                    None => (0, 0),
                };
                (pack(built), backfilled, linked, n, kept, duplicates)
            },
            |(packed, backfilled, linked, n, kept, duplicates)| {
                for (source, d) in SourceType::ALL.iter().zip(duplicates) {
                    if d > 0 {
                        stats.duplicate_source_ids += d;
                        *stats.duplicates_by_source.entry(source.as_str().to_string()).or_default() += d;
                    }
                }
                stats.linked_by_record_id += linked;
                stats.clusters += n;
                stats.ids_kept_by_source_id += kept.0;
                stats.ids_kept_by_place += kept.1;
                stats.countries_backfilled += backfilled;
                sink(packed);
                std::ops::ControlFlow::Continue(())
            },
        );
        stats
    }

    /// The brand's clusters, the rows linked by record id, and the second copies dropped.
    fn cluster_brand(&self, brand: u32, idx: &[usize], rows: &[BucketRow]) -> (Vec<Cluster>, u64, [u64; 4]) {
        // Rows that name their origin by record id go last, so the row they point at (ATP or
        // Foursquare, whatever its anchor rank) already has its cluster when they arrive. Each
        // source has a rank of its own, so two copies of one record sit side by side, and the
        // first (in the order the rows came; the sort is stable) is the one kept.
        let mut order: Vec<usize> = idx.to_vec();
        order.sort_by(|&a, &b| {
            let (ra, rb) = (&rows[a], &rows[b]);
            (ra.has_derived(), anchor_rank(ra.source), ra.source_id()).cmp(&(rb.has_derived(), anchor_rank(rb.source), rb.source_id()))
        });
        let before = order.len();
        // (A row without an id is nobody's copy: a spider's features with `"id": ""` stay apart.)
        let mut duplicates = [0u64; 4];
        order.dedup_by(|a, b| {
            let copy = rows[*a].source == rows[*b].source && !rows[*a].source_id().is_empty() && rows[*a].source_id() == rows[*b].source_id();
            duplicates[rows[*a].source as usize] += copy as u64;
            copy
        });
        debug_assert_eq!(duplicates.iter().sum::<u64>(), (before - order.len()) as u64);
        if !self.multi_source {
            return (order.into_iter().map(|i| Cluster { brand, members: vec![i], order: SourceType::ALL }).collect(), 0, duplicates);
        }
        // Ids that Overture's `sources[].record_id` may point at, as positions in `order`.
        let mut by_record: HashMap<(SourceType, &str), u32> = HashMap::new();
        for (k, &i) in order.iter().enumerate() {
            let r = &rows[i];
            if matches!(r.source, SourceType::Atp | SourceType::Fsq) {
                by_record.insert((r.source, r.source_id()), k as u32);
                if let Some(o) = r.alt_id() {
                    by_record.entry((r.source, o)).or_insert(k as u32);
                }
            }
        }
        let points: Vec<ClusterPoint> = order
            .iter()
            .map(|&i| {
                let r = &rows[i];
                let link = r.derived_from().find_map(|(s, id)| by_record.get(&(s, id)).copied());
                ClusterPoint { lat: r.lat, lng: r.lng, source: r.source, link }
            })
            .collect();
        let result = cluster(&points, TOLERANCE_M);
        let linked = result.linked;
        let mut clusters: Vec<Cluster> =
            result.members().into_iter().map(|m| Cluster { brand, members: m.into_iter().map(|k| order[k]).collect(), order: SourceType::ALL }).collect();
        // Per region (the tagged country), how many rows each source has of this brand; the
        // source that sees most of the brand there leads the merge, so no source is primary
        // everywhere. Ties go to the more precise source.
        let mut seen: HashMap<&str, [u32; 4]> = HashMap::new();
        for &i in &order {
            let r = &rows[i];
            seen.entry(r.country().unwrap_or("")).or_default()[r.source as usize] += 1;
        }
        for c in &mut clusters {
            let region = c.members.iter().find_map(|&m| rows[m].country()).unwrap_or("");
            let counts = seen.get(region).copied().unwrap_or_default();
            let mut order = SourceType::ALL;
            order.sort_by_key(|s| (std::cmp::Reverse(counts[*s as usize]), anchor_rank(*s)));
            c.order = order;
        }
        (clusters, linked, duplicates)
    }

    /// One reconciled row from a cluster. Returns whether the country came from the shapes.
    fn merge(&self, c: &Cluster, rows: &[BucketRow], sparse: bool) -> (RowBuilder, bool) {
        let members: Vec<&BucketRow> = c.members.iter().map(|&i| &rows[i]).collect();
        let order = c.order;
        let mut ranked = members.clone();
        ranked.sort_by(|a, b| {
            let rank = |r: &BucketRow| order.iter().position(|s| *s == r.source).unwrap_or(9);
            (rank(a), a.source_id()).cmp(&(rank(b), b.source_id()))
        });
        let first = |f: for<'r> fn(&'r BucketRow<'r>) -> Option<&'r str>| ranked.iter().find_map(|r| f(r)).map(str::to_string).unwrap_or_default();

        let lead = ranked[0];
        let mut sources = SourceMask::default();
        for r in &members {
            sources.insert(r.source);
        }
        let mut aliases: Vec<(SourceType, String)> = members.iter().map(|r| (r.source, r.source_id().to_string())).collect();
        aliases.sort();

        // The country: what the sources agree on, else what the shapes say.
        let tagged: Vec<&str> = ranked.iter().filter_map(|r| r.country()).filter(|c| self.countries.knows(c)).collect();
        let agreed = tagged.first().filter(|c| tagged.iter().all(|t| t == *c)).map(|c| c.to_string());
        let (country, backfilled) = match agreed {
            Some(c) => (c, false),
            None => match self.countries.locate(lead.lat, lead.lng) {
                Some(c) => (c.to_string(), true),
                None => (
                    tagged
                        .first()
                        .map(|c| c.to_string())
                        .or_else(|| ranked.iter().find_map(|r| r.country().map(str::to_string)))
                        .unwrap_or_else(|| "XX".into()),
                    false,
                ),
            },
        };

        let mut confidence = 1.0 - sources.iter().map(|s| 1.0 - source_weight(s)).product::<f64>();
        if sparse {
            confidence *= SPARSE_PENALTY;
        }
        let name = first(|r| Some(r.name()).filter(|n| !n.is_empty()));
        let storefront = storefront_type(&name, self.catalog.default_storefront(c.brand));
        let last_verified = last_verified(members.iter().map(|r| r.seen_at), self.as_of);
        let id_source = aliases.iter().map(|(s, id)| format!("{}:{id}", s.as_str())).min().unwrap_or_default();

        let row = RowBuilder {
            brand: c.brand,
            lat: lead.lat,
            lng: lead.lng,
            id: fnv1a(id_source.as_bytes()),
            name,
            // Written once, in the country's order (one copy of the source's text, not two).
            address: ranked.iter().find_map(|r| r.address()).map_or_else(String::new, |a| crate::house_number::line(a, &country).into_owned()),
            city: first(|r| r.city()),
            state: first(|r| r.state()),
            postcode: first(|r| r.postcode()),
            phone: first(|r| r.phone()),
            opening_hours: freshest_hours(&ranked, self.as_of),
            country,
            last_updated: self.as_of,
            confidence: confidence as f32,
            provenance: self.multi_source,
            last_verified: self.multi_source.then_some(last_verified),
            storefront: self.multi_source.then_some(storefront),
            sources,
            community_only: sources == SourceMask(SourceType::Osm.bit()),
            aliases,
        };
        (row, backfilled)
    }
}

/// Sources' own dates before this (2000-01-01) are no sighting: no source we read existed, and
/// a year-0 or 1970 date is a default a writer filled in.
const SEEN_FLOOR: i64 = 946_684_800;

/// A source's date as a sighting: none before [`SEEN_FLOOR`], nor more than a year after the
/// snapshot's time (a typo or a broken clock, 2099). A date a little after it is real: data
/// refreshed after the as-of a build was asked for.
fn sighting_time(seen: Option<i64>, as_of: i64) -> Option<i64> {
    seen.filter(|&t| t >= SEEN_FLOOR && t <= as_of.saturating_add(storemap_core::AHEAD_MAX_S))
}

/// When a store was last seen by a source: the newest sighting, never after the snapshot's
/// own time (it would claim a check that has not happened yet); the snapshot's time when no
/// source dates it.
fn last_verified(seen: impl Iterator<Item = Option<i64>>, as_of: i64) -> i64 {
    seen.filter_map(|t| sighting_time(t, as_of)).max().map_or(as_of, |t| t.min(as_of))
}

/// The hours of the source that saw the store last (hours change; the newest sighting is the
/// likeliest still true); among sightings of one date, the first in the cluster's source order.
/// A sighting without a date (OpenStreetMap's extracts carry none) is older than any dated one:
/// its hours are taken only where no dated source gives hours. Empty when no member gives hours.
fn freshest_hours(ranked: &[&BucketRow], as_of: i64) -> String {
    let mut best: Option<(&BucketRow, i64)> = None;
    for r in ranked.iter().filter(|r| r.opening_hours().is_some()) {
        let seen = sighting_time(r.seen_at, as_of).unwrap_or(i64::MIN);
        if best.is_none_or(|(_, t)| seen > t) {
            best = Some((r, seen));
        }
    }
    best.and_then(|(r, _)| r.opening_hours()).unwrap_or_default().to_string()
}

pub struct Cluster {
    pub brand: u32,
    pub members: Vec<usize>,
    /// The merge order of sources for this brand in this cluster's region.
    pub order: [SourceType; 4],
}

/// The kind of storefront a name and a brand's category imply.
pub fn storefront_type(name: &str, default: StorefrontType) -> StorefrontType {
    let n = name.to_lowercase();
    let has = |w: &[&str]| w.iter().any(|x| n.contains(x));
    if has(&["pickup", "pick-up", "pick up", "collection point"]) {
        StorefrontType::Pickup
    } else if has(&["studio"]) {
        StorefrontType::Studio
    } else if has(&["express", " mini", " local", " to go", "kiosk", " metro", " go "]) {
        StorefrontType::SmallFormat
    } else {
        default
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use storemap_core::parse_iso;

    fn sighting(source: SourceType, id: &str, hours: Option<&str>, seen_at: Option<i64>) -> Bucket {
        let mut b = Bucket::default();
        b.push(SourceRow { source: Some(source), source_id: id.into(), opening_hours: hours.map(str::to_string), seen_at, ..SourceRow::default() });
        b
    }

    #[test]
    fn last_verified_ignores_default_dates_and_never_passes_the_snapshot_time() {
        let t = |s: &str| parse_iso(s).unwrap();
        let as_of = t("2026-11-01T00:00:00Z");
        let cases: [(Vec<Option<i64>>, i64); 7] = [
            (vec![None], as_of),
            (vec![Some(t("2025-03-04T00:00:00Z")), None, Some(t("2024-01-01T00:00:00Z"))], t("2025-03-04T00:00:00Z")),
            // A date written as year 0 or 1970, or any before 2000: no sighting.
            (vec![Some(t("0000-01-01T00:00:00Z")), Some(0)], as_of),
            (vec![Some(t("1999-12-31T23:59:59Z")), Some(t("2023-06-01T00:00:00Z"))], t("2023-06-01T00:00:00Z")),
            // A little ahead of the snapshot: as of the snapshot; decades ahead: no sighting.
            (vec![Some(t("2027-01-01T00:00:00Z")), Some(t("2025-01-01T00:00:00Z"))], as_of),
            (vec![Some(t("2099-01-01T00:00:00Z")), Some(t("2025-01-01T00:00:00Z"))], t("2025-01-01T00:00:00Z")),
            (vec![Some(as_of + 1)], as_of),
        ];
        for (seen, want) in cases {
            assert_eq!(last_verified(seen.iter().copied(), as_of), want, "{seen:?}");
        }
    }

    #[test]
    fn the_freshest_dated_hours_win_whatever_order_the_members_come_in() {
        let t = |s: &str| parse_iso(s).unwrap();
        let as_of = t("2026-11-01T00:00:00Z");
        let rows = [
            sighting(SourceType::Osm, "n1", Some("Mo-Sa 08:00-20:00; PH closed"), None),
            sighting(SourceType::Atp, "a/1", Some("Mo-Fr 09:00-18:00"), Some(t("2026-01-01T00:00:00Z"))),
            sighting(SourceType::Atp, "a/2", Some("Mo-Fr 09:00-19:00"), Some(t("2026-06-01T00:00:00Z"))),
            sighting(SourceType::Fsq, "f1", Some("24/7"), Some(t("2026-06-01T00:00:00Z"))),
            sighting(SourceType::Overture, "o1", None, Some(t("2026-09-01T00:00:00Z"))),
            // Dates that are no sighting: a default (1970) and a typo (2099).
            sighting(SourceType::Fsq, "f2", Some("Mo-Su 06:00-23:00"), Some(0)),
            sighting(SourceType::Fsq, "f3", Some("Mo-Su 07:00-22:00"), Some(t("2099-06-01T00:00:00Z"))),
        ];
        let [osm, atp_old, atp_new, fsq_new, none, fsq_1970, fsq_2099] = [0, 1, 2, 3, 4, 5, 6].map(|i| rows[i].get(0));
        let cases: [(Vec<&BucketRow>, &str); 7] = [
            (vec![&osm, &atp_old], "Mo-Fr 09:00-18:00"),
            (vec![&osm, &atp_old, &atp_new], "Mo-Fr 09:00-19:00"),
            // One date: the first in the cluster's order.
            (vec![&fsq_new, &atp_new], "24/7"),
            // Only an undated source gives hours: its hours; a newer member without hours
            // takes nothing away.
            (vec![&none, &osm], "Mo-Sa 08:00-20:00; PH closed"),
            (vec![&none], ""),
            // A date far ahead beats nothing dated; a 1970 one is as undated as OSM's.
            (vec![&fsq_2099, &atp_old], "Mo-Fr 09:00-18:00"),
            (vec![&osm, &fsq_1970], "Mo-Sa 08:00-20:00; PH closed"),
        ];
        for (ranked, want) in cases {
            assert_eq!(freshest_hours(&ranked, as_of), want, "{:?}", ranked.iter().map(|r| r.source_id()).collect::<Vec<_>>());
            // The winner does not depend on the order the members were read in, but only on
            // ties, which the cluster's order settles.
            let time = |r: &BucketRow| sighting_time(r.seen_at, as_of);
            if ranked.windows(2).all(|w| time(w[0]) != time(w[1])) {
                let reversed: Vec<&BucketRow> = ranked.iter().rev().copied().collect();
                assert_eq!(freshest_hours(&reversed, as_of), want);
            }
        }
    }
}
