// The native pool as the test hooks show it (STOREMAP_TEST_HOOKS=1): its depth, slow tasks
// that hold a slot until the test opens their gate, and waiting for a state instead of sleeping.
import { request, type HttpResult } from './http.ts';
import type { TestServer } from './server.ts';

/** An in-process test server or a child process: whatever has the base URL. */
type Server = Pick<TestServer, 'base'>;

export async function poolDepth(s: Server): Promise<{ running: number; waiting: number }> {
  return (await request(s.base, { method: 'GET', path: '/api/v1/__test/pool' })).json();
}

/** Polls the server's pool until `ok` holds (bounded). */
export async function waitForPool(s: Server, ok: (d: { running: number; waiting: number }) => boolean): Promise<{ running: number; waiting: number }> {
  for (let i = 0; i < 2000; i++) {
    const d = await poolDepth(s);
    if (ok(d)) return d;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`pool never reached the state; last ${JSON.stringify(await poolDepth(s))}`);
}

/** A slow test task holding a pool slot (for `owner`) until its gate opens. Gates are one
 * namespace for the whole process: every test names its own. */
export function holdSlot(s: Server, gate: string, owner?: string): Promise<HttpResult> {
  const q = new URLSearchParams({ gate, ...(owner ? { owner } : {}) });
  return request(s.base, { method: 'POST', path: `/api/v1/__test/slow?${q}` });
}

export const open = (s: Server, gate: string) => request(s.base, { method: 'POST', path: `/api/v1/__test/open?gate=${gate}` });
