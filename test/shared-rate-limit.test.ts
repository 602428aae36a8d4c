// The cluster's rate limit on a real PostgreSQL (a throwaway cluster on 127.0.0.1): the shared
// bucket never grants more than its burst plus its refill, however many nodes lease at once;
// limiters on separate pools (as separate nodes have) admit exactly the bucket between them;
// a lease left unspent goes back; a refused key costs no database work until its next token.
import test from 'ava';
import { openPostgres } from '../ts/db/postgres.ts';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import type { RateBuckets } from '../ts/db/ledger.ts';
import { LEASE_TTL_MS, SharedRateLimiter } from '../ts/http/shared-rate-limit.ts';
import { startPostgres } from './helpers/postgres.ts';

async function nodes(t: import('ava').ExecutionContext, n: number) {
  const db = await startPostgres(t);
  const pools = await Promise.all(Array.from({ length: n }, () => openPostgres(db.url, { poolSize: 4 })));
  t.teardown(() => Promise.all(pools.map((p) => p.end())).then(() => undefined));
  return pools.map((p) => new PgLedger(p).rateBuckets);
}

/** The buckets, counting the leases that reach the database. */
function counted(b: RateBuckets): RateBuckets & { calls: number } {
  const c = {
    calls: 0,
    lease: (...args: Parameters<RateBuckets['lease']>) => {
      c.calls++;
      return b.lease(...args);
    },
  };
  return c;
}

test('600 leases racing from three pools never take more than burst + rate × elapsed, and the first burst is all there', async (t) => {
  const buckets = await nodes(t, 3);
  const [rate, burst] = [20, 40];
  const started = performance.now();
  const leases = await Promise.all(Array.from({ length: 600 }, (_, i) => buckets[i % 3].lease('k1', rate, burst, 2, 0, Date.now())));
  const elapsedS = (performance.now() - started) / 1000;
  const granted = leases.reduce((s, l) => s + l.granted, 0);
  t.true(granted <= burst + rate * elapsedS, `${granted} granted in ${elapsedS.toFixed(3)} s`);
  t.true(granted >= burst, `the full burst of ${burst} was there: ${granted}`);
  t.true(leases.every((l) => l.granted >= 0 && l.granted <= 2 && l.left >= 0));
  // Another key's bucket is its own.
  t.is((await buckets[0].lease('k2', rate, burst, 2, 0, Date.now())).granted, 2);
});

test('three limiters on three pools admit exactly the shared burst between them (no refill to speak of), the rest refused with Retry-After', async (t) => {
  const buckets = await nodes(t, 3);
  // 0.001 tokens a second: the bucket refills by one token in 1000 s, none during the test.
  const limiters = buckets.map((b) => new SharedRateLimiter(b, 0.001, 30));
  const decisions = await Promise.all(Array.from({ length: 90 }, (_, i) => limiters[i % 3].take('key')));
  t.is(decisions.filter((d) => d.allowed).length, 30);
  const refused = decisions.filter((d) => !d.allowed);
  t.is(refused.length, 60);
  t.true(refused.every((d) => d.retryAfterS >= 1 && d.limit === 30 && d.remaining === 0));
});

test('a lease left unspent goes back after its time, and is all that other nodes went without', async (t) => {
  const buckets = await nodes(t, 3);
  let clock = 1_000_000;
  const now = () => clock;
  // Leases of 10 tokens from a bucket of 30 that does not refill.
  const [a, b, c] = buckets.map((x) => new SharedRateLimiter(x, 0.001, 30, now, 10));
  t.true((await a.take('key')).allowed, 'a leases 10 and spends 1');
  t.true((await b.take('key')).allowed, 'b leases 10 and spends 1');
  const cs = await Promise.all(Array.from({ length: 15 }, () => c.take('key')));
  t.is(cs.filter((d) => d.allowed).length, 10, 'c got the last 10; the 18 a and b hold are not lost, only held');

  clock += LEASE_TTL_MS;
  // a's lease has expired: its 9 unspent tokens go back with its next lease, which takes them.
  t.true((await a.take('key')).allowed);
  const more = await Promise.all(Array.from({ length: 10 }, () => a.take('key')));
  t.is(more.filter((d) => d.allowed).length, 8, 'a spends the 9 it gave back and took again, no more');
  // b's lease has expired too: it gives its 9 back and takes them again.
  const bs = await Promise.all(Array.from({ length: 10 }, () => b.take('key')));
  t.is(bs.filter((d) => d.allowed).length, 9, '30 in all across the three');
});

test('a refused key asks the database once, not per request, until its next token is due', async (t) => {
  const [raw] = await nodes(t, 1);
  const buckets = counted(raw);
  let clock = 5_000_000;
  const limiter = new SharedRateLimiter(buckets, 1, 4, () => clock, 1);
  const first = await Promise.all(Array.from({ length: 4 }, () => limiter.take('key')));
  t.true(first.every((d) => d.allowed));
  const calls = buckets.calls;
  const refused = [];
  for (let i = 0; i < 200; i++) refused.push(await limiter.take('key'));
  t.true(refused.every((d) => !d.allowed));
  t.is(buckets.calls - calls, 1, 'one lease found the bucket empty; the other 199 were refused locally');
  // A second later by the node's clock (the one every rule of a node reads, and the bucket's
  // too), one token has come in: one more lease takes it.
  clock += 1_000;
  t.true((await limiter.take('key')).allowed);
  t.is(buckets.calls - calls, 2);
  t.false((await limiter.take('key')).allowed);
});
