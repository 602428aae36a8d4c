#!/usr/bin/env bash
# The HTTP and addon suites on each Node that `engines` names besides the machine's own: Node 22
# and 24, installed from the npm registry's `node` package into a cache outside the clone. Our
# napi addon is Node-API, one build for all; on Node 22+ the ledger uses better-sqlite3 13's
# Node-API prebuild (`better-sqlite3-napi`, see ts/db/database.ts), so nothing is compiled per
# version. Ends with one line of totals: "N passed, N failed".
#
#   bash scripts/node-matrix.sh [VERSION ...]     (default: the versions below)
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(22.23.3 24.21.0)
# The suites that start a server, load the addon or open the ledger (the pipeline and CLI suites are Node-agnostic
# child processes and run once, on the machine's Node, in `npm test`).
SUITES=(test/server.test.ts test/location-map/*.test.ts test/bad-input.test.ts test/concurrency.test.ts test/directory.test.ts
  test/docs.test.ts test/unit/*.test.ts test/images.test.ts test/map-features.test.ts test/native.test.ts
  test/refresh.test.ts test/shutdown.test.ts test/status.test.ts test/usage.test.ts test/ledger.test.ts
  test/nearby.test.ts test/overlap.test.ts test/changes.test.ts test/playground.test.ts)
export STOREMAP_TEST_DATA_DIR="${STOREMAP_TEST_DATA_DIR:-$PWD/data/generated/test-data}"
export STOREMAP_REFERENCE_DIR="${STOREMAP_REFERENCE_DIR:-$PWD/data/generated/reference}"
if [ ! -f "$STOREMAP_TEST_DATA_DIR/snapshot.smap" ]; then
  echo "node-matrix: no test dataset in $STOREMAP_TEST_DATA_DIR: run npm test first" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0
status=0
for v in "${VERSIONS[@]}"; do
  if ! node_bin=$(bash scripts/install-node.sh "$v"); then
    failed=$((failed + 1)) status=1
    continue
  fi
  nodedir=$(dirname "$(dirname "$node_bin")")
  echo "== ava on Node $("$nodedir/bin/node" --version)"
  PATH="$nodedir/bin:$PATH" "$nodedir/bin/node" node_modules/ava/entrypoints/cli.mjs "${SUITES[@]}" 2>&1 | tee "$logs/ava.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  p=$(grep -Eo '([0-9]+) tests? passed' "$logs/ava.txt" | grep -Eo '^[0-9]+' | tail -1)
  f=$(grep -Eo '([0-9]+) (tests? failed|uncaught exceptions?|unhandled rejections?)' "$logs/ava.txt" | awk '{s += $1} END {if (NR) print s}')
  # With failures ava's summary leaves out the passed count: count its ✔ lines instead.
  if [ -z "$p" ] && [ -n "$f" ]; then p=$(grep -c '✔' "$logs/ava.txt"); fi
  # A test file whose process died (a native crash) reports no test as failed: count it.
  crashed=$(grep -c 'exited due to' "$logs/ava.txt")
  f=$(( ${f:-0} + crashed ))
  [ "$f" -eq 0 ] && f=""
  if [ -z "$p$f" ]; then f=1; status=1; fi
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
