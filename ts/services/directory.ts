// The brand directory: every brand with at least one storefront the data formats serve,
// built once per snapshot (a few thousand entries) and kept in both orders the API sorts by,
// so a page is a filter and a slice.
import { historySync, NativeError, type BrandInfo, type Resolved, type Store } from '../native.ts';
import { ApiError } from '../api/errors.ts';

export interface DirectoryEntry {
  brand: string;
  brand_wikidata: string | null;
  ticker: string | null;
  company: string | null;
  location_count: number;
}

/** A brand as the directory, search and summaries name it. */
export function directoryEntryOf(b: BrandInfo): DirectoryEntry {
  return { brand: b.name, brand_wikidata: b.wikidata ?? null, ticker: b.ticker ?? null, company: b.company ?? null, location_count: b.locationCount };
}

interface Entry extends DirectoryEntry {
  index: number;
  lower: string;
}

/**
 * A name as the directory's filters compare it: compatibility-normalised (NFKC: "café" typed
 * with a combining accent is "café", fullwidth "ＭＣＤ" is "MCD") and lower case, with the dot of
 * a Turkish capital İ dropped after lowering ("BİM" lowers to "bi̇m", which "bim" would not find).
 */
export function foldCase(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/i\u0307/g, 'i');
}

/** The directory's name order (`sort=name`): the root collation, base strength. */
export const NAME_COLLATOR = new Intl.Collator('und', { sensitivity: 'base' });

export type SearchMatch = 'ticker' | 'exact' | 'prefix' | 'substring';

export class Directory {
  readonly byCount: Entry[];
  readonly byName: Entry[];

  constructor(store: Store) {
    const entries: Entry[] = [];
    const n = store.info().brands;
    for (let i = 0; i < n; i++) {
      const b = store.brand(i)!;
      if (b.locationCount === 0) continue;
      entries.push({ ...directoryEntryOf(b), index: i, lower: foldCase(b.name) });
    }
    // Names in the Unicode root collation (CLDR) at base strength: case and accents folded, so
    // "Škoda" sorts among the S names and "Crédit Mutuel" before "Crocs"; Latin before other
    // scripts. Equal under it, the code units decide, so the order is total.
    const byName = (a: Entry, b: Entry) => NAME_COLLATOR.compare(a.brand, b.brand) || (a.brand < b.brand ? -1 : a.brand > b.brand ? 1 : 0);
    this.byName = [...entries].sort(byName);
    this.byCount = [...entries].sort((a, b) => b.location_count - a.location_count || byName(a, b));
  }

  /** One page of the brands whose name contains `q` (case-insensitive, as `foldCase` folds). */
  page(q: string | undefined, sort: 'count' | 'name', limit: number, offset: number): { total: number; brands: DirectoryEntry[] } {
    const all = sort === 'name' ? this.byName : this.byCount;
    const needle = q === undefined ? undefined : foldCase(q);
    const matches = needle ? all.filter((e) => e.lower.includes(needle)) : all;
    return { total: matches.length, brands: matches.slice(offset, offset + limit).map(publicEntry) };
  }

  /**
   * Autocomplete: the brand whose ticker is `q`, the brand named exactly `q`, names starting
   * with it, then names containing it; within each rank, most storefronts first.
   */
  search(q: string, limit: number): (DirectoryEntry & { match: SearchMatch })[] {
    const needle = foldCase(q);
    const upper = q.normalize('NFKC').toUpperCase();
    const ranked: (DirectoryEntry & { match: SearchMatch })[] = [];
    const rank: Record<SearchMatch, Entry[]> = { ticker: [], exact: [], prefix: [], substring: [] };
    for (const e of this.byCount) {
      if (e.ticker === upper) rank.ticker.push(e);
      else if (e.lower === needle) rank.exact.push(e);
      else if (e.lower.startsWith(needle)) rank.prefix.push(e);
      else if (e.lower.includes(needle)) rank.substring.push(e);
    }
    for (const match of ['ticker', 'exact', 'prefix', 'substring'] as const) {
      for (const e of rank[match]) {
        if (ranked.length >= limit) return ranked;
        ranked.push({ ...publicEntry(e), match });
      }
    }
    return ranked;
  }
}

function publicEntry(e: Entry): DirectoryEntry {
  return { brand: e.brand, brand_wikidata: e.brand_wikidata, ticker: e.ticker, company: e.company, location_count: e.location_count };
}

// One directory per loaded snapshot; a swapped-in snapshot gets its own on first use.
const built = new WeakMap<Store, Directory>();

export function directoryOf(store: Store): Directory {
  let d = built.get(store);
  if (!d) {
    d = new Directory(store);
    built.set(store, d);
  }
  return d;
}

/** Typo-tolerant close matches for a name nothing resolves to: brands with storefronts only,
 * since a suggestion must be something the caller can then ask for. */
export function suggestionsFor(store: Store, name: string): { brand: string; location_count: number }[] {
  return store
    .suggest(name, 15)
    .filter((b) => b.locationCount > 0)
    .slice(0, 5)
    .map((b) => ({ brand: b.name, location_count: b.locationCount }));
}

/** What being in a country means when a name asked for there is read (see `namesakeIn`):
 * `now`, storefronts there now, for a listing or a map; `in_history`, storefronts there now or
 * at any time within the history the data folder keeps, for the change feed and the
 * store-count history. A chain whose last store there closed is still the chain asked about
 * there ("Woolworths" in Australia after South Africa's Woolworths left it is its closures, not
 * the Australian namesake's feed), and a namesake that closed its last store there is the one
 * whose closures are asked for. */
export type Presence = 'now' | 'in_history';

/** What one name of a request resolves to. In a `tickers` field a ticker is read as one first
 * (GAP names Gap Inc.'s primary brand, Old Navy, where the brand field reads "GAP" as the name
 * of its brand Gap); a name there still resolves as in the brand field. Asked for in one
 * `country`, a name whose brand is not `present` there is the brand of that name the
 * name-suggestion-index tells apart by a qualifier and that is (see `namesakeIn`). */
export function resolveName(store: Store, name: string, tickers = false, country?: string, present: Presence = 'now'): Resolved | null {
  const found = (tickers ? store.resolveTicker(name) : null) ?? store.resolve(name);
  if (!found || !country || found.by === 'ticker') return found;
  return namesakeIn(store, found, name, country.toUpperCase(), present) ?? found;
}

/** A name ending in a qualifier in brackets, as the name-suggestion-index tells namesakes apart. */
const QUALIFIED = /\([^()]*\)\s*$/;

/** A brand name without its qualifier, as a key that spelling does not change: "Co-op
 * (Canada)" and "Coop", "Nettó (Ísland)" and "Netto" are namesakes. */
function baseKey(name: string): string {
  return name
    .replace(QUALIFIED, '')
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]/gu, '')
    .toLowerCase();
}

const countsByStore = new WeakMap<Store, Map<number, Map<string, number>>>();

/** Storefronts a brand has in a country (rows a data format serves). Each brand's counts are
 * read from the snapshot once (a scan of its rows, on the event loop) and kept with it: every
 * request that names a country asks. */
function rowsIn(store: Store, brand: number, country: string): number {
  let brands = countsByStore.get(store);
  if (!brands) countsByStore.set(store, (brands = new Map()));
  let counts = brands.get(brand);
  if (!counts) brands.set(brand, (counts = new Map(store.countryCounts(brand).map((c) => [c.country, c.locationCount]))));
  return counts.get(country) ?? 0;
}

/** Where `found` is not in `country` (`present`): the brand named as it is, or as it is with a
 * qualifier in brackets, that has the most storefronts there, or, asked `in_history`, the first
 * that had any. The name-suggestion-index names chains that share a name so: "Woolworths" is
 * South Africa's and "Woolworths (Australia)" Australia's, "Target (USA)" and "Target
 * (Australia)", "Coop (Nederland)" and "Coop (Schweiz)"; someone asking for Woolworths in
 * Australia means the Australian one. */
function namesakeIn(store: Store, found: Resolved, name: string, country: string, present: Presence): Resolved | null {
  // A name asked for with its qualifier ("Target (USA)") is that brand, wherever it is asked.
  if (QUALIFIED.test(name) || rowsIn(store, found.brand, country) > 0) return null;
  const past = present === 'in_history';
  // Asked of the past, a namesake may have no storefront anywhere now: every brand is looked at.
  const index = namesakes(store, past);
  const candidates = [...new Set([...(index.get(baseKey(found.name)) ?? []), ...(index.get(baseKey(name)) ?? [])])].filter((b) => b !== found.brand);
  if (!candidates.length) return null;
  let best: number | undefined;
  let most = 0;
  for (const b of candidates) {
    const rows = rowsIn(store, b, country);
    if (rows > most) [best, most] = [b, rows];
  }
  // Read last, as it walks the history: only where a namesake is there to answer instead.
  if (past) {
    if (hadRowsIn(store, found.brand, country)) return null;
    best ??= candidates.sort((x, y) => x - y).find((b) => hadRowsIn(store, b, country));
  }
  return best === undefined ? null : { brand: best, name: store.brand(best)!.name, by: found.by };
}

const pastByStore = new WeakMap<Store, Map<string, boolean>>();

/** Whether a brand served a storefront in a country at any time the data folder's history
 * holds (a store-count series over its whole reach), once per snapshot, brand and country;
 * asked only for a brand with none there now that has a namesake. A folder without a history
 * has no past to read: the brand is read as it is now. The series is read on the event loop:
 * one brand in one country, once per snapshot. */
function hadRowsIn(store: Store, brand: number, country: string): boolean {
  let past = pastByStore.get(store);
  if (!past) pastByStore.set(store, (past = new Map()));
  const key = `${brand} ${country}`;
  let had = past.get(key);
  if (had === undefined) {
    try {
      had = historySync(store, { brand, interval: 'quarter', country }).series.some((p) => p.stores > 0 || p.closed > 0);
    } catch (e) {
      // No history kept (NOT_IMPLEMENTED): the brand is read as it is now. Anything else (an
      // unreadable history) is the request's failure, as it is the endpoint's own.
      if (!(e instanceof NativeError && e.code === 'NOT_IMPLEMENTED')) throw e;
      had = false;
    }
    past.set(key, had);
  }
  return had;
}

/** Each snapshot's brands by `baseKey`, built on first use: every namesake of a name, however
 * short ("OK (Danmark)" and "OK (Nederland)", "A1 (Srbija)"), which a search by the typed
 * name's prefix does not reach. Those with storefronts (the directory's), or with `every`, all
 * the snapshot's brands, a chain that has closed its last store included. */
const namesakeIndex = new WeakMap<Store, Map<boolean, Map<string, number[]>>>();
function namesakes(store: Store, every: boolean): Map<string, number[]> {
  let both = namesakeIndex.get(store);
  if (!both) namesakeIndex.set(store, (both = new Map()));
  let index = both.get(every);
  if (!index) {
    index = new Map();
    const brands = every ? allBrands(store) : directoryOf(store).byCount.map((e) => ({ index: e.index, name: e.brand }));
    for (const b of brands) {
      const key = baseKey(b.name);
      const list = index.get(key);
      if (list) list.push(b.index);
      else index.set(key, [b.index]);
    }
    // In the snapshot's order, which breaks a tie between namesakes.
    for (const list of index.values()) list.sort((x, y) => x - y);
    both.set(every, index);
  }
  return index;
}

function allBrands(store: Store): { index: number; name: string }[] {
  const out: { index: number; name: string }[] = [];
  for (let i = 0; i < store.info().brands; i++) out.push({ index: i, name: store.brand(i)!.name });
  return out;
}

/** Brand names, aliases or tickers to brands, one per company (two spellings of one company
 * count once), in the order given; the first that resolves to nothing is thrown as NOT_FOUND
 * with suggestions. `tickers`: the names are a `tickers` field's; `country`: the one the
 * request asks in, and `present`: what being there means (see `resolveName`). */
export function resolveBrands(store: Store, names: string[], tickers = false, country?: string, present: Presence = 'now'): { brands: number[]; label: string } {
  const brands: number[] = [];
  const labels: string[] = [];
  for (const name of names) {
    const found = resolveName(store, name, tickers, country, present);
    if (!found) throw new ApiError('NOT_FOUND', `No brand or ticker matches "${name}".`, { suggestions: suggestionsFor(store, name) });
    if (!brands.includes(found.brand)) {
      brands.push(found.brand);
      labels.push(found.name);
    }
  }
  return { brands, label: labels.join(', ') };
}
