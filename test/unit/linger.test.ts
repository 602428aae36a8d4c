// Lingering's rule on its own (ts/db/linger.ts), on a clock the test moves: which batch goes and
// which waits, and when a held batch's timer ends its wait. test/ledger-linger.test.ts checks the
// same rule through PostgreSQL.
import test from 'ava';
import { Linger, LINGER_FILL } from '../../ts/db/linger.ts';

const MINUTE = 60_000;
const came = (...since: number[]) => since.map((s) => ({ since: s }));

/** Waits until `done` holds, at most 10 s (a timer of a minute never gets there). */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}

function linger(ms: number, start = 1_000_000) {
  const s = { clock: start, sends: 0 };
  const l = new Linger(ms, () => s.clock, () => s.sends++);
  return { s, l };
}

test('a batch goes after a quiet spell, when full, or when its oldest charge has waited the linger; otherwise it waits', (t) => {
  const { s, l } = linger(MINUTE);
  t.teardown(() => l.stop());
  t.true(l.go(came(s.clock)), 'nothing sent yet: at once');
  s.clock += 10;
  t.false(l.go(came(s.clock)), 'a batch went 10 ms ago');
  t.false(l.go(came(s.clock - 10, s.clock)), 'the oldest has waited 10 ms');
  t.true(l.go(came(...Array.from({ length: LINGER_FILL }, () => s.clock))), `${LINGER_FILL} waiting: full`);
  s.clock += 10;
  // A batch went 10 ms ago, but this charge came before it (it waited for a call out, was left
  // over from a full batch, or its lease refused it): its linger counts from then.
  t.true(l.go(came(s.clock + 5, s.clock - MINUTE)), 'the oldest has waited the linger');
  s.clock += 1;
  t.false(l.go(came(s.clock - MINUTE + 1)), 'a millisecond short of the linger');
  s.clock += MINUTE + 1;
  t.true(l.go(came(s.clock)), 'nothing sent for longer than the linger: at once');
  t.is(s.sends, 0, 'no timer ran out');
});

test('without a linger every batch goes at once', (t) => {
  const { s, l } = linger(0);
  for (let i = 0; i < 5; i++) t.true(l.go(came(s.clock)));
});

test("a held batch's timer runs out when its oldest charge has waited the linger, not a linger after it was held", async (t) => {
  const { s, l } = linger(MINUTE);
  t.teardown(() => l.stop());
  t.true(l.go(came(s.clock)));
  s.clock += 1;
  // Its oldest charge came 20 ms short of a minute ago (on the frozen clock): the timer must run
  // out in 20 ms. Counted from now it would take a minute.
  t.false(l.go(came(s.clock - MINUTE + 20)));
  t.is(s.sends, 0, 'not before its time');
  await until(() => s.sends > 0);
  t.is(s.sends, 1, 'the timer asked for the batch to go');
  t.true(l.go(came(s.clock - MINUTE + 20)), 'and it goes, though no time passed on the clock');
  s.clock += 1;
  t.false(l.go(came(s.clock)), 'the next batch waits afresh');
});

test('an older charge joining a held batch brings its timer forward', async (t) => {
  const { s, l } = linger(MINUTE);
  t.teardown(() => l.stop());
  t.true(l.go(came(s.clock)));
  s.clock += 1;
  t.false(l.go(came(s.clock)), 'held: its timer runs out in a minute');
  // A charge that came 20 ms short of a minute ago joins (refused by its lease, or deferred).
  t.false(l.go(came(s.clock, s.clock - MINUTE + 20)));
  await until(() => s.sends > 0);
  t.is(s.sends, 1, 'the timer ran out when the older charge had waited the linger');
});

test('a clock set back holds a batch no longer than the linger', async (t) => {
  const { s, l } = linger(300);
  t.teardown(() => l.stop());
  t.true(l.go(came(s.clock)));
  const came0 = s.clock;
  // The clock steps an hour back (an NTP step): the charge seems to have come in the future.
  s.clock -= 3_600_000;
  t.false(l.go(came(came0)));
  t.is(s.sends, 0);
  await until(() => s.sends > 0);
  t.is(s.sends, 1, 'sent within the linger, not an hour later');
});

test('stopping sends a held batch at once, and nothing waits afterwards', (t) => {
  const { s, l } = linger(MINUTE);
  t.true(l.go(came(s.clock)));
  t.false(l.go(came(s.clock)));
  l.stop();
  t.is(s.sends, 1);
  t.true(l.go(came(s.clock)));
  l.stop();
  t.is(s.sends, 1, 'nothing was held the second time');
});
