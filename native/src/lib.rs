//! The napi-rs binding: converts JavaScript requests into the crates' types and their answers
//! and failures back, and runs the work off the event loop. Nothing here decides anything:
//! the rules live in `storemap-core` (rows, filters, limits, budgets) and `storemap-render`
//! (maps and their defaults).
//!
//! Each heavy call has a `fooSync` form and an async `foo` form that runs on the libuv pool,
//! both over one crate function. Errors cross as data: a JS error whose `code` is the
//! service's error code (`error.rs`); a panic becomes `INTERNAL`, never a dead process.

#![deny(clippy::all)]

// Public so that every `#[napi]` item is reachable in a test build too (napi's registration
// is what uses them; without it they would read as dead code).
pub mod changes;
pub mod error;
pub mod geoparquet;
pub mod history;
pub mod nearby;
pub mod overlap;
pub mod query;
pub mod render;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;

/// Every response body is a fresh multi-megabyte Vec handed to JS and freed at the next GC.
/// glibc maps each one anew and unmaps it on free, so every request paid a page fault per
/// 4 KiB written; jemalloc keeps freed extents for the next request. Only the addon's own
/// allocations use it (the symbols are prefixed), not Node's.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once at its start. By default allocations over 8 MiB go to an
/// arena that returns pages to the OS at once, which for bodies of that size (a large brand
/// as GeoJSON is 10 MB) brings the page faults back; with the threshold off they are reused
/// like the rest. Memory freed and not reused within a second goes back to the OS, purged by
/// jemalloc's own background thread: without it the hundred-odd MB that loading a snapshot and
/// the basemap's shapes parse through stayed resident (a node on the scale-0.1 snapshot held
/// 462 MiB settled, 369 MiB with it). `_RJEM_MALLOC_CONF` in the environment overrides any of
/// these. The one place the addon needs an exported symbol.
#[allow(unsafe_code)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static MALLOC_CONF: &u8 = &b"oversize_threshold:0,background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0"[0];
