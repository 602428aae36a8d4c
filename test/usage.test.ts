// GET /api/v1/usage on a real server (127.0.0.1, its own SQLite file, an injectable clock):
// authentication, the report over usage rows written straight into the database at known
// times, statuses, formats and credits (totals, errors, by status, by format, by day), the
// window rules, the default window, isolation between keys, and the rows location-map itself
// writes. Every expected figure is computed here from the rows this file inserted or the
// requests it made.
import test, { type ExecutionContext } from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../ts/db/database.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { ERRORS } from '../ts/api/errors.ts';
import { postMap, request, type HttpResult } from './helpers/http.ts';
import { sqliteOnly, startServer, type TestServer } from './helpers/server.ts';
import { SqliteLedger } from '../ts/db/sqlite-ledger.ts';

// ------------------------------------------------------------------ fixtures and helpers

const NO_RATE_LIMIT = { STOREMAP_RATE_LIMIT: '100000', STOREMAP_RATE_BURST: '100000' };
const DAY = 86_400_000;
const HOUR = 3_600_000;
const MCD = "McDonald's";

interface Report {
  api_key_id: string;
  billing_model: string;
  range: { from: string; to: string; days: number };
  summary: { total_requests: number; error_count: number; error_rate_percent: number; total_credits_charged: number };
  by_status: Record<string, number>;
  by_format: Record<string, number>;
  by_day: { date: string; requests: number; errors: number; credits: number }[];
}

interface Row {
  at: number;
  status: number | null;
  format: string | null;
  credits: number;
  endpoint?: string;
}

type Server = TestServer & { clock: { now: number } };

async function server(t: ExecutionContext, start = Date.UTC(2026, 10, 20, 12, 0, 0), env: Record<string, string> = NO_RATE_LIMIT): Promise<Server> {
  const clock = { now: start };
  const s = await startServer(t, { env, now: () => clock.now });
  return { ...s, clock };
}

async function insert(s: TestServer, keyId: string, rows: Row[]): Promise<void> {
  for (const r of rows) {
    await s.query('INSERT INTO usage (key_id, at, endpoint, status, format, credits) VALUES (?, ?, ?, ?, ?, ?)', [keyId, r.at, r.endpoint ?? '/api/v1/location-map', r.status, r.format, r.credits]);
  }
}

function getUsage(s: TestServer, key: string | undefined, query = ''): Promise<HttpResult> {
  return request(s.base, { method: 'GET', path: `/api/v1/usage${query}`, headers: key === undefined ? {} : { 'x-api-key': key } });
}

async function report(t: ExecutionContext, s: TestServer, key: string, query = ''): Promise<Report> {
  const res = await getUsage(s, key, query);
  t.is(res.status, 200, `usage${query} -> ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/);
  const body = res.json<Report>();
  assertShape(t, body);
  return body;
}

function assertError(t: ExecutionContext, res: HttpResult, status: number, code: keyof typeof ERRORS, where: string): { details?: { field: string; message: string }[] } {
  t.is(res.status, status, `${where}: expected ${status} ${code}, got ${res.status}: ${res.text.slice(0, 300)}`);
  t.regex(res.header('content-type'), /^application\/json/, where);
  const body = res.json<{ error: string; code: string; details?: { field: string; message: string }[] }>();
  t.is(body.code, code, where);
  t.true(typeof body.error === 'string' && body.error.length > 0, where);
  return body;
}

const isCount = (v: unknown) => Number.isInteger(v) && (v as number) >= 0;

function assertShape(t: ExecutionContext, r: Report): void {
  t.deepEqual(Object.keys(r).sort(), ['api_key_id', 'billing_model', 'by_day', 'by_format', 'by_status', 'range', 'summary']);
  t.is(r.billing_model, 'credits');
  t.deepEqual(Object.keys(r.range).sort(), ['days', 'from', 'to']);
  t.true(Number.isInteger(r.range.days), `range.days ${r.range.days}`);
  t.deepEqual(Object.keys(r.summary).sort(), ['error_count', 'error_rate_percent', 'total_credits_charged', 'total_requests']);
  for (const k of ['total_requests', 'error_count', 'total_credits_charged'] as const) t.true(isCount(r.summary[k]), `summary.${k} ${r.summary[k]}`);
  t.is(typeof r.summary.error_rate_percent, 'number');
  for (const [k, v] of Object.entries(r.by_status)) {
    t.true(/^[1-5]\d\d$/.test(k) || k === 'unknown', `by_status key ${k}`);
    t.true(isCount(v) && v > 0, `by_status.${k} ${v}`);
  }
  for (const [k, v] of Object.entries(r.by_format)) t.true(isCount(v) && v > 0, `by_format.${k} ${v}`);
  for (const d of r.by_day) {
    t.deepEqual(Object.keys(d).sort(), ['credits', 'date', 'errors', 'requests']);
    t.regex(d.date, /^\d{4}-\d{2}-\d{2}$/);
    t.true(isCount(d.requests) && isCount(d.errors) && isCount(d.credits));
  }
  // The views add up to the totals.
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  t.is(sum(Object.values(r.by_status)), r.summary.total_requests, 'by_status sums to total_requests');
  t.is(sum(Object.values(r.by_format)), r.summary.total_requests, 'by_format sums to total_requests');
  t.is(sum(r.by_day.map((d) => d.requests)), r.summary.total_requests, 'by_day requests sum to total_requests');
  t.is(sum(r.by_day.map((d) => d.errors)), r.summary.error_count, 'by_day errors sum to error_count');
  t.is(sum(r.by_day.map((d) => d.credits)), r.summary.total_credits_charged, 'by_day credits sum to total_credits_charged');
}

const iso = (ms: number) => new Date(ms).toISOString();
const utcDate = (ms: number) => iso(ms).slice(0, 10);

/** Every UTC date from `from`'s to `to`'s, oldest first (walked by calendar, not by arithmetic on day numbers). */
function datesBetween(from: number, to: number): string[] {
  const out: string[] = [];
  const d = new Date(Date.UTC(new Date(from).getUTCFullYear(), new Date(from).getUTCMonth(), new Date(from).getUTCDate()));
  while (d.getTime() <= to) {
    out.push(d.toISOString().slice(0, 10));
    d.setUTCDate(d.getUTCDate() + 1);
  }
  return out;
}

/** The report a window over `rows` must give, computed row by row. */
function expectedReport(rows: Row[], from: number, to: number) {
  const inside = rows.filter((r) => r.at >= from && r.at <= to);
  const isError = (r: Row) => r.status !== null && r.status >= 400;
  const by_status: Record<string, number> = {};
  const by_format: Record<string, number> = {};
  for (const r of inside) {
    const s = r.status === null ? 'unknown' : String(r.status);
    const f = r.format ?? 'unknown';
    by_status[s] = (by_status[s] ?? 0) + 1;
    by_format[f] = (by_format[f] ?? 0) + 1;
  }
  const by_day = datesBetween(from, to).map((date) => {
    const day = inside.filter((r) => utcDate(r.at) === date);
    return { date, requests: day.length, errors: day.filter(isError).length, credits: day.reduce((a, r) => a + r.credits, 0) };
  });
  const errors = inside.filter(isError).length;
  return {
    summary: {
      total_requests: inside.length,
      error_count: errors,
      total_credits_charged: inside.reduce((a, r) => a + r.credits, 0),
    },
    errorRate: inside.length === 0 ? 0 : (100 * errors) / inside.length,
    by_status,
    by_format,
    by_day,
  };
}

function assertReport(t: ExecutionContext, got: Report, rows: Row[], from: number, to: number, where: string): void {
  const e = expectedReport(rows, from, to);
  t.is(got.summary.total_requests, e.summary.total_requests, `${where}: total_requests`);
  t.is(got.summary.error_count, e.summary.error_count, `${where}: error_count`);
  t.is(got.summary.total_credits_charged, e.summary.total_credits_charged, `${where}: total_credits_charged`);
  t.true(Math.abs(got.summary.error_rate_percent - e.errorRate) <= 0.01, `${where}: error_rate_percent ${got.summary.error_rate_percent} vs ${e.errorRate}`);
  t.deepEqual(got.by_status, e.by_status, `${where}: by_status`);
  t.deepEqual(got.by_format, e.by_format, `${where}: by_format`);
  t.deepEqual(got.by_day, e.by_day, `${where}: by_day, every day of the window, oldest first`);
}

// ------------------------------------------------------------------ authentication

test('usage needs a valid key: none, unknown, malformed and revoked keys get 401 UNAUTHORIZED', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10 });
  const revoked = await s.keys.create({ plan: 'enterprise', credits: 10 });
  await s.keys.revoke(revoked.record.id);
  assertError(t, await getUsage(s, undefined), 401, 'UNAUTHORIZED', 'no key');
  assertError(t, await getUsage(s, ''), 401, 'UNAUTHORIZED', 'empty key');
  assertError(t, await getUsage(s, 'sm_live_' + '0123456789abcdef01234567'), 401, 'UNAUTHORIZED', 'unknown key');
  assertError(t, await getUsage(s, 'not-a-key'), 401, 'UNAUTHORIZED', 'malformed key');
  assertError(t, await getUsage(s, k.key.toUpperCase()), 401, 'UNAUTHORIZED', 'a key in the wrong case');
  assertError(t, await getUsage(s, revoked.key), 401, 'UNAUTHORIZED', 'revoked key');
  // A 401 before validation: a bad window does not leak a 400 to a caller without a key.
  assertError(t, await getUsage(s, undefined, '?from=bogus'), 401, 'UNAUTHORIZED', 'no key, bad query');
  const ok = await report(t, s, k.key);
  t.is(ok.api_key_id, k.record.id);
  t.is((await s.keys.get(k.record.id))!.credits, 10, 'reading usage costs nothing');
});

// ------------------------------------------------------------------ the report

test('a from/to window: totals, errors, error rate, credits, by status and format (with unknown), by day zero-filled; rows outside excluded', async (t) => {
  const s = await server(t);
  const a = await s.keys.create({ plan: 'enterprise', credits: 1000, name: 'a' });
  const b = await s.keys.create({ plan: 'enterprise', credits: 1000, name: 'b' });
  const from = Date.UTC(2026, 10, 3, 10, 0, 0); // 2026-11-03T10:00Z
  const to = Date.UTC(2026, 10, 7, 9, 0, 0); // 2026-11-07T09:00Z
  const rows: Row[] = [
    // outside, before
    { at: Date.UTC(2026, 9, 31, 12), status: 200, format: 'json', credits: 1 },
    { at: from - 1, status: 200, format: 'csv', credits: 2 },
    { at: Date.UTC(2026, 10, 3, 9, 59), status: 500, format: 'png', credits: 0 },
    // inside: Nov 3
    { at: from, status: 200, format: 'json', credits: 1 },
    { at: from + 5 * HOUR, status: 200, format: 'png', credits: 4 },
    { at: from + 6 * HOUR, status: 404, format: 'json', credits: 0 },
    // Nov 4
    { at: Date.UTC(2026, 10, 4, 0, 0, 0), status: 200, format: 'csv', credits: 2 },
    { at: Date.UTC(2026, 10, 4, 8), status: 402, format: 'geojson', credits: 0 },
    { at: Date.UTC(2026, 10, 4, 9), status: 400, format: null, credits: 0 },
    { at: Date.UTC(2026, 10, 4, 23, 59, 59, 999), status: null, format: null, credits: 3 }, // a legacy row
    // Nov 5: nothing
    // Nov 6
    { at: Date.UTC(2026, 10, 6, 1), status: 429, format: 'jpeg', credits: 0 },
    { at: Date.UTC(2026, 10, 6, 2), status: null, format: 'json', credits: 0 },
    { at: Date.UTC(2026, 10, 6, 3), status: 200, format: 'geojson', credits: 5 },
    { at: Date.UTC(2026, 10, 6, 4), status: 503, format: 'csv', credits: 0 },
    { at: Date.UTC(2026, 10, 6, 5), status: 301, format: 'json', credits: 0 }, // not an error
    // Nov 7, before the end
    { at: to - 1, status: 200, format: 'json', credits: 8 },
    // outside, after
    { at: to + 1, status: 200, format: 'json', credits: 1 },
    { at: Date.UTC(2026, 10, 8, 12), status: 404, format: null, credits: 0 },
  ];
  await insert(s, a.record.id, rows);
  // Key b's rows, inside the same window, must never show in a's report.
  const bRows: Row[] = [
    { at: from + HOUR, status: 200, format: 'csv', credits: 7 },
    { at: Date.UTC(2026, 10, 5, 12), status: 418, format: 'xml', credits: 0 },
  ];
  await insert(s, b.record.id, bRows);

  const q = `?from=${iso(from)}&to=${iso(to)}`;
  const r = await report(t, s, a.key, q);
  t.is(r.api_key_id, a.record.id);
  t.is(r.range.from, iso(from));
  t.is(r.range.to, iso(to));
  t.is(r.range.days, Math.ceil((to - from) / DAY));
  assertReport(t, r, rows, from, to, 'key a');
  // Spelled out, for the reader: the window holds 13 rows.
  t.is(r.summary.total_requests, 13);
  t.is(r.by_status.unknown, 2, 'two rows without a status');
  t.is(r.by_format.unknown, 2, 'two rows without a format');
  t.deepEqual(r.by_day.map((d) => d.date), ['2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06', '2026-11-07']);
  t.deepEqual(r.by_day[2], { date: '2026-11-05', requests: 0, errors: 0, credits: 0 }, 'an empty day is present, zero-filled');
  t.false('418' in r.by_status || 'xml' in r.by_format, "another key's rows never appear");

  const rb = await report(t, s, b.key, q);
  t.is(rb.api_key_id, b.record.id);
  assertReport(t, rb, bRows, from, to, 'key b');

  // The same window written with an offset is the same instant range.
  const shifted = await report(t, s, a.key, `?from=${encodeURIComponent('2026-11-03T12:00:00+02:00')}&to=${encodeURIComponent('2026-11-07T04:00:00-05:00')}`);
  t.deepEqual(shifted, r, 'offsets are honoured');
});

test('error_rate_percent is errors / requests x 100; a window without rows is all zero', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10 });
  const day = Date.UTC(2026, 10, 10);
  const rows: Row[] = [
    { at: day + HOUR, status: 200, format: 'json', credits: 1 },
    { at: day + 2 * HOUR, status: 200, format: 'json', credits: 1 },
    { at: day + 3 * HOUR, status: 404, format: 'json', credits: 0 },
  ];
  await insert(s, k.record.id, rows);
  const r = await report(t, s, k.key, `?from=${iso(day)}&to=${iso(day + DAY - 1)}`);
  t.is(r.summary.error_count, 1);
  t.true(Math.abs(r.summary.error_rate_percent - 100 / 3) <= 0.01, `1 of 3 is 33.33%, got ${r.summary.error_rate_percent}`);
  assertReport(t, r, rows, day, day + DAY - 1, 'one day');

  const empty = await report(t, s, k.key, `?from=${iso(day - 10 * DAY)}&to=${iso(day - 3 * DAY)}`);
  t.deepEqual(empty.summary, { total_requests: 0, error_count: 0, error_rate_percent: 0, total_credits_charged: 0 });
  t.deepEqual(empty.by_status, {});
  t.deepEqual(empty.by_format, {});
  t.is(empty.by_day.length, 8);
  t.true(empty.by_day.every((d) => d.requests === 0 && d.errors === 0 && d.credits === 0));
});

// ------------------------------------------------------------------ the window

test('window rules: more than 366 days, from after to, and malformed timestamps are 400 INVALID_REQUEST', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10 });
  const to = Date.UTC(2026, 10, 1);
  const bad: [string, string][] = [
    [`?from=${iso(to - 367 * DAY)}&to=${iso(to)}`, 'from'],
    [`?from=${iso(to - 366 * DAY - 1)}&to=${iso(to)}`, 'from'],
    [`?from=${iso(to + 1)}&to=${iso(to)}`, 'from'],
    [`?from=${iso(to + DAY)}&to=${iso(to)}`, 'from'],
    [`?from=${iso(s.clock.now - 400 * DAY)}`, 'from'], // to defaults to now
    [`?from=${iso(s.clock.now + HOUR)}`, 'from'], // after the default to (now)
    ['?from=yesterday', 'from'],
    ['?from=2026-11-01', 'from'],
    ['?to=2026-13-01T00:00:00Z', 'to'],
    ['?to=2026-02-30T00:00:00Z', 'to'],
    ['?from=2026-11-01T25:00:00Z', 'from'],
    ['?from=1793491200000', 'from'],
    ['?from=', 'from'],
    [`?from=${iso(to - DAY)}&from=${iso(to - 2 * DAY)}`, 'from'],
    ['?since=2026-11-01T00:00:00Z', 'since'],
  ];
  for (const [q, field] of bad) {
    const body = assertError(t, await getUsage(s, k.key, q), 400, 'INVALID_REQUEST', q);
    t.true(Array.isArray(body.details) && body.details.length > 0, `${q}: details`);
    t.true((body.details ?? []).some((d) => d.field === field || d.message.includes(field) || (field === 'from' && d.field === 'to')), `${q}: details name ${field}: ${JSON.stringify(body.details)}`);
  }
  // Exactly 366 days is allowed.
  const max = await report(t, s, k.key, `?from=${iso(to - 366 * DAY)}&to=${iso(to)}`);
  t.is(max.range.days, 366);
  t.is(max.by_day.length, 367, 'both ends are calendar days of the window');
  t.is(max.by_day[0].date, utcDate(to - 366 * DAY));
  t.is(max.by_day.at(-1)!.date, utcDate(to));
  // A zero-length window is one day.
  const point = await report(t, s, k.key, `?from=${iso(to)}&to=${iso(to)}`);
  t.is(point.by_day.length, 1);
  t.is((await s.keys.get(k.record.id))!.credits, 10, 'no request of this test cost anything');
});

test('the default window is the 30 days up to the server clock; to alone reaches back 30 days', async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10 });
  const now = s.clock.now;
  const rows: Row[] = [
    { at: now - 31 * DAY, status: 200, format: 'json', credits: 1 }, // too old
    { at: now - 30 * DAY - 1, status: 200, format: 'json', credits: 1 }, // just too old
    { at: now - 29 * DAY, status: 404, format: 'csv', credits: 0 },
    { at: now - DAY, status: 200, format: 'png', credits: 2 },
    { at: now, status: 200, format: 'json', credits: 3 },
    { at: now + HOUR, status: 200, format: 'json', credits: 5 }, // in the future of this clock
  ];
  await insert(s, k.record.id, rows);

  const r = await report(t, s, k.key);
  t.is(r.range.to, iso(now), 'to defaults to the server clock');
  t.is(r.range.from, iso(now - 30 * DAY), 'from defaults to 30 days before');
  t.is(r.range.days, 30);
  assertReport(t, r, rows, now - 30 * DAY, now, 'default window');
  t.is(r.summary.total_requests, 3);
  t.is(r.by_day[0].date, utcDate(now - 30 * DAY));
  t.is(r.by_day.at(-1)!.date, utcDate(now));

  // Two days later the window has moved with the clock.
  s.clock.now = now + 2 * DAY;
  const later = await report(t, s, k.key);
  t.is(later.range.to, iso(now + 2 * DAY));
  assertReport(t, later, rows, now - 28 * DAY, now + 2 * DAY, 'two days later');
  t.is(later.summary.total_requests, 3, 'the 29-day-old row left, the future row arrived');

  // Only `to`: the 30 days before it.
  const to = now - 20 * DAY;
  const toOnly = await report(t, s, k.key, `?to=${iso(to)}`);
  t.is(toOnly.range.from, iso(to - 30 * DAY));
  assertReport(t, toOnly, rows, to - 30 * DAY, to, 'to only');
  // Only `from`: up to now.
  const fromOnly = await report(t, s, k.key, `?from=${iso(now - 40 * DAY)}`);
  t.is(fromOnly.range.to, iso(now + 2 * DAY));
  assertReport(t, fromOnly, rows, now - 40 * DAY, now + 2 * DAY, 'from only');
});

// ------------------------------------------------------------------ location-map's own rows

test("the key's location-map requests show up: count, statuses, formats and credits equal to X-Credits-Charged", async (t) => {
  const s = await server(t);
  const k = await s.keys.create({ plan: 'enterprise', credits: 10_000 });
  const other = await s.keys.create({ plan: 'enterprise', credits: 10_000 });
  const made: { status: number; format: string; charged: number }[] = [];
  const bodies: Record<string, unknown>[] = [
    { brand: MCD },
    { brand: 'MCD', format: 'csv' },
    { brand: 'Starbucks', format: 'geojson', country: 'US' },
    { brand: MCD, format: 'png', width: 300, height: 200 },
    { brand: 'Starbuks', format: 'csv' }, // 404
    { brand: MCD, format: 'json', zoom: 3 }, // 400: zoom without center
  ];
  for (const body of bodies) {
    const res = await postMap(s.base, k.key, body);
    made.push({ status: res.status, format: (body.format as string) ?? 'json', charged: Number(res.header('x-credits-charged') || 0) });
    s.clock.now += 10 * 60_000;
  }
  t.deepEqual(made.map((m) => m.status), [200, 200, 200, 200, 404, 400], JSON.stringify(made));
  t.true(made.slice(0, 4).every((m) => m.charged > 0), 'each success was charged');
  await postMap(s.base, other.key, { brand: MCD, format: 'csv' });

  const before = (await s.keys.get(k.record.id))!.credits;
  const r = await report(t, s, k.key);
  const charged = made.reduce((a, m) => a + m.charged, 0);
  t.is(r.summary.total_requests, made.length);
  t.is(r.summary.total_credits_charged, charged, 'total credits = the sum of X-Credits-Charged');
  t.is(10_000 - before, charged, 'and = what left the balance');
  t.is(r.summary.error_count, 2);
  t.deepEqual(r.by_status, { '200': 4, '400': 1, '404': 1 });
  const formats: Record<string, number> = {};
  for (const m of made) formats[m.format] = (formats[m.format] ?? 0) + 1;
  t.deepEqual(r.by_format, formats);
  const today = r.by_day.filter((d) => d.requests > 0);
  t.is(today.length, 1, 'all on one day of the server clock');
  t.is(today[0].date, utcDate(s.clock.now));
  t.is(today[0].credits, charged);

  // Reading usage is free, and the other key's request is not in this report.
  t.is((await s.keys.get(k.record.id))!.credits, before);
  const again = await report(t, s, k.key);
  t.is(again.summary.total_credits_charged, charged);
  const o = await report(t, s, other.key);
  t.is(o.summary.total_requests, 1);
  t.deepEqual(o.by_format, { csv: 1 });
});

test('usage is rate-limited per key: over the burst, 429 RATE_LIMITED with Retry-After; another key is unaffected', async (t) => {
  const s = await server(t, undefined, { STOREMAP_RATE_LIMIT: '1', STOREMAP_RATE_BURST: '2' });
  const k = await s.keys.create({ plan: 'enterprise', credits: 10 });
  const other = await s.keys.create({ plan: 'enterprise', credits: 10 });
  t.is((await getUsage(s, k.key)).status, 200);
  t.is((await getUsage(s, k.key)).status, 200);
  const limited = await getUsage(s, k.key);
  assertError(t, limited, 429, 'RATE_LIMITED', 'third request');
  t.regex(limited.header('retry-after'), /^\d+$/);
  t.is((await getUsage(s, other.key)).status, 200);
  s.clock.now += 5_000;
  t.is((await getUsage(s, k.key)).status, 200, 'after the bucket refills');
});

// ------------------------------------------------------------------ retention

sqliteOnly('raw usage rows older than 366 days and a day are pruned when the server starts; the daily rollups keep their counts', async (t) => {
  const now = Date.UTC(2026, 10, 20, 12, 0, 0);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'storemap-prune-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = path.join(dir, 'storemap.db');
  // Rows written by an earlier server: 400 and 368 days old (past the keeping time), 300 days
  // and an hour old (kept).
  const db = openDatabase(dbPath);
  const k = await new KeyStore(new SqliteLedger(db), () => now - 500 * DAY).create({ plan: 'enterprise', credits: 100 });
  const old = [now - 400 * DAY, now - 400 * DAY + HOUR, now - 368 * DAY];
  const kept = [now - 300 * DAY, now - HOUR];
  const stmt = db.prepare('INSERT INTO usage (key_id, at, endpoint, status, format, credits) VALUES (?, ?, ?, 200, ?, 1)');
  for (const at of [...old, ...kept]) stmt.run(k.record.id, at, '/api/v1/location-map', 'png');
  db.close();

  const s = await startServer(t, { env: NO_RATE_LIMIT, now: () => now, dbPath });
  const raw = s.db.prepare('SELECT at FROM usage WHERE key_id = ? ORDER BY at').all(k.record.id) as { at: number }[];
  t.deepEqual(
    raw.map((r) => r.at),
    kept,
  );
  const rollup = s.db.prepare('SELECT day, requests, credits FROM usage_daily WHERE key_id = ? ORDER BY day').all(k.record.id) as { day: number; requests: number; credits: number }[];
  t.deepEqual(rollup, [
    { day: Math.floor((now - 400 * DAY) / DAY), requests: 2, credits: 2 },
    { day: Math.floor((now - 368 * DAY) / DAY), requests: 1, credits: 1 },
    { day: Math.floor((now - 300 * DAY) / DAY), requests: 1, credits: 1 },
    { day: Math.floor((now - HOUR) / DAY), requests: 1, credits: 1 },
  ]);
  // A year's report still counts the kept rows.
  const r = await report(t, s, k.key, `?from=${new Date(now - 366 * DAY).toISOString()}&to=${new Date(now).toISOString()}`);
  t.is(r.summary.total_requests, 2);
});
