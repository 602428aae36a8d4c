//! storemap-core: the data model, the serving snapshot, brand resolution, filters and the
//! writers that turn rows into JSON, CSV and GeoJSON bytes.
//!
//! Nothing here knows about Node, HTTP, plans or credits: the napi binding (`native/`) and the
//! data pipeline (`crates/ingest`) are its two callers.

mod aliases;
mod change_answer;
mod changes;
mod cluster;
mod coverage;
mod error;
mod format;
mod gazetteer;
mod geodesy;
mod geojson;
mod history;
mod model;
mod names;
mod nearby;
mod open_at;
mod overlap;
mod pairs;
mod query;
mod records;
mod series;
mod serve;
mod snapshot;
mod strings;
mod time;

pub use aliases::{AliasIndex, Resolution, ResolvedBy, Suggestion};
pub use change_answer::{ChangeAnswer, ChangeQuery};
pub use changes::{ChangeFeed, Changes};
pub use cluster::{cluster, ClusterPoint, Clusters};
pub use coverage::{chao, chapman, lincoln_petersen, Estimator, Sightings, TotalEstimate, MIN_OBSERVED};
pub use error::{CoreError, ErrorCode, Result};
pub use format::{
    changes_csv_header, nearby_csv_header, overlap_csv_header, write_changes, write_nearby, write_overlap, write_rows, Format, WriteOptions, CSV_HEADER,
    HOURS_COLUMN,
};
pub use geodesy::{chord_m, haversine_m, offset_m, LocalMetric};
pub use geojson::{polygon_features, PolygonFeature, PolygonGeometry, Ring};
pub use history::{Entry as HistoryEntry, IdHistory, DEFAULT_KEEP as HISTORY_DEFAULT_KEEP, HISTORY_DEPARTED_FILE, HISTORY_DIR, HISTORY_IDS_FILE};
pub use model::{is_servable, SourceMask, SourceType, StorefrontType, CONFIDENCE_FLOOR, DEDUP_TOLERANCE_M, FLAG_COMMUNITY_ONLY, FLAG_PROVENANCE};
pub use names::{name_keys, normalize_name};
pub use nearby::{NearbyIndex, NearbyQuery, NEARBY_DEFAULT_LIMIT, NEARBY_MAX_LIMIT, NEARBY_OPEN_SCAN};
pub use open_at::{OpenAt, OpenCheck, Openness};
pub use overlap::{OverlapQuery, OVERLAP_DEFAULT_DISTANCE_M, OVERLAP_MAX_BRANDS, OVERLAP_MAX_DISTANCE_M, OVERLAP_MAX_PAIRS, OVERLAP_MIN_BRANDS};
pub use pairs::{CountryOverlap, Overlap, Pair};
pub use query::{Filters, QueryResult};
pub use records::{brand_identity, BrandRecord, CityRecord, SnapshotMeta, SourceImport, TickerRecord};
pub use series::{Interval, Period, PeriodCount, Series, SeriesQuery};
pub use serve::{Answer, Budget, DataQuery, Refusal, Served};
pub use snapshot::{
    PackedRows, RowBuilder, RowPacker, Snapshot, SnapshotBuilder, TextColumn, FORMAT_VERSION, OLDEST_READABLE, PREVIOUS_SNAPSHOT_FILE, SNAPSHOT_FILE,
};
pub use strings::{StringPool, StringPoolBuilder};
pub use time::{format_iso, parse_iso, AHEAD_MAX_S, DAY_S};

/// The most worker threads a data build may be asked to run (`STOREMAP_THREADS`): the pipeline
/// refuses more, and the service checks the variable against it at start.
pub const MAX_BUILD_THREADS: usize = 1024;
