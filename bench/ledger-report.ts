// A year's usage report on the PostgreSQL ledger (issue 13): one key with 10,000,000 raw usage
// rows over 400 days, beside other keys' rows, and the time of UsageReports' 366-day report for
// it (the service's own code over a PgLedger: rollup rows for the whole days, raw rows for the
// two partial ones). Also the fill time, the tables' and indexes' sizes, and the plans
// PostgreSQL chose for the statements the report sent (EXPLAIN (ANALYZE, BUFFERS)).
//
//   node --import tsx bench/ledger-report.ts [--rows 10000000] [--quick]
import Benchmark from 'benchmark';
import type pg from 'pg';
import { PgLedger } from '../ts/db/pg-ledger.ts';
import { openPostgres } from '../ts/db/postgres.ts';
import { KeyStore } from '../ts/services/keys.ts';
import { UsageReports } from '../ts/services/usage.ts';
import { DAY_MS } from '../ts/time.ts';
import { startPostgres, type BenchPostgres } from './pg-cluster.ts';
import { median, writeSection } from './results.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const mainRows = Number(args.includes('--rows') ? args[args.indexOf('--rows') + 1] : quick ? 200_000 : 10_000_000);
if (!Number.isSafeInteger(mainRows) || mainRows % 5 !== 0) throw new Error('--rows must be a whole multiple of 5');
/** Other keys' rows: a fifth of the main key's, so one row in six is another key's. */
const otherRows = mainRows / 5;
const OTHER_KEYS = 20;
const SPAN_DAYS = 400;
const WINDOW_DAYS = 366;
const TARGET_MS = 100;
const CHUNK = 1_000_000;

// The window ends at noon UTC today, so both ends are partial days (raw rows) around 365 whole
// days (the rollup). The rows run from 400 days before that noon up to it.
const to = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;
const from = to - WINDOW_DAYS * DAY_MS;
const spanStart = to - SPAN_DAYS * DAY_MS;
const total = mainRows + otherRows;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Actual Total Time'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Index Cond'?: string;
  Filter?: string;
  'Rows Removed by Filter'?: number;
  'Group Key'?: string[];
  Strategy?: string;
  Plans?: PlanNode[];
}

/** A plan as indented lines: node type, what it reads, rows, time, buffers. */
function planLines(n: PlanNode, depth = 0): string[] {
  const what = [n.Strategy && n['Node Type'] === 'Aggregate' ? `(${n.Strategy})` : '', n['Index Name'] ? `using ${n['Index Name']}` : '', n['Relation Name'] ? `on ${n['Relation Name']}` : '']
    .filter(Boolean)
    .join(' ');
  const cond = (n['Index Cond'] ? ` — index cond ${n['Index Cond']}` : '') + (n.Filter ? ` — filter ${n.Filter} (${n['Rows Removed by Filter'] ?? 0} rows removed)` : '');
  const line = `${'  '.repeat(depth)}${n['Node Type']}${what ? ` ${what}` : ''}: ${n['Actual Rows']} rows × ${n['Actual Loops']}, ${n['Actual Total Time']?.toFixed(2)} ms, buffers hit ${n['Shared Hit Blocks'] ?? 0} read ${n['Shared Read Blocks'] ?? 0}${cond}`;
  return [line, ...(n.Plans ?? []).flatMap((c) => planLines(c, depth + 1))];
}
const nodeTypes = (n: PlanNode): string[] => [n['Node Type'] + (n['Index Name'] ? ` (${n['Index Name']})` : ''), ...(n.Plans ?? []).flatMap(nodeTypes)];

let server: BenchPostgres | undefined;
let pool: pg.Pool | undefined;
let section = '';
try {
  server = startPostgres();
  pool = await openPostgres(server.url, { poolSize: 10 });
  const keys = new KeyStore(new PgLedger(pool));
  const main = (await keys.create({ plan: 'enterprise', name: 'the busy key' })).record.id;
  const others: string[] = [];
  for (let i = 0; i < OTHER_KEYS; i++) others.push((await keys.create({ plan: 'enterprise', name: `other ${i}` })).record.id);

  // ---- fill: rows in time order (as a live ledger appends them), every sixth another key's
  console.log(`filling ${total} usage rows (${mainRows} for ${main}) over ${SPAN_DAYS} days`);
  const t0 = performance.now();
  await pool.query('ALTER TABLE usage DISABLE TRIGGER usage_rollup');
  for (let lo = 0; lo < total; lo += CHUNK) {
    const hi = Math.min(total, lo + CHUNK) - 1;
    await pool.query(
      `INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests)
       SELECT CASE WHEN i % 6 = 5 THEN ($1::text[])[(1 + (i / 6) % $2)::int] ELSE $3 END,
              $4::bigint + (i * $5::numeric / $6)::bigint,
              '/api/v1/location-map',
              s.status,
              CASE WHEN s.status = 400 THEN NULL ELSE (ARRAY['json', 'csv', 'geojson', 'png'])[(1 + (i / 7) % 4)::int] END,
              CASE WHEN s.status = 200 THEN 1 + (i % 5 = 0)::int * 2 ELSE 0 END,
              CASE WHEN s.status = 429 THEN 1 + i % 3 ELSE 1 END
         FROM generate_series($7::bigint, $8::bigint) AS i,
              LATERAL (SELECT CASE WHEN i % 53 = 0 THEN 429 WHEN i % 61 = 0 THEN 402 WHEN i % 71 = 0 THEN 400 ELSE 200 END AS status) AS s`,
      [others, OTHER_KEYS, main, spanStart, SPAN_DAYS * DAY_MS, total, lo, hi],
    );
    console.log(`  ${hi + 1} rows, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  const tRaw = performance.now();
  await pool.query(
    `INSERT INTO usage_daily (key_id, day, status, format, requests, credits)
     SELECT key_id, at / ${DAY_MS}, COALESCE(status, -1), COALESCE(format, ''), SUM(requests), SUM(credits)
       FROM usage GROUP BY 1, 2, 3, 4`,
  );
  await pool.query('ALTER TABLE usage ENABLE TRIGGER usage_rollup');
  const tDaily = performance.now();
  // What autovacuum would do to a freshly filled table, done now so it does not run during the
  // timings: the planner's statistics and the visibility map.
  await pool.query('VACUUM (ANALYZE) usage, usage_daily');
  const tVacuum = performance.now();

  const counts = (
    await pool.query<{ rows: string; main: string; daily: string; main_daily: string; first: string; last: string }>(
      `SELECT (SELECT count(*) FROM usage) AS rows, (SELECT count(*) FROM usage WHERE key_id = $1) AS main,
              (SELECT count(*) FROM usage_daily) AS daily, (SELECT count(*) FROM usage_daily WHERE key_id = $1) AS main_daily,
              (SELECT min(at) FROM usage WHERE key_id = $1) AS first, (SELECT max(at) FROM usage WHERE key_id = $1) AS last`,
      [main],
    )
  ).rows[0];
  const sizes = (
    await pool.query<{ name: string; kind: string; bytes: string }>(
      `SELECT c.relname AS name, c.relkind AS kind, pg_relation_size(c.oid) AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relname IN ('usage', 'usage_pkey', 'usage_by_key_time', 'usage_by_time', 'usage_daily', 'usage_daily_pkey')
        ORDER BY c.relkind DESC, pg_relation_size(c.oid) DESC`,
    )
  ).rows;
  const totals = (await pool.query<{ usage: string; daily: string }>("SELECT pg_total_relation_size('usage') AS usage, pg_total_relation_size('usage_daily') AS daily")).rows[0];

  // ---- the report, through the service's code; the first call records the statements it sends
  const recorded: { text: string; values: unknown[] }[] = [];
  const target = pool;
  const recording = new Proxy(target, {
    get(t, p) {
      if (p === 'query') {
        return (text: string, values: unknown[]) => {
          recorded.push({ text, values });
          return t.query(text, values);
        };
      }
      const v = Reflect.get(t, p, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  const firstStart = performance.now();
  const first = await new UsageReports(new PgLedger(recording)).report(main, from, to);
  const firstMs = performance.now() - firstStart;
  const reports = new UsageReports(new PgLedger(pool));

  // The report's totals against the raw rows, counted directly.
  const direct = (
    await pool.query<{ n: string; credits: string }>('SELECT coalesce(sum(requests), 0) AS n, coalesce(sum(credits), 0) AS credits FROM usage WHERE key_id = $1 AND at >= $2 AND at <= $3', [main, from, to])
  ).rows[0];
  const agrees = first.summary.total_requests === Number(direct.n) && first.summary.total_credits_charged === Number(direct.credits);

  // Median of sequential calls, then benchmark.js.
  const times: number[] = [];
  for (let i = 0; i < (quick ? 10 : 30); i++) {
    const s = performance.now();
    await reports.report(main, from, to);
    times.push(performance.now() - s);
  }
  const bench = await new Promise<{ mean: number; rme: number; samples: number }>((resolve) => {
    new Benchmark.Suite()
      .add('366-day report', {
        defer: true,
        fn: (d: { resolve(): void }) => void reports.report(main, from, to).then(() => d.resolve()),
        ...(quick ? { maxTime: 2 } : {}),
      })
      .on('cycle', (e: Benchmark.Event) => {
        const b = e.target as unknown as Benchmark;
        console.log(String(b));
        resolve({ mean: b.stats.mean * 1000, rme: b.stats.rme, samples: b.stats.sample.length });
      })
      .run({ async: true });
  });

  // ---- the plans of the statements the report sent, with the values it sent
  const plans: { label: string; text: string; types: string[]; lines: string[]; ms: number; planningMs: number }[] = [];
  for (const q of recorded) {
    const r = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number; 'Planning Time': number }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${q.text}`, q.values);
    const p = r.rows[0]['QUERY PLAN'][0];
    const isDaily = q.text.includes('usage_daily');
    const [a, b] = [Number(q.values[1]), Number(q.values[2])];
    const label = isDaily
      ? `dailyUsage: days ${new Date(a * DAY_MS).toISOString().slice(0, 10)} … ${new Date(b * DAY_MS).toISOString().slice(0, 10)}`
      : `rawUsage: ${new Date(a).toISOString()} … ${new Date(b).toISOString()}`;
    plans.push({ label, text: q.text.replace(/\s+/g, ' ').trim(), types: nodeTypes(p.Plan), lines: planLines(p.Plan), ms: p['Execution Time'], planningMs: p['Planning Time'] });
  }

  const mib = (b: string | number) => `${(Number(b) / 2 ** 20).toFixed(0)} MiB`;
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const med = median(times);
  const met = bench.mean < TARGET_MS && med < TARGET_MS;
  section = `## A year's usage report on the PostgreSQL ledger

\`node --import tsx bench/ledger-report.ts${quick ? ' --quick' : ''}${args.includes('--rows') ? ` --rows ${mainRows}` : ''}\` — one throwaway PostgreSQL (scripts/postgres.sh), ${Number(counts.main).toLocaleString('en')} usage rows for one key and ${(Number(counts.rows) - Number(counts.main)).toLocaleString('en')} for ${OTHER_KEYS} others, over ${SPAN_DAYS} days in time order (every sixth row another key's), ${new Date(Number(counts.first)).toISOString().slice(0, 10)} to ${new Date(Number(counts.last)).toISOString().slice(0, 16)}Z; statuses 200 / 400 / 402 / 429 and four formats mixed.

The report is \`UsageReports.report\` (ts/services/usage.ts) over a \`PgLedger\`, as \`GET /api/v1/usage\` calls it, for the ${WINDOW_DAYS}-day window ${new Date(from).toISOString()} … ${new Date(to).toISOString()}: ${WINDOW_DAYS - 1} whole days from \`usage_daily\` and two half days of raw rows, three statements at once on a pool of 10.

| measure | value | target |
|---|---|---|
| report, benchmark.js mean (${bench.samples} samples) | **${bench.mean.toFixed(1)} ms** ±${bench.rme.toFixed(1)}% | < ${TARGET_MS} ms |
| report, median of ${times.length} calls one after another | ${med.toFixed(1)} ms (fastest ${Math.min(...times).toFixed(1)}, slowest ${Math.max(...times).toFixed(1)}) | < ${TARGET_MS} ms |
| first call after the fill (new connections) | ${firstMs.toFixed(1)} ms | |
| report's total requests / credits | ${first.summary.total_requests.toLocaleString('en')} / ${first.summary.total_credits_charged.toLocaleString('en')}, ${agrees ? 'equal to' : '**not equal to**'} a direct sum over the raw rows | |
| fill: raw rows (\`INSERT … SELECT FROM generate_series\`, rollup trigger off, ${Math.ceil(total / CHUNK)} statements) | ${s(tRaw - t0)} | |
| fill: \`usage_daily\` by one \`INSERT … SELECT … GROUP BY\` (${Number(counts.daily).toLocaleString('en')} rows, ${Number(counts.main_daily).toLocaleString('en')} of them the key's) | ${s(tDaily - tRaw)} | |
| \`VACUUM (ANALYZE) usage, usage_daily\` | ${s(tVacuum - tDaily)} | |

${met ? `Target met: the report takes ${bench.mean.toFixed(1)} ms.` : `**Target missed** (${bench.mean.toFixed(1)} ms): see the plans below.`}

Sizes (\`pg_relation_size\` each; total with indexes and TOAST by \`pg_total_relation_size\`): \`usage\` ${mib(totals.usage)} in all, \`usage_daily\` ${mib(totals.daily)} in all.

| relation | kind | size |
|---|---|---|
${sizes.map((r) => `| ${r.name} | ${r.kind === 'r' ? 'table' : 'index'} | ${mib(r.bytes)} |`).join('\n')}

### The plans of the report's statements (EXPLAIN (ANALYZE, BUFFERS), the values the report sent)

${plans
  .map(
    (p) => `**${p.label}** — execution ${p.ms.toFixed(2)} ms, planning ${p.planningMs.toFixed(2)} ms; node types: ${[...new Set(p.types)].join(', ')}

\`\`\`
${p.lines.join('\n')}
\`\`\``,
  )
  .join('\n\n')}`;
  console.log(section);
} finally {
  await pool?.end();
  server?.stop();
}
writeSection('ledger-report', section);
process.exit(0);
