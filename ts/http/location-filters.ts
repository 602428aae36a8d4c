// The contract's location filters (location-map's, which the change feed and the history share)
// as the addon's request fields: one home for the mapping, and for reading a subdivision's name
// or code as the data's code ("Bavaria" → "BY").
import type { StorefrontKind } from '../native.ts';
import type { ApiDeps } from './context.ts';

export interface LocationFilterFields {
  country?: string;
  state?: string;
  city?: string;
  postcode?: string;
  radius_km?: number;
  storefront_type?: StorefrontKind;
}

export function addonFilters(deps: ApiDeps, f: LocationFilterFields) {
  // A state named without a country narrows to the country it was found in.
  const sub = f.state !== undefined && deps.subdivisions ? deps.subdivisions.resolve(f.state, f.country) : { code: f.state, country: f.country };
  return {
    country: sub.country ?? f.country,
    state: sub.code,
    // Canonically equivalent text is the same city: "São" typed with a combining tilde (NFD,
    // as macOS file names and some keyboards send it) is the data's NFC "São".
    city: f.city?.normalize('NFC'),
    postcode: f.postcode?.normalize('NFC'),
    radiusKm: f.radius_km,
    storefrontType: f.storefront_type,
  };
}
