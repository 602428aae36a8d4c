// The one place that writes an error response (the body is errorBody's, the status the
// registry's, ts/api/errors.ts), and the one that turns anything thrown into an ApiError.
import type { Response } from 'restify';
import { ApiError, errorBody } from '../api/errors.ts';
import { isBusy, isUnavailable, isUnwritable } from '../db/faults.ts';
import { sendJson } from './send-json.ts';

export function sendError(res: Response, e: ApiError): void {
  for (const [k, v] of Object.entries(e.extra.headers ?? {})) res.header(k, v);
  // A body too large is left unread (http/body.ts): the connection cannot carry another request.
  if (e.code === 'PAYLOAD_TOO_LARGE') res.header('connection', 'close');
  sendJson(res, e.status, errorBody(e));
}

/** Any thrown value as an ApiError; unknown ones become INTERNAL and are logged. */
export function toApiError(e: unknown, log: (line: string) => void = console.error): ApiError {
  if (e instanceof ApiError) return e;
  // The ledger's faults are the service's state, not bugs: the client may retry.
  if (isBusy(e)) return new ApiError('SERVICE_BUSY', 'The ledger is busy; retry in a second.', { headers: { 'Retry-After': '1' } });
  if (isUnavailable(e)) {
    log(`ledger unreachable: ${e instanceof Error ? e.message : String(e)}`);
    return new ApiError('SERVICE_BUSY', 'The ledger cannot be reached right now; retry shortly.', { headers: { 'Retry-After': '5' } });
  }
  if (isUnwritable(e)) {
    log(`ledger error: ${e instanceof Error ? e.message : String(e)}`);
    return new ApiError('SERVICE_BUSY', 'The ledger cannot record requests right now; retry later.', { headers: { 'Retry-After': '30' } });
  }
  log(`internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  return new ApiError('INTERNAL');
}
