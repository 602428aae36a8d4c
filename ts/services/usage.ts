// A key's usage report: whole days in the window from the daily rollup (migration 3), the two
// partial days at its ends from the raw rows, folded into the totals, by-status, by-format and
// by-day views.
import type { LedgerOps, UsageGroup } from '../db/ledger.ts';
import { DAY_MS } from '../time.ts';


export interface UsageReport {
  api_key_id: string;
  billing_model: 'credits';
  range: { from: string; to: string; days: number };
  summary: { total_requests: number; error_count: number; error_rate_percent: number; total_credits_charged: number };
  by_status: Record<string, number>;
  by_format: Record<string, number>;
  by_day: { date: string; requests: number; errors: number; credits: number }[];
}

export class UsageReports {
  constructor(private readonly ledger: LedgerOps) {}

  /** The grouped rows of [from, to]: rollup rows for the whole days, raw rows for the rest. */
  async #groups(keyId: string, from: number, to: number): Promise<UsageGroup[]> {
    const end = to + 1;
    const firstWhole = Math.ceil(from / DAY_MS);
    const lastWhole = Math.floor(end / DAY_MS) - 1;
    if (lastWhole < firstWhole) return this.ledger.rawUsage(keyId, from, end);
    const parts = await Promise.all([
      this.ledger.rawUsage(keyId, from, firstWhole * DAY_MS),
      this.ledger.dailyUsage(keyId, firstWhole, lastWhole),
      this.ledger.rawUsage(keyId, (lastWhole + 1) * DAY_MS, end),
    ]);
    return parts.flat();
  }

  /** The report for [from, to] (milliseconds); the caller has checked the window. `pending`
   * are requests counted but not yet written (refusals the ledger writes in batches). */
  async report(keyId: string, from: number, to: number, pending: { at: number; status: number | null; format: string | null; n: number }[] = []): Promise<UsageReport> {
    const firstDay = Math.floor(from / DAY_MS);
    const lastDay = Math.floor(to / DAY_MS);
    const byDay = Array.from({ length: lastDay - firstDay + 1 }, (_, i) => ({
      date: new Date((firstDay + i) * DAY_MS).toISOString().slice(0, 10),
      requests: 0,
      errors: 0,
      credits: 0,
    }));
    // No prototype: a format or status that spells `constructor` or `__proto__` (rows written
    // before formats were checked) is a key like any other.
    const byStatus: Record<string, number> = Object.create(null) as Record<string, number>;
    const byFormat: Record<string, number> = Object.create(null) as Record<string, number>;
    let total = 0;
    let errors = 0;
    let credits = 0;
    const unwritten = pending.filter((p) => p.at >= from && p.at <= to).map((p) => ({ day: Math.floor(p.at / DAY_MS), status: p.status, format: p.format, n: p.n, credits: 0 }));
    for (const g of [...(await this.#groups(keyId, from, to)), ...unwritten]) {
      // A request is an error when it did not succeed; rows without a status count as neither.
      const failed = g.status !== null && g.status >= 400 ? g.n : 0;
      total += g.n;
      errors += failed;
      credits += g.credits;
      const status = g.status === null ? 'unknown' : String(g.status);
      const format = g.format ?? 'unknown';
      byStatus[status] = (byStatus[status] ?? 0) + g.n;
      byFormat[format] = (byFormat[format] ?? 0) + g.n;
      const d = byDay[g.day - firstDay];
      d.requests += g.n;
      d.errors += failed;
      d.credits += g.credits;
    }
    return {
      api_key_id: keyId,
      billing_model: 'credits',
      range: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), days: Math.ceil((to - from) / DAY_MS) },
      summary: {
        total_requests: total,
        error_count: errors,
        error_rate_percent: total === 0 ? 0 : Math.round((errors / total) * 10_000) / 100,
        total_credits_charged: credits,
      },
      by_status: byStatus,
      by_format: byFormat,
      by_day: byDay,
    };
  }
}
