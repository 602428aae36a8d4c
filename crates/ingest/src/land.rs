//! Land or sea, asked for every spot the synthetic world draws for a store (about seven million
//! at scale 1) and for every point along a highway leg.
//!
//! The world is cut into [`CELL_DEG`] cells. Each cell keeps the border edges that touch it and
//! which countries its centre is inside, which one sweep per grid row decides for every centre
//! of the row at once (the row's crossings with the rings, sorted: a centre with an odd number of them
//! to its west is inside). A point is then on land when its cell's centre is and the segment
//! from the centre to the point crosses the cell's edges an even number of times, or the other
//! way round: inland and at open sea that is no test at all, along a coast a few dozen.
//!
//! Inside is decided per country (which makes this grid the country index too,
//! [`crate::countries::CountryIndex`]): the borders draw some territories over the country
//! around them (Hong Kong over China), so a parity taken over every ring at once would call both
//! sea. A cell's centre keeps the countries it is
//! inside (nearly always none or one); a crossed edge toggles its own country.

/// A quarter degree: about 28 km north to south. Coarser cells hold more coast each (more
/// segment tests); finer ones more cells (4 bytes each, a million at this size).
const CELL_DEG: f64 = 0.25;
const COLS: usize = (360.0 / CELL_DEG) as usize;
const ROWS: usize = (180.0 / CELL_DEG) as usize;
/// Metres per degree of latitude, and of longitude at the equator (WGS84, rounded): distances
/// to the coast are only ever compared with kilometres.
const M_PER_DEG_LAT: f64 = 110_574.0;
const M_PER_DEG_LNG: f64 = 111_320.0;

/// One border edge: `[x0, y0, x1, y1]` in degrees of longitude and latitude.
type Edge = [f32; 4];

/// The countries a point is inside: a handful at most (a territory drawn over its country;
/// two in the borders this project ships).
#[derive(Default, Clone)]
pub struct Inside {
    n: usize,
    ids: [u16; 8],
}

impl Inside {
    /// The ids of the countries, in no particular order.
    pub fn ids(&self) -> &[u16] {
        &self.ids[..self.n]
    }

    fn toggle(&mut self, id: u16) {
        match self.ids[..self.n].iter().position(|&x| x == id) {
            Some(i) => {
                self.ids[i] = self.ids[self.n - 1];
                self.n -= 1;
            }
            // Nine nested shapes at one spot happen in no border file; a ninth would be left
            // uncounted (and could leave a row's sweep wrong from there east) rather than panic.
            None if self.n < self.ids.len() => {
                self.ids[self.n] = id;
                self.n += 1;
            }
            None => debug_assert!(false, "more than {} shapes overlap at one point", self.ids.len()),
        }
    }
}

/// No country at a cell's centre; else the country's id plus one.
const NONE: u16 = 0;
/// The centre is inside more than one country: look in `LandMask::centre_many`.
const MANY: u16 = u16::MAX;

pub struct LandMask {
    /// Where each cell's edges begin in `edges` (cell `r * COLS + c`); one more than the cells.
    starts: Vec<u32>,
    edges: Vec<Edge>,
    /// Each edge's country, beside `edges`.
    edge_country: Vec<u16>,
    /// Per cell, the country its centre is inside ([`NONE`], id + 1, or [`MANY`]).
    centre: Vec<u16>,
    centre_many: std::collections::HashMap<u32, Inside>,
}

fn col_of(x: f64) -> usize {
    (((x + 180.0) / CELL_DEG).floor().max(0.0) as usize).min(COLS - 1)
}

fn row_of(y: f64) -> usize {
    (((y + 90.0) / CELL_DEG).floor().max(0.0) as usize).min(ROWS - 1)
}

/// A cell's reference point: its centre, moved by less than a float's step. Some border files
/// are traced from rasters, with vertices and whole edges on the quarter and eighth degrees; a
/// reference point on an edge would be neither inside nor out. Shifted off every f32 value, it
/// cannot lie on a vertex or a horizontal or vertical edge; shifted by amounts in an irrational
/// ratio (1 : sqrt 2), not on a diagonal between grid points either (a 45-degree edge through
/// a centre misses it by about 1e-10, far above the arithmetic's error).
fn centre_of(c: usize, r: usize) -> (f64, f64) {
    const OFF_X: f64 = 1e-9;
    const OFF_Y: f64 = 1e-9 * std::f64::consts::SQRT_2;
    (-180.0 + (c as f64 + 0.5) * CELL_DEG + OFF_X, -90.0 + (r as f64 + 0.5) * CELL_DEG + OFF_Y)
}

/// The cells an edge's bounding box covers: every cell the edge itself can touch.
fn cells_of(e: &Edge) -> impl Iterator<Item = usize> {
    let (c0, c1) = (col_of(e[0].min(e[2]) as f64), col_of(e[0].max(e[2]) as f64));
    let (r0, r1) = (row_of(e[1].min(e[3]) as f64), row_of(e[1].max(e[3]) as f64));
    (r0..=r1).flat_map(move |r| (c0..=c1).map(move |c| r * COLS + c))
}

/// Which side of the line through `a` and `b` the point `p` is on (the sign of the cross product).
fn side(a: (f64, f64), b: (f64, f64), p: (f64, f64)) -> f64 {
    (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
}

/// Whether segment p–q crosses the edge. Touching counts as not crossing: that happens where a
/// point falls exactly on a border, which drawn coordinates do not.
fn crosses(p: (f64, f64), q: (f64, f64), e: &Edge) -> bool {
    let (a, b) = ((e[0] as f64, e[1] as f64), (e[2] as f64, e[3] as f64));
    let (d1, d2) = (side(a, b, p), side(a, b, q));
    let (d3, d4) = (side(p, q, a), side(p, q, b));
    ((d1 > 0.0 && d2 < 0.0) || (d1 < 0.0 && d2 > 0.0)) && ((d3 > 0.0 && d4 < 0.0) || (d3 < 0.0 && d4 > 0.0))
}

/// Squared distance from `p` to an edge on the plane of degrees (no wrap). Past either end the
/// distance is to that vertex itself, so two edges meeting there tie exactly.
fn distance2_deg(p: (f64, f64), e: &Edge) -> f64 {
    let (a, b) = ((e[0] as f64, e[1] as f64), (e[2] as f64, e[3] as f64));
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let t = (p.0 - a.0) * dx + (p.1 - a.1) * dy;
    let len2 = dx * dx + dy * dy;
    let q = if t <= 0.0 {
        a
    } else if t >= len2 {
        b
    } else {
        (a.0 + dx * (t / len2), a.1 + dy * (t / len2))
    };
    (q.0 - p.0) * (q.0 - p.0) + (q.1 - p.1) * (q.1 - p.1)
}

/// Distance in metres from `p` to an edge, on a plane scaled to metres at `p`'s latitude (an
/// edge across the antimeridian from `p` measured the short way round).
fn distance_m(p: (f64, f64), e: &Edge, kx: f64) -> f64 {
    let wrap = |dx: f64| {
        if dx > 180.0 {
            dx - 360.0
        } else if dx < -180.0 {
            dx + 360.0
        } else {
            dx
        }
    };
    let to_m = |x: f64, y: f64| (wrap(x - p.0) * kx, (y - p.1) * M_PER_DEG_LAT);
    let (ax, ay) = to_m(e[0] as f64, e[1] as f64);
    let (bx, by) = to_m(e[2] as f64, e[3] as f64);
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (-(ax * dx + ay * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    (ax + t * dx).hypot(ay + t * dy)
}

/// One run of rings' edges placed in their cells, and their crossings with the rows' centre
/// lines: the whole mask's, or one part's of it ([`LandMask::from_ring_parts`]).
struct PlacedEdges {
    /// Where each cell's edges begin in `edges`; one more than the cells.
    starts: Vec<u32>,
    edges: Vec<Edge>,
    edge_country: Vec<u16>,
    /// Each row's crossings with its centres' latitude, for the sweep, in the rings' order.
    crossings: Vec<(u32, f64, u16)>,
}

impl PlacedEdges {
    /// From rings handed out by `rings` (called twice: once to count each cell's edges, once to
    /// place them, so the edges are never held twice).
    fn new(rings: impl Fn(&mut dyn FnMut(u16, &[[f32; 2]]))) -> PlacedEdges {
        let edges_of = |f: &mut dyn FnMut(Edge, u16)| {
            rings(&mut |country, ring| {
                for w in ring.windows(2) {
                    if w[0] != w[1] {
                        f([w[0][0], w[0][1], w[1][0], w[1][1]], country);
                    }
                }
            })
        };
        let mut starts = vec![0u32; COLS * ROWS + 1];
        // x in f64: rounded to f32 a crossing a hair east of a centre could land west of it.
        let mut crossings: Vec<(u32, f64, u16)> = Vec::new();
        edges_of(&mut |e, country| {
            for cell in cells_of(&e) {
                starts[cell + 1] += 1;
            }
            let (y0, y1) = (e[1] as f64, e[3] as f64);
            if y0 == y1 {
                return;
            }
            for r in row_of(y0.min(y1))..=row_of(y0.max(y1)) {
                let yc = centre_of(0, r).1;
                // Half-open, so a ring's vertex on a centre's latitude is counted once.
                if (y0 > yc) != (y1 > yc) {
                    let x = e[0] as f64 + (yc - y0) * (e[2] as f64 - e[0] as f64) / (y1 - y0);
                    crossings.push((r as u32, x, country));
                }
            }
        });
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut edges = vec![[0f32; 4]; starts[COLS * ROWS] as usize];
        let mut edge_country = vec![0u16; edges.len()];
        let mut next = starts.clone();
        edges_of(&mut |e, country| {
            for cell in cells_of(&e) {
                edges[next[cell] as usize] = e;
                edge_country[next[cell] as usize] = country;
                next[cell] += 1;
            }
        });
        PlacedEdges { starts, edges, edge_country, crossings }
    }

    fn cell_len(&self, cell: usize) -> usize {
        (self.starts[cell + 1] - self.starts[cell]) as usize
    }

    /// Parts placed one beside another, joined in their order: each cell's edges part by part,
    /// which is the order one run over all their rings places them in. The copying is split
    /// among as many threads as there are parts, each a run of cells.
    fn join(mut parts: Vec<PlacedEdges>) -> PlacedEdges {
        if parts.len() == 1 {
            return parts.pop().expect("one part");
        }
        let cells = COLS * ROWS;
        let mut starts = vec![0u32; cells + 1];
        for cell in 0..cells {
            starts[cell + 1] = starts[cell] + parts.iter().map(|p| p.cell_len(cell) as u32).sum::<u32>();
        }
        let total = starts[cells] as usize;
        let (mut edges, mut edge_country) = (vec![[0f32; 4]; total], vec![0u16; total]);
        // Runs of cells holding about as many edges each.
        let threads = parts.len();
        let bounds: Vec<usize> = (0..=threads).map(|t| starts.partition_point(|&s| (s as usize) * threads < total * t).min(cells)).collect();
        std::thread::scope(|s| {
            let (mut rest_e, mut rest_c) = (edges.as_mut_slice(), edge_country.as_mut_slice());
            for run in bounds.windows(2) {
                let (c0, c1) = (run[0], run[1]);
                let n = (starts[c1] - starts[c0]) as usize;
                let (out_e, tail_e) = std::mem::take(&mut rest_e).split_at_mut(n);
                let (out_c, tail_c) = std::mem::take(&mut rest_c).split_at_mut(n);
                (rest_e, rest_c) = (tail_e, tail_c);
                let parts = &parts;
                s.spawn(move || {
                    let mut k = 0;
                    for cell in c0..c1 {
                        for p in parts {
                            let (a, b) = (p.starts[cell] as usize, p.starts[cell + 1] as usize);
                            out_e[k..k + b - a].copy_from_slice(&p.edges[a..b]);
                            out_c[k..k + b - a].copy_from_slice(&p.edge_country[a..b]);
                            k += b - a;
                        }
                    }
                });
            }
        });
        let crossings = parts.iter().flat_map(|p| p.crossings.iter().copied()).collect();
        PlacedEdges { starts, edges, edge_country, crossings }
    }
}

impl LandMask {
    /// From rings handed out by `rings` (called twice, see [`LandMask::from_ring_parts`]).
    /// Each ring comes with its country's id (any numbering, below `u16::MAX - 1`).
    pub fn from_rings(rings: impl Fn(&mut dyn FnMut(u16, &[[f32; 2]])) + Sync) -> LandMask {
        Self::from_ring_parts(1, |_, f| rings(f))
    }

    /// From rings handed out in `parts` runs, `rings(p, f)` handing part `p`'s to `f` (twice:
    /// once to count each cell's edges, once to place them): each part on a thread of its own,
    /// joined in order. The mask is the same for any number of parts, as long as the parts in
    /// order hand out the same rings in the same order. With more than one part the edges are
    /// held twice while the parts are joined (the parts' and the mask's; 7.6 M edges of 18
    /// bytes for the 100 m borders), and each part holds two cell tables (8 MB) while it is
    /// built.
    pub fn from_ring_parts(parts: usize, rings: impl Fn(usize, &mut dyn FnMut(u16, &[[f32; 2]])) + Sync) -> LandMask {
        let placed = if parts <= 1 {
            PlacedEdges::new(|f| rings(0, f))
        } else {
            let rings = &rings;
            PlacedEdges::join(std::thread::scope(|s| {
                let handles: Vec<_> = (0..parts).map(|p| s.spawn(move || PlacedEdges::new(|f| rings(p, f)))).collect();
                handles.into_iter().map(|h| h.join().expect("a part of the border grid panicked")).collect()
            }))
        };
        let PlacedEdges { starts, edges, edge_country, mut crossings } = placed;
        crossings.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut centre = vec![NONE; COLS * ROWS];
        let mut centre_many = std::collections::HashMap::new();
        for row in crossings.chunk_by(|a, b| a.0 == b.0) {
            let r = row[0].0 as usize;
            let (mut west, mut inside) = (0, Inside::default());
            for c in 0..COLS {
                let xc = centre_of(c, r).0;
                while west < row.len() && row[west].1 < xc {
                    inside.toggle(row[west].2);
                    west += 1;
                }
                let cell = r * COLS + c;
                centre[cell] = match inside.n {
                    0 => NONE,
                    1 => inside.ids[0] + 1,
                    _ => {
                        centre_many.insert(cell as u32, inside.clone());
                        MANY
                    }
                };
            }
        }
        LandMask { starts, edges, edge_country, centre, centre_many }
    }

    /// No edge at all: the rings drew nothing.
    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    fn cell_edges(&self, cell: usize) -> &[Edge] {
        &self.edges[self.starts[cell] as usize..self.starts[cell + 1] as usize]
    }

    pub fn is_land(&self, lat: f64, lng: f64) -> bool {
        self.inside(lat, lng).n > 0
    }

    /// The countries (by the ids the rings came with) the point is inside: its cell's centre's,
    /// each toggled by every edge of its own country the segment from the centre crosses.
    pub fn inside(&self, lat: f64, lng: f64) -> Inside {
        if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lng) {
            return Inside::default();
        }
        let (c, r) = (col_of(lng), row_of(lat));
        let cell = r * COLS + c;
        let mut inside = match self.centre[cell] {
            NONE => Inside::default(),
            MANY => self.centre_many[&(cell as u32)].clone(),
            id => Inside { n: 1, ids: [id - 1, 0, 0, 0, 0, 0, 0, 0] },
        };
        let mid = centre_of(c, r);
        let (from, to) = (self.starts[cell] as usize, self.starts[cell + 1] as usize);
        for (e, &country) in self.edges[from..to].iter().zip(&self.edge_country[from..to]) {
            if crosses((lng, lat), mid, e) {
                inside.toggle(country);
            }
        }
        inside
    }

    /// The country of the edge nearest the point on the plane of degrees, when one is within
    /// `limit_deg`; of edges equally near (a border's two tracings, or the vertex where two
    /// countries' coasts meet), the lowest id. Every edge within the limit touches a cell within
    /// the limit of the point, so those cells are all that is searched (no wrap at the
    /// antimeridian: a pin there is a degree of longitude from the other side's coast).
    pub fn nearest_country(&self, lat: f64, lng: f64, limit_deg: f64) -> Option<u16> {
        if !(lat.is_finite() && lng.is_finite()) {
            return None;
        }
        let mut best: Option<(f64, u16)> = None;
        for r in row_of(lat - limit_deg)..=row_of(lat + limit_deg) {
            for c in col_of(lng - limit_deg)..=col_of(lng + limit_deg) {
                let cell = r * COLS + c;
                let (from, to) = (self.starts[cell] as usize, self.starts[cell + 1] as usize);
                for (e, &country) in self.edges[from..to].iter().zip(&self.edge_country[from..to]) {
                    let d2 = distance2_deg((lng, lat), e);
                    if d2 <= limit_deg * limit_deg && best.is_none_or(|(b, id)| d2 < b || (d2 == b && country < id)) {
                        best = Some((d2, country));
                    }
                }
            }
        }
        best.map(|(_, id)| id)
    }

    /// How far the point is from land in metres: 0 on land, `None` when no coast is within
    /// `limit_m`.
    pub fn distance_to_land_m(&self, lat: f64, lng: f64, limit_m: f64) -> Option<f64> {
        if self.is_land(lat, lng) {
            return Some(0.0);
        }
        let kx = M_PER_DEG_LNG * lat.to_radians().cos().max(0.01);
        // Every edge within the limit lies in the cells this many steps away, or nearer.
        let (reach_c, reach_r) =
            ((limit_m / kx / CELL_DEG).ceil().min(COLS as f64) as isize, (limit_m / M_PER_DEG_LAT / CELL_DEG).ceil().min(ROWS as f64) as isize);
        let (c0, r0) = (col_of(lng) as isize, row_of(lat) as isize);
        let mut best = f64::INFINITY;
        for r in (r0 - reach_r).max(0)..=(r0 + reach_r).min(ROWS as isize - 1) {
            for dc in -reach_c.min(COLS as isize / 2)..=reach_c.min(COLS as isize / 2 - 1) {
                let c = (c0 + dc).rem_euclid(COLS as isize) as usize;
                for e in self.cell_edges(r as usize * COLS + c) {
                    best = best.min(distance_m((lng, lat), e, kx));
                }
            }
        }
        (best <= limit_m).then_some(best)
    }

    /// Whether the straight line between two points stays on land, tested every `step_m`,
    /// leaving out `ends_m` at each end (towns stand on coasts the borders draw a little off).
    pub fn dry_line(&self, a: (f64, f64), b: (f64, f64), step_m: f64, ends_m: f64) -> bool {
        let length = storemap_core::haversine_m(a.0, a.1, b.0, b.1);
        let n = (length / step_m).ceil().max(1.0) as usize;
        (0..=n)
            .map(|i| i as f64 / n as f64)
            .filter(|t| t * length >= ends_m && (1.0 - t) * length >= ends_m)
            .all(|t| self.is_land(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 x 1 degree island of two countries sharing a border (drawn twice, once for each),
    /// the second with a lake-shaped hole; a third country across a strait, with a territory
    /// drawn over it (as Hong Kong is over China in some border files).
    fn mask() -> LandMask {
        let rings: Vec<(u16, Vec<[f32; 2]>)> = vec![
            (0, vec![[10.0, 50.0], [11.0, 50.0], [11.0, 51.0], [10.0, 51.0], [10.0, 50.0]]),
            (1, vec![[11.0, 50.0], [12.0, 50.0], [12.0, 51.0], [11.0, 51.0], [11.0, 50.0]]),
            (1, vec![[11.4, 50.4], [11.6, 50.4], [11.6, 50.6], [11.4, 50.6], [11.4, 50.4]]),
            (2, vec![[12.2, 50.0], [13.0, 50.0], [13.0, 51.0], [12.2, 51.0], [12.2, 50.0]]),
            (3, vec![[12.4, 50.3], [12.9, 50.3], [12.9, 50.8], [12.4, 50.8], [12.4, 50.3]]),
        ];
        LandMask::from_rings(|f| rings.iter().for_each(|(i, r)| f(*i, r)))
    }

    /// The rings of [`mask`], with two more shapes sharing its cells (so several parts place
    /// edges in one cell) and one across the antimeridian.
    fn many_rings() -> Vec<(u16, Vec<[f32; 2]>)> {
        vec![
            (0, vec![[10.0, 50.0], [11.0, 50.0], [11.0, 51.0], [10.0, 51.0], [10.0, 50.0]]),
            (1, vec![[11.0, 50.0], [12.0, 50.0], [12.0, 51.0], [11.0, 51.0], [11.0, 50.0]]),
            (1, vec![[11.4, 50.4], [11.6, 50.4], [11.6, 50.6], [11.4, 50.6], [11.4, 50.4]]),
            (2, vec![[12.2, 50.0], [13.0, 50.0], [13.0, 51.0], [12.2, 51.0], [12.2, 50.0]]),
            (3, vec![[12.4, 50.3], [12.9, 50.3], [12.9, 50.8], [12.4, 50.8], [12.4, 50.3]]),
            (4, vec![[10.1, 50.1], [10.2, 50.1], [10.15, 50.2], [10.1, 50.1]]),
            (5, vec![[10.05, 50.05], [12.95, 50.05], [12.95, 50.95], [10.05, 50.95], [10.05, 50.05]]),
            (6, vec![[179.5, -17.0], [180.0, -17.0], [180.0, -16.0], [179.5, -16.0], [179.5, -17.0]]),
        ]
    }

    #[test]
    fn a_mask_built_in_parts_is_the_one_built_whole() {
        let rings = many_rings();
        let whole = LandMask::from_rings(|f| rings.iter().for_each(|(i, r)| f(*i, r)));
        assert!(!whole.is_empty());
        // Every split of the rings into runs, empty runs included (more parts than rings).
        for parts in [2, 3, 5, 11] {
            let bounds: Vec<usize> = (0..=parts).map(|p| p * rings.len() / parts).collect();
            let m = LandMask::from_ring_parts(parts, |p, f| rings[bounds[p]..bounds[p + 1]].iter().for_each(|(i, r)| f(*i, r)));
            assert_eq!(m.starts, whole.starts, "{parts} parts: cell starts");
            assert_eq!(m.edges, whole.edges, "{parts} parts: edges in their cells' order");
            assert_eq!(m.edge_country, whole.edge_country, "{parts} parts: the edges' countries");
            assert_eq!(m.centre, whole.centre, "{parts} parts: the centres");
            let many = |m: &LandMask| {
                let mut v: Vec<(u32, Vec<u16>)> = m.centre_many.iter().map(|(c, i)| (*c, i.ids().to_vec())).collect();
                v.sort();
                v
            };
            assert_eq!(many(&m), many(&whole), "{parts} parts: centres inside several countries");
        }
    }

    #[test]
    fn land_sea_lakes_and_shared_borders() {
        let m = mask();
        // Either side of the shared border, and in cells whose centres are inland or at sea.
        assert!(m.is_land(50.5, 10.99));
        assert!(m.is_land(50.5, 11.01));
        assert!(m.is_land(50.1, 10.1));
        assert!(!m.is_land(50.5, 11.5), "the lake");
        assert!(!m.is_land(50.5, 12.1), "the strait");
        assert!(m.is_land(50.5, 12.3));
        // The territory over its country, at its centre and near its edge: land, not a hole.
        assert!(m.is_land(50.55, 12.65));
        assert!(m.is_land(50.31, 12.41));
        assert!(!m.is_land(49.99, 10.5));
        assert!(!m.is_land(0.0, 0.0));
        assert!(!m.is_land(f64::NAN, 0.0));
    }

    #[test]
    fn every_point_of_a_fine_grid_agrees_with_a_direct_ray_test() {
        let rings: Vec<Vec<[f32; 2]>> = vec![
            // A jagged coast with vertices on and off the grid's lines, and a lake.
            vec![[9.9, 49.8], [10.25, 50.125], [10.6, 49.9], [10.95, 50.6], [10.5, 50.375], [10.3, 50.9], [9.9, 49.8]],
            vec![[10.4, 50.1], [10.45, 50.15], [10.42, 50.2], [10.4, 50.1]],
        ];
        let m = LandMask::from_rings(|f| rings.iter().for_each(|r| f(0, r)));
        let direct = |lat: f64, lng: f64| {
            let mut inside = false;
            for ring in &rings {
                for w in ring.windows(2) {
                    let (a, b) = ((w[0][0] as f64, w[0][1] as f64), (w[1][0] as f64, w[1][1] as f64));
                    if (a.1 > lat) != (b.1 > lat) && lng < a.0 + (lat - a.1) * (b.0 - a.0) / (b.1 - a.1) {
                        inside = !inside;
                    }
                }
            }
            inside
        };
        // Raster-traced shapes: diagonals between quarter-degree grid points, through the cells'
        // centres, and vertices on them.
        let diamonds: Vec<Vec<[f32; 2]>> = vec![
            vec![[10.125, 50.125], [10.625, 50.625], [10.125, 51.125], [9.625, 50.625], [10.125, 50.125]],
            vec![[100.0, -10.0], [100.5, -9.5], [100.0, -9.0], [99.5, -9.5], [100.0, -10.0]],
        ];
        let d = LandMask::from_rings(|f| diamonds.iter().for_each(|r| f(0, r)));
        let direct_in = |rings: &[Vec<[f32; 2]>], lat: f64, lng: f64| {
            let mut inside = false;
            for ring in rings {
                for w in ring.windows(2) {
                    let (a, b) = ((w[0][0] as f64, w[0][1] as f64), (w[1][0] as f64, w[1][1] as f64));
                    if (a.1 > lat) != (b.1 > lat) && lng < a.0 + (lat - a.1) * (b.0 - a.0) / (b.1 - a.1) {
                        inside = !inside;
                    }
                }
            }
            inside
        };
        for (lat0, lng0) in [(50.0, 9.5), (-10.1, 99.4)] {
            for i in 0..300 {
                for j in 0..300 {
                    let (lat, lng) = (lat0 + i as f64 * 0.003_77, lng0 + j as f64 * 0.003_83);
                    assert_eq!(d.is_land(lat, lng), direct_in(&diamonds, lat, lng), "diamond {lat} {lng}");
                }
            }
        }
        let mut checked = 0;
        for i in 0..400 {
            for j in 0..400 {
                let (lat, lng) = (49.7 + i as f64 * 0.00301, 9.8 + j as f64 * 0.00302);
                assert_eq!(m.is_land(lat, lng), direct(lat, lng), "{lat} {lng}");
                checked += 1;
            }
        }
        assert_eq!(checked, 160_000);
    }

    #[test]
    fn distance_to_the_coast() {
        let m = mask();
        assert_eq!(m.distance_to_land_m(50.5, 10.5, 5_000.0), Some(0.0));
        // 0.01 degrees south of the south coast: about 1.1 km.
        let d = m.distance_to_land_m(49.99, 10.5, 5_000.0).unwrap();
        assert!((d - 1105.7).abs() < 1.0, "{d}");
        // The middle of the strait, 0.1 degrees of longitude from either shore at 50.5 N.
        let d = m.distance_to_land_m(50.5, 12.1, 20_000.0).unwrap();
        assert!((d - 0.1 * M_PER_DEG_LNG * 50.5f64.to_radians().cos()).abs() < 1.0, "{d}");
        assert_eq!(m.distance_to_land_m(48.0, 10.5, 20_000.0), None);
        // Across the antimeridian: an island east of it, seen from the west, 0.05 degrees away.
        let fiji: Vec<Vec<[f32; 2]>> = vec![vec![[-179.95, -17.0], [-179.5, -17.0], [-179.5, -16.5], [-179.95, -16.5], [-179.95, -17.0]]];
        let f = LandMask::from_rings(|g| fiji.iter().for_each(|r| g(0, r)));
        let d = f.distance_to_land_m(-16.75, 179.999_999, 20_000.0).unwrap();
        assert!((d - 0.05 * M_PER_DEG_LNG * 16.75f64.to_radians().cos()).abs() < 2.0, "{d}");
    }

    #[test]
    fn lines_across_water_are_not_dry() {
        let m = mask();
        assert!(m.dry_line((50.5, 10.2), (50.5, 10.9), 1_000.0, 0.0));
        assert!(!m.dry_line((50.5, 10.2), (50.5, 12.8), 1_000.0, 0.0));
        // The lake is wider than the ends left out.
        assert!(!m.dry_line((50.5, 11.3), (50.5, 11.7), 1_000.0, 2_000.0));
    }
}
