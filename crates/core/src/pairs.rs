//! What an overlap request finds (`overlap.rs`), as plain data its documents (`format/overlap.rs`)
//! are written from.

/// Two stores of different brands: rows of the snapshot, `a` of the brand named earlier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    pub a: u32,
    pub b: u32,
    pub distance_m: f64,
}

/// One country's pairs (by the first store's country), and per brand (request order) its
/// stores with at least one partner.
#[derive(Debug, Clone, PartialEq)]
pub struct CountryOverlap {
    pub country: String,
    pub pairs: u32,
    pub stores_with_partner: Vec<u32>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlap {
    /// Ordered by brand pair (request order), then the first store's row, then distance.
    pub pairs: Vec<Pair>,
    /// Per brand (request order): its stores with at least one partner, everywhere.
    pub stores_with_partner: Vec<u32>,
    /// Most pairs first, ties by code.
    pub by_country: Vec<CountryOverlap>,
}
