// ISO 3166-2 subdivisions (the reference step's subdivisions.csv): the `state` filter accepts a
// subdivision's code ("BY", "NSW", "13") or its name ("Bavaria", "new south wales",
// "Île-de-France" or "ile de france"), case- and accent-insensitive, and the query gets the
// code the data carries.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';

/** Lower case, accents and punctuation off: "Île-de-France" and "ile de france" are one key. */
export function foldName(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export class Subdivisions {
  /** country → folded name or code → code */
  readonly #byCountry = new Map<string, Map<string, string>>();

  static fromCsv(file: string): Subdivisions {
    const rows = parse(readFileSync(file, 'utf8'), { columns: true }) as { country: string; code: string; name: string }[];
    const s = new Subdivisions();
    for (const r of rows) {
      let m = s.#byCountry.get(r.country);
      if (!m) s.#byCountry.set(r.country, (m = new Map()));
      m.set(foldName(r.code), r.code);
      // A name shared by two subdivisions of one country keeps the first (the codes differ).
      if (!m.has(foldName(r.name))) m.set(foldName(r.name), r.code);
    }
    return s;
  }

  /**
   * The subdivision a `state` filter means: in `country` when given, else in the US first (the
   * contract: "USPS two-letter for the US"), then any country, in code order; with the country it
   * was found in, so that "Mississippi" is the US's MS and not Brazil's Mato Grosso do Sul, and
   * "WA" Washington, not Western Australia too. Unknown text is passed on as given, with no
   * country (it matches nothing, or a code the table does not list).
   */
  resolve(state: string, country?: string): { code: string; country?: string } {
    const key = foldName(state);
    if (country) return { code: this.#byCountry.get(country.toUpperCase())?.get(key) ?? state, country };
    for (const c of ['US', ...[...this.#byCountry.keys()].sort()]) {
      const hit = this.#byCountry.get(c)?.get(key);
      if (hit) return { code: hit, country: c };
    }
    return { code: state };
  }
}
