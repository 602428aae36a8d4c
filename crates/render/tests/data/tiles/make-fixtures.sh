#!/usr/bin/env bash
# Remakes the vector-tile fixtures beside this script (see make-fixtures.py): installs tilemaker
# from Debian and the `pmtiles` and `mapbox-vector-tile` packages from PyPI into a venv when
# missing, tiles the real Zugerland extract, and writes the archives and expected.json.
# tilemaker writes features in the order its threads finish, so a remake can differ from the
# committed archives in bytes though not in content; expected.json and streets.json are always
# made from the same run as the archives they describe.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
osm="$root/test/fixtures/real/osm/zugerland.osm.pbf"
if ! command -v tilemaker >/dev/null; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tilemaker; fi
venv="${STOREMAP_VENV:-$HOME/.cache/storemap/tiles-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q pmtiles==3.8.1 mapbox-vector-tile==2.2.0 shapely==2.1.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
examples=/usr/share/doc/tilemaker/examples
# The OpenMapTiles profile less its layers made from shapefiles (the ocean, urban areas, ice).
python3 - "$examples/config-openmaptiles.json" "$work/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for k in ["ocean", "urban_areas", "ice_shelf", "glacier"]:
    c["layers"].pop(k, None)
c["settings"]["name"] = "storemap test fixture: Zugerland, OpenMapTiles schema"
json.dump(c, open(sys.argv[2], "w"), indent=1)
PY
(cd "$work" && tilemaker --input "$osm" --output "$work/zug.mbtiles" --config "$work/config.json" --process "$examples/process-openmaptiles.lua" >/dev/null)
"$venv/bin/python" "$here/make-fixtures.py" "$work/zug.mbtiles"
# Monaco (a whole city, for the street-map references and the benchmark) from an .osm.pbf of it:
# planetiler's test copy (planetiler-core/src/test/resources/monaco-latest.osm.pbf in
# github.com/onthegomap/planetiler) when STOREMAP_MONACO_PBF names it; otherwise the committed
# archive is kept and only the Protomaps rewrite and the probes are made again.
monaco=()
if [ -n "${STOREMAP_MONACO_PBF:-}" ]; then
  sed 's/Zugerland, OpenMapTiles schema/Monaco, OpenMapTiles schema/' "$work/config.json" >"$work/monaco.json"
  (cd "$work" && tilemaker --input "$STOREMAP_MONACO_PBF" --output "$work/monaco.mbtiles" --config "$work/monaco.json" --process "$examples/process-openmaptiles.lua" >/dev/null)
  monaco=("$work/monaco.mbtiles")
fi
"$venv/bin/python" "$here/make-streets.py" "${monaco[@]}"
