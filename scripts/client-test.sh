#!/usr/bin/env bash
# Clients people generate: openapi-generator (its CLI from PyPI's openapi-generator-cli wheel,
# which bundles the jar; run by the machine's JDK) builds a TypeScript (typescript-fetch) and a
# Python client from the /api/openapi.yaml a real server serves. The TypeScript client must
# compile under tsc --strict and the Python one install; each then makes real requests to that
# server on 127.0.0.1 (test/clients/smoke.ts, smoke.py).
#
# Needs the test dataset `npm test` builds (data/generated/test-data, or $STOREMAP_TEST_DATA_DIR),
# python3 with venv, java, and the npm dependencies. The generator and the client's Python
# dependencies go into a venv kept outside the clone ($STOREMAP_CI_CACHE, default
# ~/.cache/storemap). Ends with "N passed, N failed" over its four steps.
set -uo pipefail
cd "$(dirname "$0")/.."

GENERATOR_VERSION=7.26.0
CACHE="${STOREMAP_CI_CACHE:-$HOME/.cache/storemap}"
VENV="$CACHE/clients-venv"
DATA_DIR="${STOREMAP_TEST_DATA_DIR:-$PWD/data/generated/test-data}"

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
step() { # name, command...
  local name=$1
  shift
  echo "== $name"
  if "$@" >"$work/step.txt" 2>&1; then
    passed=$((passed + 1))
    tail -n 3 "$work/step.txt"
  else
    failed=$((failed + 1))
    tail -n 40 "$work/step.txt"
    echo "FAILED: $name"
  fi
}
give_up() {
  echo "client-test: $1" >&2
  echo "0 passed, 4 failed"
  exit 1
}

[ -f "$DATA_DIR/snapshot.smap" ] || give_up "no test dataset in $DATA_DIR (npm test builds it)"
command -v java >/dev/null || give_up "java is required (Debian: default-jre-headless)"
if [ "$("$VENV/bin/openapi-generator-cli" version 2>/dev/null | tail -n 1)" != "$GENERATOR_VERSION" ]; then
  python3 -m venv "$VENV" && "$VENV/bin/pip" install --quiet "openapi-generator-cli==$GENERATOR_VERSION" || give_up "could not install openapi-generator-cli $GENERATOR_VERSION"
fi

export STOREMAP_DATA_DIR="$DATA_DIR" STOREMAP_DB="$work/storemap.db"
key=$(node bin/storemap.js keys create --plan internal --name client-tests | grep -o 'sm_live_[0-9a-f]*' | head -n 1)
[ -n "$key" ] || give_up "could not create an API key"
HOST=127.0.0.1 PORT=0 node bin/storemap.js serve >"$work/server.log" 2>&1 &
server_pid=$!
base=
for _ in $(seq 300); do
  base=$(sed -nE 's/^storemap listening on (http:\/\/127\.0\.0\.1:[0-9]+).*/\1/p' "$work/server.log")
  [ -n "$base" ] && curl -sf "$base/healthz" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; give_up "the server exited"; }
  base=
  sleep 0.2
done
[ -n "$base" ] || { cat "$work/server.log"; give_up "the server did not answer /healthz within 60 s"; }
curl -sf "$base/api/openapi.yaml" -o "$work/openapi.yaml" || give_up "could not fetch $base/api/openapi.yaml"

generate() { # generator, output folder, extra arguments...
  local generator=$1 out=$2
  shift 2
  "$VENV/bin/openapi-generator-cli" generate -i "$work/openapi.yaml" -g "$generator" -o "$out" "$@" || return 1
}

ts_build() {
  generate typescript-fetch "$work/ts" || return 1
  cp test/clients/smoke.ts "$work/ts/smoke.ts"
  # The generated code as a user compiles it: strict, no library checks skipped but node's.
  node_modules/.bin/tsc --strict --module commonjs --target es2020 --lib es2020,dom --types node --typeRoots node_modules/@types --outDir "$work/ts-out" "$work/ts/smoke.ts"
}
step "typescript-fetch client: generate and compile (tsc --strict)" ts_build
step "typescript-fetch client: real requests" node "$work/ts-out/smoke.js" "$base" "$key"

py_build() {
  generate python "$work/py" --additional-properties=packageName=storemap_client || return 1
  "$VENV/bin/pip" install --quiet "$work/py"
}
step "python client: generate and install" py_build
step "python client: real requests" "$VENV/bin/python" test/clients/smoke.py "$base" "$key"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
