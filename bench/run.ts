// `npm run bench`: every benchmark in turn; each rewrites its own section of RESULTS.md.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const passThrough = process.argv.slice(2);
// The benchmarks' floor and clustering exports live in the addon's test variant.
const built = spawnSync('bash', [path.join(here, '..', 'scripts', 'build.sh'), '--testing'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
for (const script of ['cluster.ts', 'pipeline.ts', 'location-map.ts', 'render.ts', 'streets.ts', 'request-path.ts', 'inline-query.ts', 'ledger-nodes.ts', 'ledger-report.ts', 'coverage.ts', 'fetch-cost.ts']) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, script), ...passThrough], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
