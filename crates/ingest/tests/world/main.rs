//! Integration tests for storemap-ingest over the full reference data: the real brand catalog
//! (name-suggestion-index), the 100 m borders and the gazetteer, which `ts/data/reference.ts`
//! extracts from npm packages (too large to commit). Built only with the `reference-data`
//! feature, so a bare `cargo test` on a fresh clone runs what the repository alone can:
//!
//!   node --import tsx ts/data/reference.ts data/generated/reference
//!   cargo test --release -p storemap-ingest --features reference-data
//!
//! (`npm test` does both.) Reference data: `STOREMAP_REFERENCE_DIR`, else
//! `data/generated/reference`.
//!
//! - `churn`: the world ages from its survey day, stores keep their ids across builds, and the
//!   history records what each build opened and closed.
//! - `feed`: the change feed's query against the snapshots it summarises.
//! - `reconcile`: the whole fixture scene through the reconciler, against `expected.json`.
//! - `clustering`: hand-placed source rows probing the 100 m clustering rules.
//! - `determinism`: two synthetic builds with one seed give byte-identical snapshots.
//! - `hours`: the sources' opening hours as their publishers write them, and the rows' hours by
//!   kind of store and country's trading law.
//! - `names`: small stores carry a format their chain runs (Walmart Express, no H&M Express).
//! - `addresses`: street addresses in each country's own pattern, the house number apart.
//! - `footprints`: the synthetic world against the real store counts per country and the
//!   AllThePlaces presence table.
//! - `shards`: a build in shards, merged, is the one-process build byte for byte; bad parts are
//!   refused by name.
//! - `report`: the dataset report on a synthetic build, each ticker chain's served top country
//!   at scale 0.1 against its published one (`data/served-top-exceptions.csv` names the rest),
//!   and the dedup metric on a hand-made snapshot whose scores are known exactly.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;

mod addresses;
mod churn;
mod clustering;
mod determinism;
mod feed;
mod footprints;
mod hours;
mod land;
mod names;
mod reconcile;
mod report;
mod shards;
