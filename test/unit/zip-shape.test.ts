// The zip structure check of downloads with no checksum, on zips another writer made: the real
// AllThePlaces sample, and Python's zipfile (a comment; exactly 65,535 entries, the most without
// ZIP64; more, which makes it write the ZIP64 end records).
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { zipProblem } from '../../ts/data/fetch/zip-shape.ts';
import { ROOT } from '../../ts/paths.ts';

const SAMPLE = ['test/fixtures/real/atp/output.zip', '../shared/realdata/atp/output.zip'].map((p) => path.join(ROOT, p)).find((p) => existsSync(p))!;

async function dir(t: ExecutionContext): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), 'storemap-zip-'));
  t.teardown(() => rm(d, { recursive: true, force: true }));
  return d;
}

async function problemOf(t: ExecutionContext, bytes: Buffer): Promise<string | undefined> {
  const file = path.join(await dir(t), 'x.zip');
  await writeFile(file, bytes);
  return zipProblem(file);
}

/** A zip written by Python's zipfile. */
function pythonZip(file: string, entries: number, comment: string): void {
  const script = [
    'import sys, zipfile',
    'with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_STORED, allowZip64=True) as z:',
    '    for i in range(int(sys.argv[2])): z.writestr(f"s/{i}.geojson", "{}")',
    '    z.comment = sys.argv[3].encode()',
  ].join('\n');
  execFileSync('python3', ['-c', script, file, String(entries), comment]);
}

test('the real sample passes; cut, padded, prefixed or foreign bytes do not', async (t) => {
  const zip = await readFile(SAMPLE);
  t.is(await zipProblem(SAMPLE), undefined);
  t.regex((await problemOf(t, zip.subarray(0, zip.length - 1)))!, /no end-of-central-directory record/);
  t.regex((await problemOf(t, zip.subarray(0, zip.length - 2000)))!, /no end-of-central-directory record/);
  t.regex((await problemOf(t, Buffer.concat([zip, Buffer.from('x')])))!, /no end-of-central-directory record/);
  t.regex((await problemOf(t, Buffer.concat([Buffer.from('x'), zip])))!, /central directory \(\d+ bytes from byte \d+\) should end at byte \d+/);
  // The directory cut out of the middle: the end record still there, pointing past it.
  const dirAt = zip.readUInt32LE(zip.length - 6);
  t.regex((await problemOf(t, Buffer.concat([zip.subarray(0, dirAt - 10), zip.subarray(dirAt)])))!, /should end at byte/);
  t.regex((await problemOf(t, Buffer.from('<html>Not Found</html>'.repeat(10))))!, /no end-of-central-directory record/);
  t.regex((await problemOf(t, Buffer.alloc(0)))!, /0 bytes, fewer than/);
});

test("Python's zips pass: a comment, and ZIP64 end records past 65,535 entries; a damaged ZIP64 locator does not", async (t) => {
  const d = await dir(t);
  const small = path.join(d, 'small.zip');
  pythonZip(small, 3, 'a comment, as a publisher may add');
  t.is(await zipProblem(small), undefined);

  const big = path.join(d, 'big.zip');
  pythonZip(big, 70_000, '');
  const bytes = await readFile(big);
  // Python wrote the ZIP64 records: the plain end record's entry count is 0xffff.
  t.is(bytes.readUInt16LE(bytes.length - 22 + 10), 0xffff);
  t.is(await zipProblem(big), undefined);
  const locatorAt = bytes.length - 22 - 20;
  t.is(bytes.readUInt32LE(locatorAt), 0x07064b50);
  const broken = Buffer.from(bytes);
  broken.writeUInt32LE(0, locatorAt);
  t.regex((await problemOf(t, broken))!, /asks for ZIP64 but no ZIP64 locator/);
  // ZIP64 records beside 32-bit fields that still hold true values, as Python writes them once
  // the directory starts past 2 GiB: the entry count set to 70,000's low 16 bits here.
  const unsaturated = Buffer.from(bytes);
  unsaturated.writeUInt16LE(70_000 & 0xffff, bytes.length - 22 + 8);
  unsaturated.writeUInt16LE(70_000 & 0xffff, bytes.length - 22 + 10);
  t.is(await problemOf(t, unsaturated), undefined);
  const misplaced = Buffer.from(bytes);
  misplaced.writeBigUInt64LE(misplaced.readBigUInt64LE(locatorAt + 8) + 1n, locatorAt + 8);
  t.regex((await problemOf(t, misplaced))!, /no ZIP64 end record at byte/);
});

test('65,535 entries, the most a zip holds without ZIP64, written by Python with the count field full and no ZIP64 records', async (t) => {
  const file = path.join(await dir(t), 'full.zip');
  pythonZip(file, 0xffff, '');
  const bytes = await readFile(file);
  t.is(bytes.readUInt16LE(bytes.length - 22 + 10), 0xffff);
  t.not(bytes.readUInt32LE(bytes.length - 22 - 20), 0x07064b50, 'no ZIP64 locator');
  t.is(await zipProblem(file), undefined);
});
