// The change feed against the synthetic world's ground truth: the same world (scale 0.1, seed 1)
// built three times a week apart into one data folder, as weekly refreshes would, and after each
// refresh `storemap data report` scores what the history says opened and closed against the
// generator's truth: were they real openings and closures (precision), how many of the week's
// true openings and closures it reports (recall), with the sources' lag in noticing them
// (detection and closure lag) excluded and shown.
//
//   node --import tsx bench/changes.ts [--data-dir data/generated/bench/changes-0.1]
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { datasetReport } from '../ts/data/ingest.ts';
import { ROOT } from '../ts/paths.ts';
import { writeSection } from './results.ts';

interface ChangeScore {
  since: string;
  until: string;
  opened: number;
  opened_real: number;
  opened_precision: number;
  closed: number;
  closed_real: number;
  closed_precision: number;
  openings_in_window: number;
  openings_in_window_reported: number;
  openings_in_window_served: number;
  closures_in_window: number;
  closures_in_window_reported: number;
  closures_in_window_unserved: number;
  closed_still_served: number;
  closed_still_served_median_days: number | null;
}

const args = process.argv.slice(2);
const dataDir = args.includes('--data-dir') ? path.resolve(args[args.indexOf('--data-dir') + 1]) : path.join(ROOT, 'data', 'generated', 'bench', 'changes-0.1');
const weeks = ['2026-12-01T00:00:00Z', '2026-12-08T00:00:00Z', '2026-12-15T00:00:00Z'];
const scores: ChangeScore[] = [];
for (const [i, asOf] of weeks.entries()) {
  const build = ['bin/storemap.js', 'data', 'build', '--scale', '0.1', '--seed', '1', '--as-of', asOf];
  const r = spawnSync(process.execPath, build, { cwd: ROOT, stdio: 'inherit', env: { ...process.env, STOREMAP_DATA_DIR: dataDir } });
  if (r.status !== 0) throw new Error(`the build as of ${asOf} failed`);
  const report = (await datasetReport(dataDir)) as { changes?: ChangeScore | null };
  if (i > 0) {
    if (!report.changes) throw new Error(`no change score after the refresh as of ${asOf}`);
    scores.push(report.changes);
  }
}

const pct = (a: number, b: number) => (b === 0 ? '—' : `${((100 * a) / b).toFixed(1)} %`);
const verdict = (a: number, b: number) => (b === 0 || a / b >= 0.95 ? 'met' : '**missed**');
const lines = [
  '## The change feed against the ground truth',
  '',
  `\`node --import tsx bench/changes.ts\` — the synthetic world at scale 0.1, seed 1, built as of ${weeks.join(', ')} into one folder (\`${path.relative(ROOT, dataDir)}\`), as weekly refreshes; after each refresh, \`storemap data report\` scores what the id history says the refresh opened and closed (the feed's answer for \`since\` = the refresh before) against the generator's truth (\`sources/truth-churn.csv\`, \`truth.csv\`). Precision: the reported store really opened since the survey (and is open), or really closed. Recall with the lag excluded: of the week's true openings the sources already list well enough to serve, and of its true closures (of stores served a week before) no longer served, the share reported. The lags are the sources' (\`crates/ingest/src/world/churn.rs\`: AllThePlaces notices in days, Overture in weeks, Foursquare and OpenStreetMap in months).`,
  '',
  '| week | reported opened (real) | precision | reported closed (real) | precision | week\'s openings: served / reported | recall, lag excluded | week\'s closures: unserved / reported | recall, lag excluded |',
  '|---|---|---|---|---|---|---|---|---|',
  ...scores.map(
    (s) =>
      `| ${s.since.slice(0, 10)} → ${s.until.slice(0, 10)} | ${s.opened} (${s.opened_real}) | ${pct(s.opened_real, s.opened)}: ${verdict(s.opened_real, s.opened)} | ${s.closed} (${s.closed_real}) | ${pct(s.closed_real, s.closed)}: ${verdict(s.closed_real, s.closed)} | ${s.openings_in_window_served} / ${s.openings_in_window_reported} | ${pct(s.openings_in_window_reported, s.openings_in_window_served)}: ${verdict(s.openings_in_window_reported, s.openings_in_window_served)} | ${s.closures_in_window_unserved} / ${s.closures_in_window_reported} | ${pct(s.closures_in_window_reported, s.closures_in_window_unserved)}: ${verdict(s.closures_in_window_reported, s.closures_in_window_unserved)} |`,
  ),
  '',
  'The lags, which the targets exclude (the contract\'s "closure detection lags"):',
  '',
  '| week | true openings in the week | not yet served (detection lag) | true closures of served stores in the week | still served (closure lag) | closed stores still served at the end of the week | their median days since closing |',
  '|---|---|---|---|---|---|---|',
  ...scores.map(
    (s) =>
      `| ${s.since.slice(0, 10)} → ${s.until.slice(0, 10)} | ${s.openings_in_window} | ${s.openings_in_window - s.openings_in_window_served} (${pct(s.openings_in_window - s.openings_in_window_served, s.openings_in_window)}) | ${s.closures_in_window} | ${s.closures_in_window - s.closures_in_window_unserved} (${pct(s.closures_in_window - s.closures_in_window_unserved, s.closures_in_window)}) | ${s.closed_still_served} | ${s.closed_still_served_median_days === null ? '—' : s.closed_still_served_median_days.toFixed(1)} |`,
  ),
  '',
  'Most of a week\'s openings are not served within the week: a store is served once its sources give it a confidence of 0.6, which takes AllThePlaces (its chain must have a spider) or two of the slower sources; long-tail brands are community-only and never served. Openings of a chain AllThePlaces scrapes are served within days of its lag (5 days on average). Most closures likewise stay served until the slower sources drop them: a store AllThePlaces stopped listing is still served while Overture and Foursquare or OpenStreetMap together keep it above the floor.',
];
writeSection('changes', lines.join('\n'));
console.log(lines.join('\n'));
