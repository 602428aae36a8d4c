// `node bin/storemap.js serve` as a child process on 127.0.0.1: for what only a separate
// process can show (several servers sharing one database file, a crash that must not take
// the test runner with it). Stopped with SIGTERM when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import { ROOT } from '../../ts/paths.ts';
import { SNAPSHOT_FILE } from '../../ts/native.ts';
import { CLI } from './cli.ts';
import { testSnapshotPath } from './dataset.ts';

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
  opts: {
    dataDir: string;
    dbPath: string;
    env?: Record<string, string>;
    /** The program and its first arguments: the checkout's CLI unless given (a release executable). */
    command?: string[];
    cwd?: string;
    /** The environment the child starts from (this process's unless given). */
    baseEnv?: NodeJS.ProcessEnv;
  },
): Promise<ChildServer> {
  const [program, ...args] = opts.command ?? [process.execPath, CLI];
  // Port 0: the child binds a port of its own and says which (a port found free beforehand can
  // be taken by another test's server before the child binds it).
  const child = spawn(program!, [...args, 'serve'], {
    cwd: opts.cwd ?? ROOT,
    env: { ...(opts.baseEnv ?? process.env), ...UNTHROTTLED, HOST: '127.0.0.1', PORT: '0', STOREMAP_DATA_DIR: opts.dataDir, STOREMAP_DB: opts.dbPath, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // The URL of the "storemap listening on <url>" line `serve` prints once it listens.
  let announced: (url: string) => void = () => {};
  const listening = new Promise<string>((resolve) => (announced = resolve));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /storemap listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
    if (m) announced(m[1]);
  });
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

  // Ready when it says where it listens, failed when it exits first: no wall-clock deadline of
  // our own, since a child started on a loaded 2-core machine can take long to boot (ava's
  // timeout still bounds a child that never gets there).
  const base = await Promise.race([listening, exited.then(() => Promise.reject(new Error(`storemap serve exited before listening:\n${out}`)))]);
  const res = await fetch(`${base}/healthz`);
  if (!res.ok) throw new Error(`storemap serve at ${base} answered /healthz ${res.status}:\n${out}`);
  await res.arrayBuffer();
  return { base, child, exited, alive: () => running, output: () => out, stop };
}
