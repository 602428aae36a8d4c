"""Makes the vector-tile fixtures of crates/render/tests/integration/tiles.rs with tools other than
ours, so that what the tests expect does not come from the code they test:

- zug-openmaptiles.pmtiles: tilemaker (Debian's package, its OpenMapTiles profile less the layers
  that need shapefiles) over the real Zugerland extract (test/fixtures/real/osm), converted from
  MBTiles by the `pmtiles` Python package;
- leaves.pmtiles: the `pmtiles` package's writer, 21,845 tiles (zooms 0 to 7), each holding its
  own tile id as 8 little-endian bytes, uncompressed: enough entries that the writer moves them
  into leaf directories;
- expected.json: the headers and metadata as the `pmtiles` package reads them, every tile id
  its `zxy_to_tileid` gives for the tiles listed, and each Zugerland tile decoded by the
  `mapbox-vector-tile` package (layers, extents, features, geometry types, first points, tags).

Run by make-fixtures.sh (it installs tilemaker and a venv with those packages).
"""
import gzip
import hashlib
import json
import os
import sys

import mapbox_vector_tile
from pmtiles.convert import mbtiles_to_pmtiles
from pmtiles.reader import MmapSource, Reader, all_tiles
from pmtiles.tile import Compression, TileType, zxy_to_tileid
from pmtiles.writer import Writer

here = os.path.dirname(os.path.abspath(__file__))
mbtiles = sys.argv[1]
zug = os.path.join(here, "zug-openmaptiles.pmtiles")
leaves = os.path.join(here, "leaves.pmtiles")
mbtiles_to_pmtiles(mbtiles, zug, 14)

with open(leaves, "wb") as f:
    writer = Writer(f)
    for z in range(0, 8):
        for x in range(2**z):
            for y in range(2**z):
                tid = zxy_to_tileid(z, x, y)
                writer.write_tile(tid, tid.to_bytes(8, "little"))
    writer.finalize(
        {
            "tile_type": TileType.UNKNOWN,
            "tile_compression": Compression.NONE,
            "min_zoom": 0,
            "max_zoom": 7,
            "min_lon_e7": -1800000000,
            "min_lat_e7": -850000000,
            "max_lon_e7": 1800000000,
            "max_lat_e7": 850000000,
            "center_zoom": 0,
            "center_lon_e7": 0,
            "center_lat_e7": 0,
        },
        {"name": "leaf directory fixture"},
    )


def plain(v):
    return {k: plain(x) for k, x in v.items()} if isinstance(v, dict) else [plain(x) for x in v] if isinstance(v, list) else v.name if hasattr(v, "name") else v


def read(path):
    with open(path, "rb") as f:
        r = Reader(MmapSource(f))
        return plain(dict(r.header())), r.metadata(), list(all_tiles(MmapSource(f)))


expected = {}
header, metadata, tiles = read(zug)
decoded = []
for (z, x, y), data in sorted(tiles):
    raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    layers = mapbox_vector_tile.decode(raw, default_options={"y_coord_down": True})
    summary = []
    for name, layer in sorted(layers.items()):
        feats = layer["features"]
        summary.append(
            {
                "name": name,
                "extent": layer["extent"],
                "features": len(feats),
                "types": sorted({f["geometry"]["type"] for f in feats}),
                "first": feats[0]["geometry"] if feats else None,
                "first_properties": feats[0]["properties"] if feats else None,
            }
        )
    decoded.append({"z": z, "x": x, "y": y, "tile_id": zxy_to_tileid(z, x, y), "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(), "layers": summary})
expected["zug"] = {"header": header, "metadata": metadata, "tiles": decoded}

header, metadata, tiles = read(leaves)
expected["leaves"] = {
    "header": header,
    "metadata": metadata,
    "tiles": len(tiles),
    # A sample of tiles and ids, from every zoom.
    "sample": [{"z": z, "x": x, "y": y, "tile_id": zxy_to_tileid(z, x, y)} for (z, x, y), _ in sorted(tiles)[::97]],
    # Ids for zooms past the archive's, checked against ours with no tile behind them.
    "ids": [{"z": z, "x": x, "y": y, "tile_id": zxy_to_tileid(z, x, y)} for z, x, y in [(8, 0, 0), (8, 255, 255), (12, 2143, 1434), (14, 8575, 5737), (20, 548_888, 367_168), (26, 1, 2**26 - 1)]],
}
with open(os.path.join(here, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
print(json.dumps({"zug_tiles": len(expected["zug"]["tiles"]), "leaf_tiles": expected["leaves"]["tiles"]}))
