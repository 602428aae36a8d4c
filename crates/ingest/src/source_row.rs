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
    /// `opening_hours` in the parser's normal form (`hours.rs`), where the source gives valid
    /// hours.
    pub opening_hours: Option<String>,
    /// The source gave hours the grammar rejects (dropped; counted in the import's report).
    pub hours_invalid: bool,
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

/// Why a record did not become a row. Every record an importer reads ends as a kept row or
/// as exactly one of these, so `rows_read == rows_kept + Σ skipped` holds for every report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Skip {
    /// Not a place that sells to the public (a road, a park, an apartment block, an office).
    NotStorefront,
    /// A storefront, but of a category outside the contract's scope (`data/categories.csv`).
    OutOfScope,
    /// Outside the import's `--country` / `--bbox` region.
    OutOfRegion,
    /// A storefront no brand of the catalog claims (unbranded, or a chain NSI does not know).
    NoBrandMatch,
    /// No usable position: null, out of range, not numbers, unreadable WKB, an area whose
    /// nodes are missing from the extract.
    BadGeometry,
    /// The source says the place is closed.
    Closed,
    /// The same object again (osmium writes each closed way twice; a re-sent id). The places
    /// files' and AllThePlaces' copies are found at reconciliation, where their ids are compared.
    DuplicateId,
    /// The record itself is broken: not JSON, no id, no name.
    Invalid,
}

impl Skip {
    pub const ALL: [Skip; 8] =
        [Skip::NotStorefront, Skip::OutOfScope, Skip::OutOfRegion, Skip::NoBrandMatch, Skip::BadGeometry, Skip::Closed, Skip::DuplicateId, Skip::Invalid];

    pub fn as_str(self) -> &'static str {
        match self {
            Skip::NotStorefront => "not_storefront",
            Skip::OutOfScope => "out_of_scope",
            Skip::OutOfRegion => "out_of_region",
            Skip::NoBrandMatch => "no_brand_match",
            Skip::BadGeometry => "bad_geometry",
            Skip::Closed => "closed",
            Skip::DuplicateId => "duplicate_id",
            Skip::Invalid => "invalid",
        }
    }
}

/// A record that did not become a row, and why (for the report's message).
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub reason: Skip,
    pub why: String,
}

impl Skipped {
    pub fn new(reason: Skip, why: impl Into<String>) -> Skipped {
        Skipped { reason, why: why.into() }
    }
}

/// What one import did: files and rows read, rows kept, rows skipped by reason. Messages name
/// the file and the row.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ImportReport {
    pub source: String,
    /// Files read, empty ones included.
    pub files: usize,
    /// 0-byte files (AllThePlaces writes one for every spider that found nothing).
    pub files_empty: usize,
    /// Files of a many-file input (a folder, a zip) that could not be read; named in `errors`.
    pub files_failed: usize,
    pub rows_read: u64,
    /// Rows that reached reconciliation (after the pipeline's region and brand checks), less the
    /// second copies of one record it dropped (counted as `duplicate_id`).
    pub rows_kept: u64,
    /// Every skip but `closed` (kept apart for the older report field).
    pub rows_skipped: u64,
    pub rows_closed: u64,
    /// Skipped rows by reason (`Skip::as_str`), `closed` included.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// Kept rows that ended in a reconciled row with at least one other source.
    pub rows_corroborated: u64,
    /// Rows the importer took with valid `opening_hours`, and those whose hours were dropped as
    /// invalid (counted before the pipeline's region and brand checks).
    pub rows_with_hours: u64,
    pub hours_invalid: u64,
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

    /// Counts a skipped record by reason. A broken record (invalid, or with no usable
    /// position) gets a message naming the file and the row; the ordinary skips (closed,
    /// duplicates, not a store, no brand) are only counted.
    pub fn skip(&mut self, file: &str, row: u64, skipped: Skipped) {
        self.skip_at(file, &format!("row {row}"), skipped);
    }

    /// As `skip`, for records that have no row number (a PBF's `way 123`).
    pub fn skip_at(&mut self, file: &str, place: &str, skipped: Skipped) {
        if matches!(skipped.reason, Skip::Invalid | Skip::BadGeometry) && self.errors.len() < MAX_MESSAGES {
            self.errors.push(format!("{file}: {place}: {}", skipped.why));
        }
        self.count(skipped.reason, 1);
    }

    /// Counts a kept row's hours: valid, or dropped as invalid.
    pub fn count_hours(&mut self, row: &SourceRow) {
        self.rows_with_hours += u64::from(row.opening_hours.is_some());
        self.hours_invalid += u64::from(row.hours_invalid);
    }

    /// A message about the import as a whole (capped like the rest).
    pub fn note(&mut self, message: String) {
        if self.errors.len() < MAX_MESSAGES {
            self.errors.push(message);
        }
    }

    /// Counts `n` records skipped for `reason`, with no message.
    pub fn count(&mut self, reason: Skip, n: u64) {
        if n == 0 {
            return;
        }
        if reason == Skip::Closed {
            self.rows_closed += n;
        } else {
            self.rows_skipped += n;
        }
        *self.skipped.entry(reason.as_str().to_string()).or_default() += n;
    }

    /// Moves `n` kept rows to a skip reason (the pipeline's checks after import).
    pub fn unkeep(&mut self, reason: Skip, n: u64) {
        let n = n.min(self.rows_kept);
        self.rows_kept -= n;
        self.count(reason, n);
    }

    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    pub fn merge(&mut self, other: ImportReport) {
        self.files += other.files;
        self.files_empty += other.files_empty;
        self.files_failed += other.files_failed;
        self.rows_read += other.rows_read;
        self.rows_kept += other.rows_kept;
        self.rows_skipped += other.rows_skipped;
        self.rows_closed += other.rows_closed;
        self.rows_corroborated += other.rows_corroborated;
        self.rows_with_hours += other.rows_with_hours;
        self.hours_invalid += other.hours_invalid;
        for (k, v) in other.skipped {
            *self.skipped.entry(k).or_default() += v;
        }
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

/// Trims and drops empty strings. The character the importers join a house number and its
/// street with ([`crate::house_number::SEP`]) is a space in a source's own text, so that only
/// a joined address ever holds it.
pub fn clean(s: Option<&str>) -> Option<String> {
    let s = s?;
    let sep = crate::house_number::SEP;
    let s = if s.contains(sep) { std::borrow::Cow::Owned(s.replace(sep, " ")) } else { std::borrow::Cow::Borrowed(s) };
    Some(s.trim()).filter(|s| !s.is_empty()).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::house_number::{line, SEP};

    /// A separator in a source's own text is a space once read: a whole line is never taken for
    /// a joined number and street, and turned round.
    #[test]
    fn a_separator_in_a_sources_text_is_a_space() {
        let whole = clean(Some(" Hauptstraße\u{1f}12 ")).unwrap();
        assert!(!whole.contains(SEP));
        assert_eq!(line(&whole, "DE"), "Hauptstraße 12");
        assert_eq!(clean(Some("\u{1f}")), None);
    }
}
