//! 100 m de-duplication: anchor clustering.
//!
//! Points are taken in the order given (callers put the most precise sources first). A point
//! joins the nearest cluster whose *anchor* — its first point — lies within the tolerance and
//! which holds no point of the same source yet; otherwise it starts a cluster and becomes its
//! anchor. Distances are measured to anchors, not to any member, so a chain of points 80 m
//! apart never collapses into one cluster, and one source's points never merge with each
//! other however close (two real stores of a brand in a dense downtown stay two).
//! A point may name another point it was copied from (`link`): it joins that point's
//! cluster whatever the distance, if the cluster has no point of its source yet.

use rstar::primitives::GeomWithData;
use rstar::RTree;

use crate::geodesy::{haversine_m, LocalMetric};
use crate::model::{SourceMask, SourceType};

#[derive(Debug, Clone, Copy)]
pub struct ClusterPoint {
    pub lat: f64,
    pub lng: f64,
    pub source: SourceType,
    /// Index (into the same slice) of the point this one was copied from. Must come earlier.
    pub link: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clusters {
    /// Cluster id of each point, in input order; ids are numbered in order of creation.
    pub of_point: Vec<u32>,
    /// How many points joined through a link rather than by distance.
    pub linked: u64,
}

impl Clusters {
    pub fn count(&self) -> usize {
        self.of_point.iter().max().map_or(0, |&m| m as usize + 1)
    }

    /// Point indices per cluster, in cluster-id order.
    pub fn members(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.count()];
        for (i, &c) in self.of_point.iter().enumerate() {
            out[c as usize].push(i);
        }
        out
    }
}

pub fn cluster(points: &[ClusterPoint], tolerance_m: f64) -> Clusters {
    // One static R-tree over every point, bulk-loaded once (far cheaper than growing a tree
    // anchor by anchor); a point then looks among its neighbours for those already anchoring
    // a cluster.
    let projected: Vec<[f64; 3]> = points.iter().map(|p| LocalMetric::project(p.lat, p.lng)).collect();
    let tree: RTree<GeomWithData<[f64; 3], u32>> = RTree::bulk_load(projected.iter().enumerate().map(|(i, q)| GeomWithData::new(*q, i as u32)).collect());
    const NONE: u32 = u32::MAX;
    // For a point that anchors a cluster, that cluster's id.
    let mut anchored: Vec<u32> = vec![NONE; points.len()];
    let mut masks: Vec<SourceMask> = Vec::new();
    let mut of_point: Vec<u32> = Vec::with_capacity(points.len());
    let mut linked = 0;
    // The chord search radius is a hair wider than the arc tolerance; candidates are then
    // confirmed on the sphere.
    let search = (tolerance_m * 1.0001).powi(2);
    for (i, p) in points.iter().enumerate() {
        let via_link = p.link.filter(|&l| (l as usize) < i).map(|l| of_point[l as usize]).filter(|&c| !masks[c as usize].contains(p.source));
        let target = via_link.or_else(|| {
            tree.locate_within_distance(projected[i], search)
                .filter_map(|a| {
                    let c = anchored[a.data as usize];
                    (c != NONE && !masks[c as usize].contains(p.source)).then_some((a.data, c))
                })
                .map(|(a, c)| {
                    let anchor = &points[a as usize];
                    (haversine_m(p.lat, p.lng, anchor.lat, anchor.lng), c)
                })
                .filter(|(d, _)| *d <= tolerance_m)
                .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)))
                .map(|(_, c)| c)
        });
        let c = match target {
            Some(c) => {
                linked += via_link.is_some() as u64;
                c
            }
            None => {
                let c = masks.len() as u32;
                masks.push(SourceMask::default());
                anchored[i] = c;
                c
            }
        };
        masks[c as usize].insert(p.source);
        of_point.push(c);
    }
    Clusters { of_point, linked }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geodesy::offset_m;

    fn at(north: f64, east: f64, source: SourceType) -> ClusterPoint {
        let (lat, lng) = offset_m(41.88, -87.63, north, east);
        ClusterPoint { lat, lng, source, link: None }
    }

    #[test]
    fn sources_within_tolerance_merge() {
        let c = cluster(&[at(0.0, 0.0, SourceType::Atp), at(20.0, 10.0, SourceType::Overture), at(-15.0, 30.0, SourceType::Osm)], 100.0);
        assert_eq!(c.of_point, vec![0, 0, 0]);
    }

    #[test]
    fn one_source_never_merges_with_itself() {
        let c = cluster(&[at(0.0, 0.0, SourceType::Osm), at(5.0, 0.0, SourceType::Osm)], 100.0);
        assert_eq!(c.count(), 2);
    }

    #[test]
    fn chains_do_not_collapse() {
        let c = cluster(&[at(0.0, 0.0, SourceType::Atp), at(80.0, 0.0, SourceType::Osm), at(160.0, 0.0, SourceType::Fsq)], 100.0);
        assert_eq!(c.of_point, vec![0, 0, 1]);
    }

    #[test]
    fn beyond_tolerance_stays_apart_and_nearest_anchor_wins() {
        let c = cluster(&[at(0.0, 0.0, SourceType::Atp), at(110.0, 0.0, SourceType::Osm)], 100.0);
        assert_eq!(c.count(), 2);
        let c = cluster(&[at(0.0, 0.0, SourceType::Atp), at(90.0, 0.0, SourceType::Atp), at(60.0, 0.0, SourceType::Osm)], 100.0);
        assert_eq!(c.of_point, vec![0, 1, 1]);
    }

    #[test]
    fn links_join_whatever_the_distance() {
        let mut copy = at(500.0, 0.0, SourceType::Overture);
        copy.link = Some(0);
        let c = cluster(&[at(0.0, 0.0, SourceType::Atp), copy], 100.0);
        assert_eq!((c.of_point.clone(), c.linked), (vec![0, 0], 1));
    }
}
