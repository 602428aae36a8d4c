"""Makes the street-map fixtures of crates/render/tests/integration/streets.rs with tools other than
ours, so that where a colour must show does not come from the code under test:

- zug-protomaps.pmtiles: the Zugerland tiles of zug-openmaptiles.pmtiles (tilemaker's
  OpenMapTiles profile) rewritten in the Protomaps basemap schema (layers earth, water, landuse,
  roads, buildings, places, boundaries with Protomaps' `kind` values) by the `mapbox-vector-tile`
  encoder and the `pmtiles` writer, with Protomaps' own HTML attribution;
- monaco-openmaptiles.pmtiles (when an .osm.pbf of Monaco is given): tilemaker's OpenMapTiles
  profile over OpenStreetMap's Monaco, a whole city for the benchmark and the looks;
- streets.json: probes, points where one colour must show at zoom 17: for each archive and each
  kind drawn (land, built-up, park, wood, water, building, minor, major and highway roads, rail),
  a point of that kind's feature in a z14 tile whose surroundings (40 tile units, about 20 pixels
  at zoom 17) hold nothing drawn above it, worked out with shapely from the decoded tiles and
  turned into latitude and longitude with Web Mercator arithmetic written here.

Run by make-fixtures.sh after make-fixtures.py.
"""
import gzip
import json
import math
import os
import sys

import mapbox_vector_tile
from pmtiles.reader import MmapSource, Reader, all_tiles
from pmtiles.tile import Compression, TileType, zxy_to_tileid
from pmtiles.writer import Writer
from shapely.geometry import Point, box, shape
from shapely.ops import unary_union

here = os.path.dirname(os.path.abspath(__file__))
EXTENT = 4096
CLEAR = 40.0

# OpenMapTiles classes as the kinds a street map draws (the table in the storemap README).
AREA_OF = {
    "park": "park", "grass": "park", "wetland": "park", "cemetery": "park", "pitch": "park", "playground": "park",
    "garden": "park", "golf_course": "park", "recreation_ground": "park", "allotments": "park",
    "wood": "wood", "forest": "wood",
    "residential": "urban", "commercial": "urban", "industrial": "urban", "retail": "urban", "railway": "urban",
    "hospital": "urban", "school": "urban", "university": "urban", "college": "urban", "kindergarten": "urban",
    "stadium": "urban", "military": "urban", "parking": "urban", "construction": "urban",
}
ROAD_OF = {
    "motorway": "highway", "trunk": "highway",
    "primary": "major", "secondary": "major", "tertiary": "major",
    "minor": "minor", "service": "minor",
    "rail": "rail", "transit": "rail",
    "path": "path", "track": "path",
}
# The order things are drawn in: a probe of one kind must be clear of every later kind.
ORDER = ["land", "urban", "park", "wood", "water", "waterway", "building", "path", "rail", "minor", "major", "highway"]
# Protomaps kinds for the rewritten archive.
PM_ROAD = {"highway": "highway", "major": "major_road", "minor": "minor_road", "path": "path", "rail": "rail"}


def read(path):
    with open(path, "rb") as f:
        r = Reader(MmapSource(f))
        return dict(r.header()), r.metadata(), sorted(all_tiles(MmapSource(f)))


def decode(data):
    raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return mapbox_vector_tile.decode(raw, default_options={"y_coord_down": True})


def kinds(layers):
    """(kind, shapely geometry, properties) of every drawn feature of an OpenMapTiles tile."""
    out = []
    for name, layer in layers.items():
        for f in layer["features"]:
            p, g = f["properties"], f["geometry"]
            cls = p.get("class", "")
            if name == "water" and g["type"].endswith("Polygon"):
                out.append(("water", shape(g), p))
            elif name == "waterway" and "LineString" in g["type"] and p.get("brunnel") != "tunnel":
                out.append(("waterway", shape(g), p))
            elif name in ("landuse", "landcover") and g["type"].endswith("Polygon") and (AREA_OF.get(cls) or AREA_OF.get(p.get("subclass", ""))):
                out.append((AREA_OF.get(cls) or AREA_OF.get(p.get("subclass", "")), shape(g), p))
            elif name == "park" and g["type"].endswith("Polygon"):
                out.append(("park", shape(g), p))
            elif name == "building" and g["type"].endswith("Polygon"):
                out.append(("building", shape(g), p))
            elif name == "transportation" and "LineString" in g["type"] and cls in ROAD_OF:
                out.append((ROAD_OF[cls] if p.get("brunnel") != "tunnel" else "tunnel", shape(g), p))
    return out


def lat_lng(z, x, y, u, v):
    n = 2**z
    wx, wy = (x + u / EXTENT) / n, (y + v / EXTENT) / n
    lng = wx * 360.0 - 180.0
    lat = math.degrees(math.atan(math.sinh(math.pi * (1 - 2 * wy))))
    return lat, lng


def probes(path):
    """One probe per kind, from the archive's zoom-14 tiles."""
    found = {}
    for (z, x, y), data in read(path)[2]:
        if z != 14:
            continue
        feats = kinds(decode(data))
        inner = box(CLEAR, CLEAR, EXTENT - CLEAR, EXTENT - CLEAR)
        tunnels = unary_union([g for k, g, _ in feats if k == "tunnel"] or [Point(-1e6, -1e6)])
        for kind in ORDER:
            if kind in found or kind in ("waterway", "path"):
                continue
            above = unary_union([g for k, g, _ in feats if k in ORDER and ORDER.index(k) > ORDER.index(kind)] + [tunnels])
            if kind == "land":
                everything = unary_union([g.buffer(CLEAR) for _, g, _ in feats])
                free = inner.difference(everything)
                candidates = [free] if not free.is_empty else []
            else:
                candidates = [g for k, g, _ in feats if k == kind]
            for g in sorted(candidates, key=lambda g: -(g.area or g.length)):
                if kind in ("minor", "major", "highway", "rail"):
                    pts = [g.interpolate(t, normalized=True) for t in (0.5, 0.3, 0.7, 0.2, 0.8)]
                else:
                    core = g.buffer(-CLEAR) if kind != "land" else g
                    pts = [] if core.is_empty else [core.representative_point()]
                pt = next((p for p in pts if inner.contains(p) and above.distance(p) > CLEAR), None)
                if pt is not None:
                    lat, lng = lat_lng(z, x, y, pt.x, pt.y)
                    found[kind] = {"kind": kind, "lat": round(lat, 7), "lng": round(lng, 7), "tile": [z, x, y]}
                    break
    return [found[k] for k in ORDER if k in found]


def to_protomaps(layers):
    """An OpenMapTiles tile's features in the Protomaps basemap schema."""
    out = {"earth": [], "water": [], "landuse": [], "roads": [], "buildings": [], "places": [], "boundaries": []}
    out["earth"].append({"geometry": box(-64, -64, EXTENT + 64, EXTENT + 64).wkt, "properties": {"kind": "earth"}})
    for name, layer in layers.items():
        for f in layer["features"]:
            p, g = f["properties"], shape(f["geometry"])
            cls = p.get("class", "")
            if name == "water":
                out["water"].append({"geometry": g.wkt, "properties": {"kind": "water" if cls != "lake" else "lake"}})
            elif name == "waterway":
                out["water"].append({"geometry": g.wkt, "properties": {"kind": cls or "stream"}})
            elif name in ("landuse", "landcover", "park"):
                out["landuse"].append({"geometry": g.wkt, "properties": {"kind": "park" if name == "park" else (p.get("subclass") or cls)}})
            elif name == "building":
                out["buildings"].append({"geometry": g.wkt, "properties": {"kind": "building"}})
            elif name == "transportation" and cls in ROAD_OF:
                props = {"kind": PM_ROAD[ROAD_OF[cls]], "kind_detail": cls}
                if p.get("brunnel") == "tunnel":
                    props["is_tunnel"] = True
                out["roads"].append({"geometry": g.wkt, "properties": props})
            elif name == "place" and cls in ("city", "town", "village", "suburb", "quarter", "neighbourhood"):
                kind = "locality" if cls in ("city", "town", "village") else "neighbourhood"
                out["places"].append({"geometry": g.wkt, "properties": {"kind": kind, "name": p.get("name:latin", ""), "population_rank": 9}})
            elif name == "boundary":
                out["boundaries"].append({"geometry": g.wkt, "properties": {"kind": "country" if p.get("admin_level") == 2 else "region", "kind_detail": p.get("admin_level", 4)}})
    return [{"name": k, "features": v} for k, v in out.items() if v]


def write_protomaps(src, dst):
    header, _, tiles = read(src)
    with open(dst, "wb") as f:
        w = Writer(f)
        for (z, x, y), data in tiles:
            layers = to_protomaps(decode(data))
            body = mapbox_vector_tile.encode(layers, default_options={"y_coord_down": True, "extents": EXTENT})
            w.write_tile(zxy_to_tileid(z, x, y), gzip.compress(body, mtime=0))
        keep = {k: header[k] for k in ("min_zoom", "max_zoom", "min_lon_e7", "min_lat_e7", "max_lon_e7", "max_lat_e7", "center_zoom", "center_lon_e7", "center_lat_e7")}
        w.finalize(
            {"tile_type": TileType.MVT, "tile_compression": Compression.GZIP, **keep},
            {
                "name": "storemap test fixture: Zugerland, Protomaps basemap schema",
                "attribution": '<a href="https://github.com/protomaps/basemaps">Protomaps</a> &copy; <a href="https://openstreetmap.org">OpenStreetMap</a>',
                "vector_layers": [{"id": n, "fields": {}} for n in ("earth", "water", "landuse", "roads", "buildings", "places", "boundaries")],
            },
        )


zug = os.path.join(here, "zug-openmaptiles.pmtiles")
zug_pm = os.path.join(here, "zug-protomaps.pmtiles")
write_protomaps(zug, zug_pm)
monaco = os.path.join(here, "monaco-openmaptiles.pmtiles")
if len(sys.argv) > 1:
    from pmtiles.convert import mbtiles_to_pmtiles

    mbtiles_to_pmtiles(sys.argv[1], monaco, 14)
expected = {name: probes(os.path.join(here, name + ".pmtiles")) for name in ("zug-openmaptiles", "monaco-openmaptiles")}
# The Protomaps archive holds the same features under other names: the same probes.
expected["zug-protomaps"] = expected["zug-openmaptiles"]
with open(os.path.join(here, "streets.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
print(json.dumps({k: [p["kind"] for p in v] for k, v in expected.items()}))
