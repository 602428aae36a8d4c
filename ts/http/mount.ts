// Routes are mounted from OPERATIONS: the method and the path come from the list the docs are
// generated from, and the route modules give only handlers, by operation id. An operation
// without a handler, or a handler without an operation, stops the server at start instead of
// leaving a documented path unserved or a served path undocumented.
import type { RequestHandler, Server } from 'restify';
import { isCharged, OPERATIONS, type OperationId } from '../api/operations.ts';

/** A route module's handlers: the steps of each operation it serves, in order. */
export type Handlers = Partial<Record<OperationId, RequestHandler[]>>;

export function mountOperations(server: Server, ...modules: Handlers[]): void {
  const handlers: Handlers = {};
  for (const m of modules) {
    for (const [id, steps] of Object.entries(m) as [OperationId, RequestHandler[]][]) {
      if (handlers[id]) throw new Error(`operation ${id} has handlers in two route modules`);
      if (!OPERATIONS.some((o) => o.id === id)) throw new Error(`handlers for ${id}, which OPERATIONS does not list`);
      handlers[id] = steps;
    }
  }
  for (const op of OPERATIONS) {
    const steps = handlers[op.id];
    if (!steps?.length) throw new Error(`operation ${op.id} (${op.method.toUpperCase()} ${op.path}) has no handler`);
    server[op.method === 'get' ? 'get' : 'post']({ name: op.id, path: op.path }, ...steps);
    // HEAD where GET is free (uptime monitors ask the status endpoint with it; a key's usage
    // costs nothing either): the same steps, and Node sends the headers without the body. A
    // charged GET answers HEAD 405, since a charge for an answer nobody receives is no service.
    if (op.method === 'get' && !isCharged(op)) server.head({ name: `${op.id}Head`, path: op.path }, ...steps);
    // A CORS-open operation answers a browser's preflight too.
    if (op.success.headers.some((h) => h.name === 'Access-Control-Allow-Origin')) {
      server.opts({ name: `${op.id}Preflight`, path: op.path }, (_req, res, next) => {
        res.writeHead(204, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': op.method === 'get' ? 'GET, HEAD, OPTIONS' : 'POST, OPTIONS',
          'access-control-allow-headers': '*',
          'access-control-max-age': '86400',
        });
        res.end();
        next(false);
      });
    }
  }
}
