// Response headers shared by the data routes.
export const ATTRIBUTION =
  'AllThePlaces contributors (CC0 1.0); Foursquare Open Source Places (Apache 2.0); OpenStreetMap contributors (ODbL 1.0); Overture Maps Foundation (CDLA Permissive 2.0)';

/** Header values must be Latin-1: text outside printable ASCII (a city named 東京, a brand
 * named 麥當勞) is percent-encoded as UTF-8, as in RFC 8187, and so is `%` itself (`% Arabica`
 * is `%25 Arabica`), so that decoding any value gives back the text. */
export function headerText(s: string): string {
  return /^[\x20-\x24\x26-\x7e]*$/.test(s) ? s : s.replace(/[^\x20-\x24\x26-\x7e]+/g, (m) => encodeURIComponent(m));
}

/** `X-Legend` on a map image that asked for a legend: whether it is drawn (undefined, no
 * header, when none was asked for). */
export function legendHeader(asked: boolean | undefined, omitted: boolean | undefined): string | undefined {
  return asked ? (omitted ? 'omitted' : 'drawn') : undefined;
}
