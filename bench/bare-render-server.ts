// The render bench's HTTP peer: bare node:http around the same addon call the service makes
// (the body read and parsed, the render on the libuv pool, the PNG written), and nothing else:
// no router, key, validation, ledger or headers. What Node's HTTP and the socket cost an image
// on their own, for the service's figures to be read against.
//
//   fork(bench/bare-render-server.ts, [port, snapshot, referenceDir]), then send { req } (a
//   RenderRequest) over IPC; it answers "ready" once listening. Sent { req, alone }, it draws
//   with no HTTP instead (the addon's own rate in a fresh process) and answers the figures.
import http from 'node:http';
import { loadRenderer, loadStoreSync, render, type RenderRequest } from '../ts/native.ts';

const [port, snapshot, referenceDir] = process.argv.slice(2);
const store = loadStoreSync(snapshot);
const renderer = loadRenderer(referenceDir);
process.once('message', (m: { req: RenderRequest; alone?: { inFlight: number; ms: number } }) => {
  const { req } = m;
  if (m.alone) return void alone(req, m.alone.inFlight, m.alone.ms);
  const server = http.createServer((q, s) => {
    const chunks: Buffer[] = [];
    q.on('data', (c: Buffer) => chunks.push(c));
    q.on('end', () => {
      JSON.parse(Buffer.concat(chunks).toString());
      render(renderer, store, req).then(
        (out) => {
          s.writeHead(200, { 'content-type': 'image/png', 'content-length': out.body.length });
          s.end(out.body);
        },
        (e: unknown) => {
          s.writeHead(500);
          s.end(String(e));
        },
      );
    });
  });
  server.listen(Number(port), '127.0.0.1', () => process.send!('ready'));
});

/** The addon alone in this fresh process, with no HTTP: `inFlight` renders at once for `ms`
 * (after a second of warm-up); sends images/s and CPU per image (ms) back. */
async function alone(req: RenderRequest, inFlight: number, ms: number): Promise<void> {
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const run = async (forMs: number) => {
    let n = 0;
    const end = performance.now() + forMs;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < end) {
          await render(renderer, store, req);
          n++;
        }
      }),
    );
    return n;
  };
  await run(1_000);
  const [c0, t0] = [cpu(), performance.now()];
  const n = await run(ms);
  process.send!({ rate: (n * 1000) / (performance.now() - t0), cpu: (cpu() - c0) / n }, () => process.exit(0));
}
