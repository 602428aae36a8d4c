// The brand_summary stamps: per-brand counts written by each data refresh, and the freshness
// the status endpoint reports, over either store.
import type { LedgerOps } from '../db/ledger.ts';
import type { Store } from '../native.ts';
import { DAY_MS } from '../time.ts';

/** A monthly refresh plus ten days of grace. */
export const STALE_AFTER_DAYS = 40;

/** Stamps every brand with storefronts; returns how many. */
export async function writeBrandSummary(ledger: LedgerOps, store: Store, at: number): Promise<number> {
  const info = store.info();
  const rows = [];
  for (let i = 0; i < info.brands; i++) {
    const b = store.brand(i)!;
    if (b.locationCount > 0) rows.push({ brand: b.name, ticker: b.ticker ?? null, locationCount: b.locationCount });
  }
  await ledger.stampBrandSummary(rows, info.snapshot_version, at);
  return rows.length;
}

export async function freshness(ledger: LedgerOps, now: number): Promise<{ last_refreshed_at: string | null; stale: boolean | null }> {
  const at = await ledger.brandSummaryStampedAt();
  if (at === null) return { last_refreshed_at: null, stale: null };
  return { last_refreshed_at: new Date(at).toISOString(), stale: now - at > STALE_AFTER_DAYS * DAY_MS };
}
