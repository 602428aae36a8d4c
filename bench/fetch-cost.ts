// What `storemap data fetch` costs for one country of a worldwide Overture release (issue 30):
// bytes read, requests and wall time on a loopback bucket that honours Range, for a few
// countries cut by their boxes against the whole file, plus the time the same bytes and
// requests would take over a real link (stated bandwidth and round trip).
//
// The release file is the pipeline's worldwide one (`storemap-ingest overture-world`: the real
// Boulder sample copied to twenty places on every continent, five row groups a copy, Overture's
// bbox covering and statistics), so a country's share depends on how many copies its boxes meet.
//
//   node --import tsx bench/fetch-cost.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countryArea, fetchSources, formatBytes, loadFetchConfig, type Area } from '../ts/data/fetch.ts';
import { ensureReference } from '../ts/data/ingest.ts';
import { loadRenderer } from '../ts/native.ts';
import { INGEST_BIN, ROOT } from '../ts/paths.ts';
import { median, writeSection } from './results.ts';

const RELEASE = '2026-11-19.0';
const KEY = `release/${RELEASE}/theme=places/type=place/part-00000.zstd.parquet`;
const RUNS = 5;
/** The real link the estimate assumes. */
const LINK_MBIT = 100;
const RTT_MS = 80;

const work = mkdtempSync(path.join(tmpdir(), 'storemap-fetch-cost-'));
const worldPath = path.join(work, 'world.parquet');
const sample = path.join(ROOT, 'test/fixtures/real/overture/boulder_places_2026-04-15.0.parquet');
execFileSync(INGEST_BIN, ['overture-world', '--sample', sample, '--out', worldPath], { stdio: ['ignore', 'ignore', 'inherit'] });
const world = readFileSync(worldPath);

let sent = 0;
let requests = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/stac/catalog.json') return res.end(JSON.stringify({ latest: RELEASE }));
  if (url.searchParams.get('list-type') === '2') {
    return res.end(`<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>${KEY}</Key><Size>${world.length}</Size></Contents></ListBucketResult>`);
  }
  requests++;
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  const [start, end] = m ? [Number(m[1]), Math.min(Number(m[2]), world.length - 1)] : [0, world.length - 1];
  const body = world.subarray(start, end + 1);
  sent += body.length;
  res.writeHead(m ? 206 : 200, { 'content-length': body.length, etag: '"w1"', ...(m ? { 'content-range': `bytes ${start}-${end}/${world.length}` } : {}) });
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const config = loadFetchConfig({ STOREMAP_OVERTURE_BASE: `${origin}/overture`, STOREMAP_OVERTURE_STAC: `${origin}/stac/catalog.json` });
const renderer = loadRenderer(await ensureReference(path.join(ROOT, 'data', 'generated', 'bench')));

async function measure(area: Area | undefined): Promise<{ bytes: number; requests: number; ms: number; rows?: number }> {
  const times: number[] = [];
  let last = { bytes: 0, requests: 0, rows: undefined as number | undefined };
  for (let i = 0; i < RUNS; i++) {
    const out = mkdtempSync(path.join(work, 'out-'));
    sent = 0;
    requests = 0;
    const t0 = performance.now();
    const s = await fetchSources({ sources: 'overture', area, outDir: out, config });
    times.push(performance.now() - t0);
    last = { bytes: sent, requests, rows: s.files[0].cut?.rows };
    rmSync(out, { recursive: true, force: true });
  }
  return { ...last, ms: median(times) };
}

const rows: string[] = [];
const estimate = (bytes: number, reqs: number) => (bytes / ((LINK_MBIT * 1e6) / 8) + (reqs * RTT_MS) / 1000).toFixed(1);
for (const [label, area] of [
  ['CH (its boxes)', countryArea('CH', renderer.countryBoxes('CH'))],
  ['JP (its boxes)', countryArea('JP', renderer.countryBoxes('JP'))],
  ['US (its boxes: mainland, Alaska, Hawaii, islands)', countryArea('US', renderer.countryBoxes('US'))],
  ['the whole file (`--overture-worldwide`)', undefined],
] as [string, Area | undefined][]) {
  const r = await measure(area);
  const share = ((r.bytes / world.length) * 100).toFixed(1);
  rows.push(`| ${label} | ${area?.boxes.length ?? '–'} | ${r.rows ?? 'all'} | ${formatBytes(r.bytes)} (${share} %) | ${r.requests} | ${r.ms.toFixed(0)} | ${estimate(r.bytes, r.requests)} |`);
  console.error(rows.at(-1));
}
server.close();
rmSync(work, { recursive: true, force: true });

writeSection(
  'fetch-cost',
  `## What one country of Overture costs to fetch (\`bench/fetch-cost.ts\`)

\`node --import tsx bench/fetch-cost.ts\`: \`data fetch --sources overture\` against a loopback bucket honouring \`Range\`,
serving one worldwide file of ${formatBytes(world.length)} in 100 row groups (the real Boulder sample copied to twenty places on every
continent, five row groups a copy: \`storemap-ingest overture-world\`). Median of ${RUNS} runs; the last column is what the same bytes
and requests would take over a ${LINK_MBIT} Mbit/s link with ${RTT_MS} ms round trips (sequential requests), an estimate, not a measurement.

| area | boxes | rows kept | bytes read (of the file) | requests | loopback, ms | at ${LINK_MBIT} Mbit/s, ${RTT_MS} ms RTT, s |
|---|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

The footer is read first (256 KiB, then the rest when it is larger: here 0.5 MB, since every one of 52 columns has statistics in each of
100 row groups); a country then costs the row groups its boxes meet. Overture writes its places sorted by space, so a real country's
row groups are adjacent and its share of the bytes is about its share of the world's places plus a row group or two at each
edge: for a release of several GB, a small country is tens of MB instead of the whole release.`,
);
