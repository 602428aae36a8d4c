// /llms.txt, per the llms.txt convention (https://llmstxt.org): an H1 with the name, a
// blockquote summary, prose without headings, then H2 sections of link lists; the section named
// "Optional" holds what a reader short of context may skip.
import { OPERATIONS, type Operation } from '../api/operations.ts';
import { AUTH, creditsText, SUMMARY, TITLE } from './descriptions.ts';

interface Link {
  title: string;
  path: string;
  notes: string;
}

function section(title: string, links: Link[]): string {
  return [`## ${title}`, '', ...links.map((l) => `- [${l.title}](${l.path}): ${l.notes}`)].join('\n');
}

/** Paths are relative to the server (it may sit behind any host name); pass the public base
 * address to get absolute links. */
export function llmsTxt(operations: Operation[] = OPERATIONS, base = ''): string {
  const at = (path: string) => base.replace(/\/$/, '') + path;
  const has = (id: string) => operations.find((o) => o.id === id);
  const summary = has('locationMap');
  const feed = has('changes');
  const counts = has('history');
  const near = has('nearby');
  const pairs = has('overlap');
  const docs: Link[] = [
    { title: 'API reference', path: at('/api/agent-docs'), notes: 'every endpoint, parameter, response field, header and error code in one markdown document' },
    { title: 'OpenAPI 3.1 description', path: at('/api/openapi.yaml'), notes: 'the same reference, machine-readable (YAML)' },
  ];
  const optional: Link[] = [
    { title: 'Data licences and attribution', path: at('/ATTRIBUTION.txt'), notes: 'full licence notices of OpenStreetMap, Overture Maps, Foursquare Open Source Places, AllThePlaces and the reference data' },
    { title: 'Service status', path: at('/api/v1/status'), notes: 'health and data freshness as JSON; public, cached 30 seconds' },
    { title: 'Playground', path: at('/playground'), notes: 'a browser page to try location-map, nearby and overlap and copy the curl command' },
    { title: 'Brand directory', path: at('/api/v1/brands'), notes: 'brands with storefronts, searchable (`q`), sorted and paged (`limit`, `offset`); public, free' },
  ];
  return [
    `# ${TITLE}`,
    '',
    `> ${SUMMARY}`,
    '',
    summary
      ? `The main call is \`${summary.method.toUpperCase()} ${summary.path}\` with a JSON body such as \`{"brand": "starbucks", "country": "US", "format": "csv"}\`: \`brand\` takes a name in any case, a common variant or a stock ticker; filters (\`country\`, \`state\`, \`city\`, \`postcode\`, \`radius_km\`, \`storefront_type\`) combine with AND; formats are json, csv, geojson, png and jpeg. Every answer says how complete it is likely to be: \`coverage_confidence\` (in the JSON envelope and the GeoJSON collection, and the X-Coverage-Confidence header) is the estimated share of the brand's storefronts within the filters that it holds, null where too few storefronts or sources to estimate.`
      : '',
    '',
    near
      ? `Nearest stores: \`${near.method.toUpperCase()} ${near.path}\` with \`{"brand": "starbucks", "lat": 47.6097, "lng": -122.3422, "limit": 10}\` returns the nearest storefronts first, each with \`distance_m\` (great-circle metres); leave out \`brand\` for stores of any brand, add \`radius_km\` to bound the search; data plans only, priced like the main call by result count.`
      : '',
    '',
    summary && near
      ? `Open now: add \`"open_at": "2026-12-01T21:30"\` to either call for only the stores open at that moment by their \`opening_hours\` (OpenStreetMap's syntax, from OpenStreetMap and AllThePlaces). Without an offset it is each store's own wall-clock time; with one (\`Z\`, \`+09:00\`) it is one instant, read in each store's time zone from its coordinates. Stores without hours are left out and counted in \`hours_unknown\` (and X-Hours-Unknown). JSON and GeoJSON rows always carry \`opening_hours\`; CSV adds it as a twelfth column with \`"include_hours": true\`.`
      : '',
    '',
    pairs
      ? `Competitor overlap: \`${pairs.method.toUpperCase()} ${pairs.path}\` with \`{"tickers": ["SBUX", "MCD"], "distance_m": 200, "country": "US"}\` lists every pair of the chains' stores within the distance and, per brand and per country, how many stores have such a neighbour; data plans only, priced by pairs.`
      : '',
    '',
    feed
      ? `What changed: \`${feed.method.toUpperCase()} ${feed.path}?brand=starbucks&since=2026-11-01&country=US\` lists the brand's stores opened and closed between the refresh in force at \`since\` and now (same filters and formats as the main call, each row with \`first_seen\` or \`last_seen\`); data plans only, priced by opened plus closed rows.`
      : '',
    '',
    counts
      ? `Store counts over time: \`${counts.method.toUpperCase()} ${counts.path}?ticker=SBUX&country=US&interval=quarter\` gives, per calendar quarter (or month), the stores served at its end and the stores opened and closed within it, from the same history as the change feed, as JSON or CSV; data plans only, priced by periods (a few years of quarters cost 1 credit).`
      : '',
    '',
    AUTH,
    '',
    creditsText(),
    '',
    'Every error is JSON `{error, code}` with a stable code; unknown brands come back as 404 `NOT_FOUND` with `suggestions`.',
    '',
    section('Docs', docs),
    '',
    section('Optional', optional),
    '',
  ].join('\n');
}
