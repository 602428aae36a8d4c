//! The one shape every importer produces.

use storemap_core::SourceType;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceRow {
    pub source: Option<SourceType>,
    /// The publisher's own id: OSM `n123`, ATP feature id, Overture GERS id, `fsq_place_id`.
    pub source_id: String,
    /// Other ids the same record is known by (ATP: `<spider>/<ref>`), for matching Overture's
    /// `sources[].record_id`.
    pub other_ids: Vec<String>,
    pub lat: f64,
    pub lng: f64,
    pub name: String,
    pub brand: Option<String>,
    pub brand_wikidata: Option<String>,
    /// `amenity/fast_food`-style tag category, Overture category or FSQ label path.
    pub category: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub postcode: Option<String>,
    /// ISO alpha-2 as the source tagged it (may be missing or wrong: see country backfill).
    pub country: Option<String>,
    pub phone: Option<String>,
    /// The source says the place is closed.
    pub closed: bool,
    /// When the source last saw or refreshed the record (unix seconds).
    pub seen_at: Option<i64>,
    /// Records of other sources this one re-publishes (Overture's `sources[]`), as
    /// (source, record_id). Such a row must not count a store twice.
    pub derived_from: Vec<(SourceType, String)>,
}

impl SourceRow {
    pub fn source(&self) -> SourceType {
        self.source.expect("importers always set the source")
    }
}

/// What one import did: rows kept, rows skipped and why. Messages name the file and the row.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ImportReport {
    pub source: String,
    pub files: usize,
    pub rows_read: u64,
    pub rows_kept: u64,
    pub rows_skipped: u64,
    pub rows_closed: u64,
    /// The first messages (capped, so a broken file cannot flood the log).
    pub errors: Vec<String>,
    /// Licences declared by the files read (AllThePlaces spiders' `dataset_attributes`):
    /// licence to the spiders declaring it.
    pub declared_licences: std::collections::BTreeMap<String, Vec<String>>,
}

const MAX_MESSAGES: usize = 50;

impl ImportReport {
    pub fn new(source: SourceType) -> ImportReport {
        ImportReport { source: source.as_str().into(), ..ImportReport::default() }
    }

    pub fn skip(&mut self, file: &str, row: u64, why: impl std::fmt::Display) {
        self.rows_skipped += 1;
        if self.errors.len() < MAX_MESSAGES {
            self.errors.push(format!("{file}: row {row}: {why}"));
        }
    }

    pub fn merge(&mut self, other: ImportReport) {
        self.files += other.files;
        self.rows_read += other.rows_read;
        self.rows_kept += other.rows_kept;
        self.rows_skipped += other.rows_skipped;
        self.rows_closed += other.rows_closed;
        for e in other.errors {
            if self.errors.len() < MAX_MESSAGES {
                self.errors.push(e);
            }
        }
        for (licence, spiders) in other.declared_licences {
            self.declared_licences.entry(licence).or_default().extend(spiders);
        }
    }
}

/// Valid WGS84 coordinates, rejecting the (0, 0) "null island" placeholder too.
pub fn valid_point(lat: f64, lng: f64) -> bool {
    lat.is_finite() && lng.is_finite() && (-90.0..=90.0).contains(&lat) && (-180.0..=180.0).contains(&lng) && !(lat == 0.0 && lng == 0.0)
}

/// Trims and drops empty strings.
pub fn clean(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}
