// The request the keyed-path benchmarks send: a brand and country with about N verified rows.
import type { Store } from '../ts/native.ts';

/** The brand and country whose verified row count is nearest `rows` (brands with fewer rows in
 * all are skipped). */
export function pickBrandCountry(s: Store, rows: number): { brand: string; country: string; count: number } {
  const brands = (s.info() as { brands: number }).brands;
  let best = { brand: '', country: '', count: 0 };
  for (let i = 0; i < brands; i++) {
    const b = s.brand(i)!;
    if (b.locationCount < rows) continue;
    for (const c of s.countryCounts(i)) {
      if (Math.abs(c.locationCount - rows) < Math.abs(best.count - rows)) best = { brand: b.name, country: c.country, count: c.locationCount };
    }
  }
  return best;
}
