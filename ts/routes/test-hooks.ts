// Routes that exist only with STOREMAP_TEST_HOOKS=1, so tests can prove failure handling on
// the real server: a panic inside the addon must become 500 INTERNAL with the server still
// serving, and a slow task must hit the request time limit.
import type { Request, Response, Server } from 'restify';
import { ApiError, sendError, toApiError } from '../http/errors.ts';
import { panicForTest } from '../native.ts';
import type { ApiDeps } from '../server.ts';

export function mount(server: Server, deps: ApiDeps): void {
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
    const ms = Math.min(Number(new URL(req.url ?? '/', 'http://x').searchParams.get('ms') ?? 100) || 100, 10_000);
    let answered = false;
    const answer = (f: () => void) => {
      if (answered) return;
      answered = true;
      f();
    };
    const timer = setTimeout(() => answer(() => sendError(res, new ApiError('TIMEOUT'))), deps.config.requestTimeoutMs);
    try {
      await deps.pool.run(() => new Promise((r) => setTimeout(r, ms)));
      answer(() => res.json({ slept_ms: ms }));
    } catch (e) {
      answer(() => sendError(res, toApiError(e, deps.log)));
    } finally {
      clearTimeout(timer);
    }
  });
}
