// The one home of a charged request's life (location-map, changes): key → rate → the
// operation's own input, plan and priced work → charge → respond, with the request's timeout,
// its client's hang-up and its one usage row. An operation gives only its work; billing, the
// credit headers and the usage row are written here and nowhere else.
import type { Request, RequestHandler, Response } from 'restify';
import { ApiError, toApiError } from '../errors.ts';
import { sendError } from './errors.ts';
import { requireKey, takeRate } from './auth.ts';
import { ATTRIBUTION, headerText } from './headers.ts';
import { NativeError, type RefusalReason } from '../native.ts';
import { Cancel } from '../services/native-pool.ts';
import { affordableRows, creditsFor, isImageFormat, LOW_CREDIT_THRESHOLD, type Format } from '../services/credits.ts';
import { PLAN_RULES, type ApiKey } from '../services/keys.ts';
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
 * before the history, under `since`), a deadline as TIMEOUT, a feature this server's data
 * cannot give as NOT_IMPLEMENTED. */
export function fromNative(e: unknown): unknown {
  if (!(e instanceof NativeError)) return e;
  switch (e.code) {
    case 'INVALID_REQUEST':
    case 'UNKNOWN_CITY':
      return new ApiError('INVALID_REQUEST', e.message);
    case 'SINCE_OUT_OF_RANGE':
      return new ApiError('INVALID_REQUEST', `Invalid query: since: ${e.message}.`, { details: [{ field: 'since', message: e.message }] });
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

/** Runs addon work in the key's share of the native pool (refused when slow clients already
 * hold too many unsent bytes), given the milliseconds left when it starts: work that starts
 * after the deadline never starts. The addon's errors come back as API errors. */
export function runNative<T>(deps: ApiDeps, ctx: WorkContext, work: (timeBudgetMs: number) => Promise<T>): Promise<T> {
  deps.pending.admit(ctx.key.id);
  return deps.pool
    .run(
      () => {
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

/** The request's state shared by its steps, its timer and its client's hang-up. */
interface Ctx {
  key?: ApiKey;
  format: Format | 'invalid' | null;
  /** Its usage row is written (or, the ledger failing, given up). */
  recorded: boolean;
  /** Answered, timed out, or its client gone: nothing more may be written or charged. */
  done: boolean;
}

/**
 * The handler of a charged operation whose usage rows record `endpoint`. The price is known
 * before the work writes anything: `work` counts the rows, refuses when the balance cannot pay
 * for them, and gives up at the request's deadline. Exactly one usage row per request with a
 * valid key, written by `finish` or by the charge; refusals for the rate limit are counted,
 * not written one by one.
 */
export function chargedRoute(deps: ApiDeps, endpoint: string, work: (req: Request, ctx: WorkContext) => Promise<ChargedWork>): RequestHandler {
  // restify tells a promise-returning step from a callback one by being an async function.
  return async (req: Request, res: Response) => {
    await handle(req, res, deps, endpoint, work);
  };
}

async function handle(req: Request, res: Response, deps: ApiDeps, endpoint: string, work: (req: Request, ctx: WorkContext) => Promise<ChargedWork>): Promise<void> {
  const ctx: Ctx = { format: null, recorded: false, done: false };
  const cancel = new Cancel();
  const deadline = performance.now() + deps.config.requestTimeoutMs;

  /** Writes the request's one usage row (unless written) and the answer, if there is still
   * someone to answer. A ledger that cannot record turns the answer into its 503; never throws. */
  async function finish(err: ApiError | null, status: number): Promise<void> {
    if (ctx.key && !ctx.recorded) {
      ctx.recorded = true;
      const entry = { endpoint, status, format: ctx.format };
      if (err?.code === 'RATE_LIMITED') deps.billing.countRejected(ctx.key, entry);
      else {
        try {
          await deps.billing.record(ctx.key, entry);
        } catch (e) {
          if (err) err = toApiError(e, deps.log);
        }
      }
    }
    if (err && !res.headersSent && !res.destroyed) sendError(res, err);
  }

  // The timeout's or the hang-up's finish: the handler returns only once it has answered, or
  // restify, seeing a handler end without an answer, sends one of its own (a 500).
  let ending: Promise<void> | undefined;
  const timer = setTimeout(() => {
    if (ctx.done) return;
    ctx.done = true;
    const err = new ApiError('TIMEOUT');
    cancel.cancel(err);
    // Nothing may escape from a timer: finish() answers whatever the ledger does.
    ending = finish(err, err.status);
  }, deps.config.requestTimeoutMs);
  // A client that hangs up before its answer is written: recorded as 499, never charged.
  const gone = () => {
    if (ctx.done) return;
    ctx.done = true;
    cancel.cancel(new ApiError('TIMEOUT', 'The client went away.'));
    ending = finish(null, CLIENT_GONE_STATUS);
  };
  res.once('close', gone);

  try {
    const key = await requireKey(deps, req, res);
    // From here on every answer, errors included, is recorded against the key.
    ctx.key = key;
    await takeRate(deps, key, res);

    const out = await work(req, {
      key,
      cancel,
      deadline,
      recordFormat: (f) => {
        ctx.format = f;
      },
    });
    if (out.refused === 'deadline') throw new ApiError('TIMEOUT');
    const cost = creditsFor(out.count, out.format);
    if (out.refused === 'credits') {
      throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${await deps.billing.balance(key)}. Nothing was written or charged.`);
    }

    if (ctx.done) return; // timed out or hung up meanwhile: answered and recorded already
    let charge;
    try {
      // The charge is refused (nothing written) if the request ends while it waits for the
      // ledger; its first try runs in this same tick, so a hang-up seen before it pays nothing.
      charge = await deps.billing.charge(key, cost, { endpoint, status: 200, format: out.format }, () => ctx.done);
    } finally {
      // Charged and recorded, or (the ledger failed) nothing written at all: either way no
      // second row for this request.
      ctx.recorded = true;
    }
    if (ctx.done) return;
    if (!charge.ok && charge.revoked) throw new ApiError('UNAUTHORIZED', 'The key was revoked while the request ran; nothing was charged.');
    if (!charge.ok) throw new ApiError('INSUFFICIENT_CREDITS', `This request costs ${cost} credits; the key has ${charge.balance}.`);
    ctx.done = true;

    // What every charged answer carries (CHARGED_HEADERS in operations.ts documents them).
    if (out.basemapWarning) deps.log(`basemap: ${out.basemapWarning}; the tile is skipped (later failures are counted in /api/v1/status)`);
    res.header('X-Attribution', out.basemapAttribution ? headerText(`${ATTRIBUTION}; basemap: ${out.basemapAttribution}`) : ATTRIBUTION);
    res.header('X-Data-Sources', out.sources.join(','));
    res.header('X-Location-Count', String(out.count));
    res.header('X-Brand', headerText(out.brand));
    res.header('X-Region', headerText(out.region));
    res.header('X-Render-Time', `${Math.round(out.ms)}ms`);
    res.header('X-Credits-Charged', String(charge.charged));
    res.header('X-Credits-Remaining', String(charge.remaining));
    if (!PLAN_RULES[key.plan].unlimited && charge.remaining < LOW_CREDIT_THRESHOLD) res.header('X-Credits-Low', 'true');
    for (const [name, value] of Object.entries(out.headers)) if (value !== undefined) res.header(name, value);
    res.status(200);
    res.header('content-type', out.contentType);
    deps.pending.track(res, out.body.length, key.id);
    res.end(out.body);
  } catch (e) {
    if (ctx.done) return; // the timeout or the hang-up already ended it (a cancelled charge ends here too)
    ctx.done = true;
    const err = toApiError(e, deps.log);
    await finish(err, err.status);
  } finally {
    clearTimeout(timer);
    res.off('close', gone);
    await ending;
  }
}
