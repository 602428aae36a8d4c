//! The vocabulary shared by the pipeline and the service.

/// Data formats serve only rows at or above this reconciled confidence. Fixed by the contract:
/// no request parameter changes it.
pub const CONFIDENCE_FLOOR: f32 = 0.6;

/// The contract's de-duplication tolerance: rows of one brand within this distance are one
/// storefront, and a store that moved less than this between two refreshes is the same store.
pub const DEDUP_TOLERANCE_M: f64 = 100.0;

/// Whether a data format may serve a row: the fixed confidence floor and no community-only
/// rows. The one statement of the rule; snapshots, builders and the history ask it.
pub fn is_servable(community_only: bool, confidence: f32) -> bool {
    !community_only && confidence >= CONFIDENCE_FLOOR
}

/// Row flag: seen only in the community map (OSM). Drawn on images, never in data formats.
pub const FLAG_COMMUNITY_ONLY: u8 = 1;
/// Row flag: the row went through the multi-source pipeline, so its provenance fields are set.
pub const FLAG_PROVENANCE: u8 = 2;

/// The four sources, in the alphabetical order the response headers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum SourceType {
    Atp = 0,
    Fsq = 1,
    Osm = 2,
    Overture = 3,
}

impl SourceType {
    pub const ALL: [SourceType; 4] = [SourceType::Atp, SourceType::Fsq, SourceType::Osm, SourceType::Overture];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceType::Atp => "atp",
            SourceType::Fsq => "fsq",
            SourceType::Osm => "osm",
            SourceType::Overture => "overture",
        }
    }

    pub fn parse(s: &str) -> Option<SourceType> {
        SourceType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn from_u8(v: u8) -> Option<SourceType> {
        SourceType::ALL.get(v as usize).copied()
    }

    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of sources as a bit mask (bit n = `SourceType` n).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceMask(pub u8);

impl SourceMask {
    pub fn insert(&mut self, s: SourceType) {
        self.0 |= s.bit();
    }
    pub fn contains(self, s: SourceType) -> bool {
        self.0 & s.bit() != 0
    }
    pub fn iter(self) -> impl Iterator<Item = SourceType> {
        SourceType::ALL.into_iter().filter(move |s| self.contains(*s))
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum StorefrontType {
    FullRetail = 0,
    SmallFormat = 1,
    Pickup = 2,
    Studio = 3,
    Other = 4,
}

impl StorefrontType {
    pub const ALL: [StorefrontType; 5] =
        [StorefrontType::FullRetail, StorefrontType::SmallFormat, StorefrontType::Pickup, StorefrontType::Studio, StorefrontType::Other];
    /// Stored in the snapshot for rows without provenance.
    pub const NULL: u8 = 255;

    pub fn as_str(self) -> &'static str {
        match self {
            StorefrontType::FullRetail => "full_retail",
            StorefrontType::SmallFormat => "small_format",
            StorefrontType::Pickup => "pickup",
            StorefrontType::Studio => "studio",
            StorefrontType::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<StorefrontType> {
        StorefrontType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn from_u8(v: u8) -> Option<StorefrontType> {
        StorefrontType::ALL.get(v as usize).copied()
    }
}
