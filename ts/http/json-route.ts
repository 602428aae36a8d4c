// A GET handler whose result is a JSON body: one place that writes it, and that turns anything
// thrown into the contract's error body.
import type { Request, Response } from 'restify';
import type { ApiDeps } from './context.ts';
import { sendError, toApiError } from './errors.ts';

/** Sends a JSON body, or the error any step threw (the handler may be async). */
export function jsonRoute(deps: ApiDeps, handler: (req: Request, res: Response) => unknown) {
  return async (req: Request, res: Response) => {
    try {
      const body = await handler(req, res);
      const json = JSON.stringify(body);
      res.status(200);
      res.header('content-type', 'application/json; charset=utf-8');
      // Set here, not left to Node: a HEAD's answer carries it too (Node leaves it out where
      // it does not send the body).
      res.header('content-length', String(Buffer.byteLength(json)));
      res.end(json);
    } catch (e) {
      sendError(res, toApiError(e, deps.log));
    }
  };
}
