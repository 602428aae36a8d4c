// The one place that writes an error response: the body is errorBody's, the status the
// registry's (ts/errors.ts).
import type { Response } from 'restify';
import { errorBody, type ApiError } from '../errors.ts';

export function sendError(res: Response, e: ApiError): void {
  for (const [k, v] of Object.entries(e.extra.headers ?? {})) res.header(k, v);
  // A body too large is left unread (http/body.ts): the connection cannot carry another request.
  if (e.code === 'PAYLOAD_TOO_LARGE') res.header('connection', 'close');
  res.status(e.status);
  res.header('content-type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(errorBody(e)));
}
