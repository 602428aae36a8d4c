// Content-Encoding: deflate as clients send it: the zlib format the name means, or the bare
// deflate data some send under it.
import { Transform } from 'node:stream';
import { createInflate, createInflateRaw } from 'node:zlib';

/** Whether two bytes open a zlib stream (RFC 1950 §2.2): compression method 8 with a window of
 * at most 32 KiB, and a check value making the pair a multiple of 31. A bare deflate stream
 * (RFC 1951 §3.2.3) whose low three bits are zero opens with a stored block, whose next five
 * bits are padding that encoders write as zero: it cannot have bit 3 set, so it never passes. */
export function isZlibHeader(b0: number, b1: number): boolean {
  return (b0 & 0x0f) === 8 && b0 >> 4 <= 7 && ((b0 << 8) | b1) % 31 === 0;
}

/** Content-Encoding: deflate is the zlib format (RFC 9110 §8.4.1.2), but some clients send the
 * bare deflate data (RFC 1951) under that name: .NET's DeflateStream and Go's compress/flate
 * write it, and browsers read either in responses. The first two bytes tell which; the stream
 * is then handed to the matching inflater. */
export function createDeflateDecoder(): Transform {
  let head = Buffer.alloc(0);
  let inner: Transform | undefined;
  const start = (outer: Transform): Transform => {
    const chosen = head.length >= 2 && isZlibHeader(head[0]!, head[1]!) ? createInflate() : createInflateRaw();
    chosen.on('data', (chunk: Buffer) => outer.push(chunk));
    chosen.on('error', (e) => outer.destroy(e));
    inner = chosen;
    return chosen;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (!inner) {
        head = Buffer.concat([head, chunk]);
        if (head.length < 2) return done();
        chunk = head;
        start(this);
      }
      // Errors arrive through 'error' above; the callback only paces the input.
      inner!.write(chunk, () => done());
    },
    flush(done) {
      const last = inner ?? start(this);
      // A body under two bytes: the inflater says what is wrong with it.
      if (head.length < 2) last.write(head);
      last.once('end', () => done());
      last.end();
    },
    destroy(err, done) {
      inner?.destroy();
      done(err);
    },
  });
}
