// Routes that exist only with STOREMAP_TEST_HOOKS=1, so tests can prove failure handling on
// the real server: a panic inside the addon must become 500 INTERNAL with the server still
// serving, a slow task must hit the request time limit, and what the process keeps alive is
// measured after a full garbage collection (resident memory also holds garbage not yet
// collected and what the allocator kept, neither of which the server decides).
import type { Request, Response, Server } from 'restify';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ApiError } from '../api/errors.ts';
import { sendError, toApiError } from '../http/errors.ts';
import { panicForTest } from '../native.ts';
import type { ApiDeps } from '../http/context.ts';

/** Slow tasks that wait for the test to open their gate instead of a timer (a timer races a
 * loaded machine); bounded so a forgotten gate cannot hang a run. */
const gates = new Map<string, () => void>();
const GATE_LIMIT_MS = 30_000;

export function mount(server: Server, deps: ApiDeps): void {
  // How many heavy tasks run and wait: a test waits for a state instead of sleeping.
  server.get('/api/v1/__test/pool', async (_req: Request, res: Response) => {
    res.json(deps.pool.depth);
  });
  // The process's memory after a full collection, and the bytes the server counts as unsent.
  server.get('/api/v1/__test/memory', async (_req: Request, res: Response) => {
    collectGarbage();
    const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
    res.json({ pending_response_bytes: deps.pending.bytes, rss, heapUsed, external, arrayBuffers });
  });
  server.post('/api/v1/__test/open', async (req: Request, res: Response) => {
    const gate = new URL(req.url ?? '/', 'http://x').searchParams.get('gate') ?? '';
    const open = gates.get(gate);
    gates.delete(gate);
    open?.();
    res.json({ opened: open !== undefined });
  });
  server.post('/api/v1/__test/panic', async (_req: Request, res: Response) => {
    try {
      await deps.pool.run(() => panicForTest(true));
      res.json({ panicked: false });
    } catch (e) {
      const err = e instanceof ApiError ? e : e instanceof Error && (e as { code?: string }).code === 'INTERNAL' ? new ApiError('INTERNAL') : toApiError(e, deps.log);
      sendError(res, err);
    }
  });
  server.post('/api/v1/__test/slow', async (req: Request, res: Response) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    const ms = Math.min(Number(params.get('ms') ?? 100) || 100, 10_000);
    const gate = params.get('gate');
    // A pool owner, as a key would be one: fair-share tests hold one owner's share.
    const owner = params.get('owner') ?? undefined;
    let answered = false;
    const answer = (f: () => void) => {
      if (answered) return;
      answered = true;
      f();
    };
    const timer = setTimeout(() => answer(() => sendError(res, new ApiError('TIMEOUT'))), deps.config.requestTimeoutMs);
    try {
      await deps.pool.run(
        () =>
          new Promise<void>((r) => {
            if (gate === null) return void setTimeout(r, ms);
            const limit = setTimeout(r, GATE_LIMIT_MS);
            gates.set(gate, () => {
              clearTimeout(limit);
              r();
            });
          }),
        { owner },
      );
      answer(() => res.json({ slept_ms: ms }));
    } catch (e) {
      answer(() => sendError(res, toApiError(e, deps.log)));
    } finally {
      clearTimeout(timer);
    }
  });
}

/** V8's full collection without starting the process with --expose-gc (npm start's flags do not
 * carry it): the flag set at run time exposes `gc` to contexts made after it. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
