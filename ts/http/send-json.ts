// The one way a JSON body the service writes itself goes out (answers of the free endpoints,
// status, errors): its type with the charset the contract names, and its length set here, so a
// HEAD's answer carries it too (Node leaves it out where it sends no body).
import type { Response } from 'restify';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The headers of a JSON text: for `res.sendRaw` and raw sockets, where `sendJson` cannot go. */
export function jsonHeaders(text: string): { 'content-type': string; 'content-length': string } {
  return { 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(text)) };
}

/** Ends `res` with `body` as JSON, after any headers the caller set. */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.status(status);
  for (const [k, v] of Object.entries(jsonHeaders(text))) res.header(k, v);
  res.end(text);
}
