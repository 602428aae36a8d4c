// The data folder's reference data made by several processes at once (nodes, or tests, starting
// on one data folder): each must find a whole folder, never a file another one is writing.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ROOT } from '../ts/paths.ts';
import { REFERENCE_FORMAT } from '../ts/data/reference.ts';

/** In a process of its own: ensureReference on `dataDir`, every file it lists read whole, and
 * what it found printed. */
const CHILD = `
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ensureReference } from './ts/data/ingest.ts';
const dir = await ensureReference(process.argv[1]);
const meta = JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8'));
for (const f of ['countries.geojson', 'us_states.geojson']) {
  const n = JSON.parse(readFileSync(path.join(dir, f), 'utf8')).features.length;
  if (n !== meta.counts[f]) throw new Error(f + ': ' + n + ' features, meta.json says ' + meta.counts[f]);
}
for (const f of ['cities.csv', 'subdivisions.csv', 'zips.csv']) {
  const lines = readFileSync(path.join(dir, f), 'utf8').trimEnd().split('\\n').length;
  if (lines < 2) throw new Error(f + ': ' + lines + ' lines');
}
// What this process found: each file's inode, size and modification time.
const seen = {};
for (const f of readdirSync(dir).sort()) { const st = statSync(path.join(dir, f)); seen[f] = [st.ino, st.size, st.mtimeMs]; }
console.log(JSON.stringify(seen));
`;

function run(dataDir: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD, dataDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

/** Each file of the folder: inode, size, modification time. */
async function filesOf(dir: string): Promise<Record<string, [number, number, number]>> {
  const out: Record<string, [number, number, number]> = {};
  for (const f of (await readdir(dir)).sort()) {
    const st = await stat(path.join(dir, f));
    out[f] = [st.ino, st.size, st.mtimeMs];
  }
  return out;
}

/** Four processes on `dataDir` started 0.3 s apart: each must go on with the folder that is
 * still there after all of them. */
async function race(t: import('ava').ExecutionContext, dataDir: string): Promise<void> {
  const results = await Promise.all(
    [0, 1, 2, 3].map(async (i) => {
      await new Promise((r) => setTimeout(r, i * 300));
      return run(dataDir);
    }),
  );
  const final = await filesOf(path.join(dataDir, 'reference'));
  t.true(Object.keys(final).length >= 8, Object.keys(final).join(' '));
  for (const r of results) {
    t.is(r.code, 0, r.out);
    // The folder each process went on with is the one still there: nobody wrote over it.
    if (r.code === 0) t.deepEqual(JSON.parse(r.out), final);
  }
  t.deepEqual(await readdir(dataDir), ['reference']);
  // And once there, the next start uses it as it is.
  const again = await run(dataDir);
  t.deepEqual(JSON.parse(again.out), final);
}

test("four processes making one data folder's reference data at once each read a whole folder that nobody changes after, and leave no temporary folders", async (t) => {
  t.timeout(240_000);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'storemap-reference-race-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  await race(t, dataDir);
});

test('the same over an older format\'s folder (an upgrade, several nodes restarting at once): it is replaced once, whole', async (t) => {
  t.timeout(240_000);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'storemap-reference-upgrade-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  await mkdir(path.join(dataDir, 'reference'));
  await writeFile(path.join(dataDir, 'reference', 'meta.json'), JSON.stringify({ format: REFERENCE_FORMAT - 1 }));
  await writeFile(path.join(dataDir, 'reference', 'countries.geojson'), '');
  await race(t, dataDir);
});
