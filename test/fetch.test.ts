// `storemap data fetch` against a loopback server laid out like the four publishers' sites
// (Geofabrik's index and extracts with .md5 sidecars, AllThePlaces' runs/latest.json, the
// Overture bucket's ListObjectsV2 and the STAC root, the Hugging Face tree API and a gated
// resolve/ URL), serving real publisher files. Nothing here reaches the internet: every base
// URL points at 127.0.0.1.
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetchSources, loadFetchConfig, type FetchConfig } from '../ts/data/fetch.ts';
import { request } from '../ts/data/fetch/download.ts';
import { ROOT } from '../ts/paths.ts';

/** The real sample files: test/fixtures/real/ when copied there, else the shared originals. */
function realFile(rel: string): Buffer {
  const inRepo = path.join(ROOT, 'test', 'fixtures', 'real', rel);
  return readFileSync(existsSync(inRepo) ? inRepo : path.join(ROOT, '..', 'shared', 'realdata', rel));
}

const PBF = realFile('osm/zugerland.osm.pbf');
const ZIP = realFile('atp/output.zip');
const OVERTURE = realFile('overture/boulder_places_2026-04-15.0.parquet');
const FSQ = realFile('fsq/partial-columns.parquet');

/** The sample zip with a comment: another whole zip, a little longer. The sample has none,
 * so its end record is its last 22 bytes, the comment's length their last two. */
function withComment(zip: Buffer, comment: string): Buffer {
  const out = Buffer.concat([zip, Buffer.from(comment)]);
  if (out.readUInt32LE(zip.length - 22) !== 0x06054b50 || out.readUInt16LE(zip.length - 2) !== 0) throw new Error('the sample zip changed: it should end with a comment-less end record');
  out.writeUInt16LE(Buffer.byteLength(comment), zip.length - 2);
  return out;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
const fileSha = async (f: string) => sha256(await readFile(f));

const OVERTURE_RELEASE = '2026-04-15.0';
const OVERTURE_PREFIX = `release/${OVERTURE_RELEASE}/theme=places/type=place/`;
const OVERTURE_KEY = `${OVERTURE_PREFIX}part-00000-5b1c3f7e-1a2b-4c3d-9e8f-0a1b2c3d4e5f-c000.zstd.parquet`;
const FSQ_DT = '2026-03-12';
const FSQ_PATH = `release/dt=${FSQ_DT}/places/parquet/places-00000.zstd.parquet`;
const TOKEN = 'hf_test_token_0123456789';
const ATP_RUN = '2026-11-01-13-32-09';

interface Seen {
  path: string;
  range?: string;
  ifRange?: string;
  authorization?: string;
  status: number;
}

interface PublisherOptions {
  /** How runs/latest.json looks: one combined zip (before AllThePlaces grouped its runs), the
   * grouped runs (groups[] with a zip each, no output_url), or neither (only
   * runs/brands/latest.json has a run). */
  atpShape?: 'combined' | 'grouped' | 'brands-only';
  /** The Overture STAC catalog answers 503. */
  overtureDown?: boolean;
  /** What the .md5 sidecar says: the real digest (default), a wrong one, or 404. */
  md5?: 'right' | 'wrong' | 'missing';
  /** Serve files whole (200) even when asked for a range. */
  ignoreRange?: boolean;
  /** Cut the first whole-file response for output.zip after this many bytes. */
  cutAfter?: number;
  /** With `cutAfter`: the partial file the client writes. The connection is dropped only once
   * the client has saved the bytes sent (a gate, not a timer: a timer races a loaded machine). */
  cutPart?: string;
}

/** What the AllThePlaces site currently publishes; a test may change it between runs. */
interface AtpState {
  run: string;
  zip: Buffer;
}

/** The strong ETag the server gives a file (its content hash, as S3 and Apache do in spirit). */
const etagOf = (b: Buffer) => `"${sha256(b).slice(0, 32)}"`;

interface Publisher {
  origin: string;
  config: FetchConfig;
  seen: Seen[];
  atp: AtpState;
  /** Requests whose path ends with `suffix`. */
  requestsFor(suffix: string): Seen[];
}

/** A loopback server laid out like the publishers' sites; closed when the test ends. */
async function publisher(t: ExecutionContext, o: PublisherOptions = {}): Promise<Publisher> {
  const seen: Seen[] = [];
  const atp: AtpState = { run: ATP_RUN, zip: ZIP };
  let origin = '';
  let cut = o.cutAfter;

  const sendFile = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    const size = body.length;
    const etag = etagOf(body);
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    // RFC 9110 If-Range: a range only while the validator still matches, else the whole file.
    const ifRange = req.headers['if-range'];
    if (!m || o.ignoreRange || (ifRange !== undefined && ifRange !== etag)) {
      res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes', etag, 'content-type': 'application/octet-stream' });
      if (cut !== undefined && req.url?.endsWith('/output.zip')) {
        // Announce the whole file, send the start, then drop the connection once the client
        // has saved what it got (bounded: 10 s at most).
        const part = body.subarray(0, cut);
        cut = undefined;
        const saved = () => o.cutPart !== undefined && existsSync(o.cutPart) && statSync(o.cutPart).size >= part.length;
        const deadline = Date.now() + 10_000;
        const drop = () => (saved() || Date.now() > deadline ? res.destroy() : setTimeout(drop, 5));
        return res.write(part, drop);
      }
      return res.end(body);
    }
    const start = Number(m[1]);
    const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    if (start >= size || start > end) {
      res.writeHead(416, { 'content-range': `bytes */${size}` });
      return res.end();
    }
    res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': end - start + 1, 'accept-ranges': 'bytes', etag });
    res.end(body.subarray(start, end + 1));
  };
  const json = (res: http.ServerResponse, value: unknown, headers: Record<string, string> = {}) => {
    const body = Buffer.from(JSON.stringify(value));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...headers });
    res.end(body);
  };
  const notFound = (res: http.ServerResponse) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not Found');
  };
  const gated = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.headers.authorization === `Bearer ${TOKEN}`) return true;
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'Access to dataset foursquare/fsq-os-places is restricted. You must have access to it and be authenticated to access it.' }));
    return false;
  };

  // Geofabrik's index: a continent, a special multi-country region that also lists CH, the
  // country itself, and a neighbour. Only Switzerland's extract exists on this "mirror".
  const feature = (id: string, parent: string | undefined, iso: string[] | undefined, file: string) => ({
    type: 'Feature',
    properties: { id, ...(parent ? { parent } : {}), name: id, ...(iso ? { 'iso3166-1:alpha2': iso } : {}), urls: { pbf: `${origin}/geofabrik/${file}` } },
    geometry: null,
  });
  const index = () => ({
    type: 'FeatureCollection',
    features: [
      feature('europe', undefined, undefined, 'europe-latest.osm.pbf'),
      feature('dach', 'europe', ['DE', 'AT', 'CH'], 'europe/dach-latest.osm.pbf'),
      feature('germany', 'europe', ['DE'], 'europe/germany-latest.osm.pbf'),
      feature('switzerland', 'europe', ['CH'], 'europe/switzerland-latest.osm.pbf'),
    ],
  });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const p = decodeURIComponent(url.pathname);
    res.on('close', () =>
      seen.push({ path: p, range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined, authorization: req.headers.authorization, status: res.statusCode }),
    );

    if (p === '/geofabrik/index-v1.json') return json(res, index());
    if (p === '/geofabrik/europe/switzerland-latest.osm.pbf') return sendFile(req, res, PBF);
    if (p === '/geofabrik/europe/switzerland-latest.osm.pbf.md5') {
      if (o.md5 === 'missing') return notFound(res);
      const digest = o.md5 === 'wrong' ? md5(Buffer.from('not the extract')) : md5(PBF);
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end(`${digest}  switzerland-latest.osm.pbf\n`);
    }

    if (p === '/atp/runs/latest.json' && o.atpShape === 'grouped') {
      // The schema of AllThePlaces' grouped-runs design doc (runs/latest.json).
      const group = (name: string, zip: Buffer) => ({
        name,
        spider_count: 3,
        feature_count: 100,
        last_run_time: '2026-11-01T13:32:09Z',
        last_run_id: atp.run,
        zip_url: `${origin}/atp-data/runs/${name}/${atp.run}/${name}.zip`,
        parquet_url: `${origin}/atp-data/runs/${name}/${atp.run}/${name}.parquet`,
        pmtiles_url: `${origin}/atp-data/runs/${name}/${atp.run}/${name}.pmtiles`,
        size_bytes: zip.length,
      });
      return json(res, { updated_at: '2026-11-01T15:00:00Z', spiders: 6, total_lines: 200, groups: [group('brands', atp.zip), group('infrastructure', Buffer.from('masts'))] });
    }
    if (p === `/atp-data/runs/brands/${atp.run}/brands.zip`) return sendFile(req, res, atp.zip);
    if (p === '/atp/runs/latest.json' && o.atpShape === 'brands-only') return json(res, { updated_at: '2026-11-01T15:00:00Z' });
    if (p === '/atp/runs/brands/latest.json') {
      return json(res, { run_id: atp.run, output_url: `${origin}/atp-data/runs/brands/${atp.run}/brands.zip`, size_bytes: atp.zip.length });
    }
    if (p === '/stac/catalog.json' && o.overtureDown) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      return res.end('maintenance');
    }
    if (p === '/atp/runs/latest.json') {
      return json(res, {
        run_id: atp.run,
        output_url: `${origin}/atp-data/runs/${atp.run}/output.zip`,
        start_time: '2026-11-01T13:32:09Z',
        size_bytes: atp.zip.length,
        spiders: 6,
      });
    }
    if (p === `/atp-data/runs/${atp.run}/output.zip`) return sendFile(req, res, atp.zip);

    if (p === '/stac/catalog.json') {
      return json(res, { type: 'Catalog', id: 'Overture Releases', stac_version: '1.1.0', latest: OVERTURE_RELEASE, links: [{ rel: 'child', href: `./${OVERTURE_RELEASE}/catalog.json`, title: OVERTURE_RELEASE }] });
    }
    if (p === '/overture/' && url.searchParams.get('list-type') === '2') {
      // Two pages: the first holds a non-Parquet marker and a continuation token that needs
      // escaping in XML and in the query string.
      const prefix = url.searchParams.get('prefix') ?? '';
      const token = url.searchParams.get('continuation-token');
      const entries = (prefix === OVERTURE_PREFIX ? (token === null ? [[`${OVERTURE_PREFIX}_SUCCESS`, 0]] : token === 'page2&more' ? [[OVERTURE_KEY, OVERTURE.length]] : []) : []) as [string, number][];
      const contents = entries
        .map(([k, s]) => `<Contents><Key>${k}</Key><LastModified>2026-04-15T00:00:00.000Z</LastModified><ETag>&quot;0123-1&quot;</ETag><Size>${s}</Size><StorageClass>STANDARD</StorageClass></Contents>`)
        .join('');
      const more = token === null && prefix === OVERTURE_PREFIX;
      const xml =
        `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>overturemaps-us-west-2</Name>` +
        `<Prefix>${prefix}</Prefix><KeyCount>${entries.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>${more}</IsTruncated>` +
        (more ? '<NextContinuationToken>page2&amp;more</NextContinuationToken>' : '') +
        `${contents}</ListBucketResult>`;
      res.writeHead(200, { 'content-type': 'application/xml' });
      return res.end(xml);
    }
    if (p === `/overture/${OVERTURE_KEY}`) return sendFile(req, res, OVERTURE);

    if (p === '/hf-api/tree/main/release') {
      if (!gated(req, res)) return;
      return json(res, [
        { type: 'directory', oid: 'a'.repeat(40), path: 'release/dt=2025-01-10' },
        { type: 'directory', oid: 'b'.repeat(40), path: `release/dt=${FSQ_DT}` },
        { type: 'directory', oid: 'c'.repeat(40), path: 'release/dt=2025-11-19' },
      ]);
    }
    if (p === `/hf-api/tree/main/release/dt=${FSQ_DT}/places/parquet`) {
      if (!gated(req, res)) return;
      // Two pages through the Link header, as the Hub paginates; the first page has the kind
      // of stray file Foursquare once published there.
      if (url.searchParams.get('cursor') === 'p2') {
        return json(res, [{ type: 'file', oid: 'd'.repeat(40), size: 134, path: FSQ_PATH, lfs: { oid: sha256(FSQ), size: FSQ.length, pointerSize: 134 } }]);
      }
      return json(res, [{ type: 'file', oid: 'e'.repeat(40), size: 6148, path: `release/dt=${FSQ_DT}/places/parquet/.DS_Store` }], {
        link: `<${origin}/hf-api/tree/main/release/dt%3D${FSQ_DT}/places/parquet?cursor=p2>; rel="next"`,
      });
    }
    if (p === `/hf/resolve/main/${FSQ_PATH}`) {
      if (!gated(req, res)) return;
      return sendFile(req, res, FSQ);
    }
    notFound(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const env = publisherEnv(origin);
  return {
    origin,
    config: loadFetchConfig(env),
    seen,
    atp,
    requestsFor: (suffix) => seen.filter((s) => s.path.endsWith(suffix)),
  };
}

function publisherEnv(origin: string, token: string | undefined = TOKEN): Record<string, string> {
  return {
    STOREMAP_OSM_MIRROR: `${origin}/geofabrik`,
    STOREMAP_ATP_BASE: `${origin}/atp`,
    STOREMAP_OVERTURE_BASE: `${origin}/overture`,
    STOREMAP_OVERTURE_STAC: `${origin}/stac/catalog.json`,
    STOREMAP_FSQ_BASE: `${origin}/hf/resolve/main`,
    STOREMAP_FSQ_API: `${origin}/hf-api`,
    STOREMAP_FSQ_TOKEN: token ?? '',
  };
}

async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-fetch-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const OSM_FILE = 'osm/switzerland-latest.osm.pbf';
const ATP_FILE = 'atp/output.zip';
/** The bucket's hive folders below the release are kept. */
const OVERTURE_FILE = `overture/${OVERTURE_KEY.slice(`release/${OVERTURE_RELEASE}/`.length)}`;
const FSQ_FILE = 'fsq/places-00000.zstd.parquet';

// ---------------------------------------------------------------------------------------------

test('fetches all four sources, each file byte-identical to what the publisher serves', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  const lines: string[] = [];
  const summary = await fetchSources({ country: 'ch', outDir: out, config: pub.config, log: (l) => lines.push(l) });

  t.is(summary.country, 'CH');
  t.deepEqual(summary.skipped, []);
  const expected: [string, Buffer, string][] = [
    [OSM_FILE, PBF, 'md5'],
    [OVERTURE_FILE, OVERTURE, 'size'],
    [ATP_FILE, ZIP, 'size'],
    [FSQ_FILE, FSQ, 'sha256'],
  ];
  t.deepEqual(
    summary.files.map((f) => [path.relative(out, f.path).split(path.sep).join('/'), f.bytes, f.check, f.status]),
    expected.map(([rel, body, check]) => [rel, body.length, check, 'downloaded']),
  );
  for (const [rel, body] of expected) {
    t.is(await fileSha(path.join(out, rel)), sha256(body), `${rel} matches the served file`);
  }
  // Nothing half-written is left behind, and the stray non-Parquet entries were not fetched.
  for (const [rel] of expected) {
    const dir = path.dirname(path.join(out, rel));
    t.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.part')), [], `no .part next to ${rel}`);
  }
  t.deepEqual(pub.requestsFor('_SUCCESS'), []);
  t.deepEqual(pub.requestsFor('.DS_Store'), []);
  // The gated files were asked for with the token; the extract chosen was Switzerland's, not DACH's.
  t.true(pub.requestsFor(FSQ_PATH).every((s) => s.authorization === `Bearer ${TOKEN}`));
  t.deepEqual(pub.requestsFor('dach-latest.osm.pbf'), []);
  t.true(lines.some((l) => l.startsWith('osm: switzerland-latest.osm.pbf: done') && l.includes('MD5 verified')), lines.join('\n'));
  t.true(lines.some((l) => l.startsWith('osm: CH is Geofabrik extract "switzerland" (also listing CH: dach)')), lines.join('\n'));
  t.true(lines.some((l) => l.includes(`overture: latest release ${OVERTURE_RELEASE}`)), lines.join('\n'));
  t.true(lines.some((l) => l.includes(`fsq: latest release dt=${FSQ_DT}`)), lines.join('\n'));

  // A second run keeps the files whose published checksum still matches, without downloading them.
  const before = pub.requestsFor('switzerland-latest.osm.pbf').length;
  const again = await fetchSources({ country: 'CH', sources: 'osm,fsq', outDir: out, config: pub.config });
  t.deepEqual(
    again.files.map((f) => [f.source, f.status]),
    [
      ['osm', 'up-to-date'],
      ['fsq', 'up-to-date'],
    ],
  );
  t.is(pub.requestsFor('switzerland-latest.osm.pbf').length, before, 'the PBF was not requested again');
  t.is(await fileSha(path.join(out, OSM_FILE)), sha256(PBF));
});

test('resumes a .part with a Range request from its size and ends byte-identical', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  const half = Math.floor(PBF.length / 2);
  await mkdir(path.join(out, 'osm'));
  await writeFile(path.join(out, `${OSM_FILE}.part`), PBF.subarray(0, half));

  const summary = await fetchSources({ country: 'CH', sources: ['osm'], outDir: out, config: pub.config });
  const pbfGets = pub.requestsFor('switzerland-latest.osm.pbf');
  t.deepEqual(
    pbfGets.map((s) => [s.range, s.status]),
    [[`bytes=${half}-`, 206]],
    'one request, for the bytes after the part',
  );
  t.deepEqual(summary.files.map((f) => [f.status, f.bytes, f.check]), [['resumed', PBF.length, 'md5']]);
  t.is(await fileSha(path.join(out, OSM_FILE)), sha256(PBF));
  t.false(existsSync(path.join(out, `${OSM_FILE}.part`)));

  // A part that is not the start of today's file (yesterday's extract): resumed, the MD5
  // fails, and the file comes once more from zero.
  const out2 = await tempDir(t);
  await mkdir(path.join(out2, 'osm'));
  await writeFile(path.join(out2, `${OSM_FILE}.part`), Buffer.alloc(half, 0x55));
  const before = pbfGets.length;
  const lines: string[] = [];
  const again = await fetchSources({ country: 'CH', sources: 'osm', outDir: out2, config: pub.config, log: (l) => lines.push(l) });
  t.deepEqual(
    pub.requestsFor('switzerland-latest.osm.pbf').slice(before).map((s) => [s.range, s.status]),
    [
      [`bytes=${half}-`, 206],
      [undefined, 200],
    ],
  );
  t.true(lines.some((l) => l.includes('MD5 checksum mismatch') && l.endsWith('after resuming; starting again from zero')), lines.join('\n'));
  t.deepEqual(again.files.map((f) => f.status), ['downloaded']);
  t.is(await fileSha(path.join(out2, OSM_FILE)), sha256(PBF));
});

test('an interrupted download resumes with If-Range; a file changed on the server meanwhile comes whole', async (t) => {
  const out = await tempDir(t);
  const final = path.join(out, ATP_FILE);
  const pub = await publisher(t, { cutAfter: 1500, cutPart: `${final}.part` });
  const err = await t.throwsAsync(fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config }));
  t.regex(err!.message, /^atp: output\.zip: (download interrupted|the connection ended)[^\n]*run the command again to resume it$/);
  t.false(existsSync(final), 'no final file from a cut download');
  const part = await readFile(`${final}.part`);
  t.true(part.length > 0 && part.length < ZIP.length, `part of ${part.length} bytes`);
  t.true(part.equals(ZIP.subarray(0, part.length)), 'the part is the start of the file');

  const resumed = await fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config });
  t.deepEqual(
    pub.requestsFor('output.zip').map((s) => [s.range, s.ifRange, s.status]),
    [
      [undefined, undefined, 200],
      [`bytes=${part.length}-`, etagOf(ZIP), 206],
    ],
  );
  t.deepEqual(resumed.files.map((f) => [f.status, f.bytes]), [['resumed', ZIP.length]]);
  t.is(await fileSha(final), sha256(ZIP));
  t.deepEqual((await readdir(path.join(out, 'atp'))).sort(), ['output.zip'], 'no part and no resume note left');

  // The same URL now serves other bytes: the old part must not be continued with them.
  const out2 = await tempDir(t);
  const changed = await publisher(t, { cutAfter: 1500, cutPart: path.join(out2, `${ATP_FILE}.part`) });
  await t.throwsAsync(fetchSources({ country: 'CH', sources: 'atp', outDir: out2, config: changed.config }));
  const part2 = await readFile(path.join(out2, `${ATP_FILE}.part`));
  const next = withComment(ZIP, 'the next run is a little longer');
  changed.atp.zip = next;
  await fetchSources({ country: 'CH', sources: 'atp', outDir: out2, config: changed.config });
  t.deepEqual(changed.requestsFor('output.zip').at(-1), {
    path: `/atp-data/runs/${ATP_RUN}/output.zip`,
    range: `bytes=${part2.length}-`,
    ifRange: etagOf(ZIP),
    authorization: undefined,
    status: 200,
  });
  t.is(await fileSha(path.join(out2, ATP_FILE)), sha256(next));

  // A new run at a new URL: the part of the previous run's file is dropped, not resumed.
  const out3 = await tempDir(t);
  const moved = await publisher(t, { cutAfter: 1500, cutPart: path.join(out3, `${ATP_FILE}.part`) });
  await t.throwsAsync(fetchSources({ country: 'CH', sources: 'atp', outDir: out3, config: moved.config }));
  moved.atp.run = '2026-11-08-13-32-09';
  moved.atp.zip = next;
  const lines: string[] = [];
  await fetchSources({ country: 'CH', sources: 'atp', outDir: out3, config: moved.config, log: (l) => lines.push(l) });
  t.deepEqual(
    moved.requestsFor('output.zip').map((s) => [s.path, s.range, s.status]),
    [
      [`/atp-data/runs/${ATP_RUN}/output.zip`, undefined, 200],
      ['/atp-data/runs/2026-11-08-13-32-09/output.zip', undefined, 200],
    ],
  );
  t.true(lines.some((l) => l.includes('the partial file came from') && l.includes(ATP_RUN)), lines.join('\n'));
  t.is(await fileSha(path.join(out3, ATP_FILE)), sha256(next));
});

test('AllThePlaces publishes no checksum: a zip whose end records are not where a whole zip has them is refused and removed', async (t) => {
  const page = Buffer.from('<html><body>Your session has expired. Please sign in.</body></html>');
  for (const [what, body] of [
    ['a proxy page', page],
    ['the zip cut short (the listing gives that size)', ZIP.subarray(0, ZIP.length - 100)],
    ['the zip behind a stray byte', Buffer.concat([Buffer.from('\n'), ZIP])],
  ] as const) {
    const pub = await publisher(t);
    pub.atp.zip = body;
    const out = await tempDir(t);
    const err = await t.throwsAsync(fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config }));
    t.regex(err!.message, /^atp: output\.zip: not a whole zip file: .*; the download was removed$/, what);
    t.deepEqual(await readdir(path.join(out, 'atp')), [], `${what}: nothing left behind`);
  }
  // A whole zip with a comment passes, and the log says what was checked.
  const pub = await publisher(t);
  pub.atp.zip = withComment(ZIP, 'run 2026-11-08');
  const out = await tempDir(t);
  const lines: string[] = [];
  await fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config, log: (l) => lines.push(l) });
  t.is(await fileSha(path.join(out, ATP_FILE)), sha256(pub.atp.zip));
  t.true(lines.some((l) => l.includes('atp: output.zip: done') && l.includes('size verified, zip structure checked')), lines.join('\n'));
});

test('a server that ignores Range makes the download start again from zero', async (t) => {
  const pub = await publisher(t, { ignoreRange: true });
  const out = await tempDir(t);
  await mkdir(path.join(out, 'atp'));
  // A part that is not even a prefix of the file: appending the whole body to it would be wrong.
  await writeFile(path.join(out, `${ATP_FILE}.part`), Buffer.from('garbage from some other run'));
  const lines: string[] = [];
  const summary = await fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config, log: (l) => lines.push(l) });
  t.deepEqual(
    pub.requestsFor('output.zip').map((s) => [s.range, s.status]),
    [['bytes=27-', 200]],
  );
  t.deepEqual(summary.files.map((f) => [f.status, f.bytes]), [['downloaded', ZIP.length]]);
  t.is(await fileSha(path.join(out, ATP_FILE)), sha256(ZIP));
  t.true(lines.some((l) => l.includes('starting again from zero')), lines.join('\n'));
});

test('416 on a complete .part: kept when the MD5 verifies it, downloaded again when nothing can', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  await mkdir(path.join(out, 'osm'));
  await mkdir(path.join(out, 'atp'));
  await writeFile(path.join(out, `${OSM_FILE}.part`), PBF);
  await writeFile(path.join(out, `${ATP_FILE}.part`), ZIP);

  const summary = await fetchSources({ country: 'CH', sources: 'osm,atp', outDir: out, config: pub.config });
  // OSM: the .md5 proves the part complete, so no body is transferred.
  t.deepEqual(
    pub.requestsFor('switzerland-latest.osm.pbf').map((s) => [s.range, s.status]),
    [[`bytes=${PBF.length}-`, 416]],
  );
  // ATP publishes no checksum: the part cannot be trusted, so the whole file comes again.
  t.deepEqual(
    pub.requestsFor('output.zip').map((s) => [s.range, s.status]),
    [
      [`bytes=${ZIP.length}-`, 416],
      [undefined, 200],
    ],
  );
  t.deepEqual(summary.files.map((f) => [f.source, f.status]), [
    ['osm', 'resumed'],
    ['atp', 'downloaded'],
  ]);
  t.is(await fileSha(path.join(out, OSM_FILE)), sha256(PBF));
  t.is(await fileSha(path.join(out, ATP_FILE)), sha256(ZIP));
});

test('on a TTY each file gets a progress line rewritten with \\r; off a TTY nothing is drawn', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  let drawn = '';
  await fetchSources({ country: 'CH', sources: 'osm', outDir: out, config: pub.config, progress: { isTTY: true, write: (s) => (drawn += s) } });
  const total = `${(PBF.length / 1000).toFixed(1)} kB`;
  t.regex(drawn, new RegExp(`^\\r\\x1b\\[Kosm: switzerland-latest\\.osm\\.pbf  [\\d.]+ kB / ${total.replace('.', '\\.')}  \\d{1,3}%`));
  t.true(drawn.endsWith('\r\x1b[K'), 'the line is cleared when the file is done');

  let offTty = '';
  await rm(path.join(out, 'osm'), { recursive: true });
  await fetchSources({ country: 'CH', sources: 'osm', outDir: out, config: pub.config, progress: { isTTY: false, write: (s) => (offTty += s) } });
  t.is(offTty, '');
});

test('a wrong .md5 fails the fetch, names the checksum, and leaves no file behind', async (t) => {
  const pub = await publisher(t, { md5: 'wrong' });
  const out = await tempDir(t);
  const err = await t.throwsAsync(fetchSources({ country: 'CH', sources: 'osm', outDir: out, config: pub.config }));
  t.regex(err!.message, /MD5 checksum mismatch/);
  t.true(err!.message.includes(md5(Buffer.from('not the extract'))), err!.message);
  t.true(err!.message.includes(md5(PBF)), 'the message gives the digest actually downloaded');
  t.false(existsSync(path.join(out, OSM_FILE)), 'no final file');
  t.false(existsSync(path.join(out, `${OSM_FILE}.part`)), 'no part either: it cannot be resumed into the right file');
});

test('no .md5 published: logged, and the extract is still downloaded and size-checked', async (t) => {
  const pub = await publisher(t, { md5: 'missing' });
  const out = await tempDir(t);
  const lines: string[] = [];
  const summary = await fetchSources({ country: 'CH', sources: 'osm', outDir: out, config: pub.config, log: (l) => lines.push(l) });
  t.true(lines.some((l) => l.startsWith('osm: no checksum published') && l.includes('404')), lines.join('\n'));
  t.deepEqual(summary.files.map((f) => [f.check, f.bytes]), [['size', PBF.length]]);
  t.is(await fileSha(path.join(out, OSM_FILE)), sha256(PBF));
});

test('Foursquare is skipped with a message without a token, and fetched with one', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  const lines: string[] = [];
  const noToken = { ...pub.config, fsqToken: undefined };
  const skipped = await fetchSources({ country: 'CH', sources: 'fsq', outDir: out, config: noToken, log: (l) => lines.push(l) });
  t.deepEqual(skipped.files, []);
  t.is(skipped.skipped.length, 1);
  t.is(skipped.skipped[0].source, 'fsq');
  t.regex(skipped.skipped[0].reason, /STOREMAP_FSQ_TOKEN is not set/);
  t.true(lines.some((l) => l.startsWith('fsq: skipped: STOREMAP_FSQ_TOKEN is not set')), lines.join('\n'));
  t.deepEqual(pub.seen, [], 'nothing was requested without a token');
  t.false(existsSync(path.join(out, 'fsq')));

  // A token the Hub refuses is an error that names the setting.
  const refused = await t.throwsAsync(fetchSources({ country: 'CH', sources: 'fsq', outDir: out, config: { ...pub.config, fsqToken: 'hf_wrong' } }));
  t.regex(refused!.message, /HTTP 401/);
  t.regex(refused!.message, /STOREMAP_FSQ_TOKEN/);

  const fetched = await fetchSources({ country: 'CH', sources: 'fsq', outDir: out, config: pub.config });
  t.deepEqual(fetched.files.map((f) => [f.check, f.status, f.bytes]), [['sha256', 'downloaded', FSQ.length]]);
  t.is(await fileSha(path.join(out, FSQ_FILE)), sha256(FSQ));
});

test('an unknown country, a malformed code, an unknown source and a bad URL setting fail with a message', async (t) => {
  const pub = await publisher(t);
  const out = await tempDir(t);
  const zz = await t.throwsAsync(fetchSources({ country: 'zz', sources: 'osm', outDir: out, config: pub.config }));
  t.regex(zz!.message, /no extract for country ZZ/);
  t.deepEqual(pub.requestsFor('.osm.pbf'), [], 'no extract was requested');

  for (const bad of ['CHE', 'C1', '']) {
    const e = await t.throwsAsync(fetchSources({ country: bad, outDir: out, config: pub.config }));
    t.regex(e!.message, /two-letter ISO 3166-1 code/, `country "${bad}"`);
  }
  const src = await t.throwsAsync(fetchSources({ country: 'CH', sources: 'osm,bogus', outDir: out, config: pub.config }));
  t.is(src!.message, 'unknown source "bogus": the sources are osm, overture, atp, fsq');

  t.throws(() => loadFetchConfig({ STOREMAP_OSM_MIRROR: 'ftp://example.org' }), { message: /STOREMAP_OSM_MIRROR: must be an http:\/\/ or https:\/\/ URL/ });
  // The defaults are the publishers' own sites.
  t.deepEqual(loadFetchConfig({}), {
    osmMirror: 'https://download.geofabrik.de',
    atpBase: 'https://data.alltheplaces.xyz',
    overtureBase: 'https://overturemaps-us-west-2.s3.us-west-2.amazonaws.com',
    overtureStac: 'https://stac.overturemaps.org/catalog.json',
    fsqBase: 'https://huggingface.co/datasets/foursquare/fsq-os-places/resolve/main',
    fsqApi: 'https://huggingface.co/api/datasets/foursquare/fsq-os-places',
    fsqToken: undefined,
    stallMs: 60_000,
  });
});

test('a server that stops answering, before its headers or in the middle of a body, is given up after the stall time', async (t) => {
  // Accepts and never answers; or answers a 200 of 1,000 bytes and sends 10 of them.
  const sockets = new Set<import('node:net').Socket>();
  const server = (await import('node:net')).createServer((socket) => {
    sockets.add(socket);
    socket.once('data', (d) => {
      if (String(d).startsWith('GET /half')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n0123456789');
      if (String(d).startsWith('GET /whole')) socket.write(Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2000000\r\n\r\n'), Buffer.alloc(2_000_000, 0x37)]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const config = loadFetchConfig({ STOREMAP_FETCH_STALL_MS: '300' });
  const ctx = { opts: {}, config, fetch: globalThis.fetch, log: () => {}, warn: () => {}, now: Date.now } as unknown as Parameters<typeof request>[0];
  const silent = await t.throwsAsync(request(ctx, `${origin}/silent`));
  t.regex(silent!.message, /^GET http:\/\/127\.0\.0\.1:\d+\/silent failed: no answer for 0\.3 s \(STOREMAP_FETCH_STALL_MS\)/);
  const half = await request(ctx, `${origin}/half`);
  t.is(half.status, 200);
  const body = await t.throwsAsync(half.arrayBuffer());
  t.regex(String(body!.message) + String((body as { cause?: Error }).cause?.message ?? ''), /no data for 0\.3 s/);
  // A caller busy elsewhere (hashing a resumed part) before it reads is not a silent server.
  const whole = await request(ctx, `${origin}/whole`);
  await new Promise((resolve) => setTimeout(resolve, 900));
  const bytes = Buffer.from(await whole.arrayBuffer());
  t.is(bytes.length, 2_000_000);
  t.true(bytes.every((b) => b === 0x37));
  t.throws(() => loadFetchConfig({ STOREMAP_FETCH_STALL_MS: '' }), { message: /STOREMAP_FETCH_STALL_MS: expected a decimal number/ });
});

test('storemap data fetch is wired into the CLI', async (t) => {
  // Imported here: the CLI helpers load the native addon, which the tests above do not need.
  const { describe, runCli } = await import('./helpers/cli.ts');
  const pub = await publisher(t);
  const dataDir = await tempDir(t);
  const env = { ...publisherEnv(pub.origin), STOREMAP_DATA_DIR: dataDir };

  const ok = await runCli(['data', 'fetch', '--country', 'ch', '--sources', 'osm,atp'], env);
  t.is(ok.code, 0, describe(ok));
  // Into downloads/, not the synthetic world's sources/, which a build replaces whole.
  const sources = path.join(dataDir, 'downloads');
  t.deepEqual(ok.stdout.trim().split('\n'), [path.join(sources, OSM_FILE), path.join(sources, ATP_FILE)]);
  t.is(await fileSha(path.join(sources, OSM_FILE)), sha256(PBF));
  t.is(await fileSha(path.join(sources, ATP_FILE)), sha256(ZIP));
  // Off a TTY: one line when each file starts and one when it finishes.
  t.true(ok.stderr.includes('osm: switzerland-latest.osm.pbf: downloading'), describe(ok));
  t.true(ok.stderr.includes('atp: output.zip: done'), describe(ok));
  t.false(ok.stderr.includes('\r'), 'no progress line off a TTY');

  const out = path.join(dataDir, 'elsewhere');
  const outRun = await runCli(['data', 'fetch', '--country', 'CH', '--sources', 'atp', '--out', out], env);
  t.is(outRun.code, 0, describe(outRun));
  t.is(await fileSha(path.join(out, ATP_FILE)), sha256(ZIP));

  // A code the borders do not know is refused before any request.
  const before = pub.seen.length;
  const zz = await runCli(['data', 'fetch', '--country', 'ZZ', '--sources', 'osm'], env);
  t.is(zz.code, 1, describe(zz));
  t.regex(zz.stderr.trim(), /--country: ZZ is not a country the reference borders know/);
  t.is(pub.seen.length, before, 'nothing was requested');
  // A release date the calendar has not, and a fetch whose every source was skipped, fail.
  const month13 = await runCli(['data', 'fetch', '--country', 'CH', '--sources', 'fsq', '--fsq-release', '2026-13-01'], env);
  t.is(month13.code, 1, describe(month13));
  t.regex(month13.stderr, /--fsq-release must be a release date such as 2026-03-12, not "2026-13-01"/);
  const feb30 = await runCli(['data', 'fetch', '--country', 'CH', '--sources', 'overture', '--overture-release', '2026-02-30.0'], env);
  t.is(feb30.code, 1, describe(feb30));
  t.regex(feb30.stderr, /--overture-release: 2026-02-30 is no date/);
  const noToken = await runCli(['data', 'fetch', '--country', 'CH', '--sources', 'fsq'], { ...env, STOREMAP_FSQ_TOKEN: '' });
  t.is(noToken.code, 1, describe(noToken));
  t.regex(noToken.stderr, /nothing fetched: fsq: STOREMAP_FSQ_TOKEN is not set/);
  t.is(pub.seen.length, before, 'still nothing requested');

  const bad = await runCli(['data', 'fetch', '--country', 'CH', '--sources', 'osm,maps'], env);
  t.is(bad.code, 1, describe(bad));
  t.is(bad.stderr.trim(), 'storemap: unknown source "maps": the sources are osm, overture, atp, fsq');
});

test('AllThePlaces grouped runs: the storefront groups are fetched, infrastructure is not, and the combined zip they replace is removed', async (t) => {
  const pub = await publisher(t, { atpShape: 'grouped' });
  const out = await tempDir(t);
  await mkdir(path.join(out, 'atp'));
  // A combined zip from a fetch before the publisher grouped its runs.
  await writeFile(path.join(out, ATP_FILE), ZIP);
  const lines: string[] = [];
  const summary = await fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config, log: (l) => lines.push(l) });
  t.deepEqual(summary.files.map((f) => path.relative(out, f.path)), ['atp/brands.zip']);
  t.deepEqual(await readFile(path.join(out, 'atp/brands.zip')), ZIP);
  t.deepEqual(await readdir(path.join(out, 'atp')), ['brands.zip'], 'output.zip removed: importing both would count every store twice');
  t.deepEqual(pub.requestsFor('infrastructure.zip'), []);
  t.true(lines.some((l) => /group infrastructure skipped/.test(l)), lines.join('\n'));
});

test('AllThePlaces without groups or an output_url: runs/brands/latest.json is read instead', async (t) => {
  const pub = await publisher(t, { atpShape: 'brands-only' });
  const out = await tempDir(t);
  const summary = await fetchSources({ country: 'CH', sources: 'atp', outDir: out, config: pub.config });
  t.deepEqual(summary.files.map((f) => path.relative(out, f.path)), ['atp/brands.zip']);
  t.is(pub.requestsFor('/atp/runs/brands/latest.json').length, 1);
});

test("one publisher's outage: the others are fetched, then the command fails naming it; a stale Foursquare release is a warning naming the Portal", async (t) => {
  const pub = await publisher(t, { overtureDown: true });
  const out = await tempDir(t);
  const err = await t.throwsAsync(fetchSources({ country: 'CH', outDir: out, config: pub.config }));
  t.regex(err!.message, /^overture: .*503/);
  const summary = (err as unknown as { summary: { files: { path: string }[]; failed: { source: string }[]; warnings: string[] } }).summary;
  t.deepEqual(summary.failed.map((f) => f.source), ['overture']);
  t.deepEqual(summary.files.map((f) => path.relative(out, f.path)).sort(), [ATP_FILE, FSQ_FILE, OSM_FILE].sort());
  // The listing's newest folder is 2026-03-12; by the test's clock it is over 60 days old.
  t.true(summary.warnings.some((w) => /dt=2026-03-12\) is \d+ days old/.test(w) && /Places Portal/.test(w)), summary.warnings.join('\n'));
  // With a clock a month after that release, no warning.
  const fresh = await fetchSources({ country: 'CH', sources: 'fsq', outDir: await tempDir(t), config: pub.config, now: () => Date.parse('2026-04-12T00:00:00Z') });
  t.deepEqual(fresh.warnings, []);
});
