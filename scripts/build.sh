#!/usr/bin/env bash
# Builds storemap's Rust side in release mode: the pipeline binary (storemap-ingest) and the
# napi addon. `npm install` runs it (the `prepare` script); so does `npm run build`.
# `bash scripts/build.sh --testing` builds only the addon's test variant (the `testing` cargo
# feature: the bench- and test-only exports) into native/testing/, which `npm test` and the
# benchmarks load beside the production addon; `npm install` never builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "storemap: the Rust toolchain (cargo) is required to build; see https://rustup.rs" >&2
  exit 1
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
# napi builds for an explicit target triple (target/<triple>/release), and cargo shares nothing
# between a build with --target and one without: the pipeline is built for the same triple, so
# the crates both graphs use (serde, libc, jemalloc's C build, storemap-core, …) compile once.
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')

if [ "${1:-}" = "--testing" ]; then
  # Through the same one-run cargo as below, so that only the addon itself compiles again.
  CARGO="$PWD/scripts/cargo-with-pipeline.sh" napi build --platform --release --cwd native --manifest-path Cargo.toml --features testing --output-dir testing \
    --js index.js --dts index.d.ts --target "$TRIPLE" --target-dir "$CARGO_TARGET_DIR"
  echo "storemap: built native/testing/storemap.linux-x64-gnu.node (test variant)"
  exit 0
fi

# better-sqlite3 12, the ledger's driver on Node 20, compiles SQLite for the running Node: about a
# minute on one core. package.json's allowScripts keeps npm from doing it before this script
# starts (npm runs dependencies' install scripts first, then ours), so that it runs here beside
# cargo, whose build leaves a core free for part of its run. Its own install script, unchanged:
# a prebuilt download where the network allows it, else node-gyp. Node 22 and later load release
# 13's Node-API prebuild (ts/db/database.ts) and need nothing; an npm without allowScripts has
# already built it.
sqlite_pid=
sqlite_log=
if [ -d node_modules/better-sqlite3 ] && [ ! -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] &&
  [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  sqlite_log=$(mktemp)
  (cd node_modules/better-sqlite3 && npm run --silent install) >"$sqlite_log" 2>&1 &
  sqlite_pid=$!
fi

# One cargo run builds the addon and the pipeline (scripts/cargo-with-pipeline.sh says why).
# napi writes native/index.js and index.d.ts (committed; CI checks they match a fresh build)
# and the .node binary beside them (a build output, ignored by git).
CARGO="$PWD/scripts/cargo-with-pipeline.sh" napi build --platform --release --cwd native --manifest-path Cargo.toml \
  --output-dir . --target "$TRIPLE" --target-dir "$CARGO_TARGET_DIR"
mkdir -p native/bin
cp "$CARGO_TARGET_DIR/$TRIPLE/release/storemap-ingest" native/bin/storemap-ingest.tmp
mv native/bin/storemap-ingest.tmp native/bin/storemap-ingest
echo "storemap: built native/storemap.linux-x64-gnu.node and native/bin/storemap-ingest"
if [ -n "$sqlite_pid" ]; then
  if ! wait "$sqlite_pid"; then
    cat "$sqlite_log" >&2
    echo "storemap: better-sqlite3 did not build (above); node-gyp needs python3, make and a C++ compiler" >&2
    exit 1
  fi
  rm -f "$sqlite_log"
  echo "storemap: built better-sqlite3 for Node $(node -v)"
fi
