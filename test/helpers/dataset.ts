// The deterministic test dataset (scale 0.02, seed 7) that `npm test` builds once and every
// test file reads. Built by scripts/test.sh; see BUILD_COMMAND to build it by hand.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadStoreSync, type Store } from '../../ts/native.ts';
import { ROOT } from '../../ts/paths.ts';
import { SNAPSHOT_FILE } from '../../ts/native.ts';
import type { z } from 'zod';
import type { Location as LocationSchema } from '../../ts/api/responses.ts';

export const DEFAULT_TEST_DATA_DIR = path.join(ROOT, 'data', 'generated', 'test-data');

export function buildCommand(dir: string): string {
  return `STOREMAP_DATA_DIR=${dir} node bin/storemap.js data build --scale 0.02 --seed 7 --as-of 2026-11-01T00:00:00Z`;
}

/** The test dataset's folder: $STOREMAP_TEST_DATA_DIR, else data/generated/test-data. */
export function testDataDir(): string {
  const dir = path.resolve(process.env.STOREMAP_TEST_DATA_DIR || DEFAULT_TEST_DATA_DIR);
  const snap = path.join(dir, SNAPSHOT_FILE);
  if (!existsSync(snap)) {
    throw new Error(`The test dataset is missing: ${snap} does not exist. Build it (from ${ROOT}) with:\n  ${buildCommand(dir)}\n(npm test builds it and sets STOREMAP_TEST_DATA_DIR.)`);
  }
  return dir;
}

export function testSnapshotPath(): string {
  return path.join(testDataDir(), SNAPSHOT_FILE);
}

let cached: Store | undefined;

/** The test dataset's Store, loaded once per test process. */
export function testStore(): Store {
  cached ??= loadStoreSync(testSnapshotPath());
  return cached;
}

/** A brand's reconciled rows in the test dataset (what images draw, what a query scans), read
 * through the addon. */
export function poolCountOf(name: string): number {
  const store = testStore();
  return store.brand(store.resolve(name)!.brand)!.poolCount;
}

/** A location as json (and geojson properties) serve it: the published schema's type, so a
 * test reads rows as the documents describe them, not as a copy of them. */
export type Location = z.infer<typeof LocationSchema>;

/** The test dataset's brand with the most verified rows, of at most `max` of them. */
export function largestBrand(max = Infinity): { index: number; name: string; locationCount: number } {
  const store = testStore();
  let best: { index: number; name: string; locationCount: number } | undefined;
  for (let i = 0; ; i++) {
    const b = store.brand(i);
    if (!b) break;
    if (b.locationCount <= max && b.locationCount > (best?.locationCount ?? -1)) best = b;
  }
  if (!best) throw new Error(`the test dataset has no brand with at most ${max} verified rows`);
  return { index: best.index, name: best.name, locationCount: best.locationCount };
}

/** A brand whose whole JSON answer costs 1 credit (at most 500 rows). */
export function oneCreditBrand(): string {
  const store = testStore();
  for (let i = 0; ; i++) {
    const b = store.brand(i);
    if (!b) throw new Error('the test dataset has no brand of 5 to 400 verified rows');
    if (b.locationCount >= 5 && b.locationCount <= 400) return b.name;
  }
}
