// The brand directory: every brand with at least one storefront the data formats serve,
// built once per snapshot (a few thousand entries) and kept in both orders the API sorts by,
// so a page is a filter and a slice.
import { historySync, type BrandInfo, type Resolved, type Store } from '../native.ts';
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

/** Whether a brand trades in a country, as a name asked for there is read (see `namesakeIn`). */
export type Presence = (store: Store, brand: number, country: string) => boolean;

/** A brand is in a country when it has storefronts there now: what a listing or a map asks. */
export const STOREFRONTS_NOW: Presence = (store, brand, country) => rowsIn(store, brand, country) > 0;

/** A brand is in a country when it has storefronts there now or had any within the history
 * the data folder keeps: what the change feed and the store-count history ask. A chain whose
 * last store there closed is still the chain asked about ("Woolworths" in Australia after
 * South Africa's Woolworths left it is its closures, not the Australian namesake's feed). */
export const STOREFRONTS_IN_HISTORY: Presence = (store, brand, country) => rowsIn(store, brand, country) > 0 || hadRowsIn(store, brand, country);

/** What one name of a request resolves to. In a `tickers` field a ticker is read as one first
 * (GAP names Gap Inc.'s primary brand, Old Navy, where the brand field reads "GAP" as the name
 * of its brand Gap); a name there still resolves as in the brand field. Asked for in one
 * `country`, a name whose brand is not `present` there is the brand of that name the
 * name-suggestion-index tells apart by a qualifier and that has storefronts there (see
 * `namesakeIn`). */
export function resolveName(store: Store, name: string, tickers = false, country?: string, present: Presence = STOREFRONTS_NOW): Resolved | null {
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

/** Where `found` has no storefront in `country`: the brand named as it is, or as it is with a
 * qualifier in brackets, that has the most there. The name-suggestion-index names chains
 * that share a name so: "Woolworths" is South Africa's and "Woolworths (Australia)"
 * Australia's, "Target (USA)" and "Target (Australia)", "Coop (Nederland)" and "Coop
 * (Schweiz)"; someone asking for Woolworths in Australia means the Australian one. */
function namesakeIn(store: Store, found: Resolved, name: string, country: string, present: Presence): Resolved | null {
  // A name asked for with its qualifier ("Target (USA)") is that brand, wherever it is asked.
  if (QUALIFIED.test(name) || rowsIn(store, found.brand, country) > 0) return null;
  const index = namesakes(store);
  const candidates = new Set([...(index.get(baseKey(found.name)) ?? []), ...(index.get(baseKey(name)) ?? [])]);
  let best: { brand: number; name: string; rows: number } | null = null;
  for (const b of candidates) {
    if (b === found.brand) continue;
    const rows = rowsIn(store, b, country);
    if (rows > (best?.rows ?? 0)) best = { brand: b, name: store.brand(b)!.name, rows };
  }
  // Asked last, as it may read the history: only where a namesake would otherwise answer.
  if (!best || present(store, found.brand, country)) return null;
  return { brand: best.brand, name: best.name, by: found.by };
}

const pastByStore = new WeakMap<Store, Map<string, boolean>>();

/** Whether a brand served a storefront in a country at any time the data folder's history
 * holds (a store-count series over its whole reach), once per snapshot, brand and country;
 * asked only for a brand with none there now and a namesake that has. A folder without a
 * history has no past to read: the brand is read as it is now. */
function hadRowsIn(store: Store, brand: number, country: string): boolean {
  let past = pastByStore.get(store);
  if (!past) pastByStore.set(store, (past = new Map()));
  const key = `${brand} ${country}`;
  let had = past.get(key);
  if (had === undefined) {
    try {
      had = historySync(store, { brand, interval: 'quarter', country }).series.some((p) => p.stores > 0 || p.closed > 0);
    } catch {
      had = false;
    }
    past.set(key, had);
  }
  return had;
}

/** Each snapshot's brands with storefronts (its directory's) by `baseKey`, built on first
 * use: every namesake of a name, however short ("OK (Danmark)" and "OK (Nederland)", "A1
 * (Srbija)"), which a search by the typed name's prefix does not reach. */
const namesakeIndex = new WeakMap<Store, Map<string, number[]>>();
function namesakes(store: Store): Map<string, number[]> {
  let index = namesakeIndex.get(store);
  if (!index) {
    index = new Map();
    for (const e of directoryOf(store).byCount) {
      const key = baseKey(e.brand);
      const list = index.get(key);
      if (list) list.push(e.index);
      else index.set(key, [e.index]);
    }
    // In the snapshot's order, which breaks a tie between namesakes.
    for (const list of index.values()) list.sort((x, y) => x - y);
    namesakeIndex.set(store, index);
  }
  return index;
}

/** Brand names, aliases or tickers to brands, one per company (two spellings of one company
 * count once), in the order given; the first that resolves to nothing is thrown as NOT_FOUND
 * with suggestions. `tickers`: the names are a `tickers` field's; `country`: the one the
 * request asks in, and `present`: what being there means (see `resolveName`). */
export function resolveBrands(store: Store, names: string[], tickers = false, country?: string, present: Presence = STOREFRONTS_NOW): { brands: number[]; label: string } {
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
