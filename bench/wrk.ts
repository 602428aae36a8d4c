// wrk (https://github.com/wg/wrk, Debian's `wrk` package) as the load generator where it is
// installed: a C client that reads a 330 KB image answer for a small fraction of the CPU that
// autocannon takes (about 0.05 of a core against 0.9 at 500 images/s here), so on a 2-core
// machine the server keeps its share of the cores. Optional: benchmarks fall back to autocannon.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Whether `wrk` is on PATH. */
export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

export interface LoadResult {
  /** Answers per second over the run. */
  rps: number;
  /** Answers with a 2xx status. */
  ok: number;
  p50: number;
  p99: number;
  /** Non-2xx answers, socket errors and timeouts. */
  bad: number;
  /** CPU the load generator took, ms. */
  cpuMs: number;
}

export interface LoadOptions {
  method: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Seconds. */
  duration: number;
}

/** A Lua string literal. */
const lua = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\0/g, '\\0')}"`;

function fail(message: string): never {
  throw new Error(message);
}

/** Parses wrk's latency figures ("12.34ms", "1.2s", "850.00us") as ms. */
function ms(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!m) throw new Error(`wrk latency "${text}"`);
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
}

/** One wrk run (one thread, `connections` keep-alive connections); its CPU read from the shell
 * that waited for it (children's user and system time in /proc/PID/stat). */
export function wrk(url: string, o: LoadOptions): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-wrk-'));
  const script = path.join(dir, 'request.lua');
  writeFileSync(script, [`wrk.method = ${lua(o.method)}`, `wrk.body = ${lua(o.body)}`, ...Object.entries(o.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`)].join('\n') + '\n');
  const shell = `wrk -t1 -c${o.connections} -d${o.duration}s --latency -s "$1" "$2"; rc=$?; read -r stat < /proc/$$/stat; echo "stat: $stat"; exit $rc`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', shell, 'wrk', script, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      try {
        if (code !== 0) throw new Error(`wrk exited with ${code}: ${out}`);
        const need = (re: RegExp) => re.exec(out)?.[1] ?? fail(`no ${re.source} in wrk's output: ${out}`);
        const total = Number(need(/(\d+) requests in/));
        const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
        const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
        const errors = sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
        // Fields 16 and 17 of stat (after the command's closing parenthesis: 14 and 15): the
        // waited-for children's user and system time, in clock ticks of 10 ms.
        const fields = need(/stat: .*\) (.*)/).split(' ');
        resolve({
          rps: Number(need(/Requests\/sec:\s+([\d.]+)/)),
          ok: total - non2xx,
          p50: ms(need(/^\s+50%\s+(\S+)/m)),
          p99: ms(need(/^\s+99%\s+(\S+)/m)),
          bad: non2xx + errors,
          cpuMs: (Number(fields[13]) + Number(fields[14])) * 10,
        });
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}
