// The single executable's unpacker (ts/release/unpack.ts) on real files: a build unpacked into
// its cache folder with each file's mode, checked on the next start; a damaged asset and a
// damaged cache file refused with what to do; where the cache goes when the home cannot be
// written, and a temporary folder another user could have planted refused.
import test from 'ava';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { buildDigest, cacheBase, cacheRoot, unpack, UnpackError, type Manifest } from '../../ts/release/unpack.ts';

function temp(t: import('ava').ExecutionContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'storemap-unpack-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A small release: two files, their assets brotli-compressed as scripts/release.ts writes them. */
function release(): { manifest: Manifest; assets: Map<string, Buffer>; contents: Record<string, Buffer> } {
  const contents: Record<string, Buffer> = {
    'data/themes.json': Buffer.from(JSON.stringify({ light: { water: '#aad3df' } })),
    'native/bin/storemap-ingest': Buffer.from('#!/bin/sh\necho pipeline\n'),
  };
  const assets = new Map<string, Buffer>();
  const files = Object.entries(contents).map(([p, bytes], i) => {
    assets.set(`files/${i}`, brotliCompressSync(bytes));
    return { path: p, asset: `files/${i}`, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), mode: p.includes('/bin/') ? 0o755 : 0o644 };
  });
  return { manifest: { version: '9.9.9', commit: 'abc', node: 'v24.0.0', snapshotFormat: 2, build: buildDigest(files), files }, assets, contents };
}

test('unpacks every file with its bytes and mode into <version>-<build>, and a second start only checks', (t) => {
  const base = temp(t);
  const { manifest, assets, contents } = release();
  let reads = 0;
  const root = unpack(manifest, (k) => (reads++, assets.get(k)!), base);
  t.is(root, path.join(base, `9.9.9-${manifest.build}`));
  t.is(manifest.build.length, 12);
  for (const [p, bytes] of Object.entries(contents)) t.deepEqual(readFileSync(path.join(root, p)), bytes, p);
  t.is(statSync(path.join(root, 'native/bin/storemap-ingest')).mode & 0o777, 0o755);
  t.is(statSync(path.join(root, 'data/themes.json')).mode & 0o777, 0o644);
  t.is(reads, 2);
  t.is(unpack(manifest, (k) => (reads++, assets.get(k)!), base), root);
  t.is(reads, 2, 'the second start reads no asset');
  t.deepEqual(readdirSync(base), [path.basename(root)], 'no temporary folder left');
});

test('another build of the same version unpacks beside it, not over it', (t) => {
  const base = temp(t);
  const a = release();
  const b = release();
  b.manifest.files[0]!.sha256 = 'f'.repeat(64);
  b.manifest.build = buildDigest(b.manifest.files);
  t.not(cacheRoot(base, a.manifest), cacheRoot(base, b.manifest));
});

test('a damaged asset: DAMAGED_EXECUTABLE naming the file and SHA256SUMS, and no folder left', (t) => {
  const base = temp(t);
  const { manifest, assets } = release();
  const bad = Buffer.from(assets.get('files/0')!);
  bad[bad.length >> 1] ^= 0x10;
  const e = t.throws(() => unpack(manifest, (k) => (k === 'files/0' ? bad : assets.get(k)!), base), { instanceOf: UnpackError });
  t.is(e?.code, 'DAMAGED_EXECUTABLE');
  t.regex(e!.message, /embedded file data\/themes\.json cannot be unpacked/);
  t.regex(e!.message, /SHA256SUMS/);
  t.deepEqual(readdirSync(base), []);
});

test('a cache file changed or cut short after unpacking: DAMAGED_CACHE naming it and the folder to delete', (t) => {
  const base = temp(t);
  const { manifest, assets } = release();
  const root = unpack(manifest, (k) => assets.get(k)!, base);
  const file = path.join(root, 'data/themes.json');
  const bytes = readFileSync(file);
  bytes[3] ^= 0x01;
  writeFileSync(file, bytes);
  const flipped = t.throws(() => unpack(manifest, (k) => assets.get(k)!, base), { instanceOf: UnpackError });
  t.is(flipped?.code, 'DAMAGED_CACHE');
  t.true(flipped!.message.includes(file));
  t.true(flipped!.message.includes(`delete ${root} and start storemap again`));
  writeFileSync(file, bytes.subarray(0, 5));
  t.regex(t.throws(() => unpack(manifest, (k) => assets.get(k)!, base))!.message, /is 5 bytes, not \d+/);
  rmSync(root, { recursive: true });
  t.is(unpack(manifest, (k) => assets.get(k)!, base), root, 'deleting the folder mends it');
});

test('cacheBase: XDG_CACHE_HOME when absolute, else ~/.cache; a home that cannot be written falls back to a private temporary folder with a warning', (t) => {
  const dir = temp(t);
  t.deepEqual(cacheBase({ XDG_CACHE_HOME: path.join(dir, 'xdg') }, path.join(dir, 'home'), dir), { dir: path.join(dir, 'xdg', 'storemap') });
  t.deepEqual(cacheBase({ XDG_CACHE_HOME: 'relative/xdg' }, path.join(dir, 'home'), dir), { dir: path.join(dir, 'home', '.cache', 'storemap') });
  const fileHome = path.join(dir, 'home-is-a-file');
  writeFileSync(fileHome, '');
  const tmp = path.join(dir, 'tmp');
  mkdirSync(tmp);
  const fallback = cacheBase({}, fileHome, tmp);
  const uid = process.getuid!();
  t.is(fallback.dir, path.join(tmp, `storemap-${uid}`));
  t.regex(fallback.warning!, /cannot be written; unpacking into .* instead/);
  t.is(statSync(fallback.dir).mode & 0o777, 0o700);
});

test('cacheBase refuses a temporary folder others can write (planted for us), rather than load from it', (t) => {
  const dir = temp(t);
  const fileHome = path.join(dir, 'home-is-a-file');
  writeFileSync(fileHome, '');
  const planted = path.join(dir, `storemap-${process.getuid!()}`);
  mkdirSync(planted);
  chmodSync(planted, 0o777);
  const e = t.throws(() => cacheBase({}, fileHome, dir), { instanceOf: UnpackError });
  t.is(e?.code, 'NO_CACHE_FOLDER');
  t.regex(e!.message, /is not a private folder of this user's/);
  t.true(existsSync(planted));
});
