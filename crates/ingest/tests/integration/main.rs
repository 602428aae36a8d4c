//! Integration tests for storemap-ingest: one test binary (tiny-skia/resvg style), one module
//! per area.
//!
//! - `fixtures`: the four importers against `test/fixtures` and its ground truth
//!   (`expected.json`), good and malformed inputs.
//! - `reconcile`: the whole fixture scene through the reconciler, against `expected.json`.
//! - `clustering`: hand-placed source rows probing the 100 m clustering rules.
//! - `determinism`: two synthetic builds with one seed give byte-identical snapshots.
//! - `real`: the importers on files the publishers' tools wrote (`test/fixtures/real`) and on
//!   other releases' shapes (`test/fixtures/variants`).
//! - `footprints`: the synthetic world against the real store counts per country and the
//!   AllThePlaces presence table.
//! - `report`: the dataset report on a synthetic build, and the dedup metric on a hand-made
//!   snapshot whose scores are known exactly.
//!
//! Reference data: `STOREMAP_REFERENCE_DIR`, else `data/generated/reference` (made by
//! `node --import tsx ts/data/reference.ts data/generated/reference`).

#[allow(dead_code)]
mod common;

mod clustering;
mod determinism;
mod fixtures;
mod footprints;
mod real;
mod reconcile;
mod report;
