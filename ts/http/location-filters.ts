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
  return {
    country: f.country,
    state: f.state !== undefined && deps.subdivisions ? deps.subdivisions.code(f.state, f.country) : f.state,
    city: f.city,
    postcode: f.postcode,
    radiusKm: f.radius_km,
    storefrontType: f.storefront_type,
  };
}
