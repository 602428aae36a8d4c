#!/usr/bin/env bash
# Contract tests: schemathesis, from PyPI, checks a real server against the OpenAPI document it
# publishes at /api/openapi.yaml. Every check runs (status codes, content types, response
# schemas and headers, auth, negative and positive data, unsupported methods), a bounded number
# of examples per operation, within a time bound.
#
# Needs the test dataset `npm test` builds (data/generated/test-data; or $STOREMAP_TEST_DATA_DIR),
# python3 with venv, and the npm dependencies installed. Schemathesis goes into a venv kept
# outside the clone (default ~/.cache/storemap/venv; $STOREMAP_CI_CACHE moves it).
#
# Ends with one line of totals, one per API operation: "N passed, N failed". Exits non-zero
# when any operation failed or the run could not be made.
#
# Settings (environment): CONTRACT_MAX_EXAMPLES (30), CONTRACT_TIMEOUT_S (900, for the whole
# schemathesis run), CONTRACT_SEED (1; "random" for a new one each run), CONTRACT_WORKERS (1;
# with 2, a run here hit a SystemError in Python 3.11.7's ast module from two worker threads).
set -uo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
CACHE="${STOREMAP_CI_CACHE:-$HOME/.cache/storemap}"
VENV="$CACHE/venv"
DATA_DIR="${STOREMAP_TEST_DATA_DIR:-$PWD/data/generated/test-data}"
MAX_EXAMPLES="${CONTRACT_MAX_EXAMPLES:-30}"
TIMEOUT_S="${CONTRACT_TIMEOUT_S:-900}"
SEED="${CONTRACT_SEED:-1}"
WORKERS="${CONTRACT_WORKERS:-1}"

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

# A failure before schemathesis reports anything counts as one failed run.
give_up() {
  echo "contract tests: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

echo "== schemathesis $SCHEMATHESIS_VERSION in $VENV"
if [ "$("$VENV/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $SCHEMATHESIS_VERSION" ]; then
  rm -rf "$VENV"
  mkdir -p "$CACHE"
  python3 -m venv "$VENV" || give_up "python3 -m venv failed (install python3-venv)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" || give_up "pip could not install schemathesis==$SCHEMATHESIS_VERSION"
fi

[ -f "$DATA_DIR/snapshot.smap" ] || give_up "no test dataset in $DATA_DIR (npm test builds it)"

# A fresh database with one internal key: every format, never debited, so credits never run
# out however many requests the run makes.
export STOREMAP_DATA_DIR="$DATA_DIR" STOREMAP_DB="$work/storemap.db"
key=$(node bin/storemap.js keys create --plan internal --name contract-tests) || give_up "could not create an API key"

echo "== server on 127.0.0.1 over $DATA_DIR"
HOST=127.0.0.1 PORT=0 STOREMAP_RATE_LIMIT=100000 STOREMAP_RATE_BURST=100000 STOREMAP_FREE_RATE_LIMIT=100000 STOREMAP_FREE_RATE_BURST=100000 node bin/storemap.js serve >"$work/server.log" 2>&1 &
server_pid=$!
base=
for _ in $(seq 600); do
  base=$(sed -nE 's/^storemap listening on (http:\/\/127\.0\.0\.1:[0-9]+).*/\1/p' "$work/server.log")
  [ -n "$base" ] && curl -sf "$base/healthz" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; give_up "the server exited"; }
  base=
  sleep 0.1
done
[ -n "$base" ] || { cat "$work/server.log"; give_up "the server did not answer /healthz within 60 s"; }
echo "$base"

echo "== schemathesis run $base/api/openapi.yaml (at most $MAX_EXAMPLES examples per operation, $TIMEOUT_S s, seed $SEED)"
seed_args=()
[ "$SEED" = random ] || seed_args=(--seed "$SEED")
timeout --signal=INT --kill-after=30 "$TIMEOUT_S" \
  "$VENV/bin/schemathesis" --config-file scripts/schemathesis.toml run "$base/api/openapi.yaml" \
  --checks all \
  --header "x-api-key: $key" \
  --max-examples "$MAX_EXAMPLES" \
  --workers "$WORKERS" \
  "${seed_args[@]}" \
  --generation-database none \
  --report junit --report-junit-path "$work/junit.xml" \
  --no-color
st_status=$?
[ "$st_status" -eq 124 ] && echo "contract tests: schemathesis ran past ${TIMEOUT_S}s and was stopped" >&2

# Totals per operation from the JUnit report: an operation with a failure or an error failed.
totals=$(python3 - "$work/junit.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except (OSError, ET.ParseError):
    sys.exit(1)
passed = failed = 0
for case in root.iter("testcase"):
    if case.find("failure") is not None or case.find("error") is not None:
        failed += 1
    elif case.find("skipped") is None:
        passed += 1
print(passed, failed)
PY
) || give_up "schemathesis wrote no report (exit status $st_status)"
read -r passed failed <<<"$totals"
if [ "$st_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # it failed in a way the report does not show (time bound, a crash)
fi
if [ "$failed" -ne 0 ]; then
  echo "== server log (last 40 lines)"
  tail -n 40 "$work/server.log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
