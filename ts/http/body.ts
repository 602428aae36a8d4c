// Reads a JSON request body with the size limit enforced while reading (and, for gzip or
// deflate bodies, on the decompressed bytes, so a small compressed bomb cannot expand past it).
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { ApiError } from '../api/errors.ts';
import { invalidRequest } from '../api/schemas.ts';
import { createDeflateDecoder } from './deflate.ts';

/** A POST takes its fields in the body: a query string's (`?format=csv`) would be ignored
 * while the answer it did not shape is charged. Called after the body is read and its format
 * recorded for usage, as every other 400 of a charged endpoint is. */
export function refuseQueryString(req: IncomingMessage): void {
  if (!req.url?.includes('?')) return;
  const query = [...new Set(new URL(req.url, 'http://host').searchParams.keys())];
  if (query.length) throw invalidRequest('query', query.map((name) => ({ field: name.slice(0, 40), message: 'this endpoint takes its fields in the JSON body, not the query string' })));
}

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const [type, ...params] = (req.headers['content-type'] ?? '').split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') throw new ApiError('UNSUPPORTED_MEDIA_TYPE');
  // JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset would be read wrong.
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"(.*)"$/, '$1');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `The request body must be application/json in UTF-8, not charset ${JSON.stringify(charset.slice(0, 40))}.`);
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.pause();
    throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
  }

  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  let decoder: Transform | undefined;
  // RFC 9110 §8.4.1.3: x-gzip is gzip.
  if (encoding === 'gzip' || encoding === 'x-gzip') decoder = createGunzip();
  else if (encoding === 'deflate') decoder = createDeflateDecoder();
  else if (encoding !== 'identity') throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding.slice(0, 40)} is not supported (gzip, deflate).`);
  const stream: NodeJS.ReadableStream = decoder ? req.pipe(decoder) : req;

  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          if (size > limit) return done(new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`));
          chunks.push(chunk);
          done();
        },
      });
      stream.on('error', (e) => reject(e instanceof ApiError ? e : new ApiError('INVALID_JSON', `The request body could not be read: ${e.message}`)));
      counter.on('error', reject);
      counter.on('finish', resolve);
      stream.pipe(counter);
    });
  } catch (e) {
    req.unpipe();
    // A decoder stops where it is: the rest of a bomb's chunk is not inflated into memory
    // nobody reads.
    decoder?.destroy();
    if (e instanceof ApiError && e.code === 'PAYLOAD_TOO_LARGE') {
      // The rest of a body too large is not read: the answer says Connection: close
      // (http/errors.ts) and the socket ends after it, instead of draining megabytes first.
      req.pause();
    } else {
      // Stop reading a body we are refusing; the response still goes out.
      req.resume();
    }
    throw e;
  }
  // JSON is UTF-8 (RFC 8259 §8.1): bytes that are not are refused, not read as U+FFFD (a name
  // would then match with the bad byte dropped). A leading byte order mark is skipped.
  let text: string;
  try {
    text = UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new ApiError('INVALID_JSON', 'The request body is not valid UTF-8.');
  }
  if (text.trim() === '') throw new ApiError('INVALID_JSON', 'The request body is empty.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ApiError('INVALID_JSON', `The request body is not valid JSON: ${(e as Error).message}`);
  }
  // An escape can still make half a character (RFC 8259 §8.2: "\ud800"), which no text can
  // hold; looked for only where the body has such an escape at all.
  if (SURROGATE_ESCAPE.test(text) && !wellFormed(value)) throw new ApiError('INVALID_JSON', 'The request body holds a lone UTF-16 surrogate (an escape from \\ud800 to \\udfff without its pair).');
  return value;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /\p{Cs}/u;

/** Whether every string in a parsed JSON value, keys too, is whole UTF-16 text. A loop, not
 * recursion (64 KiB of brackets nest 32,768 deep), and no spread of an array into arguments
 * (a body of 16 MiB, the largest limit, holds millions of elements). */
function wellFormed(value: unknown): boolean {
  const todo: unknown[] = [value];
  while (todo.length) {
    const v = todo.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return false;
    } else if (Array.isArray(v)) {
      for (const x of v) todo.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return false;
        todo.push(x);
      }
    }
  }
  return true;
}
