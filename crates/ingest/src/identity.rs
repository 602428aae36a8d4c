//! A store keeps its id across refreshes. A reconciled row's fresh id is the hash of its
//! smallest source id, which changes whenever a source joins or leaves its cluster (AllThePlaces
//! starts listing a store Overture had, say). So a build that replaces a snapshot first gives
//! each new row the id of the previous row it continues, one brand at a time:
//!
//! 1. by source id: the previous row of the same brand that shares the most `{source, id}`
//!    pairs with it (ties to the earlier row), where any source kept its id;
//! 2. else by place: the nearest previous row of the same brand within 100 m that step 1 left
//!    unclaimed (the nearest pairs first), where no source kept its id;
//! 3. else its fresh id: a store first seen now.
//!
//! Each previous id goes to one new row at most; a fresh id that happens to equal one a row
//! continued is hashed again. A previous row no new row continues is a store gone.

use std::collections::HashMap;

use storemap_core::{haversine_m, RowBuilder, Snapshot, SourceType, DEDUP_TOLERANCE_M};

use crate::hash::fnv1a;

/// A cell of the position index: 0.01 degrees, so the 3 x 3 cells around a point hold every
/// point within 100 m of it up to 84 degrees of latitude.
const CELL_DEG: f64 = 0.01;

/// One brand's rows in the previous snapshot. The two indexes are sorted arrays of (key, row)
/// searched by bisection: at scale 1's seven million rows a map of vectors took over a
/// gigabyte more, held through the whole reconcile.
#[derive(Debug, Default)]
struct BrandIds {
    /// (id, lat, lng) per previous row.
    rows: Vec<(u64, f64, f64)>,
    /// (the hash of a `source:id` pair, a previous row that had it).
    by_alias: Vec<(u64, u32)>,
    /// (position cell, a previous row in it).
    cells: Vec<((i32, i32), u32)>,
}

/// The rows an index holds under `key` (the index sorted by [`PreviousIds::index`]).
fn lookup<K: Ord + Copy>(index: &[(K, u32)], key: K) -> impl Iterator<Item = u32> + '_ {
    let start = index.partition_point(|e| e.0 < key);
    index[start..].iter().take_while(move |e| e.0 == key).map(|e| e.1)
}

/// The previous snapshot's ids, by brand identity ([`storemap_core::BrandRecord::identity`]).
#[derive(Debug, Default)]
pub struct PreviousIds {
    brands: HashMap<String, BrandIds>,
}

fn alias_key(source: SourceType, id: &str) -> u64 {
    fnv1a(format!("{}:{id}", source.as_str()).as_bytes())
}

fn cell(lat: f64, lng: f64) -> (i32, i32) {
    ((lat / CELL_DEG).floor() as i32, (lng / CELL_DEG).floor() as i32)
}

impl PreviousIds {
    /// Adds one previous row of a brand; [`PreviousIds::index`] once they are all in.
    pub fn add<'a>(&mut self, brand: &str, id: u64, lat: f64, lng: f64, aliases: impl IntoIterator<Item = (SourceType, &'a str)>) {
        let b = self.brands.entry(brand.to_string()).or_default();
        let k = b.rows.len() as u32;
        b.rows.push((id, lat, lng));
        b.by_alias.extend(aliases.into_iter().map(|(s, a)| (alias_key(s, a), k)));
        b.cells.push((cell(lat, lng), k));
    }

    /// Sorts the indexes [`PreviousIds::assign`] searches.
    pub fn index(&mut self) {
        for b in self.brands.values_mut() {
            b.by_alias.sort_unstable();
            b.by_alias.shrink_to_fit();
            b.cells.sort_unstable();
            b.cells.shrink_to_fit();
        }
    }

    pub fn from_snapshot(s: &Snapshot) -> PreviousIds {
        let mut p = PreviousIds::default();
        for b in s.brands() {
            let key = b.identity();
            for r in b.row_start as usize..b.row_end as usize {
                let (lat, lng) = s.row_lat_lng(r);
                p.add(key, s.row_id(r), lat, lng, s.row_aliases(r));
            }
        }
        p.index();
        p
    }

    pub fn rows(&self) -> usize {
        self.brands.values().map(|b| b.rows.len()).sum()
    }

    /// Gives one brand's new rows the ids of the previous rows they continue. Returns how many
    /// were matched by source id and how many by place.
    pub fn assign(&self, brand: &str, rows: &mut [RowBuilder]) -> (u64, u64) {
        let Some(prev) = self.brands.get(brand) else { return (0, 0) };
        debug_assert!(prev.by_alias.is_sorted() && prev.cells.is_sorted(), "PreviousIds::index was not called");
        let mut claimed = vec![false; prev.rows.len()];
        let mut given: Vec<Option<u32>> = vec![None; rows.len()];

        // 1. Shared source ids, most shared first.
        let mut pairs: Vec<(std::cmp::Reverse<u32>, u32, u32)> = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            let mut hits: HashMap<u32, u32> = HashMap::new();
            for (s, a) in &r.aliases {
                for k in lookup(&prev.by_alias, alias_key(*s, a)) {
                    *hits.entry(k).or_default() += 1;
                }
            }
            pairs.extend(hits.into_iter().map(|(k, n)| (std::cmp::Reverse(n), i as u32, k)));
        }
        pairs.sort_unstable();
        let by_alias = take_pairs(pairs.into_iter().map(|(_, i, k)| (i, k)), &mut given, &mut claimed);

        // 2. Same brand within 100 m, nearest first.
        let mut near: Vec<(u64, u32, u32)> = Vec::new();
        for (i, r) in rows.iter().enumerate().filter(|(i, _)| given[*i].is_none()) {
            let (cy, cx) = cell(r.lat, r.lng);
            for dy in -1..=1 {
                for dx in -1..=1 {
                    for k in lookup(&prev.cells, (cy + dy, cx + dx)) {
                        if claimed[k as usize] {
                            continue;
                        }
                        let (_, lat, lng) = prev.rows[k as usize];
                        let d = haversine_m(r.lat, r.lng, lat, lng);
                        if d <= DEDUP_TOLERANCE_M {
                            // Whole millimetres sort as integers, with no NaN to think about.
                            near.push(((d * 1000.0) as u64, i as u32, k));
                        }
                    }
                }
            }
        }
        near.sort_unstable();
        let by_place = take_pairs(near.into_iter().map(|(_, i, k)| (i, k)), &mut given, &mut claimed);

        // 3. The rest keep their fresh ids, unless one equals an id continued here.
        let continued: std::collections::HashSet<u64> = given.iter().flatten().map(|&k| prev.rows[k as usize].0).collect();
        for (r, g) in rows.iter_mut().zip(&given) {
            match g {
                Some(k) => r.id = prev.rows[*k as usize].0,
                None => {
                    while continued.contains(&r.id) {
                        r.id = fnv1a(&r.id.to_le_bytes());
                    }
                }
            }
        }
        (by_alias, by_place)
    }
}

/// Takes (new row, previous row) pairs in order, each side once. Returns how many it took.
fn take_pairs(pairs: impl Iterator<Item = (u32, u32)>, given: &mut [Option<u32>], claimed: &mut [bool]) -> u64 {
    let mut n = 0;
    for (i, k) in pairs {
        if given[i as usize].is_none() && !claimed[k as usize] {
            given[i as usize] = Some(k);
            claimed[k as usize] = true;
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use storemap_core::{offset_m, SourceMask};

    fn row(lat: f64, lng: f64, aliases: &[(SourceType, &str)]) -> RowBuilder {
        let aliases: Vec<(SourceType, String)> = aliases.iter().map(|(s, a)| (*s, a.to_string())).collect();
        // The fresh id, as reconciliation makes it: the hash of the smallest `source:id`.
        let id = fnv1a(aliases.iter().map(|(s, a)| format!("{}:{a}", s.as_str())).min().unwrap_or_default().as_bytes());
        RowBuilder {
            brand: 0,
            lat,
            lng,
            id,
            name: "Shop".into(),
            address: String::new(),
            city: String::new(),
            state: String::new(),
            postcode: String::new(),
            phone: String::new(),
            opening_hours: String::new(),
            country: "US".into(),
            last_updated: 0,
            confidence: 1.0,
            provenance: true,
            last_verified: None,
            storefront: None,
            sources: SourceMask::default(),
            community_only: false,
            aliases,
        }
    }

    use SourceType::{Atp, Fsq, Osm, Overture};

    #[test]
    fn a_store_a_new_source_joins_keeps_its_id() {
        let before = row(40.0, -74.0, &[(Overture, "ov1"), (Osm, "n1")]);
        let mut prev = PreviousIds::default();
        prev.add("Q1", before.id, before.lat, before.lng, before.aliases.iter().map(|(s, a)| (*s, a.as_str())));
        prev.index();
        // AllThePlaces now lists it too: its smallest source id, and so its fresh id, changes.
        let mut now = vec![row(40.0, -74.0, &[(Atp, "a/1"), (Overture, "ov1"), (Osm, "n1")])];
        assert_ne!(now[0].id, before.id);
        assert_eq!(prev.assign("Q1", &mut now), (1, 0));
        assert_eq!(now[0].id, before.id);
    }

    #[test]
    fn the_row_sharing_most_source_ids_wins_and_the_other_gets_its_own() {
        let a = row(40.0, -74.0, &[(Atp, "a/1"), (Fsq, "f1"), (Overture, "o1")]);
        let mut prev = PreviousIds::default();
        prev.add("Q1", a.id, a.lat, a.lng, a.aliases.iter().map(|(s, x)| (*s, x.as_str())));
        prev.index();
        // A split: Foursquare's row now stands apart from the other two (its pin moved).
        let mut now = vec![row(40.0, -74.0, &[(Fsq, "f1")]), row(40.0, -74.0, &[(Atp, "a/1"), (Overture, "o1")])];
        assert_eq!(prev.assign("Q1", &mut now).0, 1);
        assert_eq!(now[1].id, a.id, "two shared ids beat one");
        assert_ne!(now[0].id, a.id);
    }

    #[test]
    fn with_no_source_id_kept_the_nearest_row_within_100_m_of_the_same_brand_continues() {
        let (lat, lng) = (51.5, -0.12);
        let p1 = row(lat, lng, &[(Osm, "n1")]);
        let (lat2, lng2) = offset_m(lat, lng, 0.0, 300.0);
        let p2 = row(lat2, lng2, &[(Osm, "n2")]);
        let mut prev = PreviousIds::default();
        for p in [&p1, &p2] {
            prev.add("Q1", p.id, p.lat, p.lng, p.aliases.iter().map(|(s, a)| (*s, a.as_str())));
        }
        prev.index();
        // Every source id changed: one row 40 m from p1, one 60 m from p1 (and 240 m from p2),
        // one 150 m from p2.
        let at = |north: f64, east: f64, id: &str| {
            let (a, b) = offset_m(lat, lng, north, east);
            row(a, b, &[(Osm, id)])
        };
        let mut now = vec![at(0.0, 60.0, "m2"), at(40.0, 0.0, "m1"), at(0.0, 450.0, "m3")];
        let fresh: Vec<u64> = now.iter().map(|r| r.id).collect();
        assert_eq!(prev.assign("Q1", &mut now), (0, 1));
        assert_eq!(now[1].id, p1.id, "the nearest pair is taken first");
        assert_eq!(now[0].id, fresh[0], "p1 is taken; p2 is 240 m away");
        assert_eq!(now[2].id, fresh[2], "150 m is too far");
        // Another brand at the same spot continues nothing.
        let mut other = vec![at(0.0, 0.0, "x")];
        let id = other[0].id;
        assert_eq!(prev.assign("Q2", &mut other), (0, 0));
        assert_eq!(other[0].id, id);
    }

    #[test]
    fn a_fresh_id_equal_to_a_continued_one_is_hashed_again() {
        let a = row(10.0, 10.0, &[(Atp, "a/1"), (Fsq, "f1"), (Overture, "o1")]);
        let mut prev = PreviousIds::default();
        prev.add("Q1", a.id, a.lat, a.lng, a.aliases.iter().map(|(s, x)| (*s, x.as_str())));
        prev.index();
        // Both new rows hash to a's id (they share its smallest source id), but the second
        // shares more with it and continues it.
        let mut now = vec![row(10.0, 10.0, &[(Atp, "a/1")]), row(10.0, 10.0, &[(Fsq, "f1"), (Overture, "o1"), (Atp, "a/1")])];
        now[1].aliases.sort();
        prev.assign("Q1", &mut now);
        assert_eq!(now[1].id, a.id);
        assert_ne!(now[0].id, a.id, "ids stay unique");
    }
}
