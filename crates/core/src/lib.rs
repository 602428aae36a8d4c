//! storemap-core: the data model, the serving snapshot, brand resolution, filters and the
//! writers that turn rows into JSON, CSV and GeoJSON bytes.
//!
//! Nothing here knows about Node, HTTP, plans or credits: the napi binding (`native/`) and the
//! data pipeline (`crates/ingest`) are its two callers.

mod aliases;
mod cluster;
mod coverage;
mod error;
mod format;
mod geodesy;
mod geojson;
mod model;
mod names;
mod query;
mod records;
mod serve;
mod snapshot;
mod strings;
mod time;

pub use aliases::{AliasIndex, Resolution, ResolvedBy, Suggestion};
pub use cluster::{cluster, ClusterPoint, Clusters};
pub use coverage::{chao, chapman, lincoln_petersen, Estimator, Sightings, TotalEstimate, MIN_OBSERVED};
pub use error::{CoreError, Result};
pub use format::{write_rows, Format, WriteOptions, CSV_HEADER};
pub use geodesy::{haversine_m, offset_m, LocalMetric};
pub use geojson::{polygon_features, PolygonFeature, PolygonGeometry, Ring};
pub use model::{SourceMask, SourceType, StorefrontType, CONFIDENCE_FLOOR, FLAG_COMMUNITY_ONLY, FLAG_PROVENANCE};
pub use names::{name_keys, normalize_name};
pub use query::{Filters, QueryResult};
pub use records::{BrandRecord, CityRecord, SnapshotMeta, SourceImport, TickerRecord};
pub use serve::{Answer, Budget, DataQuery, Refusal, Served};
pub use snapshot::{RowBuilder, Snapshot, SnapshotBuilder, TextColumn, FORMAT_VERSION, PREVIOUS_SNAPSHOT_FILE, SNAPSHOT_FILE};
pub use strings::{StringPool, StringPoolBuilder};
pub use time::{format_iso, parse_iso};
