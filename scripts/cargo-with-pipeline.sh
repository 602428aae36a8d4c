#!/usr/bin/env bash
# `cargo` for `napi build` (through its CARGO variable): the addon and the pipeline binary in
# one cargo run. Cargo unifies dependency features over the packages one run builds, so two
# runs (the addon alone, then the pipeline) compiled every shared crate twice with different
# features (jemalloc's C build, serde, libc, …); one run also keeps both cores busy while polars
# compiles. napi passes `--manifest-path native/Cargo.toml`, which alone selects the addon.
# STOREMAP_CARGO_TIMINGS=1 writes cargo's timing report (target/cargo-timings/).
# jemalloc's C build (tikv-jemalloc-sys runs its configure, then make) compiles each of its 62
# files three times at -g3: for libjemalloc.a, which nothing links, for libjemalloc_pic.a, which
# Rust links, and once more to list the symbols it renames. GNU make reads GNUMAKEFLAGS beside
# the MAKEFLAGS the build script sets: the pic library alone, without debug information (the
# release profile keeps none): 76 CPU-seconds become 40. A later tikv-jemalloc-sys whose Makefile
# names its libraries otherwise fails at the link, not quietly.
export GNUMAKEFLAGS="${GNUMAKEFLAGS:+$GNUMAKEFLAGS }STATIC_LIBS=lib/libjemalloc_pic.a EXTRA_CFLAGS=-g0"
exec cargo "$@" --locked -p storemap-native -p storemap-ingest ${STOREMAP_CARGO_TIMINGS:+--timings}
