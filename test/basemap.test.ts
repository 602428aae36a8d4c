// Street maps over HTTP (STOREMAP_BASEMAP): a real server on 127.0.0.1 drawing from the vector
// tile archives the render crate's tests use (crates/render/tests/data/tiles: tilemaker's
// OpenMapTiles profile over the real Zugerland extract, and the same tiles rewritten in the
// Protomaps schema by the mapbox-vector-tile encoder). Where a colour must show comes from
// streets.json, worked out by shapely over the decoded tiles, not by our renderer; colours from
// data/themes.json. Then the bad days: a damaged archive, damaged tiles, and `basemap info`.
import test, { type ExecutionContext } from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../ts/paths.ts';
import { ATTRIBUTION, headerText } from '../ts/api/headers.ts';
import { countryFrame, decodePng, hex, near, pixel, fmt } from './helpers/png.ts';
import { startServer, type TestServer } from './helpers/server.ts';
import { CLI, describe, runCli } from './helpers/cli.ts';
import { testDataDir } from './helpers/dataset.ts';

const TILES = path.join(ROOT, 'crates/render/tests/data/tiles');
const THEMES = JSON.parse(readFileSync(path.join(ROOT, 'data', 'themes.json'), 'utf8')) as Record<string, Record<string, string>>;
interface Probe {
  kind: string;
  lat: number;
  lng: number;
}
const PROBES = JSON.parse(readFileSync(path.join(TILES, 'streets.json'), 'utf8')) as Record<string, Probe[]>;
const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };

type S = TestServer & { key: string; logs: string[] };

async function server(t: ExecutionContext, basemap?: string): Promise<S> {
  const logs: string[] = [];
  const env: Record<string, string> = { ...NO_RATE_LIMIT, STOREMAP_IMAGE_CACHE_BYTES: '0', ...(basemap ? { STOREMAP_BASEMAP: basemap } : {}) };
  const s = await startServer(t, { env, log: (line) => logs.push(line) });
  const k = await s.keys.create({ plan: 'enterprise', credits: 1_000_000 });
  return { ...s, key: k.key, logs };
}

/** A 64 x 64 map centred on a point at a zoom: Starbucks' stores are all far away, so the
 * pixels are the map's own. */
async function mapAt(t: ExecutionContext, s: S, lat: number, lng: number, zoom: number, style: string) {
  const res = await fetch(`${s.base}/api/v1/location-map`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': s.key },
    body: JSON.stringify({ brand: 'Starbucks', format: 'png', width: 64, height: 64, center: [lat, lng], zoom, style }),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  t.is(res.status, 200, bytes.toString().slice(0, 300));
  return { res, bytes, img: decodePng(bytes) };
}

async function status(s: S): Promise<{ renderer: { ok: boolean; detail: { basemap: Record<string, unknown> | null } } }> {
  return (await (await fetch(`${s.base}/api/v1/status`)).json()) as never;
}

test('every kind of street-map feature shows in its theme colour where the tiles put it, in both schemas', async (t) => {
  for (const archive of ['zug-openmaptiles', 'zug-protomaps']) {
    const s = await server(t, path.join(TILES, `${archive}.pmtiles`));
    // Land shows from the Protomaps archive's own `earth`; an OpenMapTiles archive without the
    // ocean leaves it to Natural Earth.
    const probes = PROBES[archive].filter((p) => p.kind !== 'land' || archive === 'zug-protomaps');
    t.true(probes.length >= 6, archive);
    for (const p of probes) {
      for (const style of ['light', 'warm']) {
        const { img, res } = await mapAt(t, s, p.lat, p.lng, 17, style);
        const want = hex(THEMES[style][p.kind === 'minor' ? 'road' : p.kind]);
        const got = pixel(img, 32, 32);
        t.true(near(got, want, 3), `${archive} ${p.kind} ${style}: ${fmt(got)}, want ${fmt(want)}`);
        const attribution = archive === 'zug-protomaps' ? 'Protomaps © OpenStreetMap' : '© OpenStreetMap contributors';
        t.is(res.headers.get('x-attribution'), headerText(`${ATTRIBUTION}; basemap: ${attribution}`));
      }
    }
  }
});

test('without STOREMAP_BASEMAP, or outside the archive, the map is the Natural Earth one and X-Attribution the four sources', async (t) => {
  const plain = await server(t);
  const streets = await server(t, path.join(TILES, 'zug-openmaptiles.pmtiles'));
  const building = PROBES['zug-openmaptiles'].find((p) => p.kind === 'building')!;
  const a = await mapAt(t, plain, building.lat, building.lng, 17, 'light');
  t.is(a.res.headers.get('x-attribution'), ATTRIBUTION);
  t.true(near(pixel(a.img, 32, 32), hex(THEMES.light.land), 2), 'Zugerland is land on the Natural Earth map');
  // Paris: no tile there.
  const [b, c] = [await mapAt(t, plain, 48.8566, 2.3522, 15, 'light'), await mapAt(t, streets, 48.8566, 2.3522, 15, 'light')];
  t.deepEqual(c.bytes, b.bytes);
  t.is(c.res.headers.get('x-attribution'), ATTRIBUTION);
  const st = await status(plain);
  t.is(st.renderer.detail.basemap, null);
});

test('a damaged archive: the server starts, says why in its log and status, and draws Natural Earth', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-basemap-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const whole = readFileSync(path.join(TILES, 'zug-openmaptiles.pmtiles'));
  const cut = path.join(dir, 'cut.pmtiles');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.length / 2)));
  const s = await server(t, cut);
  const plain = await server(t);
  const building = PROBES['zug-openmaptiles'].find((p) => p.kind === 'building')!;
  const [a, b] = [await mapAt(t, s, building.lat, building.lng, 17, 'light'), await mapAt(t, plain, building.lat, building.lng, 17, 'light')];
  t.deepEqual(a.bytes, b.bytes);
  const st = await status(s);
  t.true(st.renderer.ok, 'the renderer is up: maps fall back to Natural Earth');
  const bm = st.renderer.detail.basemap!;
  t.is(bm.ok, false);
  t.is(bm.path, cut);
  t.regex(String(bm.error), /runs past the end of the file/);
});

test('damaged tiles are skipped, logged once and counted in status', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-basemap-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bytes = Buffer.from(readFileSync(path.join(TILES, 'zug-openmaptiles.pmtiles')));
  // The tile data section, from the header as the PMTiles spec lays it out, scrambled.
  const [off, len] = [Number(bytes.readBigUInt64LE(56)), Number(bytes.readBigUInt64LE(64))];
  for (let i = off; i < off + len; i++) bytes[i] ^= 0x5a;
  const file = path.join(dir, 'scrambled.pmtiles');
  writeFileSync(file, bytes);
  const s = await server(t, file);
  const plain = await server(t);
  const building = PROBES['zug-openmaptiles'].find((p) => p.kind === 'building')!;
  for (const zoom of [17, 16, 17]) {
    const [a, b] = [await mapAt(t, s, building.lat, building.lng, zoom, 'light'), await mapAt(t, plain, building.lat, building.lng, zoom, 'light')];
    t.deepEqual(a.bytes, b.bytes, 'nothing drawn from a damaged tile');
    t.is(a.res.headers.get('x-attribution'), ATTRIBUTION, 'no tile shown, no tile credit');
  }
  const logged = s.logs.filter((l) => l.startsWith('basemap:'));
  t.is(logged.length, 1, logged.join('\n'));
  t.regex(logged[0], /tile 14\/\d+\/\d+: .*gzip/);
  const bm = (await status(s)).renderer.detail.basemap!;
  t.is(bm.ok, true);
  t.true(Number(bm.tilesFailed) >= 1);
  t.regex(String(bm.firstTileError), /^tile 14\//);
});

test('storemap basemap info prints the schema, zooms, bounds and attribution; a file that is not one exits 1', async (t) => {
  const r = await runCli(['basemap', 'info', path.join(TILES, 'zug-protomaps.pmtiles'), '--json'], {});
  t.is(r.code, 0, describe(r));
  const info = JSON.parse(r.stdout) as { schema: string; minZoom: number; maxZoom: number; bounds: number[]; attribution: string };
  t.is(info.schema, 'protomaps');
  t.is(info.maxZoom, 14);
  // The bounds the pmtiles package wrote into the header (expected.json, from its reader).
  const expected = JSON.parse(readFileSync(path.join(TILES, 'expected.json'), 'utf8')) as { zug: { header: Record<string, number> } };
  const h = expected.zug.header;
  t.deepEqual(info.bounds, [h.min_lon_e7 / 1e7, h.min_lat_e7 / 1e7, h.max_lon_e7 / 1e7, h.max_lat_e7 / 1e7]);
  t.is(info.attribution, 'Protomaps © OpenStreetMap');
  const text = await runCli(['basemap', 'info', path.join(TILES, 'zug-openmaptiles.pmtiles')], {});
  t.is(text.code, 0, describe(text));
  t.regex(text.stdout, /schema\s+openmaptiles/);
  t.regex(text.stdout, /zooms\s+0-14/);
  const bad = await runCli(['basemap', 'info', path.join(ROOT, 'package.json')], {});
  t.is(bad.code, 1, describe(bad));
  t.regex(bad.stderr, /package\.json: not a PMTiles version 3 archive/);
});

/** A loopback server for one file: range requests answered 206 (or, `ranges: false`, the
 * whole file with 200, as a server without range support does); counts what it sent. */
async function fileServer(t: ExecutionContext, file: string, opts: { ranges?: boolean } = {}) {
  const body = readFileSync(file);
  const served = { bytes: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    served.requests++;
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (opts.ranges === false || !m) {
      served.bytes += body.length;
      res.writeHead(200, { 'content-length': body.length, etag: '"v1"' });
      res.end(body);
      return;
    }
    const [a, b] = [Number(m[1]), Math.min(Number(m[2]), body.length - 1)];
    if (a >= body.length || (req.headers['if-match'] && req.headers['if-match'] !== '"v1"')) {
      res.writeHead(a >= body.length ? 416 : 412);
      res.end();
      return;
    }
    const part = body.subarray(a, b + 1);
    served.bytes += part.length;
    res.writeHead(206, { 'content-range': `bytes ${a}-${b}/${body.length}`, 'content-length': part.length, etag: '"v1"' });
    res.end(part);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/${path.basename(file)}`, served, size: body.length };
}

test('basemap extract over HTTP range requests: every tile of the box and no other, reading under a quarter of the archive', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // 21,845 tiles in leaf directories, each holding its own tile id.
  const src = await fileServer(t, path.join(TILES, 'leaves.pmtiles'));
  const out = path.join(dir, 'ch.pmtiles');
  const r = await runCli(['basemap', 'extract', '--from', src.url, '--bbox', '45.8,5.9,47.8,10.5', '--out', out], {});
  t.is(r.code, 0, describe(r));
  t.regex(r.stdout, /wrote .*ch\.pmtiles: \d+ tiles/);
  t.true(src.served.bytes * 4 < src.size, `served ${src.served.bytes} of ${src.size} bytes`);
  // Every tile of the box at each zoom (columns and rows by Web Mercator arithmetic here), and
  // nothing else: the tile count the header gives.
  const n = (z: number) => 2 ** z;
  let want = 0;
  for (let z = 0; z <= 7; z++) {
    const x = (lng: number) => Math.floor(((lng + 180) / 360) * n(z));
    const y = (lat: number) => Math.floor(((1 - Math.log(Math.tan((lat * Math.PI) / 180) + 1 / Math.cos((lat * Math.PI) / 180)) / Math.PI) / 2) * n(z));
    want += (x(10.5) - x(5.9) + 1) * (y(45.8) - y(47.8) + 1);
  }
  // The header as the PMTiles spec lays it out (these tiles are not vector tiles, so `basemap
  // info` refuses them): magic, version, addressed tiles, bounds.
  const bytes = readFileSync(out);
  t.is(bytes.subarray(0, 7).toString(), 'PMTiles');
  t.is(bytes[7], 3);
  t.is(Number(bytes.readBigUInt64LE(72)), want, 'addressed tiles');
  t.deepEqual([102, 106, 110, 114].map((o) => bytes.readInt32LE(o) / 1e7), [5.9, 45.8, 10.5, 47.8]);
});

test('basemap extract --country covers what a map of the country frames (its mainland and 5 % around it) and makes an archive the service draws from', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const src = await fileServer(t, path.join(TILES, 'monaco-openmaptiles.pmtiles'));
  const out = path.join(dir, 'mc.pmtiles');
  const r = await runCli(['basemap', 'extract', '--from', src.url, '--country', 'MC', '--maxzoom', '14', '--out', out], { STOREMAP_DATA_DIR: testDataDir() });
  t.is(r.code, 0, describe(r));
  const info = JSON.parse((await runCli(['basemap', 'info', out, '--json'], {})).stdout) as { schema: string; maxZoom: number; bounds: number[] };
  t.is(info.schema, 'openmaptiles');
  t.is(info.maxZoom, 14);
  // Monaco's box, read here from the reference shapes (one polygon), and 5 % of its span on
  // each side, as a map filtered to the country frames it: the archive's header bounds, where
  // the source archive reaches (this one ends short of the margin on three sides; on the east
  // the frame's edge is the one the mainland alone would not reach).
  const shapes = JSON.parse(readFileSync(path.join(testDataDir(), 'reference', 'countries.geojson'), 'utf8')) as { features: { properties: { iso_a2: string }; geometry: { coordinates: number[][][] } }[] };
  const ring = shapes.features.find((f) => f.properties.iso_a2 === 'MC')!.geometry.coordinates[0];
  const [lngs, lats] = [ring.map((p) => p[0]), ring.map((p) => p[1])];
  const [fs, fw, fn, fe] = countryFrame([Math.min(...lats), Math.min(...lngs), Math.max(...lats), Math.max(...lngs)]);
  t.true(fe - fw > Math.max(...lngs) - Math.min(...lngs), 'the frame is wider than the country');
  const source = JSON.parse((await runCli(['basemap', 'info', path.join(TILES, 'monaco-openmaptiles.pmtiles'), '--json'], {})).stdout) as { bounds: number[] };
  const [sw, ss, se, sn] = source.bounds;
  const want = [Math.max(fw, sw), Math.max(fs, ss), Math.min(fe, se), Math.min(fn, sn)];
  t.true(fe < se, `the source reaches past the frame's east edge (${se})`);
  t.true(info.bounds.every((v, i) => Math.abs(v - want[i]) <= 1e-7), `${JSON.stringify(info.bounds)} against ${JSON.stringify(want)}`);
  // A map drawn from the extract is the map drawn from the whole archive.
  const [whole, cut] = [await server(t, path.join(TILES, 'monaco-openmaptiles.pmtiles')), await server(t, out)];
  const [a, b] = [await mapAt(t, whole, 43.7384, 7.4246, 16, 'voyager'), await mapAt(t, cut, 43.7384, 7.4246, 16, 'voyager')];
  t.deepEqual(b.bytes, a.bytes);
});

test('basemap extract refuses a server without range requests, a bad box and a file that is not an archive, and leaves nothing behind', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const src = await fileServer(t, path.join(TILES, 'leaves.pmtiles'), { ranges: false });
  const out = path.join(dir, 'x.pmtiles');
  const r = await runCli(['basemap', 'extract', '--from', src.url, '--bbox', '45.8,5.9,47.8,10.5', '--out', out], {});
  t.is(r.code, 1, describe(r));
  t.regex(r.stderr, /answered 200 to a range request/);
  const bad = await runCli(['basemap', 'extract', '--from', path.join(TILES, 'leaves.pmtiles'), '--bbox', '47.8,5.9,45.8,10.5', '--out', out], {});
  t.is(bad.code, 1, describe(bad));
  t.regex(bad.stderr, /south must be at most north/);
  const notArchive = await runCli(['basemap', 'extract', '--from', path.join(ROOT, 'package.json'), '--bbox', '45.8,5.9,47.8,10.5', '--out', out], {});
  t.is(notArchive.code, 1, describe(notArchive));
  t.regex(notArchive.stderr, /not a PMTiles version 3 archive/);
  // An --out that is a folder, or in a folder that is not there, is refused before any tile.
  const leaves = path.join(TILES, 'leaves.pmtiles');
  const intoFolder = await runCli(['basemap', 'extract', '--from', leaves, '--bbox', '45.8,5.9,47.8,10.5', '--out', dir], {});
  t.is(intoFolder.code, 1, describe(intoFolder));
  t.regex(intoFolder.stderr, /is a folder: name the \.pmtiles file to write in it/);
  const nowhere = await runCli(['basemap', 'extract', '--from', leaves, '--bbox', '45.8,5.9,47.8,10.5', '--out', path.join(dir, 'no', 'such', 'x.pmtiles')], {});
  t.is(nowhere.code, 1, describe(nowhere));
  t.regex(nowhere.stderr, /the folder .*no\/such does not exist/);
  // A port nothing listens on (one just let go): the message names the address and why,
  // where it used to be undici's bare "fetch failed".
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const url = `http://127.0.0.1:${closed}/planet.pmtiles`;
  const down = await runCli(['basemap', 'extract', '--from', url, '--bbox', '45.8,5.9,47.8,10.5', '--out', out], {});
  t.is(down.code, 1, describe(down));
  t.true(down.stderr.includes(`GET ${url} failed: fetch failed: `) && down.stderr.includes('ECONNREFUSED'), down.stderr);
  t.deepEqual(readdirSync(dir), []);
});

/** A loopback server for one file whose answers each test shapes: `shape` sees the request's
 * number (0 the first), its range and If-Match, and says what to send; `held` is resolved when a
 * request is held (never answered), so a test acts while the extract waits on it. */
async function shapedServer(
  t: ExecutionContext,
  file: string,
  shape: (n: number, range: [number, number], ifMatch: string | undefined) => { status?: number; etag?: string; contentRange?: string; body?: Buffer; hold?: boolean; halfBody?: boolean },
) {
  const body = readFileSync(file);
  const seen: { n: number; range: string | undefined; ifMatch: string | undefined }[] = [];
  let heldNow: () => void = () => {};
  const held = new Promise<void>((resolve) => (heldNow = resolve));
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const n = seen.length;
    seen.push({ n, range: req.headers.range, ifMatch: req.headers['if-match'] });
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')!;
    const [a, b] = [Number(m[1]), Math.min(Number(m[2]), body.length - 1)];
    const s = shape(n, [a, b], req.headers['if-match']);
    if (s.hold) return heldNow();
    const part = s.body ?? body.subarray(a, b + 1);
    const headers: Record<string, string | number> = { 'content-length': part.length };
    if (s.etag) headers.etag = s.etag;
    headers['content-range'] = s.contentRange ?? `bytes ${a}-${a + part.length - 1}/${body.length}`;
    res.writeHead(s.status ?? 206, headers);
    // Half the body, then nothing more: a server that stalls after its headers.
    if (s.halfBody) return void res.write(part.subarray(0, part.length >> 1), () => heldNow());
    res.end(part);
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/${path.basename(file)}`, seen, held };
}

const BOX = ['--bbox', '45.8,5.9,47.8,10.5'];

test('basemap extract over HTTP holds to one version of the archive: ETags compared on every answer, a weak one not sent as If-Match; 416 asked once more at most', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const leaves = path.join(TILES, 'leaves.pmtiles');
  const out = path.join(dir, 'x.pmtiles');

  // A server (or cache) that ignores If-Match and serves a new version after the first answer.
  const moving = await shapedServer(t, leaves, (n) => ({ etag: `"v${n === 0 ? 1 : 2}"`, body: n === 0 ? undefined : Buffer.alloc(1) }));
  const moved = await runCli(['basemap', 'extract', '--from', moving.url, ...BOX, '--out', out], {});
  t.is(moved.code, 1, describe(moved));
  t.regex(moved.stderr, /changed while it was read \(its ETag was "v1", now "v2"\): run the extract again/);
  t.deepEqual(readdirSync(dir), []);

  // A weak ETag: a server that compares If-Match strongly, as RFC 9110 says, refuses every
  // request that sends it; none is sent, and the extract is the one a local file gives.
  const weak = await shapedServer(t, leaves, (_n, _r, ifMatch) => (ifMatch ? { status: 412, body: Buffer.alloc(0) } : { etag: 'W/"v1"' }));
  const ok = await runCli(['basemap', 'extract', '--from', weak.url, ...BOX, '--out', out], {});
  t.is(ok.code, 0, describe(ok));
  t.true(weak.seen.every((r) => r.ifMatch === undefined));
  const local = path.join(dir, 'local.pmtiles');
  t.is((await runCli(['basemap', 'extract', '--from', leaves, ...BOX, '--out', local], {})).code, 0);
  t.true(readFileSync(out).equals(readFileSync(local)), 'the same archive, byte for byte');
  rmSync(out);
  rmSync(local);

  // 416 for every range: once more for the size it names, then given up (it was 80,000 requests
  // in 40 s); an empty file says so.
  for (const [size, why] of [[16_384, /answered 416 to bytes 0-16383: not a PMTiles archive/], [0, /answered 416 to bytes 0-16383 \(the file is empty\)/]] as const) {
    const refusing = await shapedServer(t, leaves, () => ({ status: 416, contentRange: `bytes */${size}`, body: Buffer.alloc(0) }));
    const r = await runCli(['basemap', 'extract', '--from', refusing.url, ...BOX, '--out', out], {});
    t.is(r.code, 1, describe(r));
    t.regex(r.stderr, why);
    t.true(refusing.seen.length <= 2, `${refusing.seen.length} requests`);
  }
  // A file smaller than the head's 16 KiB is asked for again at the size the 416 names, once.
  const small = await shapedServer(t, leaves, () => ({ status: 416, contentRange: 'bytes */1000', body: Buffer.alloc(0) }));
  const smallRun = await runCli(['basemap', 'extract', '--from', small.url, ...BOX, '--out', out], {});
  t.is(smallRun.code, 1, describe(smallRun));
  t.deepEqual(
    small.seen.map((r) => r.range),
    ['bytes=0-16383', 'bytes=0-999'],
  );
  // An answer for other bytes than asked.
  const shifted = await shapedServer(t, leaves, (n, [a, b]) => (n === 0 ? {} : { contentRange: `bytes ${a + 1}-${b + 1}/99` }));
  const wrong = await runCli(['basemap', 'extract', '--from', shifted.url, ...BOX, '--out', out], {});
  t.is(wrong.code, 1, describe(wrong));
  t.regex(wrong.stderr, /answered "bytes \d+-\d+\/99" to a request for bytes \d+-\d+/);
  t.deepEqual(readdirSync(dir), []);
});

test('basemap extract: a server gone quiet is given up after STOREMAP_FETCH_STALL_MS, and a signal removes the tile data it has so far', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const leaves = path.join(TILES, 'leaves.pmtiles');
  const out = path.join(dir, 'x.pmtiles');
  const quiet = await shapedServer(t, leaves, (n) => ({ etag: '"v1"', hold: n > 0 }));
  const r = await runCli(['basemap', 'extract', '--from', quiet.url, ...BOX, '--out', out], { STOREMAP_FETCH_STALL_MS: '300' });
  t.is(r.code, 1, describe(r));
  t.regex(r.stderr, new RegExp(`GET ${quiet.url.replace(/[.]/g, '\\.')} failed: no answer for 0\\.3 s \\(STOREMAP_FETCH_STALL_MS\\)`));
  t.deepEqual(readdirSync(dir), []);
  // A body that stops after its headers: named with its URL too (it was "no data for …" alone).
  // Seconds, not 0.3: this test's own server, on a loaded machine, may answer the headers late
  // enough to be a request with no answer, which is named the same way.
  const stalling = await shapedServer(t, leaves, (n) => ({ etag: '"v1"', halfBody: n > 0 }));
  const mid = await runCli(['basemap', 'extract', '--from', stalling.url, ...BOX, '--out', out], { STOREMAP_FETCH_STALL_MS: '3000' });
  t.is(mid.code, 1, describe(mid));
  t.regex(mid.stderr, new RegExp(`GET ${stalling.url.replace(/[.]/g, '\\.')} failed: no (data|answer) for 3 s \\(STOREMAP_FETCH_STALL_MS\\)`));
  t.deepEqual(readdirSync(dir), []);

  // Stopped while a request waits (the tile data file is there by then): SIGTERM, 128 + 15.
  const waiting = await shapedServer(t, leaves, (n) => ({ etag: '"v1"', hold: n > 0 }));
  const child = spawn(process.execPath, [CLI, 'basemap', 'extract', '--from', waiting.url, ...BOX, '--out', out], { cwd: ROOT, stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waiting.held;
  t.true(readdirSync(dir).includes('x.pmtiles.tiles.part'), readdirSync(dir).join(', '));
  child.kill('SIGTERM');
  t.is(await exited, 143);
  t.deepEqual(readdirSync(dir), []);
});

test('basemap extract and info refuse what is not a plain file: a pipe as the source, a link or a pipe as --out; an empty --bbox field; a swapped box is said to cross the antimeridian', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-extract-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const leaves = path.join(TILES, 'leaves.pmtiles');
  const fifo = path.join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  // Opening a pipe waits for a writer: these ended only when killed.
  const fromPipe = await runCli(['basemap', 'extract', '--from', fifo, ...BOX, '--out', path.join(dir, 'a.pmtiles')], {}, 30_000);
  t.is(fromPipe.code, 1, describe(fromPipe));
  t.regex(fromPipe.stderr, /pipe is not a regular file/);
  const info = await runCli(['basemap', 'info', fifo], {}, 30_000);
  t.is(info.code, 1, describe(info));
  t.regex(info.stderr, /not a regular file/);
  const target = path.join(dir, 'target.pmtiles');
  writeFileSync(target, 'kept');
  symlinkSync(target, path.join(dir, 'link.pmtiles'));
  for (const out of [fifo, path.join(dir, 'link.pmtiles')]) {
    const r = await runCli(['basemap', 'extract', '--from', leaves, ...BOX, '--out', out], {}, 30_000);
    t.is(r.code, 1, describe(r));
    t.regex(r.stderr, /is there and is not a regular file/);
  }
  t.is(readFileSync(target, 'utf8'), 'kept');
  const empty = await runCli(['basemap', 'extract', '--from', leaves, '--bbox', ',5.9,47.8,10.5', '--out', path.join(dir, 'b.pmtiles')], {});
  t.is(empty.code, 1, describe(empty));
  t.regex(empty.stderr, /--bbox must be S,W,N,E in degrees/);
  const swapped = await runCli(['basemap', 'extract', '--from', leaves, '--bbox', '45.8,10.5,47.8,5.9', '--maxzoom', '3', '--out', path.join(dir, 'c.pmtiles')], {});
  t.is(swapped.code, 0, describe(swapped));
  t.regex(swapped.stderr, /the box crosses the antimeridian \(west 10\.5 is east of east 5\.9\)/);
});

test('an archive whose tiles are compressed with zstd is refused when opened, not tile by tile', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-basemap-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bytes = readFileSync(path.join(TILES, 'monaco-openmaptiles.pmtiles'));
  // The header's tile compression byte (PMTiles v3 spec: offset 98; 4 is zstd).
  bytes[98] = 4;
  const file = path.join(dir, 'zstd.pmtiles');
  writeFileSync(file, bytes);
  const info = await runCli(['basemap', 'info', file], {});
  t.is(info.code, 1, describe(info));
  t.regex(info.stderr, /unsupported: zstd tile compression \(gzip or none are read\)/);
});
