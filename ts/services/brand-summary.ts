// The brand_summary table: per-brand counts stamped by each data refresh, and the freshness
// the status endpoint reports.
import type { DB } from '../db/database.ts';
import type { Store } from '../native.ts';
import { DAY_MS } from '../time.ts';

/** A monthly refresh plus ten days of grace. */
export const STALE_AFTER_DAYS = 40;

export function writeBrandSummary(db: DB, store: Store, at: number): number {
  const info = store.info();
  const upsert = db.prepare(
    `INSERT INTO brand_summary (brand, ticker, location_count, snapshot_version, refreshed_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(brand) DO UPDATE SET ticker = excluded.ticker, location_count = excluded.location_count,
       snapshot_version = excluded.snapshot_version, refreshed_at = excluded.refreshed_at`,
  );
  let n = 0;
  db.transaction(() => {
    // Brands gone from the new snapshot must not keep an old count.
    db.prepare('DELETE FROM brand_summary').run();
    for (let i = 0; i < info.brands; i++) {
      const b = store.brand(i)!;
      if (b.locationCount === 0) continue;
      upsert.run(b.name, b.ticker ?? null, b.locationCount, info.snapshot_version, at);
      n++;
    }
  }).immediate();
  return n;
}

export function freshness(db: DB, now: number): { last_refreshed_at: string | null; stale: boolean | null } {
  const row = db.prepare<[], { at: number | null }>('SELECT MAX(refreshed_at) AS at FROM brand_summary').get();
  if (!row || row.at === null) return { last_refreshed_at: null, stale: null };
  return { last_refreshed_at: new Date(row.at).toISOString(), stale: now - row.at > STALE_AFTER_DAYS * DAY_MS };
}
