// Content-Encoding: deflate in either form: the check that tells a zlib stream from bare
// deflate data, against what Node's zlib (the reference encoder) writes at every level and
// window size, and the decoder fed both in pieces of every size.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { deflateRawSync, deflateSync } from 'node:zlib';
import { createDeflateDecoder, isZlibHeader } from '../../ts/http/deflate.ts';

const inputs = [Buffer.alloc(0), Buffer.from('{"brand":"Tesla"}'), Buffer.alloc(70_000, 'a'), randomBytes(300), randomBytes(70_000)];

test('every zlib stream Node writes is recognised, and no bare deflate stream it writes is', (t) => {
  let checked = 0;
  for (const input of inputs) {
    for (let level = 0; level <= 9; level++) {
      for (let windowBits = 9; windowBits <= 15; windowBits++) {
        const wrapped = deflateSync(input, { level, windowBits });
        const raw = deflateRawSync(input, { level, windowBits });
        t.true(isZlibHeader(wrapped[0]!, wrapped[1]!), `zlib level ${level} window ${windowBits}: ${wrapped.subarray(0, 2).toString('hex')}`);
        t.false(isZlibHeader(raw[0]!, raw[1]!), `raw level ${level} window ${windowBits}: ${raw.subarray(0, 2).toString('hex')}`);
        checked++;
      }
    }
  }
  t.is(checked, inputs.length * 10 * 7);
});

test('the header fields: method 8 only, window at most 32 KiB, the check value mod 31', (t) => {
  // RFC 1950 §2.2 example values: 0x78 0x9c is method 8, 32 KiB window, default level.
  t.true(isZlibHeader(0x78, 0x9c));
  t.false(isZlibHeader(0x78, 0x9d), 'check value off by one');
  t.false(isZlibHeader(0x79, 0x18), 'method 9');
  t.true((0x79 * 256 + 0x18) % 31 === 0, 'the pair above passes the check value, so only the method refuses it');
  t.false(isZlibHeader(0x88, 0x1c), 'a 64 KiB window (CINFO 8) is not allowed');
  t.true((0x88 * 256 + 0x1c) % 31 === 0, 'the pair above passes the check value, so only the window refuses it');
});

const decode = (pieces: Buffer[]) => buffer(Readable.from(pieces).pipe(createDeflateDecoder()));
const inPieces = (b: Buffer, size: number) => Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size));

test('the decoder gives back the input from either form, whole or in pieces down to one byte', async (t) => {
  for (const input of inputs) {
    for (const encoded of [deflateSync(input), deflateRawSync(input)]) {
      // One-byte pieces of a long stream only cost time: the first bytes are what is split.
      for (const size of encoded.length > 4096 ? [1000, encoded.length] : [1, 2, 3, 1000, encoded.length || 1]) {
        t.deepEqual(await decode(inPieces(encoded, size)), input, `${encoded.subarray(0, 2).toString('hex')} in pieces of ${size}`);
      }
    }
  }
});

test('the decoder fails, not hangs, on nothing, one byte, and data that is neither form', async (t) => {
  await t.throwsAsync(decode([]));
  await t.throwsAsync(decode([Buffer.from([0x78])]));
  await t.throwsAsync(decode([Buffer.from('not deflate at all')]));
  // A zlib stream cut short, and one whose checksum is wrong.
  const whole = deflateSync(Buffer.from('{"brand":"Tesla"}'));
  await t.throwsAsync(decode([whole.subarray(0, whole.length - 6)]));
  const badSum = Buffer.from(whole);
  badSum[badSum.length - 1]! ^= 0xff;
  await t.throwsAsync(decode([badSum]));
});
