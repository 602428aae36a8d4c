//! The synthetic world: the embedded default dataset, honestly labelled as synthetic.
//!
//! Real brands (name-suggestion-index) get true stores in real cities (GeoNames, weighted by
//! population and by how dense chains are in each country); then each of the four sources
//! "sees" a share of them with its own coverage bias, pin noise, naming habits, missing fields
//! and stale closures, including the contract's known limits (China and South Korea
//! undercounted, part of the Japanese convenience chains community-only, long-tail brands
//! community-only). The result is written in the sources' real formats and imported by the
//! same importers as real extracts. The truth is written beside it, for scoring only.

mod address;
mod area_towns;
mod brand;
pub mod churn;
mod dial_tables;
mod hours;
mod phone;
mod places;
mod postal_anchors;
mod postal_regions;
pub mod postcode;
mod town;
mod usps;
mod write;

use std::ops::ControlFlow;
use std::path::Path;

pub use brand::{BrandWorld, Sighting, TrueStore, HOME_SHARE, LOCAL_DENSITY_LIMIT, NEIGHBOUR_BOOST, UNLISTED_DENSITY_CAP};
pub use phone::DialAreas;
pub use places::SET_TERRITORIES;
pub use write::{atp_feature_id, spread_overture, Spread, SpreadSummary, WORLD};

use crate::catalog::Catalog;
use crate::error::{IngestError, Result};
use crate::land::LandMask;
use crate::reference::{City, Zip};

/// The knobs that place the scale-1 world near the contract's figures (about 6.9M pool
/// points, 2.0M verified rows, 6,600 brands with verified rows).
#[derive(Debug, Clone)]
pub struct Calibration {
    pub scale: f64,
    /// True stores at scale 1, spread over brand ranks by a power law, before the chains of
    /// unknown size based in crowded countries are made smaller ([`LOCAL_DENSITY_LIMIT`]; 10.4M
    /// before that rule, which took about 4 % of the pool).
    pub total_stores: f64,
    pub alpha: f64,
    pub rank_offset: f64,
    /// Brands below this rank are seen by the open datasets and retailer locators; the rest
    /// (the long tail) only by the community map.
    pub verified_brands: usize,
    /// The share of a chain's stores its spider returns. With the real footprints and the
    /// real spider list, 0.7 puts a scale-1 build at about 2.0M verified rows (0.82 gave 2.18M).
    pub atp_coverage: f64,
    pub fsq_coverage: f64,
    /// OpenStreetMap's share of a chain it has no measurement for: the median of the
    /// worldwide shares in `data/osm-coverage.csv` (McDonald's 0.81 down to Pizza Hut 0.42;
    /// IKEA, with more mapped than there are, says how it is tagged, not how much is mapped).
    pub osm_coverage: f64,
    /// The same for a Japanese convenience chain: the mean of the three measured there
    /// (7-Eleven 0.68, FamilyMart 0.68, Lawson 0.60).
    pub osm_jp_konbini: f64,
    pub osm_long_tail: f64,
    /// Multiplier on every source's coverage in CN and KR (export restrictions).
    pub undercount_factor: f64,
    pub closed_share: f64,
    norm: f64,
    /// By crowded country: the share of its planned stores a chain of unknown size whose main
    /// market it is keeps (1 where the country is missing; see [`brand::local_shares`]).
    local: std::collections::BTreeMap<String, f64>,
}

impl Calibration {
    pub fn new(scale: f64, brands: usize) -> Calibration {
        let mut c = Calibration {
            scale,
            total_stores: 10_850_000.0,
            alpha: 0.75,
            rank_offset: 5.0,
            verified_brands: 6_600,
            atp_coverage: 0.7,
            fsq_coverage: 0.22,
            osm_coverage: 0.6,
            osm_jp_konbini: 0.65,
            osm_long_tail: 0.8,
            undercount_factor: 0.3,
            closed_share: 0.04,
            norm: 1.0,
            local: Default::default(),
        };
        let sum: f64 = (0..brands).map(|r| (r as f64 + c.rank_offset).powf(-c.alpha)).sum();
        c.norm = c.total_stores / sum.max(1e-9);
        c
    }

    pub fn stores_at_rank(&self, rank: usize) -> f64 {
        self.scale * self.norm * (rank as f64 + self.rank_offset).powf(-self.alpha)
    }

    /// The share of its planned stores a chain of unknown size whose main market is `main`
    /// keeps.
    pub fn local_share(&self, main: &str) -> f64 {
        self.local.get(main).copied().unwrap_or(1.0)
    }

    /// Whether AllThePlaces has a spider for the brand: nearly all big chains, fewer below.
    pub fn spider_probability(&self, rank: usize) -> f64 {
        match rank {
            r if r < 300 => 0.5,
            r if r < 1500 => 0.2,
            r if r < self.verified_brands => 0.06,
            _ => 0.0,
        }
    }

    pub fn overture_coverage(&self, rank: usize) -> f64 {
        if rank < 1000 {
            0.3
        } else {
            0.2
        }
    }
}

/// One row of `truth-brands.csv`: a brand's true stores in one country, beside the count
/// `data/footprints.csv` publishes for it there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BrandTruth {
    pub brand: String,
    pub wikidata: String,
    pub country: String,
    pub stores: u64,
    pub open: u64,
    /// The published count in this country.
    pub published: Option<u32>,
    /// The brand's real size worldwide, where the ticker table lists it (at least its published
    /// counts' sum). A chain without one is compared in its published countries only.
    pub real: Option<u32>,
}

/// The generator's per-brand truth, beside `truth.csv` (per source row).
pub const BRAND_TRUTH_FILE: &str = "truth-brands.csv";

/// The stores that opened or closed between the survey and the build's as-of: `store` (as in
/// `truth.csv`), `opened` and `closed` (ISO times, empty when it did not happen in between).
pub const CHURN_TRUTH_FILE: &str = "truth-churn.csv";

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorldSummary {
    pub brands_with_stores: u64,
    pub true_stores: u64,
    pub closed_stores: u64,
    pub rows_by_source: std::collections::BTreeMap<String, u64>,
}

/// Makes brands' true stores and sightings, one brand at a time (any order, any thread: a
/// brand's world depends only on the seed, the brand, the date and the crowded countries'
/// shares, fixed from the whole catalog when the generator is made).
pub struct Generator<'a> {
    catalog: &'a Catalog,
    g: places::Gazetteer<'a>,
    cal: Calibration,
    seed: u64,
    as_of: i64,
}

impl<'a> Generator<'a> {
    /// The world as surveyed ([`churn::SURVEY`]), its stores on `land`.
    pub fn new(catalog: &'a Catalog, cities: &'a [City], zips: &'a [Zip], land: &'a LandMask, scale: f64, seed: u64) -> Generator<'a> {
        let g = places::Gazetteer::new(cities, zips, land).with_regions(&catalog.market_regions);
        let mut cal = Calibration::new(scale, catalog.brands.len());
        cal.local = brand::local_shares(&catalog.brands, &g, &cal);
        Generator { catalog, g, cal, seed, as_of: churn::SURVEY }
    }

    /// How much chains trade in a country, against the others: its urban population times how
    /// dense chains are there (what the rest of a chain is spread by).
    pub fn country_weight(&self, code: &str) -> f64 {
        self.g.country_weight(code)
    }

    /// The crowded countries and the share of its planned stores a chain of unknown size whose
    /// main market one is keeps there ([`LOCAL_DENSITY_LIMIT`]).
    pub fn crowded_countries(&self) -> impl Iterator<Item = (&str, f64)> {
        self.cal.local.iter().map(|(c, k)| (c.as_str(), *k))
    }

    /// The same world as it is at `as_of` (unix seconds): aged by the churn since the survey.
    pub fn at(self, as_of: i64) -> Generator<'a> {
        Generator { as_of, ..self }
    }

    /// The world of the brand at this catalog rank.
    pub fn brand(&self, rank: usize) -> BrandWorld {
        brand::generate(rank, &self.catalog.brands[rank], &self.g, &self.cal, self.seed, self.as_of)
    }
}

/// The largest scale a synthetic build takes: scale 10 holds about 68 M source rows, the size of
/// the real sources' branded planet; one process builds it in shards (`shard`) within a
/// 24 GiB machine (docs/DEPLOYMENT.md).
pub const MAX_SCALE: f64 = 10.0;

/// Written into the sources folder once a world is complete: which world it is, so the shards
/// of a build run one after another in one data folder generate it once (`generated`), and
/// `data report` scores a snapshot only against the world it was built from (`stamped`).
pub const WORLD_STAMP_FILE: &str = "world.json";

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct WorldStamp {
    scale: f64,
    seed: u64,
    as_of: i64,
    /// What else the world is a function of: the reference data and the generator's code (the
    /// pipeline's fingerprints of both).
    origin: String,
    summary: WorldSummary,
}

/// The summary of the world `dir` holds when it is the complete world of these inputs.
pub fn generated(dir: &Path, scale: f64, seed: u64, as_of: i64, origin: &str) -> Option<WorldSummary> {
    let stamp: WorldStamp = serde_json::from_slice(&std::fs::read(dir.join(WORLD_STAMP_FILE)).ok()?).ok()?;
    (stamp.scale == scale && stamp.seed == seed && stamp.as_of == as_of && stamp.origin == origin).then_some(stamp.summary)
}

/// Which world a folder's sources hold, as its stamp says: `(scale, seed, as_of)`. None for a
/// folder with no stamp (a world generated before every build stamped one, or half written).
pub fn stamped(dir: &Path) -> Option<(f64, u64, i64)> {
    let stamp: WorldStamp = serde_json::from_slice(&std::fs::read(dir.join(WORLD_STAMP_FILE)).ok()?).ok()?;
    Some((stamp.scale, stamp.seed, stamp.as_of))
}

/// Removes a world's stamp before the world is replaced: a generation that dies leaves none.
pub fn unstamp(dir: &Path) -> Result<()> {
    let path = dir.join(WORLD_STAMP_FILE);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(IngestError::io(path.display(), e)),
        _ => Ok(()),
    }
}

/// Stamps a complete world (see [`generated`]).
pub fn stamp(dir: &Path, scale: f64, seed: u64, as_of: i64, origin: &str, summary: &WorldSummary) -> Result<()> {
    let path = dir.join(WORLD_STAMP_FILE);
    let stamp = WorldStamp { scale, seed, as_of, origin: origin.to_string(), summary: summary.clone() };
    let text = serde_json::to_vec_pretty(&stamp).map_err(|e| IngestError::Invalid(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| IngestError::io(path.display(), e))
}

/// How many brands, and how many stores, generation holds at once: the worlds made ahead of
/// the writes, and the batch being rendered. It bounds memory only: the files are the same
/// whatever it is (`crates/ingest/tests/world/determinism.rs` builds one with a tiny one).
#[derive(Clone, Copy, Debug)]
pub struct Window {
    /// Brands rendered at once at most: enough to keep every core busy.
    pub brands: usize,
    /// True stores rendered at once at most, and expected stores generated ahead of the ones
    /// waiting to be rendered at most: the worlds and rendered files held together, about
    /// 0.8 KiB a store (at scale 10 the first 512 brands alone held about 20 GiB). Never fewer
    /// brands than cores, though: at scale 10 the biggest brands fill it one or two at a time
    /// (7-Eleven alone expects 850,000 stores), which held a 16-core build at one to four cores
    /// for its first minute (bench/RESULTS.md). The memory that costs grows with the cores.
    pub stores: f64,
}

impl Window {
    pub const DEFAULT: Window = Window { brands: 512, stores: 750_000.0 };
}

/// Writes the four source files, `truth.csv` and `truth-brands.csv` into `dir`.
#[allow(clippy::too_many_arguments)]
pub fn generate(catalog: &Catalog, cities: &[City], zips: &[Zip], land: &LandMask, dir: &Path, scale: f64, seed: u64, as_of: i64) -> Result<WorldSummary> {
    generate_within(Window::DEFAULT, catalog, cities, zips, land, dir, scale, seed, as_of)
}

/// [`generate`], holding at most `window` at once.
#[allow(clippy::too_many_arguments)]
pub fn generate_within(
    window: Window,
    catalog: &Catalog,
    cities: &[City],
    zips: &[Zip],
    land: &LandMask,
    dir: &Path,
    scale: f64,
    seed: u64,
    as_of: i64,
) -> Result<WorldSummary> {
    let gen = Generator::new(catalog, cities, zips, land, scale, seed).at(as_of);
    let mut writers = write::SourceWriters::new(dir, seed, as_of)?;
    let ranks: Vec<usize> = (0..catalog.brands.len()).collect();
    // An upper bound: a chain made smaller for a crowded main market has fewer (memory only).
    let expected = |r: usize| catalog.brands[r].known_stores.map_or(gen.cal.stores_at_rank(r), |n| f64::from(n) * scale);
    // Expected stores before each rank, to bound how far generation runs ahead.
    let before: Vec<f64> = std::iter::once(0.0)
        .chain(ranks.iter().scan(0.0, |sum, &r| {
            *sum += expected(r);
            Some(*sum)
        }))
        .collect();
    let cores = crate::parallel::threads();
    let (mut with_stores, mut stores, mut closed) = (0u64, 0u64, 0u64);
    let mut waiting: Vec<(usize, BrandWorld, Option<String>)> = Vec::new();
    let mut waiting_stores = 0usize;
    let mut failed: Option<IngestError> = None;
    // Brands are generated on every core, handed on in rank order (a spider's name must not
    // clash with an earlier one's), rendered a batch at a time on every core and written in
    // rank order, each brand as soon as it and those before it are rendered: memory stays
    // bounded, the files do not depend on thread timing or on where batches end, generation goes
    // on while a batch is rendered, and the writes overlap the rendering (the last batch's
    // writes had the other cores idle).
    let renderer = writers.renderer();
    let mut render = |waiting: &mut Vec<(usize, BrandWorld, Option<String>)>, writers: &mut write::SourceWriters| -> Result<()> {
        let mut failed = None;
        crate::parallel::parallel_stream(
            waiting,
            |_, _| true,
            |(r, w, spider)| renderer.render(&catalog.brands[*r], w, cities, spider.as_deref()),
            |files| match files.and_then(|f| writers.write(f)) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            },
        );
        for (_, w, _) in waiting.drain(..) {
            with_stores += !w.stores.is_empty() as u64;
            stores += w.stores.len() as u64;
            closed += w.stores.iter().filter(|s| s.closed).count() as u64;
        }
        failed.map_or(Ok(()), Err)
    };
    crate::parallel::parallel_stream(
        &ranks,
        |next, i| i < next + window.brands && (i < next + cores || before[i + 1] - before[next] <= window.stores),
        |&r| (r, gen.brand(r)),
        |(r, w)| {
            let step = || -> Result<()> {
                // A batch ends before the brand that would take it over either budget (though
                // it holds a brand per core first), and at the last brand.
                let over_stores = waiting.len() >= cores && (waiting_stores + w.stores.len()) as f64 > window.stores;
                if !waiting.is_empty() && (waiting.len() >= window.brands || over_stores) {
                    waiting_stores = 0;
                    render(&mut waiting, &mut writers)?;
                }
                let spider = writers.spider(&catalog.brands[r], &w);
                waiting_stores += w.stores.len();
                waiting.push((r, w, spider));
                if r + 1 == ranks.len() {
                    render(&mut waiting, &mut writers)?;
                }
                Ok(())
            };
            match step() {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
    );
    if let Some(e) = failed {
        return Err(e);
    }
    let counts = writers.finish()?;
    Ok(WorldSummary {
        brands_with_stores: with_stores,
        true_stores: stores,
        closed_stores: closed,
        rows_by_source: storemap_core::SourceType::ALL.iter().map(|s| (s.as_str().to_string(), counts[*s as usize])).collect(),
    })
}
