//! Three brands' stores scattered over the globe, half of them in one dense city (some
//! community-only, some below the confidence floor, some on the very same spot, some by the
//! antimeridian), written and loaded through the real file format; a row's id is its index in
//! the list returned, plus 1. And great-circle metres written from the textbook formula, not
//! the core's, for the spatial tests' brute-force scans.

use storemap_core::{BrandRecord, RowBuilder, Snapshot, SnapshotBuilder, SnapshotMeta, SourceMask, SourceType, CONFIDENCE_FLOOR};

/// A small deterministic generator (xorshift), so a failure names a case that fails again.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Great-circle metres, written here from the textbook formula (atan2 form), not the core's.
pub fn distance(lat1: f64, lng1: f64, lat2: f64, lng2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let (dp, dl) = ((lat2 - lat1).to_radians(), (lng2 - lng1).to_radians());
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    6_371_008.8 * 2.0 * a.sqrt().atan2((1.0 - a).sqrt())
}

pub struct Row {
    pub brand: u32,
    pub lat: f64,
    pub lng: f64,
    pub served: bool,
}

pub fn world(file: &str, name: &str) -> (Snapshot, Vec<Row>) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rows = Vec::new();
    for i in 0..1800 {
        let brand = i % 3;
        // Half the stores in one dense city (ties and near ties), half anywhere.
        let (lat, lng) =
            if rng.next() < 0.5 { (48.85 + rng.next() * 0.05, 2.30 + rng.next() * 0.08) } else { (rng.next() * 180.0 - 90.0, rng.next() * 360.0 - 180.0) };
        let served = rng.next() > 0.2;
        rows.push(Row { brand, lat, lng, served });
    }
    // Two stores of different brands on one spot, and one near the antimeridian.
    rows.push(Row { brand: 0, lat: 10.0, lng: 179.999, served: true });
    rows.push(Row { brand: 1, lat: 10.0, lng: 179.999, served: true });
    rows.push(Row { brand: 2, lat: 10.0, lng: -179.999, served: true });
    rows.sort_by_key(|r| r.brand);
    let brands = vec![BrandRecord::new("Alpha"), BrandRecord::new("Beta"), BrandRecord::new("Gamma")];
    let mut b = SnapshotBuilder::new(SnapshotMeta::default(), brands, Vec::new(), Vec::new());
    for (i, r) in rows.iter().enumerate() {
        let mut sources = SourceMask::default();
        sources.insert(SourceType::Atp);
        b.push(&RowBuilder {
            brand: r.brand,
            lat: r.lat,
            lng: r.lng,
            id: i as u64 + 1,
            name: format!("store {i}"),
            // The city in France; elsewhere a country by hemisphere, so that filters have a choice.
            country: (if (48.8..48.95).contains(&r.lat) && (2.2..2.45).contains(&r.lng) {
                "FR"
            } else if r.lng < 0.0 {
                "US"
            } else {
                "JP"
            })
            .into(),
            confidence: if r.served { CONFIDENCE_FLOOR + 0.1 } else { 0.3 },
            community_only: !r.served && i % 2 == 0,
            sources,
            ..RowBuilder::default()
        });
    }
    (super::write_and_load(b, file, name).unwrap(), rows)
}
