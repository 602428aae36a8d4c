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

# One cargo run builds the addon and the pipeline (scripts/cargo-with-pipeline.sh says why).
# napi writes native/index.js and index.d.ts (committed; CI checks they match a fresh build)
# and the .node binary beside them (a build output, ignored by git).
CARGO="$PWD/scripts/cargo-with-pipeline.sh" napi build --platform --release --cwd native --manifest-path Cargo.toml \
  --output-dir . --target "$TRIPLE" --target-dir "$CARGO_TARGET_DIR"
mkdir -p native/bin
cp "$CARGO_TARGET_DIR/$TRIPLE/release/storemap-ingest" native/bin/storemap-ingest.tmp
mv native/bin/storemap-ingest.tmp native/bin/storemap-ingest
echo "storemap: built native/storemap.linux-x64-gnu.node and native/bin/storemap-ingest"
