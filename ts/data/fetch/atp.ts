// AllThePlaces: the storefront groups of its grouped runs, or a combined run's zip.
import path from 'node:path';
import { z } from 'zod';
import type { Ctx, FileSpec, Plan } from './plan.ts';
import { jsonBody, parseWith, request } from './download.ts';

/** A run as `runs/latest.json` described it before AllThePlaces grouped its runs, and as
 * `runs/<group>/latest.json` still does: one combined zip. */
const AtpRun = z.object({
  run_id: z.string().optional(),
  output_url: z.string().min(1),
  size_bytes: z.number().optional(),
});

/** `runs/latest.json` since the grouped runs (AllThePlaces' design doc
 * docs/superpowers/specs/2026-04-11-grouped-spider-runs-design.md): no combined zip, a `groups`
 * array with one zip per group. */
const AtpGroups = z.object({
  updated_at: z.string().optional(),
  groups: z.array(
    z.object({
      name: z.string(),
      zip_url: z.string().min(1).optional(),
      size_bytes: z.number().optional(),
      last_run_id: z.string().optional(),
      last_run_time: z.string().optional(),
    }),
  ),
});

/** Groups whose spiders are not storefronts: street addresses, government registers, and
 * infrastructure (masts, chargers, post boxes). Every other group, `brands` and `aggregators`
 * and any added later, is fetched. */
const ATP_SKIPPED_GROUPS = new Set(['addresses', 'government', 'infrastructure']);

/** The combined zip of the runs before grouping, and the groups' zips: a fetch removes the
 * layout it did not write, or the importer would read every store twice. */
const ATP_COMBINED = 'output.zip';

export async function planAtp(ctx: Ctx, out: string): Promise<Plan> {
  const latestUrl = `${ctx.config.atpBase}/runs/latest.json`;
  const latest = await jsonBody(await request(ctx, latestUrl), latestUrl, 'atp');
  const grouped = AtpGroups.safeParse(latest);
  if (grouped.success) {
    const groups = grouped.data.groups.filter((g) => !ATP_SKIPPED_GROUPS.has(g.name) && g.zip_url);
    if (groups.length === 0) throw new Error(`atp: ${latestUrl} lists no storefront group with a zip_url (groups: ${grouped.data.groups.map((g) => g.name).join(', ') || 'none'})`);
    for (const g of grouped.data.groups.filter((g) => ATP_SKIPPED_GROUPS.has(g.name))) ctx.log(`atp: group ${g.name} skipped (not storefronts)`);
    const files = groups.map((g): FileSpec => {
      if (!/^[a-z0-9_-]+$/i.test(g.name)) throw new Error(`atp: ${latestUrl} names a group "${g.name}", which is not a plain name`);
      const url = new URL(g.zip_url!, latestUrl).href;
      ctx.log(`atp: group ${g.name}, run ${g.last_run_id ?? '(no run id)'}: ${url}`);
      return { source: 'atp', url, dest: path.join(out, `${g.name}.zip`), size: g.size_bytes, sizeFrom: latestUrl, zip: true };
    });
    return { files, supersedes: [ATP_COMBINED] };
  }
  const combined = AtpRun.safeParse(latest);
  if (combined.success) {
    const url = new URL(combined.data.output_url, latestUrl).href;
    ctx.log(`atp: latest run ${combined.data.run_id ?? '(no run_id)'}: ${url}`);
    return { files: [{ source: 'atp', url, dest: path.join(out, ATP_COMBINED), size: combined.data.size_bytes, sizeFrom: latestUrl, zip: true }], supersedesGroups: true };
  }
  // Neither shape: the brands group's own run metadata (the old shape, its zip brands.zip).
  const brandsUrl = `${ctx.config.atpBase}/runs/brands/latest.json`;
  ctx.log(`atp: ${latestUrl} has neither groups nor an output_url; trying ${brandsUrl}`);
  const run = parseWith(AtpRun, await jsonBody(await request(ctx, brandsUrl), brandsUrl, 'atp'), brandsUrl, 'atp', 'run metadata with an output_url');
  const url = new URL(run.output_url, brandsUrl).href;
  ctx.log(`atp: brands run ${run.run_id ?? '(no run_id)'}: ${url}`);
  return { files: [{ source: 'atp', url, dest: path.join(out, 'brands.zip'), size: run.size_bytes, sizeFrom: brandsUrl, zip: true }], supersedes: [ATP_COMBINED] };
}
