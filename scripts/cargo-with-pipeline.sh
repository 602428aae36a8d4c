#!/usr/bin/env bash
# `cargo` for `napi build` (through its CARGO variable): the addon and the pipeline binary in
# one cargo run. Cargo unifies dependency features over the packages one run builds, so two
# runs (the addon alone, then the pipeline) compiled every shared crate twice with different
# features (jemalloc's C build, serde, libc, …); one run also keeps both cores busy while polars
# compiles. napi passes `--manifest-path native/Cargo.toml`, which alone selects the addon.
# STOREMAP_CARGO_TIMINGS=1 writes cargo's timing report (target/cargo-timings/).
exec cargo "$@" --locked -p storemap-native -p storemap-ingest ${STOREMAP_CARGO_TIMINGS:+--timings}
