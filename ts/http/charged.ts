// The one home of a charged request's life (location-map, changes): key → rate → the
// operation's own input, plan and priced work → charge → respond, with the request's timeout,
// its client's hang-up and its one usage row. An operation gives only its work; billing, the
// credit headers and the usage row are written here and nowhere else.
import type { Request, RequestHandler, Response } from 'restify';
import { ApiError } from '../api/errors.ts';
import { sendError, toApiError } from './errors.ts';
import { requireKey, takeRate } from './auth.ts';
import { ATTRIBUTION, headerText } from '../api/headers.ts';
import { NativeError, type RefusalReason } from '../native.ts';
import { Cancel } from '../services/native-pool.ts';
import { affordableRows, creditsFor, isImageFormat, LOW_CREDIT_THRESHOLD, type Format } from '../api/prices.ts';
import { MAX_BALANCE, PLAN_RULES } from '../api/plans.ts';
import type { ApiKey } from '../services/keys.ts';
import type { ApiDeps } from './context.ts';

/** Why a request ended without its answer being written: its client hung up first. */
export const CLIENT_GONE_STATUS = 499;

/** What an operation's work is handed. */
export interface WorkContext {
  key: ApiKey;
  /** Cancelled when nobody wants the work any more: a waiting task leaves the queue at once. */
  cancel: Cancel;
  /** `performance.now()` past which the request has timed out. */
  deadline: number;
  /** The format the usage row records, set as soon as it is read (before validation: one of
   * the known formats, or `invalid`; a client's string never reaches the ledger). */
  recordFormat(format: Format | 'invalid'): void;
}

/** An operation's priced work: the body (empty when refused) and what it is charged on. */
export interface ChargedWork {
  body: Buffer;
  /** Rows the price is reckoned on. */
  count: number;
  format: Format;
  /** The work stopped before writing: the balance cannot pay for `count`, or time ran out. */
  refused?: RefusalReason;
  contentType: string;
  /** Sources of the rows answered, alphabetical (X-Data-Sources). */
  sources: string[];
  /** The canonical brand name or names (X-Brand). */
  brand: string;
  /** The filter as text (X-Region). */
  region: string;
  /** Server time spent on the work (X-Render-Time). */
  ms: number;
  /** The operation's own headers, sent with a success after the ones every charged answer
   * carries. */
  headers: Record<string, string | undefined>;
  /** The street map's tile attribution, when the image shows basemap tiles: added to
   * X-Attribution. */
  basemapAttribution?: string | null;
  /** A basemap tile that failed for the first time while drawing (skipped): logged here once. */
  basemapWarning?: string | null;
}

/** Errors from the addon, as API errors: the request's mistakes as 400s (a change-feed date
 * before the history, under `since`; a history range outside it, under `from` or `to`), a deadline as TIMEOUT, a feature this server's data
 * cannot give as NOT_IMPLEMENTED. */
export function fromNative(e: unknown): unknown {
  if (!(e instanceof NativeError)) return e;
  switch (e.code) {
    case 'INVALID_REQUEST':
      return e.field
        ? new ApiError('INVALID_REQUEST', `Invalid request: ${e.field}: ${e.message}.`, { details: [{ field: e.field, message: e.message }] })
        : new ApiError('INVALID_REQUEST', e.message);
    case 'UNKNOWN_CITY':
      return new ApiError('INVALID_REQUEST', `Invalid request: city: ${e.message}.`, { details: [{ field: 'city', message: e.message }] });
    case 'SINCE_OUT_OF_RANGE':
      return new ApiError('INVALID_REQUEST', `Invalid query: since: ${e.message}.`, { details: [{ field: 'since', message: e.message }] });
    case 'FROM_OUT_OF_RANGE':
      return new ApiError('INVALID_REQUEST', `Invalid query: from: ${e.message}.`, { details: [{ field: 'from', message: e.message }] });
    case 'TO_OUT_OF_RANGE':
      return new ApiError('INVALID_REQUEST', `Invalid query: to: ${e.message}.`, { details: [{ field: 'to', message: e.message }] });
    case 'TIMEOUT':
      return new ApiError('TIMEOUT');
    case 'NOT_IMPLEMENTED':
      return new ApiError('NOT_IMPLEMENTED', `Not available on this server: ${e.message}.`);
    // The server's own faults and files: an internal error (logged where it is answered).
    case 'INTERNAL':
    case 'SNAPSHOT_INVALID':
    case 'IO_ERROR':
    case 'FORBIDDEN':
    case 'INVALID_BASEMAP':
    case 'INVALID_SOURCE':
      return e;
    default: {
      const unmapped: never = e.code;
      return unmapped;
    }
  }
}

/** The format a usage row records before the request is validated: one of the operation's
 * `formats` (json when none is given), else `invalid` (a client's string never reaches the
 * ledger). */
export function usageFormat<F extends Format>(format: unknown, formats: readonly F[]): F | 'invalid' {
  if (format === undefined) return 'json' as F;
  return typeof format === 'string' && (formats as readonly string[]).includes(format) ? (format as F) : 'invalid';
}

/** Runs small addon work at once on the JS thread (`inlineMaxRows` in ts/config.ts), with the same
 * checks as `runNative`: the unsent-bytes budget, the request not abandoned, time left. */
export function runInline<T>(deps: ApiDeps, ctx: WorkContext, work: (timeBudgetMs: number) => T): T {
  deps.pending.admit(ctx.key.id);
  if (ctx.cancel.cancelled) throw ctx.cancel.reason ?? new ApiError('TIMEOUT');
  const left = Math.floor(ctx.deadline - performance.now());
  if (left <= 0) throw new ApiError('TIMEOUT');
  try {
    return work(left);
  } catch (e) {
    throw fromNative(e);
  }
}

/** Runs addon work in the key's share of the native pool (refused when slow clients already
 * hold too many unsent bytes), given the milliseconds left when it starts: work that starts
 * after the deadline never starts. The addon's errors come back as API errors. */
export function runNative<T>(deps: ApiDeps, ctx: WorkContext, work: (timeBudgetMs: number) => Promise<T>): Promise<T> {
  deps.pending.admit(ctx.key.id);
  return deps.pool
    .run(
      () => {
        // Again as it starts: requests that arrived together all passed the check at arrival,
        // before any of their answers existed, and a queue of them would otherwise fill memory
        // past the budget whatever it says.
        deps.pending.admit(ctx.key.id);
        const left = Math.floor(ctx.deadline - performance.now());
        if (left <= 0) throw new ApiError('TIMEOUT');
        return work(left);
      },
      { owner: ctx.key.id, cancel: ctx.cancel },
    )
    .catch((e: unknown) => {
      throw fromNative(e);
    });
}

/** The key's plan rules, once it is known to be in its trial (if it has one) and its plan
 * allows `format`: data formats need a data plan. `dataOnly` names an endpoint with no image
 * format, whose refusal must not tell the key to ask for one. */
export function planRules(deps: ApiDeps, key: ApiKey, format: Format, dataOnly?: string): (typeof PLAN_RULES)[keyof typeof PLAN_RULES] {
  if (deps.keys.isExpired(key)) throw new ApiError('TRIAL_EXPIRED');
  const rules = PLAN_RULES[key.plan];
  if (!isImageFormat(format) && !rules.dataFormats) {
    throw new ApiError('DATA_ACCESS_FORBIDDEN', dataOnly ? `${dataOnly} answers data formats only (json, csv, geojson), which need an enterprise or internal key.` : undefined);
  }
  return rules;
}

/** The key's balance as the rows it can pay for (undefined: any count), checked before the
 * work: the addon stops before serializing or drawing what it cannot pay for. A key that cannot
 * pay one credit is refused here, before any work is enumerated: nothing costs less. */
export async function affordable(deps: ApiDeps, key: ApiKey, rules: (typeof PLAN_RULES)[keyof typeof PLAN_RULES], format: Format): Promise<number | undefined> {
  if (rules.unlimited) return undefined;
  const balance = await deps.billing.balance(key);
  if (balance < 1) throw new ApiError('INSUFFICIENT_CREDITS', `Every request costs at least 1 credit; the key has ${balance}.`);
  return affordableRows(balance, format);
}

/** What the request's end needs to know of it, filled in by its steps as they learn it. */
interface Known {
  key?: ApiKey;
  format: Format | 'invalid' | null;
}

/** How a charged request ended: its answer and what its one usage row must say. */
type Ending =
  /** Answered 200; the charge wrote the row. */
  | { kind: 'charged' }
  /** An error answer. `rowWritten`: the charge itself settled the row (a refusal it recorded, or
   * a ledger that failed and wrote nothing): no second one. */
  | { kind: 'failed'; err: ApiError; rowWritten: boolean }
  /** Out of time: a TIMEOUT answer and its row. */
  | { kind: 'timed-out' }
  /** The client hung up before its answer: a 499 row, never charged. */
  | { kind: 'gone' };

/** A charged request's end, reached once: by its own steps, its timer or its client's hang-up,
 * whichever comes first (later ones are ignored); reaching it runs the `after` hook. */
class End {
  private reached: Promise<void> | undefined;
  constructor(private readonly after: (ending: Ending) => Promise<void>) {}
  get isReached(): boolean {
    return this.reached !== undefined;
  }
  reach(ending: Ending): void {
    this.reached ??= this.after(ending);
  }
  settled(): Promise<void> {
    return this.reached ?? Promise.resolve();
  }
}

/** The `after` hook: writes the request's one usage row (unless the charge wrote it) and the
 * error answer, if there is still someone to answer. A ledger that cannot record turns the
 * answer into its 503; never throws. */
async function after(deps: ApiDeps, res: Response, endpoint: string, known: Known, ending: Ending): Promise<void> {
  let err = ending.kind === 'failed' ? ending.err : ending.kind === 'timed-out' ? new ApiError('TIMEOUT') : null;
  const status = ending.kind === 'gone' ? CLIENT_GONE_STATUS : (err?.status ?? 200);
  const rowWritten = ending.kind === 'charged' || (ending.kind === 'failed' && ending.rowWritten);
  if (known.key && !rowWritten) {
    const entry = { endpoint, status, format: known.format };
    if (err?.code === 'RATE_LIMITED') deps.billing.countRejected(known.key, entry);
    else {
      try {
        await deps.billing.record(known.key, entry);
      } catch (e) {
        if (err) err = toApiError(e, deps.log);
      }
    }
  }
  if (err && !res.headersSent && !res.destroyed) sendError(res, err);
}

/**
 * The handler of a charged operation whose usage rows record `endpoint`. The price is known
 * before the work writes anything: `work` counts the rows, refuses when the balance cannot pay
 * for them, and gives up at the request's deadline. Exactly one usage row per request with a
 * valid key, written by the `after` hook or by the charge; refusals for the rate limit are
 * counted, not written one by one.
 */
export function chargedRoute(deps: ApiDeps, endpoint: string, work: (req: Request, ctx: WorkContext) => Promise<ChargedWork>): RequestHandler {
  // restify tells a promise-returning step from a callback one by being an async function.
  return async (req: Request, res: Response) => {
    await handle(req, res, deps, endpoint, work);
  };
}

/** The steps: key → rate → the operation's work (its input, plan and priced rows) → price →
 * charge → respond. Each step that refuses throws an ApiError; the end is reached once. */
async function handle(req: Request, res: Response, deps: ApiDeps, endpoint: string, work: (req: Request, ctx: WorkContext) => Promise<ChargedWork>): Promise<void> {
  const known: Known = { format: null };
  const cancel = new Cancel();
  const deadline = performance.now() + deps.config.requestTimeoutMs;
  const end = new End((ending) => after(deps, res, endpoint, known, ending));
  // The timeout's or the hang-up's end: the handler returns only once it has answered, or
  // restify, seeing a handler end without an answer, sends one of its own (a 500).
  // Once the charge has gone to the ledger it decides the request: the timeout or a hang-up
  // seen while it is out would answer (and record) the request a second time beside the row
  // the charge writes, so they wait for it. The ledger bounds that wait (PostgreSQL's
  // lock_timeout in charge_many).
  let charging = false;
  const stop = (why: ApiError, ending: Ending) => {
    if (end.isReached || charging) return;
    cancel.cancel(why);
    end.reach(ending);
  };
  const timer = setTimeout(() => stop(new ApiError('TIMEOUT'), { kind: 'timed-out' }), deps.config.requestTimeoutMs);
  const gone = () => stop(new ApiError('TIMEOUT', 'The client went away.'), { kind: 'gone' });
  res.once('close', gone);

  try {
    // From the key on, every answer, errors included, is recorded against it.
    const key = (known.key = await requireKey(deps, req, res));
    await takeRate(deps, key, res);
    const out = await work(req, { key, cancel, deadline, recordFormat: (f) => void (known.format = f) });
    const cost = await price(deps, key, out);
    if (end.isReached) return; // timed out or hung up meanwhile: answered and recorded already
    // The body is in memory from here until the response closes, whatever it ends up carrying:
    // it counts against the unsent-bytes budget now, so that work starting while this request
    // is charged sees it.
    deps.pending.track(res, out.body.length, key.id);
    const charged = await charge(deps, key, cost, { endpoint, status: 200, format: out.format }, () => {
      // Asked by the ledger as it sends the charge: no if the request already ended, and from
      // here on the charge settles it.
      if (end.isReached) return true;
      charging = true;
      return false;
    });
    if (end.isReached) return;
    if (!charged.ok) return end.reach({ kind: 'failed', err: toApiError(charged.cause, deps.log), rowWritten: true });
    end.reach({ kind: 'charged' });
    respond(res, deps, key, out, charged.result);
  } catch (e) {
    // Unless the timeout or the hang-up already ended it.
    if (!end.isReached) end.reach({ kind: 'failed', err: toApiError(e, deps.log), rowWritten: false });
  } finally {
    clearTimeout(timer);
    res.off('close', gone);
    await end.settled();
  }
}

/** The work's price in credits; its refusals (out of time, a balance that cannot pay) as errors. */
async function price(deps: ApiDeps, key: ApiKey, out: ChargedWork): Promise<number> {
  if (out.refused === 'deadline') throw new ApiError('TIMEOUT');
  const cost = creditsFor(out.count, out.format);
  if (out.refused === 'credits') {
    throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${await deps.billing.balance(key)}. Nothing was written or charged.`);
  }
  return cost;
}

type ChargeResult = Awaited<ReturnType<ApiDeps['billing']['charge']>>;
type Charged = Extract<ChargeResult, { ok: true }>;

/** Debits `cost` and writes the usage row in one ledger transaction, refused (nothing written)
 * if the request ends while it waits for the ledger; its first try runs in this same tick, so a
 * hang-up seen before it pays nothing. Whatever it returns, the row is settled: written with
 * the charge or the refusal, or (the ledger failing) not at all, never twice. */
async function charge(
  deps: ApiDeps,
  key: ApiKey,
  cost: number,
  entry: { endpoint: string; status: number; format: Format },
  ended: () => boolean,
): Promise<{ ok: true; result: Charged } | { ok: false; cause: unknown }> {
  let c: ChargeResult;
  try {
    c = await deps.billing.charge(key, cost, entry, ended);
  } catch (e) {
    return { ok: false, cause: e };
  }
  if (c.ok) return { ok: true, result: c };
  if (c.revoked) return { ok: false, cause: new ApiError('UNAUTHORIZED', 'The key was revoked while the request ran; nothing was charged.') };
  return { ok: false, cause: new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${c.balance}.`) };
}

/** An internal key is never debited, so its stored balance (0 unless someone topped it up)
 * is not what it can still spend: a client that stops at "0 left" would stop. It reports the
 * most a balance can hold instead. */
function creditsLeft(key: ApiKey, charge: Charged): number {
  return PLAN_RULES[key.plan].unlimited ? MAX_BALANCE : charge.remaining;
}

/** The answer: what every charged answer carries (CHARGED_HEADERS in operations.ts documents
 * them), the operation's own headers, and the body (counted as unsent since the work ended). */
function respond(res: Response, deps: ApiDeps, key: ApiKey, out: ChargedWork, charge: Charged): void {
  if (out.basemapWarning) deps.log(`basemap: ${out.basemapWarning}; the tile is skipped (later failures are counted in /api/v1/status)`);
  res.header('X-Attribution', out.basemapAttribution ? headerText(`${ATTRIBUTION}; basemap: ${out.basemapAttribution}`) : ATTRIBUTION);
  res.header('X-Data-Sources', out.sources.join(','));
  res.header('X-Location-Count', String(out.count));
  res.header('X-Brand', headerText(out.brand));
  res.header('X-Region', headerText(out.region));
  res.header('X-Render-Time', `${Math.round(out.ms)}ms`);
  res.header('X-Credits-Charged', String(charge.charged));
  res.header('X-Credits-Remaining', String(creditsLeft(key, charge)));
  if (!PLAN_RULES[key.plan].unlimited && charge.remaining < LOW_CREDIT_THRESHOLD) res.header('X-Credits-Low', 'true');
  for (const [name, value] of Object.entries(out.headers)) if (value !== undefined) res.header(name, value);
  res.status(200);
  res.header('content-type', out.contentType);
  res.end(out.body);
}
