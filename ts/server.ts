// The HTTP service. createServer takes everything it needs as arguments; nothing global.
// This foundation serves a health route; the API routes mount here in later steps.
import restify from 'restify';
import type { Config } from './config.ts';
import type { StoreHolder } from './store-holder.ts';

export interface Deps {
  config: Config;
  store: StoreHolder;
  log?: (line: string) => void;
}

export function createServer(deps: Deps): restify.Server {
  const server = restify.createServer({ name: 'storemap', handleUncaughtExceptions: false });
  server.get('/healthz', (_req, res, next) => {
    const info = deps.store.current.info() as { snapshot_version: string; rows: number; synthetic: boolean };
    res.json({ status: 'ok', snapshot_version: info.snapshot_version, rows: info.rows, synthetic: info.synthetic });
    next();
  });
  return server;
}

/** Listens, and resolves with the bound address (port 0 picks a free port). */
export function listen(server: restify.Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.url));
  });
}
