// A throwaway PostgreSQL cluster for the ledger benchmarks (scripts/postgres.sh: loopback only,
// no fsync), and the pids of its server processes, whose CPU the benchmarks add up.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from '../ts/paths.ts';

const SCRIPT = path.join(ROOT, 'scripts', 'postgres.sh');

export interface BenchPostgres {
  url: string;
  /** The postmaster's pid: every server process is it or one of its children. */
  postmaster: number;
  /** Stops the server and removes the cluster and its folder; safe to call twice. */
  stop(): void;
}

export function startPostgres(): BenchPostgres {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-bench-pg-'));
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      execFileSync('bash', [SCRIPT, 'stop', dir], { stdio: 'inherit' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    const out = execFileSync('bash', [SCRIPT, 'start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const url = out.trim().split('\n').pop() ?? '';
    if (!url.startsWith('postgres://')) throw new Error(`scripts/postgres.sh start printed no URL: ${out}`);
    const cluster = readFileSync(path.join(dir, 'cluster'), 'utf8').trim();
    const postmaster = Number(readFileSync(path.join(cluster, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { url, postmaster, stop };
  } catch (e) {
    stop();
    throw e;
  }
}

/** A process's state, parent and CPU ticks from /proc/<pid>/stat (the name may hold spaces). */
function stat(pid: number, file = `/proc/${pid}/stat`): { ppid: number; own: number; children: number } | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields 4 (ppid), 14-15 (utime, stime), 16-17 (cutime, cstime: children it has reaped).
  return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
}

const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU seconds a process has used (all its threads). */
export function cpuOf(pid: number): number {
  return (stat(pid)?.own ?? 0) / TICK;
}

/** CPU seconds of a process's main thread alone (its JavaScript thread, for node). */
export function cpuOfMainThread(pid: number): number {
  return (stat(pid, `/proc/${pid}/task/${pid}/stat`)?.own ?? 0) / TICK;
}

/** CPU seconds of a process and every child it has or had: the live ones' own time, plus what
 * the reaped ones left in the parent's cutime/cstime (a backend that exited still counts). */
export function cpuOfTree(root: number): number {
  const top = stat(root);
  if (!top) return 0;
  let ticks = top.own + top.children;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s && s.ppid === root) ticks += s.own;
  }
  return ticks / TICK;
}

/** Busy CPU seconds of the whole machine (all cores) from /proc/stat. */
export function machineBusy(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest is inside user already)
  const busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
  return busy / TICK;
}
