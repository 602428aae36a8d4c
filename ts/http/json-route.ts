// A GET handler whose result is a JSON body: one place that writes it, and that turns anything
// thrown into the contract's error body.
import type { Request, Response } from 'restify';
import type { ApiDeps } from './context.ts';
import { sendError, toApiError } from './errors.ts';
import { sendJson } from './send-json.ts';

/** Sends a JSON body, or the error any step threw (the handler may be async). */
export function jsonRoute(deps: ApiDeps, handler: (req: Request, res: Response) => unknown) {
  return async (req: Request, res: Response) => {
    try {
      sendJson(res, 200, await handler(req, res));
    } catch (e) {
      sendError(res, toApiError(e, deps.log));
    }
  };
}
