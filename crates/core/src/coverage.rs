//! How complete is a store list? An estimate, made without ground truth, of how many
//! storefronts a brand really has in a region, from how the independent sources overlap
//! (capture–recapture, as ecologists count fish).
//!
//! Every reconciled row is a storefront that one to four sources saw. If two sources caught
//! stores independently, their overlap tells how many both missed: Lincoln–Petersen's
//! N = n1·n2/m, here in Chapman's bias-corrected form (N = (n1+1)(n2+1)/(m+1) − 1), which stays
//! finite when the overlap m is 0. With three or four sources, Chao's estimator reads the
//! stores seen by exactly one source (f1) and by exactly two (f2): N = S + f1(f1−1)/(2(f2+1)),
//! the bias-corrected form, finite when f2 is 0. Both assume every store is as easy to catch
//! as any other; where some are harder (a source that never maps malls), they count too few
//! stores, so coverage built on them errs high: the docs say so, and the data report measures
//! by how much against the synthetic world's truth.

use crate::model::{SourceMask, SourceType};

/// Fewer observed storefronts than this and no estimate is made (`None`): the overlap of a
/// handful of stores says nothing.
pub const MIN_OBSERVED: u32 = 5;

/// How often each combination of sources saw a storefront: one count per source mask.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sightings {
    by_mask: [u32; 16],
}

/// The method behind an estimate, for the docs and the data report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// Two sources: Chapman's form of Lincoln–Petersen.
    Chapman,
    /// Three or four sources: Chao's bias-corrected lower bound.
    Chao,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TotalEstimate {
    /// Storefronts the brand is estimated to have in the region, at least the observed count.
    pub total: f64,
    pub estimator: Estimator,
}

impl Sightings {
    /// One storefront, seen by the sources in `mask` (an empty mask is not a sighting).
    pub fn add(&mut self, mask: SourceMask) {
        if !mask.is_empty() {
            self.by_mask[usize::from(mask.0 & 0x0f)] += 1;
        }
    }

    /// Adds another set's sightings (another brand of the request, another filter set).
    pub fn absorb(&mut self, other: &Sightings) {
        for (a, b) in self.by_mask.iter_mut().zip(other.by_mask) {
            *a += b;
        }
    }

    /// Storefronts seen by any source.
    pub fn observed(&self) -> u32 {
        self.by_mask.iter().sum()
    }

    /// Storefronts `s` saw.
    pub fn seen_by(&self, s: SourceType) -> u32 {
        self.masks().filter(|(m, _)| m.contains(s)).map(|(_, n)| n).sum()
    }

    /// Storefronts both `a` and `b` saw.
    pub fn seen_by_both(&self, a: SourceType, b: SourceType) -> u32 {
        self.masks().filter(|(m, _)| m.contains(a) && m.contains(b)).map(|(_, n)| n).sum()
    }

    /// Storefronts seen by exactly `k` sources.
    pub fn seen_by_exactly(&self, k: u32) -> u32 {
        self.masks().filter(|(m, _)| m.len() == k).map(|(_, n)| n).sum()
    }

    /// The sources that saw anything.
    pub fn sources(&self) -> Vec<SourceType> {
        SourceType::ALL.into_iter().filter(|s| self.seen_by(*s) > 0).collect()
    }

    fn masks(&self) -> impl Iterator<Item = (SourceMask, u32)> + '_ {
        self.by_mask.iter().enumerate().map(|(m, n)| (SourceMask(m as u8), *n))
    }

    /// The brand's estimated storefronts in the region, or `None` when it cannot be estimated:
    /// fewer than `MIN_OBSERVED` storefronts, or a single source (no overlap to read).
    pub fn estimate_total(&self) -> Option<TotalEstimate> {
        let observed = self.observed();
        if observed < MIN_OBSERVED {
            return None;
        }
        let (total, estimator) = match self.sources().as_slice() {
            [a, b] => (chapman(self.seen_by(*a), self.seen_by(*b), self.seen_by_both(*a, *b)), Estimator::Chapman),
            [_, _, _, ..] => (chao(observed, self.seen_by_exactly(1), self.seen_by_exactly(2)), Estimator::Chao),
            _ => return None,
        };
        // The estimators can fall below what was seen (Chapman with a large overlap): never
        // fewer stores than the rows themselves.
        Some(TotalEstimate { total: total.max(f64::from(observed)), estimator })
    }

    /// The share of the estimated storefronts that `served` rows are, in [0, 1], to three
    /// decimals (more would claim a precision the estimate does not have).
    pub fn coverage(&self, served: u32) -> Option<f64> {
        self.estimate_total().map(|e| ((f64::from(served) / e.total).clamp(0.0, 1.0) * 1000.0).round() / 1000.0)
    }
}

/// Lincoln–Petersen: `n1` and `n2` caught by two independent sources, `m` by both. `None`
/// without an overlap (the estimate is infinite).
pub fn lincoln_petersen(n1: u32, n2: u32, m: u32) -> Option<f64> {
    (m > 0).then(|| f64::from(n1) * f64::from(n2) / f64::from(m))
}

/// Chapman's nearly unbiased form of Lincoln–Petersen, finite when `m` is 0.
pub fn chapman(n1: u32, n2: u32, m: u32) -> f64 {
    (f64::from(n1) + 1.0) * (f64::from(n2) + 1.0) / (f64::from(m) + 1.0) - 1.0
}

/// Chao's bias-corrected estimator from `observed` storefronts, `f1` of them seen by exactly
/// one source and `f2` by exactly two.
pub fn chao(observed: u32, f1: u32, f2: u32) -> f64 {
    let f1 = f64::from(f1);
    f64::from(observed) + f1 * (f1 - 1.0).max(0.0) / (2.0 * (f64::from(f2) + 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use SourceType::{Atp, Fsq, Osm, Overture};

    fn mask(sources: &[SourceType]) -> SourceMask {
        let mut m = SourceMask::default();
        for s in sources {
            m.insert(*s);
        }
        m
    }

    /// A reproducible stream in [0, 1): the tests need no crate for it.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[test]
    fn lincoln_petersen_and_chapman_by_hand() {
        // 100 and 80 caught, 40 by both: 100 × 80 / 40 = 200.
        assert_eq!(lincoln_petersen(100, 80, 40), Some(200.0));
        assert_eq!(lincoln_petersen(100, 80, 0), None);
        // (101 × 81) / 41 − 1 = 198.5365…
        assert!((chapman(100, 80, 40) - (101.0 * 81.0 / 41.0 - 1.0)).abs() < 1e-12);
        assert_eq!(chapman(3, 4, 0), 19.0);
    }

    #[test]
    fn chao_by_hand() {
        // 100 seen, 30 by one source, 10 by two: 100 + 30 × 29 / 22.
        assert!((chao(100, 30, 10) - (100.0 + 870.0 / 22.0)).abs() < 1e-12);
        // Nobody seen only once: nothing missed.
        assert_eq!(chao(50, 0, 20), 50.0);
        assert_eq!(chao(50, 1, 0), 50.0);
    }

    #[test]
    fn sightings_count_masks() {
        let mut s = Sightings::default();
        for m in [&[Osm][..], &[Osm, Atp], &[Osm, Atp, Fsq], &[Overture], &[]] {
            s.add(mask(m));
        }
        assert_eq!(s.observed(), 4, "an empty mask is no sighting");
        assert_eq!(s.seen_by(Osm), 3);
        assert_eq!(s.seen_by_both(Osm, Atp), 2);
        assert_eq!(s.seen_by_exactly(1), 2);
        assert_eq!(s.seen_by_exactly(2), 1);
        assert_eq!(s.seen_by_exactly(3), 1);
        assert_eq!(s.sources(), vec![Atp, Fsq, Osm, Overture]);
    }

    #[test]
    fn two_sources_with_known_overlap_give_the_chapman_figure() {
        let mut s = Sightings::default();
        // OSM saw 100, ATP 80, 40 of them both: 140 rows.
        for _ in 0..40 {
            s.add(mask(&[Osm, Atp]));
        }
        for _ in 0..60 {
            s.add(mask(&[Osm]));
        }
        for _ in 0..40 {
            s.add(mask(&[Atp]));
        }
        let e = s.estimate_total().unwrap();
        assert_eq!(e.estimator, Estimator::Chapman);
        assert!((e.total - chapman(100, 80, 40)).abs() < 1e-9);
        // 140 served of about 198.5: 0.705.
        assert_eq!(s.coverage(140), Some(0.705));
    }

    #[test]
    fn too_few_rows_or_one_source_cannot_be_estimated() {
        let mut s = Sightings::default();
        for _ in 0..4 {
            s.add(mask(&[Osm, Atp]));
        }
        assert_eq!(s.estimate_total(), None, "4 storefronts");
        let mut one = Sightings::default();
        for _ in 0..50 {
            one.add(mask(&[Osm]));
        }
        assert_eq!(one.coverage(50), None, "one source: no overlap to read");
    }

    #[test]
    fn complete_overlap_means_complete_coverage() {
        let mut s = Sightings::default();
        for _ in 0..30 {
            s.add(mask(&[Osm, Atp, Overture]));
        }
        let e = s.estimate_total().unwrap();
        assert_eq!(e.estimator, Estimator::Chao);
        assert_eq!(e.total, 30.0);
        assert_eq!(s.coverage(30), Some(1.0));
        assert_eq!(s.coverage(60), Some(1.0), "never above 1");
    }

    /// A known population caught by independent sources at known rates: the estimates land
    /// near the truth (the estimators' own assumption holds here, so they should).
    #[test]
    fn independent_sources_recover_a_known_population() {
        const N: usize = 2_000;
        let mut rng = Lcg(7);
        let mut two = Sightings::default();
        let mut four = Sightings::default();
        for _ in 0..N {
            let mut m2 = SourceMask::default();
            if rng.next() < 0.6 {
                m2.insert(Osm);
            }
            if rng.next() < 0.5 {
                m2.insert(Atp);
            }
            two.add(m2);
            let mut m4 = SourceMask::default();
            for (s, p) in [(Osm, 0.4), (Atp, 0.35), (Fsq, 0.3), (Overture, 0.3)] {
                if rng.next() < p {
                    m4.insert(s);
                }
            }
            four.add(m4);
        }
        let t2 = two.estimate_total().unwrap().total;
        let t4 = four.estimate_total().unwrap().total;
        assert!((t2 - N as f64).abs() / (N as f64) < 0.05, "two sources: {t2} for {N}");
        assert!((t4 - N as f64).abs() / (N as f64) < 0.10, "four sources: {t4} for {N}");
        // Each saw well under the truth.
        assert!(f64::from(two.observed()) < 0.85 * N as f64 && f64::from(four.observed()) < 0.85 * N as f64);
    }
}
