//! storemap-ingest: the data pipeline. Importers read the four sources in their publishers'
//! formats into [`SourceRow`]s; the catalog matches rows to brands; reconciliation clusters
//! them within 100 m and scores them; the snapshot writer hands the result to
//! `storemap_core::SnapshotBuilder`. The world generator writes a synthetic dataset in the
//! same four formats so that the default dataset goes through the very same importers.

pub mod bucket_row;
pub mod catalog;
pub mod countries;
pub mod density;
pub mod error;
pub mod feed_score;
pub mod folder_lock;
pub mod footprint;
pub mod hash;
pub mod history;
pub mod hours;
pub mod house_number;
pub mod identity;
pub mod import;
pub mod land;
pub mod parallel;
pub mod pipeline;
pub mod reconcile;
pub mod reference;
pub mod report;
pub mod shard;
pub mod source_row;
#[cfg(test)]
mod test_dir;
pub mod world;

pub use error::{IngestError, Result};
pub use source_row::{ImportReport, Skip, Skipped, SourceRow};
