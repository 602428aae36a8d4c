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
  /** folded name or code → every country's subdivision it names, in country-code order: the
   * lookup without a country, made once rather than per request. */
  readonly #anywhere = new Map<string, { code: string; country: string }[]>();

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
    for (const c of [...s.#byCountry.keys()].sort()) {
      for (const [key, code] of s.#byCountry.get(c)!) {
        let hits = s.#anywhere.get(key);
        if (!hits) s.#anywhere.set(key, (hits = []));
        hits.push({ code, country: c });
      }
    }
    return s;
  }

  /**
   * The subdivision a `state` filter means. With `country`, that country's. Without: a US state
   * first (the contract: "USPS two-letter for the US"), narrowed to the US, so that
   * "Mississippi" is not also Brazil's Mato Grosso do Sul, nor "WA" Western Australia; else a
   * subdivision only one country has, narrowed to it ("Bavaria"); else a code several
   * countries share ("13": Tokyo and others) matches in each of them, as the rows carry it.
   * Unknown text is passed on as given, with no country.
   */
  resolve(state: string, country?: string): { code: string; country?: string } {
    const key = foldName(state);
    if (country) return { code: this.#byCountry.get(country.toUpperCase())?.get(key) ?? state, country };
    const us = this.#byCountry.get('US')?.get(key);
    if (us) return { code: us, country: 'US' };
    const hits = this.#anywhere.get(key) ?? [];
    if (hits.length === 1) return hits[0];
    return { code: hits[0]?.code ?? state };
  }
}
