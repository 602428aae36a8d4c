// Routes are mounted from OPERATIONS: the method and the path come from the list the docs are
// generated from, and the route modules give only handlers, by operation id. An operation
// without a handler, or a handler without an operation, stops the server at start instead of
// leaving a documented path unserved or a served path undocumented.
import type { RequestHandler, Server } from 'restify';
import { OPERATIONS, type OperationId } from '../api/operations.ts';

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
  }
}
