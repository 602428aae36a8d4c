#!/usr/bin/env bash
# A synthetic build in N shards run one after another on this machine, then their merge: the wall
# time and peak memory of each step, as a markdown table (issue 33: scale 10 within 24 GiB).
#
#   bash bench/shards.sh SCALE N WORK_DIR [SEED]
#
# WORK_DIR gets data/ (the shards' data folder: the world is generated once, by shard 1), part-K/
# and merged/ (the merged data folder), and each step's log. At scale 10 it needs about 45 GB of
# disk (31 GB of sources, 12 GB of parts, the snapshot) and about 80 minutes on 2 cores.
set -euo pipefail
scale=${1:?scale} n=${2:?shards} work=${3:?work dir} seed=${4:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/native/bin/storemap-ingest"
ref="${STOREMAP_REFERENCE_DIR:-$root/data/generated/reference}"
as_of=2026-11-01T00:00:00Z
mkdir -p "$work"
common=(--reference "$ref" --tables "$root/data" --as-of "$as_of")

# One step under GNU time: its wall seconds and peak RSS (GiB) on stdout.
step() {
  local log=$1
  shift
  /usr/bin/time -f 'wall %e rss %M' "$@" >"$log.json" 2>"$log.log"
  awk '/^wall / {printf "%.0f %.2f\n", $2, $4 / 1048576}' "$log.log"
}

echo "| step | wall, s | peak RSS, GiB | rows |"
echo "|---|---|---|---|"
for k in $(seq 1 "$n"); do
  read -r wall rss < <(step "$work/shard-$k" "$bin" build --data-dir "$work/data" "${common[@]}" --scale "$scale" --seed "$seed" --shard "$k/$n" --part "$work/part-$k")
  rows=$(sed -nE 's/^  "rows": ([0-9]+),?$/\1/p' "$work/shard-$k.json")
  echo "| shard $k/$n$([ "$k" = 1 ] && echo ' (generates the world)') | $wall | $rss | $rows |"
done
parts=()
for k in $(seq 1 "$n"); do parts+=("$work/part-$k"); done
read -r wall rss < <(step "$work/merge" "$bin" merge --data-dir "$work/merged" --reference "$ref" --tables "$root/data" "${parts[@]}")
rows=$(sed -nE 's/^  "rows": ([0-9]+),?$/\1/p' "$work/merge.json")
echo "| merge | $wall | $rss | $rows |"
echo
echo "Pooled source rows: $(sed -nE 's/^    "rows_in": ([0-9]+),?$/\1/p' "$work/shard-1.json" | head -1); snapshot $(du -h "$work/merged/snapshot.smap" | cut -f1)."
