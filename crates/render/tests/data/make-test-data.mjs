#!/usr/bin/env node
// Remakes the render crate's committed test data (see README.md beside this file) from the
// full reference files that `npm test` writes to data/generated/reference/:
//
//   node crates/render/tests/data/make-test-data.mjs [reference-dir]
//
// Plain Node, no dependencies. The output depends only on the input files: a rerun over the
// same reference data gives byte-identical files. The font and its licence are copied by hand
// (README.md says from where); this script does not touch them.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = resolve(process.argv[2] ?? join(here, '../../../../data/generated/reference'));

/** Douglas-Peucker tolerance, in degrees: about 4.4 km, under a pixel on the reference images. */
const TOLERANCE = 0.04;
/** How far an outer ring's area may drift, as a share of the original's (see simplifyRing). */
const AREA_DRIFT = 0.2;
/**
 * Longest segment kept, in degrees, where the source has points in between: focus maps
 * project the points and join them straight, so a long run along a parallel (the 49th
 * between the US and Canada) would turn from an arc into a chord.
 */
const MAX_SEGMENT = 1;
/** Decimals kept in each coordinate (1e-4 degrees: about 11 m). */
const DECIMALS = 4;
/** Cities at least this populous are kept... */
const MIN_POPULATION = 1_000_000;
/** ...and these, which the tests name (as marker positions), whatever their size; a name that
 * no longer matches its GeoNames id stops the script. */
const NAMED_CITIES = [
  // geonames_id: name
  [5879400, 'Anchorage'],
  [5856195, 'Honolulu'],
  [4887398, 'Chicago'],
  [4568127, 'San Juan'],
];

// ---------------------------------------------------------------- shapes

/**
 * Douglas-Peucker over a closed ring (first point = last), as crates/render/src/shapes.rs
 * does it (the kept points, the first and last always among them), except that no kept
 * segment is longer than MAX_SEGMENT where the original had points in between.
 */
function douglasPeucker(points, tol) {
  const n = points.length;
  if (n < 4) return points.slice();
  const keep = new Uint8Array(n);
  keep[0] = keep[n - 1] = 1;
  const stack = [[0, n - 1]];
  const tol2 = tol * tol;
  while (stack.length) {
    const [a, b] = stack.pop();
    if (b <= a + 1) continue;
    const [ax, ay] = points[a];
    const [bx, by] = points[b];
    const dx = bx - ax;
    const dy = by - ay;
    const len2 = dx * dx + dy * dy;
    let worst = 0;
    let at = a;
    for (let i = a + 1; i < b; i++) {
      const [px, py] = points[i];
      let d2;
      if (len2 === 0) {
        d2 = (px - ax) ** 2 + (py - ay) ** 2;
      } else {
        const t = Math.min(1, Math.max(0, ((px - ax) * dx + (py - ay) * dy) / len2));
        d2 = (px - ax - t * dx) ** 2 + (py - ay - t * dy) ** 2;
      }
      if (d2 > worst) {
        worst = d2;
        at = i;
      }
    }
    if (worst <= tol2 && len2 > MAX_SEGMENT * MAX_SEGMENT) {
      // A long straight run in degrees (a border along a parallel) is not straight once
      // projected: keep a point at least every MAX_SEGMENT.
      at = (a + b) >> 1;
      worst = Infinity;
    }
    if (worst > tol2) {
      keep[at] = 1;
      stack.push([a, at], [at, b]);
    }
  }
  return points.filter((_, i) => keep[i]);
}

const scale = 10 ** DECIMALS;
const round = (v) => Math.round(v * scale) / scale || 0; // `|| 0`: no "-0"

/** Rounded, without consecutive repeats (rounding can merge neighbours). */
function rounded(points) {
  const out = [];
  for (const [x, y] of points) {
    const p = [round(x), round(y)];
    const last = out[out.length - 1];
    if (!last || last[0] !== p[0] || last[1] !== p[1]) out.push(p);
  }
  return out;
}

/** A ring is drawable with three distinct corners: four positions, closed. */
const drawable = (ring) => ring.length >= 4;

/** Shoelace area, in square degrees. */
function area(ring) {
  let a = 0;
  for (let i = 0; i < ring.length; i++) {
    const [p, q] = [ring[i], ring[(i + 1) % ring.length]];
    a += p[0] * q[1] - q[0] * p[1];
  }
  return Math.abs(a / 2);
}

/**
 * A ring simplified at TOLERANCE. An island that would collapse (fewer than three corners) or
 * whose area would drift by more than AREA_DRIFT is simplified more finely instead, down to
 * the original points, so no island is lost or shrunk: focus maps chain islands to their
 * mainland hop by hop, group far-flung ones into insets and leave out groups below a share of
 * the mainland's area, so a dropped or shrunken islet could change a map. A hole that
 * collapses is dropped.
 */
function simplifyRing(ring, outer) {
  const original = area(ring);
  for (let tol = TOLERANCE; tol >= TOLERANCE / 1024; tol /= 2) {
    const r = rounded(douglasPeucker(ring, tol));
    if (drawable(r) && (!outer || Math.abs(area(r) - original) <= AREA_DRIFT * original)) return r;
  }
  // Already degenerate in the source (the Vatican is a sliver of zero area): copied as it is,
  // rounded, so every country keeps its feature.
  return outer ? ring.map(([x, y]) => [round(x), round(y)]) : null;
}

function simplifyPolygon(rings) {
  const outer = simplifyRing(rings[0], true);
  if (!outer) return null;
  return [outer, ...rings.slice(1).map((r) => simplifyRing(r, false)).filter(Boolean)];
}

function simplifyGeometry(g) {
  if (g.type === 'Polygon') {
    const p = simplifyPolygon(g.coordinates);
    return p && { type: 'Polygon', coordinates: p };
  }
  if (g.type === 'MultiPolygon') {
    const ps = g.coordinates.map(simplifyPolygon).filter(Boolean);
    return ps.length ? { type: 'MultiPolygon', coordinates: ps } : null;
  }
  throw new Error(`unexpected geometry type ${g.type}`);
}

const stats = { features: 0, polygons: 0, points: 0, pointsIn: 0, polygonsIn: 0 };

function count(g, key) {
  const polys = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  stats[key === 'in' ? 'polygonsIn' : 'polygons'] += polys.length;
  stats[key === 'in' ? 'pointsIn' : 'points'] += polys.flat().reduce((n, r) => n + r.length, 0);
}

/** A FeatureCollection with every feature's properties as they are and its shape simplified. */
function trimShapes(file) {
  const collection = JSON.parse(readFileSync(join(source, file), 'utf8'));
  const features = [];
  for (const f of collection.features) {
    count(f.geometry, 'in');
    const geometry = simplifyGeometry(f.geometry);
    if (!geometry) throw new Error(`${file}: ${JSON.stringify(f.properties)} simplifies to nothing`);
    count(geometry, 'out');
    features.push({ type: 'Feature', properties: f.properties, geometry });
  }
  stats.features += features.length;
  // One feature a line, so a change shows up as a change to one country or state.
  const text = '{"type":"FeatureCollection","features":[\n' + features.map((f) => JSON.stringify(f)).join(',\n') + '\n]}\n';
  writeFileSync(join(here, file), text);
  console.log(
    `${file}: ${features.length} features, ${stats.polygonsIn} -> ${stats.polygons} polygons, ` +
      `${stats.pointsIn} -> ${stats.points} points, ${Buffer.byteLength(text)} bytes`,
  );
  Object.assign(stats, { features: 0, polygons: 0, points: 0, pointsIn: 0, polygonsIn: 0 });
}

// ---------------------------------------------------------------- cities

/** The fields of one CSV line (quoted fields may hold commas and doubled quotes). */
function csvFields(line) {
  const out = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= line.length) throw new Error(`unterminated quote: ${line}`);
        if (line[i] === '"' && line[i + 1] === '"') {
          v += '"';
          i += 2;
        } else if (line[i] === '"') {
          i++;
          break;
        } else {
          v += line[i++];
        }
      }
      out.push(v);
      i++; // the comma
    } else {
      const end = line.indexOf(',', i);
      const stop = end < 0 ? line.length : end;
      out.push(line.slice(i, stop));
      i = stop + 1;
    }
  }
  return out;
}

/** The header and the kept rows, verbatim and in the reference file's order. */
function trimCities(file) {
  const lines = readFileSync(join(source, file), 'utf8').split('\n');
  const header = lines[0];
  const columns = csvFields(header);
  const col = (name) => {
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`${file}: no ${name} column`);
    return i;
  };
  const [idCol, nameCol, popCol] = [col('geonames_id'), col('name'), col('population')];
  const named = new Map(NAMED_CITIES);
  const kept = [];
  for (const line of lines.slice(1)) {
    if (!line) continue;
    const f = csvFields(line);
    const id = Number(f[idCol]);
    if (named.has(id)) {
      if (f[nameCol] !== named.get(id)) throw new Error(`${file}: geonames ${id} is ${f[nameCol]}, not ${named.get(id)}`);
      named.delete(id);
      kept.push(line);
    } else if (Number(f[popCol]) >= MIN_POPULATION) {
      kept.push(line);
    }
  }
  if (named.size) throw new Error(`${file}: missing ${[...named.values()].join(', ')}`);
  const text = [header, ...kept].join('\n') + '\n';
  writeFileSync(join(here, file), text);
  console.log(`${file}: ${kept.length} of ${lines.length - 2} cities, ${Buffer.byteLength(text)} bytes`);
}

trimShapes('countries.geojson');
trimShapes('us_states.geojson');
trimShapes('lakes.geojson');
trimCities('cities.csv');
