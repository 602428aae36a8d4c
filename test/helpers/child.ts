// `node bin/storemap.js serve` as a child process on 127.0.0.1: for what only a separate
// process can show (several servers sharing one database file, a crash that must not take
// the test runner with it). Stopped with SIGTERM when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { ROOT } from '../../ts/paths.ts';
import { SNAPSHOT_FILE } from '../../ts/native.ts';
import { CLI } from './cli.ts';
import { testSnapshotPath } from './dataset.ts';

/** A port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A temporary data folder holding a copy of the test snapshot; removed when the test ends. */
export async function snapshotDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-child-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await copyFile(testSnapshotPath(), path.join(dir, SNAPSHOT_FILE));
  return dir;
}

/** Tests send many requests from one address; the per-address limit is tested on its own. */
export const UNTHROTTLED = { STOREMAP_FREE_RATE_LIMIT: '1000000', STOREMAP_FREE_RATE_BURST: '1000000' };

export interface ChildServer {
  base: string;
  child: ChildProcess;
  /** Resolves when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
  output(): string;
  /** SIGTERM, then the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startServe(
  t: ExecutionContext,
  opts: { dataDir: string; dbPath: string; env?: Record<string, string> },
): Promise<ChildServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...UNTHROTTLED, HOST: '127.0.0.1', PORT: String(port), STOREMAP_DATA_DIR: opts.dataDir, STOREMAP_DB: opts.dbPath, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    }),
  );
  const stop = async (graceMs = 8_000) => {
    if (running) child.kill('SIGTERM');
    const timer = setTimeout(() => running && child.kill('SIGKILL'), graceMs);
    const r = await exited;
    clearTimeout(timer);
    return r;
  };
  t.teardown(() => stop().then(() => undefined));

  const base = `http://127.0.0.1:${port}`;
  // Ready when it answers, failed when it exits: no wall-clock deadline of our own, since a
  // child started on a loaded 2-core machine can take long to boot (ava's timeout still bounds
  // a child that never gets there).
  for (;;) {
    if (!running) throw new Error(`storemap serve exited before answering /healthz:\n${out}`);
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) {
        await res.arrayBuffer();
        break;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { base, child, exited, alive: () => running, output: () => out, stop };
}
