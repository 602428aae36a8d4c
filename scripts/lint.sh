#!/usr/bin/env bash
# The linters: rustfmt and clippy over the Rust workspace (warnings are errors), eslint with
# typescript-eslint over the TypeScript, and no import circle (madge over the TypeScript, type
# imports included; scripts/rust-circles.mjs between each crate's modules). One runner each;
# ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
passed=0
failed=0
run() { # a name, then the command
  local name=$1
  shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
run "cargo fmt --check" cargo fmt --all -- --check
run "cargo clippy -D warnings" cargo clippy --release --locked --all-targets --workspace --features storemap-ingest/reference-data -- -D warnings
run "eslint" eslint --max-warnings 0 .
run "no import circle (TypeScript)" madge --circular --no-spinner --extensions ts --ts-config tsconfig.json ts test bench
run "no module circle (Rust)" node scripts/rust-circles.mjs
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
