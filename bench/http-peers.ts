// What the HTTP benchmarks share: free ports, waiting for a server, storemap and the bare
// node:http peer started as child processes, autocannon runs.
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT, serveNodeFlags } from '../ts/paths.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

/** `storemap serve` in a child process on `port`, with `npm start`'s Node flags (what an operator
 * runs) and any extra ones; resolves once /healthz answers. */
export async function startStoremap(port: number, env: Record<string, string>, execArgv: string[] = []): Promise<ChildProcess> {
  const child = fork(path.join(ROOT, 'bin', 'storemap.js'), ['serve'], {
    env: { ...process.env, STOREMAP_RATE_LIMIT: '1000000', STOREMAP_RATE_BURST: '1000000', ...env, PORT: String(port) },
    execArgv: [...serveNodeFlags(), ...execArgv],
    stdio: 'ignore',
  });
  await waitFor(`http://127.0.0.1:${port}/healthz`);
  return child;
}

/** bench/bare-server.mjs: node:http answering every request with `body`. */
export async function startBare(port: number, body: Buffer): Promise<ChildProcess> {
  const child = fork(path.join(ROOT, 'bench', 'bare-server.mjs'), [String(port)], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  child.send(body.toString('base64'));
  await waitFor(`http://127.0.0.1:${port}/`);
  return child;
}

export function cannon(url: string, opts: Partial<autocannon.Options>): Promise<autocannon.Result> {
  return autocannon({ url, connections: 20, duration: 10, ...opts });
}

/** `cannon` in a child process (bench/cannon-child.mjs): for a load running beside a client
 * whose own latency is measured, which would otherwise wait for the load's answers to be read. */
export async function cannonApart(url: string, opts: Partial<autocannon.Options>): Promise<autocannon.Result> {
  return (await cannonApartCpu(url, opts)).result;
}

/** `cannonApart`, with the CPU its process took (ms). */
export function cannonApartCpu(url: string, opts: Partial<autocannon.Options>): Promise<{ result: autocannon.Result; cpuMs: number }> {
  const child = fork(path.join(ROOT, 'bench', 'cannon-child.mjs'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { result?: autocannon.Result; cpuMs?: number; error?: string }) => (m.result ? resolve({ result: m.result, cpuMs: m.cpuMs ?? 0 }) : reject(new Error(m.error))));
    child.once('exit', (code) => reject(new Error(`autocannon's process exited (${code}) without a result`)));
    child.send({ url, connections: 20, duration: 10, ...opts });
  });
}

/** Stops a child and waits for it to exit (a CPU profile is written at exit). */
export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
