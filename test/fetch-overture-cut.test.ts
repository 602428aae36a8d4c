// `storemap data fetch` of Overture cut to an area by range requests, against a loopback bucket
// that honours `Range` and `If-Match` as S3 does. The release's file is made from the real
// Boulder sample by the pipeline (`storemap-ingest overture-world`: twenty copies of its rows
// moved to every continent, five row groups each, with Overture's bbox covering and
// statistics); which copies lie in which country the pipeline reports from where it moved them,
// and the country boxes come from our borders, so nothing expected is read from the cut itself.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countryArea, fetchSources, loadFetchConfig, type Area, type FetchConfig } from '../ts/data/fetch.ts';
import { loadRenderer } from '../ts/native.ts';
import { INGEST_BIN, ROOT } from '../ts/paths.ts';
import { AS_OF, describe, runCli, tempDataDir } from './helpers/cli.ts';
import { testDataDir } from './helpers/dataset.ts';

const SAMPLE = path.join(ROOT, 'test/fixtures/real/overture/boulder_places_2026-04-15.0.parquet');
const RELEASE = '2026-11-19.0';
const PREFIX = `release/${RELEASE}/theme=places/type=place/`;
const WORLD_KEY = `${PREFIX}part-00000-world.zstd.parquet`;
const BOULDER_KEY = `${PREFIX}part-00001-boulder.zstd.parquet`;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface World {
  file: Buffer;
  rowsPerCopy: number;
  copies: { country: string; bbox: number[] }[];
}

/** The pipeline's worldwide file, made once per variant for the whole test file. */
const worlds = new Map<string, Promise<World>>();
function world(o: { statistics?: boolean; groupsPerCopy?: number } = {}): Promise<World> {
  const { statistics = true, groupsPerCopy = 5 } = o;
  const key = `${statistics}-${groupsPerCopy}`;
  if (!worlds.has(key)) {
    worlds.set(
      key,
      (async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'storemap-world-'));
        const out = path.join(dir, 'world.parquet');
        const args = ['overture-world', '--sample', SAMPLE, '--out', out, '--groups-per-copy', String(groupsPerCopy), ...(statistics ? [] : ['--no-statistics'])];
        const s = JSON.parse(execFileSync(INGEST_BIN, args, { encoding: 'utf8' })) as { rows_per_copy: number; copies: World['copies'] };
        const file = readFileSync(out);
        await rm(dir, { recursive: true, force: true });
        return { file, rowsPerCopy: s.rows_per_copy, copies: s.copies };
      })(),
    );
  }
  return worlds.get(key)!;
}

interface Seen {
  path: string;
  range?: string;
  ifMatch?: string;
  status: number;
  bytes: number;
}

interface Bucket {
  origin: string;
  config: FetchConfig;
  seen: Seen[];
  /** Replace a file's bytes (a new version under the same key). */
  files: Map<string, Buffer>;
  /** Bytes sent for a key's range answers. */
  bytesFor(key: string): number;
}

interface BucketOptions {
  files: Map<string, Buffer>;
  ignoreRange?: boolean;
  /** Drop the connection of the first range answer longer than the footer read, after this many
   * bytes, once the client has saved them to `cutPart` (a gate, not a timer). */
  cutAfter?: number;
  cutPart?: string;
  /** After the first range answer for this key, the key serves these bytes instead (a new
   * version published while a client reads the old one). */
  replaceAfterFirst?: { key: string; with: Buffer };
}

const etagOf = (b: Buffer) => `"${sha256(b).slice(0, 32)}"`;

async function bucket(t: ExecutionContext, o: BucketOptions): Promise<Bucket> {
  const seen: Seen[] = [];
  let cut = o.cutAfter;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const entry: Seen = { path: decodeURIComponent(url.pathname), range: req.headers.range, ifMatch: req.headers['if-match'] as string | undefined, status: 0, bytes: 0 };
    seen.push(entry);
    const send = (status: number, headers: Record<string, string | number>, body: Buffer = Buffer.alloc(0)) => {
      entry.status = status;
      entry.bytes = body.length;
      res.writeHead(status, headers);
      res.end(body);
    };
    if (url.pathname === '/stac/catalog.json') return send(200, { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ latest: RELEASE })));
    if (url.pathname === '/overture/' && url.searchParams.get('list-type') === '2') {
      const contents = [...o.files].map(([k, b]) => `<Contents><Key>${k}</Key><Size>${b.length}</Size></Contents>`).join('');
      return send(200, { 'content-type': 'application/xml' }, Buffer.from(`<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`));
    }
    const key = url.pathname.replace(/^\/overture\//, '');
    const body = o.files.get(decodeURIComponent(key));
    if (!body) return send(404, {});
    const etag = etagOf(body);
    if (req.headers['if-match'] !== undefined && req.headers['if-match'] !== etag) return send(412, { etag });
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    if (!m || o.ignoreRange) return send(200, { 'content-length': body.length, etag }, body);
    const [start, end] = [Number(m[1]), Math.min(Number(m[2]), body.length - 1)];
    const part = body.subarray(start, end + 1);
    if (cut !== undefined && part.length > cut && part.length > 300_000) {
      // Announce the range, send its start, and drop the connection once the client saved it.
      const sent = part.subarray(0, cut);
      cut = undefined;
      entry.status = 206;
      entry.bytes = sent.length;
      res.writeHead(206, { 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': part.length, etag });
      const saved = () => o.cutPart !== undefined && existsSync(o.cutPart) && statSync(o.cutPart).size >= sent.length;
      const deadline = Date.now() + 10_000;
      const drop = () => (saved() || Date.now() > deadline ? res.destroy() : setTimeout(drop, 5));
      return res.write(sent, drop);
    }
    send(206, { 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': part.length, etag }, part);
    if (o.replaceAfterFirst?.key === decodeURIComponent(key)) {
      o.files.set(o.replaceAfterFirst.key, o.replaceAfterFirst.with);
      o.replaceAfterFirst = undefined;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    origin,
    config: loadFetchConfig(bucketEnv(origin)),
    seen,
    files: o.files,
    bytesFor: (key) => seen.filter((s) => s.path === `/overture/${key}`).reduce((n, s) => n + s.bytes, 0),
  };
}

function bucketEnv(origin: string): Record<string, string> {
  return { STOREMAP_OVERTURE_BASE: `${origin}/overture`, STOREMAP_OVERTURE_STAC: `${origin}/stac/catalog.json` };
}

async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-cut-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A country's area from our borders, as the CLI makes it. */
let renderer: ReturnType<typeof loadRenderer> | undefined;
function area(code: string): Area {
  renderer ??= loadRenderer(path.join(testDataDir(), 'reference'));
  return countryArea(code, renderer.countryBoxes(code));
}

const inBox = (b: number[], [w, s, e, n]: number[]) => (w <= e ? b[0] <= e && b[2] >= w : b[0] <= e || b[2] >= w) && b[1] <= n && b[3] >= s;

const fileOf = (out: string, key: string) => path.join(out, 'overture', ...key.slice(`release/${RELEASE}/`.length).split('/'));

test('one country of a worldwide release: a small share of the bytes, the row groups that meet its boxes, and the cut imports', async (t) => {
  const w = await world();
  const b = await bucket(t, { files: new Map([[WORLD_KEY, w.file], [BOULDER_KEY, readFileSync(SAMPLE)]]) });
  const out = await tempDir(t);
  const lines: string[] = [];
  const ch = area('CH');
  const summary = await fetchSources({ country: 'CH', sources: 'overture', area: ch, outDir: out, config: b.config, log: (l) => lines.push(l) });

  // Which copies lie in Switzerland's boxes, from where the pipeline moved them.
  const swiss = w.copies.filter((c) => ch.boxes.some((box) => inBox(c.bbox, box)));
  t.deepEqual(swiss.map((c) => c.country), ['CH']);
  const [worldFile, boulder] = summary.files;
  t.is(worldFile.check, 'ranges');
  t.deepEqual(
    { rowGroups: worldFile.cut!.rowGroups, kept: worldFile.cut!.keptRowGroups, rows: worldFile.cut!.rows },
    { rowGroups: 100, kept: 5, rows: w.rowsPerCopy },
  );
  t.is(boulder.cut!.keptRowGroups, 0, 'the Boulder file has nothing in Switzerland');
  // What the server sent for the world file: the footer and one copy's row groups.
  const sent = b.bytesFor(WORLD_KEY);
  t.is(sent, worldFile.cut!.bytesRead);
  t.true(sent < w.file.length / 10, `${sent} of ${w.file.length} bytes`);
  t.true(b.seen.filter((s) => s.path.endsWith('world.zstd.parquet')).every((s) => s.status === 206), 'only range requests');
  t.true(lines.some((l) => /part-00000-world\.zstd\.parquet: 5 of 100 row groups meet CH/.test(l)), lines.join('\n'));
  t.deepEqual((await readdir(path.dirname(fileOf(out, WORLD_KEY)))).filter((n) => n.endsWith('.part') || n.endsWith('-tmp')), []);

  // The cut imports, as an operator would run it: every row of the Zurich copy is read.
  const dataDir = await tempDataDir(t, { reference: true });
  const imported = await runCli(['data', 'import', '--overture', path.join(out, 'overture'), '--country', 'CH', '--as-of', AS_OF], { STOREMAP_DATA_DIR: dataDir });
  t.is(imported.code, 0, describe(imported));
  t.regex(imported.stderr, new RegExp(`overture\\s+2\\s+\\d+\\s+0\\s+${w.rowsPerCopy}\\s`), 'both files read, none failed, every Swiss row read');
  t.regex(imported.stdout, /snapshot\.smap: [1-9]\d* rows/);

  // A second run reads the footers only: the files are current.
  const before = b.bytesFor(WORLD_KEY);
  const again = await fetchSources({ country: 'CH', sources: 'overture', area: ch, outDir: out, config: b.config });
  t.deepEqual(again.files.map((f) => f.status), ['up-to-date', 'up-to-date']);
  t.true(b.bytesFor(WORLD_KEY) - before <= 2 * 1024 * 1024, 'the footer, not the row groups');
});

test('a cut interrupted mid-range resumes where its part ends and ends byte-identical to an uninterrupted one', async (t) => {
  const w = await world();
  const us = area('US');
  const whole = await tempDir(t);
  const ref = await bucket(t, { files: new Map([[WORLD_KEY, w.file]]) });
  await fetchSources({ country: 'US', sources: 'overture', area: us, outDir: whole, config: ref.config });
  const expected = await readFile(fileOf(whole, WORLD_KEY));

  const out = await tempDir(t);
  const part = `${fileOf(out, WORLD_KEY)}.ranges.part`;
  const b = await bucket(t, { files: new Map([[WORLD_KEY, w.file]]), cutAfter: 100_000, cutPart: part });
  const err = await t.throwsAsync(fetchSources({ country: 'US', sources: 'overture', area: us, outDir: out, config: b.config }));
  t.regex(err!.message, /run the command again to resume it/);
  t.true(statSync(part).size >= 100_000);
  const resumed = await fetchSources({ country: 'US', sources: 'overture', area: us, outDir: out, config: b.config });
  t.is(resumed.files[0].status, 'resumed');
  t.is(sha256(await readFile(fileOf(out, WORLD_KEY))), sha256(expected));
  // The US is its mainland, Alaska and Hawaii (and Toronto, inside the mainland's box).
  const want = w.copies.filter((c) => us.boxes.some((box) => inBox(c.bbox, box))).length;
  t.is(resumed.files[0].cut!.keptRowGroups, want * 5);
  t.is(w.copies.filter((c) => c.country === 'US').length, 3);
  t.true(w.copies.filter((c) => c.country === 'US').every((c) => us.boxes.some((box) => inBox(c.bbox, box))), 'every US copy is kept');
  // Each run's first read (the footer) learns the ETag; every later one names it.
  const ranged = b.seen.filter((s) => s.range !== undefined);
  t.is(ranged.filter((s) => s.ifMatch === undefined).length, 2, 'one first read per run');
  t.true(ranged.filter((s) => s.ifMatch !== undefined).every((s) => s.ifMatch === etagOf(w.file)));
});

test('a file replaced on the server: a part cut from the old version is dropped; a change mid-read is refused (412)', async (t) => {
  const [v1, v2] = [await world(), await world({ groupsPerCopy: 4 })];
  const ch = area('CH');
  const clean = await tempDir(t);
  const ref = await bucket(t, { files: new Map([[WORLD_KEY, v2.file]]) });
  await fetchSources({ sources: 'overture', area: ch, outDir: clean, config: ref.config });

  const out = await tempDir(t);
  const part = `${fileOf(out, WORLD_KEY)}.ranges.part`;
  const b = await bucket(t, { files: new Map([[WORLD_KEY, v1.file]]), cutAfter: 50_000, cutPart: part });
  await t.throwsAsync(fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config }));
  t.true(existsSync(part));
  b.files.set(WORLD_KEY, v2.file);
  const lines: string[] = [];
  const s = await fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config, log: (l) => lines.push(l) });
  t.true(lines.some((l) => /cut from another version of the file or for another area; starting again/.test(l)), lines.join('\n'));
  t.is(s.files[0].status, 'downloaded');
  t.is(sha256(await readFile(fileOf(out, WORLD_KEY))), sha256(await readFile(fileOf(clean, WORLD_KEY))), 'the new version, cut afresh');

  // Published anew between the footer and the row groups: If-Match fails, nothing is written.
  const out2 = await tempDir(t);
  const c = await bucket(t, { files: new Map([[WORLD_KEY, v1.file]]), replaceAfterFirst: { key: WORLD_KEY, with: v2.file } });
  const err = await t.throwsAsync(fetchSources({ sources: 'overture', area: ch, outDir: out2, config: c.config }));
  t.regex(err!.message, /changed on the server while it was read \(its ETag moved\); run the command again/);
  t.true(c.seen.some((x) => x.status === 412));
  t.false(existsSync(fileOf(out2, WORLD_KEY)));
});

test('a file without bbox statistics is downloaded whole, with a warning', async (t) => {
  const w = await world({ statistics: false });
  const b = await bucket(t, { files: new Map([[WORLD_KEY, w.file]]) });
  const out = await tempDir(t);
  const s = await fetchSources({ sources: 'overture', area: area('CH'), outDir: out, config: b.config });
  t.true(s.warnings.some((x) => /no bbox column statistics to cut by, so all of it is downloaded/.test(x)), s.warnings.join('\n'));
  t.is(s.files[0].check, 'size');
  t.is(sha256(await readFile(fileOf(out, WORLD_KEY))), sha256(w.file));
});

test('a server that ignores Range: the file is downloaded whole with a warning', async (t) => {
  const sample = readFileSync(SAMPLE);
  const b = await bucket(t, { files: new Map([[BOULDER_KEY, sample]]), ignoreRange: true });
  const out = await tempDir(t);
  const s = await fetchSources({ sources: 'overture', area: { label: 'CH', boxes: [[5.9, 45.8, 10.5, 47.9]] }, outDir: out, config: b.config });
  t.true(s.warnings.some((x) => /does not answer range requests/.test(x)), s.warnings.join('\n'));
  t.is(sha256(await readFile(fileOf(out, BOULDER_KEY))), sha256(sample));
});

test('the CLI: --bbox across the antimeridian, the bytes read reported, and the arguments checked', async (t) => {
  const w = await world();
  const b = await bucket(t, { files: new Map([[WORLD_KEY, w.file]]) });
  const dataDir = await tempDir(t);
  const env = { ...bucketEnv(b.origin), STOREMAP_DATA_DIR: dataDir };
  // Fiji, either side of 180°: S,W,N,E with west east of east.
  const fiji = await runCli(['data', 'fetch', '--bbox', '-21,176,-12,-178', '--sources', 'overture'], env);
  t.is(fiji.code, 0, describe(fiji));
  t.regex(fiji.stderr, /5 of 100 row groups meet --bbox -21,176,-12,-178/);
  t.regex(fiji.stderr, /overture: read [\d.]+ [kM]B of [\d.]+ MB \([\d.]+ %\) in \d+ requests for 3545 rows/);
  t.is(fiji.stdout.trim(), fileOf(path.join(dataDir, 'downloads'), WORLD_KEY));

  const neither = await runCli(['data', 'fetch', '--sources', 'overture'], env);
  t.is(neither.code, 1, describe(neither));
  t.regex(neither.stderr, /give --country, --bbox or both/);
  const osmNoCountry = await runCli(['data', 'fetch', '--bbox', '45,5,48,11', '--sources', 'osm,overture'], env);
  t.is(osmNoCountry.code, 1, describe(osmNoCountry));
  t.regex(osmNoCountry.stderr, /OpenStreetMap is published per country: give --country/);
  const badBox = await runCli(['data', 'fetch', '--bbox', '48,5,45', '--sources', 'overture'], env);
  t.is(badBox.code, 1, describe(badBox));
  t.regex(badBox.stderr, /--bbox must be S,W,N,E/);
});

test("next week's release replaces this one's files: the older files and their notes are removed once the new ones are in", async (t) => {
  const w = await world();
  const files = new Map([[WORLD_KEY, w.file]]);
  const b = await bucket(t, { files });
  const out = await tempDir(t);
  const ch = area('CH');
  await fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config });
  const dir = path.dirname(fileOf(out, WORLD_KEY));
  t.deepEqual((await readdir(dir)).sort(), ['.part-00000-world.zstd.parquet.cut-info', 'part-00000-world.zstd.parquet']);
  // The new release lists other files.
  files.delete(WORLD_KEY);
  files.set(BOULDER_KEY, readFileSync(SAMPLE));
  const lines: string[] = [];
  await fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config, log: (l) => lines.push(l) });
  t.deepEqual((await readdir(dir)).sort(), ['.part-00001-boulder.zstd.parquet.cut-info', 'part-00001-boulder.zstd.parquet']);
  t.true(lines.some((l) => /removed theme=places\/type=place\/part-00000-world\.zstd\.parquet, replaced by part-00001-boulder/.test(l)), lines.join('\n'));
});

test('a cut and a whole download of the same file never mistake one another: each starts its own part, and a whole file is not taken for a current cut', async (t) => {
  const w = await world();
  const out = await tempDir(t);
  const ch = area('CH');
  const ranges = `${fileOf(out, WORLD_KEY)}.ranges.part`;
  const b = await bucket(t, { files: new Map([[WORLD_KEY, w.file]]), cutAfter: 50_000, cutPart: ranges });
  // An interrupted cut, then the whole file: the whole download does not continue the ranges.
  await t.throwsAsync(fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config }));
  t.true(existsSync(ranges));
  const whole = await fetchSources({ sources: 'overture', outDir: out, config: b.config });
  t.is(whole.files[0].status, 'downloaded');
  t.is(sha256(await readFile(fileOf(out, WORLD_KEY))), sha256(w.file));
  t.false(existsSync(ranges), "the cut's part is gone");
  // A cut after the whole file: cut again, not "up to date".
  const cut = await fetchSources({ sources: 'overture', area: ch, outDir: out, config: b.config });
  t.is(cut.files[0].status, 'downloaded');
  t.is(cut.files[0].cut!.keptRowGroups, 5);
  // And the whole file once more after that cut: downloaded, and the cut's note forgotten.
  await fetchSources({ sources: 'overture', outDir: out, config: b.config });
  t.is(sha256(await readFile(fileOf(out, WORLD_KEY))), sha256(w.file));
  t.false(existsSync(path.join(path.dirname(fileOf(out, WORLD_KEY)), '.part-00000-world.zstd.parquet.cut-info')));
});

test('a listed object that is not Parquet, or whose footer is damaged, fails the source naming the file and why; nothing is written', async (t) => {
  const sample = readFileSync(SAMPLE);
  // The sample with its footer's last metadata bytes overwritten: the length and magic still say
  // Parquet, the Thrift does not decode.
  const damaged = Buffer.from(sample);
  damaged.fill(0xff, damaged.length - 400, damaged.length - 8);
  for (const [body, why] of [
    [Buffer.from('{"type":"FeatureCollection","features":[]}'), /part-00001-boulder\.zstd\.parquet: .*not a Parquet file/],
    [damaged, /part-00001-boulder\.zstd\.parquet: .*damaged Parquet file/],
  ] as [Buffer, RegExp][]) {
    const b = await bucket(t, { files: new Map([[BOULDER_KEY, body]]) });
    const out = await tempDir(t);
    const err = await t.throwsAsync(fetchSources({ sources: 'overture', area: area('CH'), outDir: out, config: b.config }));
    t.regex(err!.message, why);
    t.false(existsSync(fileOf(out, BOULDER_KEY)));
  }
});
