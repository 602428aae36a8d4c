// OpenStreetMap extracts from Geofabrik: the country's extract found in Geofabrik's index, and
// its published MD5.
import path from 'node:path';
import { z } from 'zod';
import type { Ctx, FileSpec, Plan } from './plan.ts';
import { fileName, httpError, jsonBody, parseWith, request } from './download.ts';

const GeofabrikIndex = z.object({
  features: z.array(
    z.object({
      properties: z.object({
        id: z.string(),
        parent: z.string().optional(),
        'iso3166-1:alpha2': z.array(z.string()).optional(),
        urls: z.object({ pbf: z.string().optional() }).optional(),
      }),
    }),
  ),
});
type GeofabrikExtract = z.infer<typeof GeofabrikIndex>['features'][number]['properties'];

/**
 * The extracts for a country, best first: among the features listing it in `iso3166-1:alpha2`
 * and having a PBF, those covering the fewest countries (Switzerland, not "dach"), then the
 * shallowest in the `parent` chain (the country, not a region of it), then by id.
 */
export function rankExtracts(extracts: GeofabrikExtract[], country: string): GeofabrikExtract[] {
  const byId = new Map(extracts.map((e) => [e.id, e]));
  const depth = (e: GeofabrikExtract) => {
    let d = 0;
    const seen = new Set<string>();
    for (let p = e.parent; p && byId.has(p) && !seen.has(p); p = byId.get(p)!.parent) {
      seen.add(p);
      d++;
    }
    return d;
  };
  const codes = (e: GeofabrikExtract) => (e['iso3166-1:alpha2'] ?? []).map((c) => c.toUpperCase());
  return extracts
    .filter((e) => e.urls?.pbf && codes(e).includes(country))
    .sort((a, b) => codes(a).length - codes(b).length || depth(a) - depth(b) || a.id.localeCompare(b.id));
}

export async function planOsm(ctx: Ctx, country: string, out: string): Promise<Plan> {
  const mirror = ctx.config.osmMirror;
  let indexUrl = `${mirror}/index-v1-nogeom.json`;
  let res = await request(ctx, indexUrl);
  if (res.status === 404) {
    await res.body?.cancel();
    indexUrl = `${mirror}/index-v1.json`;
    res = await request(ctx, indexUrl);
  }
  const index = parseWith(GeofabrikIndex, await jsonBody(res, indexUrl, 'osm'), indexUrl, 'osm', 'a Geofabrik index (GeoJSON FeatureCollection)');
  const extracts = index.features.map((f) => f.properties);
  const [pick, ...others] = rankExtracts(extracts, country);
  if (!pick) throw new Error(`osm: Geofabrik has no extract for country ${country} (no feature of ${indexUrl} lists it in iso3166-1:alpha2)`);
  const url = onMirror(new URL(pick.urls!.pbf!, indexUrl).href, mirror);
  const also = others.length ? ` (also listing ${country}: ${others.map((e) => e.id).join(', ')})` : '';
  ctx.log(`osm: ${country} is Geofabrik extract "${pick.id}"${also}: ${url}`);

  const md5Url = `${url}.md5`;
  const md5Res = await request(ctx, md5Url);
  let checksum: FileSpec['checksum'];
  if (md5Res.status === 404) {
    await md5Res.body?.cancel();
    ctx.log(`osm: no checksum published (${md5Url}: HTTP 404); the download is checked against Content-Length only`);
  } else {
    if (!md5Res.ok) throw await httpError(md5Res, md5Url, 'osm');
    const text = await md5Res.text();
    const m = /^\s*([0-9a-fA-F]{32})(?:\s|$)/.exec(text);
    if (!m) throw new Error(`osm: ${md5Url} is not an MD5 checksum file ("<hex>  <file name>")`);
    checksum = { alg: 'md5', hex: m[1].toLowerCase(), from: md5Url };
  }
  return { files: [{ source: 'osm', url, dest: path.join(out, fileName(url)), checksum }] };
}

/** A PBF URL on Geofabrik's own host, moved to the configured mirror (same path). */
function onMirror(url: string, mirror: string): string {
  if (url.startsWith(`${mirror}/`)) return url;
  const u = new URL(url);
  if (u.hostname === 'download.geofabrik.de' && new URL(mirror).hostname !== u.hostname) return `${mirror}${u.pathname}`;
  return url;
}
