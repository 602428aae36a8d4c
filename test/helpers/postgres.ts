// A throwaway PostgreSQL cluster on 127.0.0.1 for one test file (scripts/postgres.sh: Debian's
// server, installed when missing), stopped and removed when the test ends.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { ROOT } from '../../ts/paths.ts';

const run = promisify(execFile);
const SCRIPT = path.join(ROOT, 'scripts', 'postgres.sh');

export interface TestPostgres {
  url: string;
  /** Stops the server (the folder stays until the test ends), as an outage would. */
  stop(): Promise<void>;
  /** Stops the server and keeps its data; `resume` starts it again on the same port. */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

export async function startPostgres(t: ExecutionContext): Promise<TestPostgres> {
  const dir = await mkdtemp(path.join(tmpdir(), 'storemap-pgtest-'));
  const stop = async () => {
    await run('bash', [SCRIPT, 'stop', dir]);
  };
  t.teardown(async () => {
    await stop();
    await rm(dir, { recursive: true, force: true });
  });
  const { stdout } = await run('bash', [SCRIPT, 'start', dir]);
  const url = stdout.trim().split('\n').pop() ?? '';
  if (!url.startsWith('postgres://')) throw new Error(`scripts/postgres.sh start printed no URL: ${stdout}`);
  const pause = async () => {
    await run('bash', [SCRIPT, 'pause', dir]);
  };
  const resume = async () => {
    await run('bash', [SCRIPT, 'resume', dir]);
  };
  return { url, stop, pause, resume };
}
