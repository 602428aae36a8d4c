// The `storemap` command: serve, data build/import/fetch/report/refresh. Names and flags are the
// operator interface of DESIGN.md section 6; scripts and tests rely on them.
import { chmodSync, existsSync, lstatSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { fetchStallMs, isDecimalText, loadConfig, type Config } from './config.ts';
import { countryArea, FETCH_SOURCES, FetchFailed, fetchSources, formatBytes, loadFetchConfig, parseCountry, parseSources, type Area, type FetchedFile } from './data/fetch.ts';
import { extractBasemap, parseBbox } from './data/basemap-extract.ts';
import { Subdivisions } from './services/subdivisions.ts';
import { buildDataset, datasetReport, ensureReference, IMPORT_RECORD, importSources, mergeParts, readImportRecord, rollbackSnapshot, snapshotPath, stopSignal } from './data/ingest.ts';
import { openDatabase } from './db/database.ts';
import { basemapInfo, loadRenderer, loadStore, loadStoreSync, snapshotWorld } from './native.ts';
import { API_VERSION, DEMO_KEYS_FILE, PACKAGE_COMMIT, RELEASE, ROOT } from './paths.ts';
import { checkSnapshotFormat } from './data/snapshot-format.ts';
import { DATA_DEFAULTS, SNAPSHOT_FILE } from './native.ts';
import { execFileSync } from 'node:child_process';
import { PLANS, type Plan } from './api/plans.ts';
import { checkKeyName, KeyStore, MAX_KEY_NAME } from './services/keys.ts';
import { StoreHolder, watchSnapshot } from './store-holder.ts';
import { writeBrandSummary } from './services/brand-summary.ts';
import { SqliteLedger } from './db/sqlite-ledger.ts';
import type { LedgerOps } from './db/ledger.ts';

// `storemap data report | head` closes the pipe before the report ends: stop quietly, as Unix
// tools do, rather than die with an unhandled EPIPE and a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

function number(min: number, max: number) {
  // No upper bound to speak of where another part checks it (the pipeline, the largest scale).
  const range = max === Number.MAX_VALUE ? `of at least ${min}` : `from ${min} to ${max}`;
  return (v: string) => {
    // Written out in decimal: Number('') is 0 and Number('0x20') 32.
    if (!isDecimalText(v)) throw new InvalidArgumentError(`must be a decimal number ${range}`);
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`must be a number ${range}`);
    return n;
  };
}

/** What in a data folder says it held imported data: the last import's record, or a previous
 * snapshot that is not synthetic (or cannot be read, so cannot say it is). */
function realDataRecords(dataDir: string): string[] {
  const found: string[] = [];
  if (existsSync(path.join(dataDir, IMPORT_RECORD))) found.push(IMPORT_RECORD);
  const prev = path.join(dataDir, DATA_DEFAULTS.previousSnapshotFile);
  if (existsSync(prev)) {
    let synthetic = false;
    try {
      synthetic = snapshotWorld(prev).synthetic;
    } catch {
      // Damaged, a folder, another format: not known to be the synthetic world's.
    }
    if (!synthetic) found.push(DATA_DEFAULTS.previousSnapshotFile);
  }
  return found;
}

/** First start: build the default dataset (synthetic, scale from config) if there is none. */
async function ensureDataset(config: Config): Promise<string> {
  const snap = snapshotPath(config.dataDir);
  if (!existsSync(snap)) {
    // Not into a folder that held real data: one that lost its snapshot (or a volume not
    // mounted yet over a folder that was) would serve a made-up world as that dataset, its
    // import record dropped. A synthetic build's own leftovers (its history, written before
    // its snapshot, or a previous synthetic snapshot) are no such record: a first start that
    // was stopped or failed starts again.
    const records = realDataRecords(config.dataDir);
    if (records.length) {
      const prev = records.includes(DATA_DEFAULTS.previousSnapshotFile) ? ' `storemap data rollback` puts the previous snapshot back;' : '';
      throw new Error(
        `${config.dataDir} has no ${SNAPSHOT_FILE} but holds a real dataset's records (${records.join(', ')}): no synthetic world is built into it. If it is a volume, mount it;${prev} or import again (\`storemap data import …\`, \`storemap data refresh\`); or start on an empty folder.`,
      );
    }
    console.error(`No dataset in ${config.dataDir}: building the synthetic default (scale ${config.defaultScale}); this takes a few seconds.`);
    await buildDataset({
      dataDir: config.dataDir,
      scale: config.defaultScale,
      seed: 1,
      disabledSources: config.disabledSources,
      multiSource: config.multiSource,
      keepHistory: config.historySnapshots,
      progress: true,
    });
  }
  checkSnapshotFormat(snap, API_VERSION);
  return snap;
}

/**
 * First start on the synthetic default dataset: one enterprise and one trial demo key, written
 * to `demo-keys.txt` in the data folder (mode 0600) and printed once (they are stored hashed).
 * A server of imported, real data gets no keys it did not ask for.
 */
async function ensureDemoKeys(keys: KeyStore, synthetic: boolean, dataDir: string): Promise<void> {
  if ((await keys.list()).length > 0) return;
  if (!synthetic) {
    console.log('No API keys yet: create one with `storemap keys create --plan enterprise --credits N`.');
    return;
  }
  const enterprise = await keys.create({ plan: 'enterprise', name: 'demo (enterprise)' });
  const trial = await keys.create({ plan: 'trial', name: 'demo (trial)' });
  const file = path.join(dataDir, DEMO_KEYS_FILE);
  const text = [
    'Demo API keys for the synthetic dataset (shown once; keep them):',
    `  enterprise (all formats, ${enterprise.record.credits} credits): ${enterprise.key}`,
    `  trial (images only, ${trial.record.credits} credits, 5 days):     ${trial.key}`,
  ].join('\n');
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // in case the file was there already with wider rights
  console.log(text);
  console.log(`  (also in ${file}, readable by you alone)`);
}

/** The ledger a command opens, as its messages name it: the SQLite file, or the PostgreSQL URL
 * without its password. */
function ledgerName(config: Config): string {
  if (!config.databaseUrl) return `the ledger at ${config.dbPath} (STOREMAP_DB)`;
  return `the PostgreSQL ledger at ${shownUrl(config.databaseUrl)} (STOREMAP_DATABASE_URL)`;
}

/** A PostgreSQL URL as messages show it: without its password. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    // Its parameters may carry a password too (?password=, ?sslpassword=).
    u.search = '';
    return u.href;
  } catch {
    return 'postgres://…';
  }
}

/** The ledger the configuration names: PostgreSQL (migrated, under its advisory lock) when
 * STOREMAP_DATABASE_URL is set, else the SQLite file. */
async function openLedger(config: Config, opts: { existing?: boolean } = {}): Promise<LedgerOps> {
  // A command that works on the service's ledger needs the one that exists: a mistyped
  // STOREMAP_DB would otherwise create an empty one, list no keys, or take a refresh's
  // brand_summary stamp where no node reads it.
  if (opts.existing && !config.databaseUrl && !existsSync(config.dbPath)) {
    throw new Error(`no ledger at ${config.dbPath} (STOREMAP_DB): \`storemap keys create\` or \`storemap serve\` creates one`);
  }
  try {
    if (config.databaseUrl) {
      const { openPostgres } = await import('./db/postgres.ts');
      const { PgLedger, pgLedgerOptions } = await import('./db/pg-ledger.ts');
      return new PgLedger(await openPostgres(config.databaseUrl, { poolSize: config.databasePool, connectTimeoutMs: config.databaseConnectTimeoutMs }), pgLedgerOptions(config));
    }
    return new SqliteLedger(openDatabase(config.dbPath), Date.now, config.ledgerBusyMs);
  } catch (e) {
    // "file is not a database" or "connect ECONNREFUSED" alone does not say which setting to fix.
    throw new Error(`${ledgerName(config)}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

async function serve(): Promise<void> {
  // Loaded here so the data and key commands do not pay for the HTTP stack.
  const { closeServer, createServer, listen } = await import('./server.ts');
  const config = loadConfig();
  const snapshotFile = await ensureDataset(config);
  const store = new StoreHolder(await loadStore(snapshotFile));
  const ledger = await openLedger(config);
  await ensureDemoKeys(new KeyStore(ledger), store.info.synthetic, config.dataDir);
  const referenceDir = await ensureReference(config.dataDir);
  const renderer = loadRenderer(referenceDir, config.basemap, config.mapCellBytes);
  const basemap = renderer.basemapStatus();
  if (basemap?.error) console.log(`basemap ${basemap.path} is not used: ${basemap.error}; maps are drawn from Natural Earth`);
  else if (basemap?.info) console.log(`basemap ${basemap.path}: ${basemap.info.schema} tiles, zooms ${basemap.info.minZoom}-${basemap.info.maxZoom}`);
  const subdivisions = Subdivisions.fromCsv(path.join(referenceDir, 'subdivisions.csv'));
  const server = createServer({ config, store, ledger, renderer, subdivisions });
  const url = await listen(server, config.host, config.port);
  const info = store.info;
  console.log(`storemap listening on ${url} (snapshot ${info.snapshot_version}, ${info.rows} rows)`);
  // `storemap data refresh` replaces the file; requests in flight finish on the old snapshot.
  const unwatch = watchSnapshot(store, snapshotFile, (line) => console.log(line));
  const stop = (signal: string) => {
    console.log(`${signal}: finishing in-flight requests`);
    unwatch();
    // Stop accepting, let in-flight requests finish, then close the database cleanly.
    const exit = () => void ledger.close().finally(() => process.exit(0));
    void closeServer(server).then(exit);
    setTimeout(exit, 10_000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** A synthetic build's source files: each source's folder under sources/, which its importer
 * reads whole (OSM: .osm.pbf and GeoJSON sequences). */
function sourcePaths(dataDir: string): { osm?: string; overture?: string; fsq?: string; atp?: string } {
  const dir = path.join(dataDir, 'sources');
  const out: { osm?: string; overture?: string; fsq?: string; atp?: string } = {};
  for (const s of ['osm', 'overture', 'fsq', 'atp'] as const) {
    const p = path.join(dir, s);
    if (existsSync(p) && readdirSync(p).length > 0) out[s] = p;
  }
  return out;
}

interface SourceImport {
  files: number;
  files_empty: number;
  files_failed: number;
  rows_read: number;
  rows_kept: number;
  skipped: Record<string, number>;
  rows_corroborated: number;
  /** Rows the importer took with opening hours, and those whose hours were dropped as invalid. */
  rows_with_hours?: number;
  hours_invalid?: number;
}
interface ImportSummary {
  snapshot: string;
  rows: number;
  /** Of them, the rows the data formats serve. */
  servable_rows: number;
  imports: (SourceImport & { source: string; errors: string[] })[];
}

/** What each source's import did, as a table an operator reads at the end of an import. */
export function importTable(imports: ImportSummary['imports']): string {
  const reasons = [...new Set(imports.flatMap((r) => Object.keys(r.skipped)))].sort();
  const head = ['source', 'files', 'empty', 'failed', 'read', 'kept', 'corroborated', 'hours', 'bad hours', ...reasons];
  const rows = imports.map((r) =>
    [r.source, r.files, r.files_empty, r.files_failed, r.rows_read, r.rows_kept, r.rows_corroborated, r.rows_with_hours ?? 0, r.hours_invalid ?? 0, ...reasons.map((k) => r.skipped[k] ?? 0)].map(String),
  );
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

function printImport(summary: ImportSummary): void {
  console.error(importTable(summary.imports));
  for (const r of summary.imports) for (const e of r.errors.slice(0, 5)) console.error(`  ${r.source}: ${e}`);
  console.log(`${summary.snapshot}: ${summary.rows} rows`);
  warnIfNothingServed(summary);
}

/** The sources as an operator knows them, for messages. */
const SOURCE_NAMES: Record<string, string> = { osm: 'OpenStreetMap', overture: 'Overture', fsq: 'Foursquare', atp: 'AllThePlaces' };

/** An import that leaves the data formats nothing (an OpenStreetMap-only import: every row is
 * the community map's) still serves maps, but location-map's json, csv and geojson, nearby and
 * the directory answer nothing: said once, at the import, rather than found by a user. */
function warnIfNothingServed(summary: { rows: number; servable_rows: number; imports: { source: string; rows_kept: number }[] }): void {
  if (summary.servable_rows > 0) return;
  // The sources whose rows are in the snapshot (one read that kept nothing corroborates nothing).
  const read = new Set(summary.imports.filter((r) => r.rows_kept > 0).map((r) => r.source));
  // An OpenStreetMap-only import is the community map's alone; any other single source falls
  // under the floor for want of a second one. The advice names only the sources not read.
  const why = read.size === 1 && read.has('osm') ? "each is the community map's alone" : 'each is below the confidence floor (too few sources agree on it)';
  const others = Object.keys(SOURCE_NAMES).filter((s) => !read.has(s));
  const advice = others.length ? ` Import a source that corroborates them (${others.map((s) => SOURCE_NAMES[s]).join(', ')}) with it.` : '';
  console.error(`warning: none of the ${summary.rows} rows is served as data (json, csv, geojson, the brand directory): ${why}, which only map images draw.${advice}`);
}

/** The serving snapshot's world, or the command that makes a snapshot this storemap reads (one
 * of another format or a damaged file cannot tell what world it was). */
function servingInfo(file: string): { synthetic: boolean; scale?: number | null; seed?: number | null } {
  try {
    return snapshotWorld(file);
  } catch (e) {
    throw new InvalidArgumentError(`${e instanceof Error ? e.message : String(e)}; there is no import to read again: \`storemap data build\` makes a synthetic snapshot, \`storemap data import\` one of real files`);
  }
}

/** What `data refresh` runs, decided before anything is opened or replaced:
 * - after `data import`, the same import again (its record, `import.json`: files, country, box);
 * - on a synthetic build, the same world (the serving snapshot's scale and seed) at the new
 *   time: the stores closed since are gone and those opened since are there, each source
 *   noticing with its lag, and ids and the change history carry over as they do for any build
 *   of one world. (Until 2026-11-30 it imported the build's `sources/` as if they were a
 *   publisher's files: a snapshot of another kind, so the history and the change feed began
 *   again at every refresh.)
 * Anything else is refused with the command to run first. */
function refreshWork(config: Config, asOf: string | undefined, rewriteHistory = false): () => Promise<unknown> {
  const common = { asOf, rewriteHistory, dataDir: config.dataDir, disabledSources: config.disabledSources, multiSource: config.multiSource, keepHistory: config.historySnapshots, progress: true };
  const record = readImportRecord(config.dataDir);
  if (record) {
    console.error(`refresh: reading again what the last import read (${path.join(config.dataDir, IMPORT_RECORD)})`);
    return () => importSources({ ...record, ...common });
  }
  const serving = snapshotPath(config.dataDir);
  const info = existsSync(serving) ? servingInfo(serving) : undefined;
  if (info?.synthetic && typeof info.scale === 'number' && typeof info.seed === 'number') {
    const { scale, seed } = info;
    console.error(`refresh: the synthetic world of scale ${scale}, seed ${seed}, as of ${asOf ?? 'now'}`);
    return () => buildDataset({ ...common, scale, seed });
  }
  // Until 2026-11-30 `data fetch` filled sources/: files an operator fetched there would be read
  // again unchanged, week after week, while new ones went to downloads/.
  if (Object.keys(sourcePaths(config.dataDir)).length > 0 && !existsSync(path.join(config.dataDir, 'sources', 'truth.csv'))) {
    throw new InvalidArgumentError(
      `${path.join(config.dataDir, 'sources')} holds files no synthetic build wrote (an earlier \`data fetch\` put them there; it now fills downloads/): import them once with \`storemap data import --osm … --atp …\`, and \`data refresh\` reads the same again after it`,
    );
  }
  throw new InvalidArgumentError(
    `nothing to refresh in ${config.dataDir}: no ${IMPORT_RECORD} (written by \`storemap data import\`) and no synthetic snapshot that records its scale and seed (written by \`storemap data build\`) to age`,
  );
}

const collect = (v: string, acc: string[]) => [...acc, v];

/** A path option: an empty one would mean the current directory (`--part ""` wrote a part
 * into the checkout, `--out ""` extracted the reference data there). */
function pathText(option: string) {
  return (v: string): string => {
    if (v.trim() === '') throw new InvalidArgumentError(`${option} needs a path, not an empty value`);
    return v;
  };
}

/** `--as-of`: an empty value would mean now, unlike what was asked for. */
function asOfText(v: string): string {
  if (v.trim() === '') throw new InvalidArgumentError('--as-of needs a time (ISO 8601, e.g. 2026-11-01T00:00:00Z), not an empty value');
  return v.trim();
}

const REWRITE_HISTORY_HELP = 'accept an --as-of earlier than the snapshot served now, dropping the change history from that time on (refused without it)';

/** `--bbox`: an empty value would mean no box, unlike what was asked for. */
function bboxText(v: string): string {
  if (v.trim() === '') throw new InvalidArgumentError('--bbox needs four numbers south,west,north,east, not an empty value');
  return v;
}

const SHARD_HELP = 'build shard K of N (K from 1): only its brands, written as a part to --part; `data merge` joins the N parts';

/** `--shard K/N`, checked for form (the pipeline checks the range). */
function shardText(v: string): string {
  if (!/^\d{1,4}\/\d{1,4}$/.test(v.trim())) throw new InvalidArgumentError(`${JSON.stringify(v)} is not K/N, for example 2/8`);
  return v.trim();
}

function shardOptions(o: { shard?: string; part?: string }): { shard?: string; part?: string } {
  if ((o.shard === undefined) !== (o.part === undefined)) throw new InvalidArgumentError('--shard and --part go together');
  return o.shard === undefined ? {} : { shard: o.shard, part: o.part };
}

/** What a shard's run wrote (storemap-ingest's `PartSummary`). */
interface PartSummary {
  part: string;
  shard: string;
  brands: number;
  rows: number;
  imports: ImportSummary['imports'];
}

function printPart(p: PartSummary): void {
  console.error(importTable(p.imports));
  console.log(`${p.part}: shard ${p.shard}, ${p.brands} brands, ${p.rows} rows`);
}

/** `data merge --out`: a data folder, or the snapshot.smap inside one. */
function mergeTarget(out: string | undefined, dataDir: string): string {
  if (out === undefined) return dataDir;
  if (out.endsWith('.smap')) {
    if (path.basename(out) !== SNAPSHOT_FILE) throw new InvalidArgumentError(`--out: a merge writes a data folder's ${SNAPSHOT_FILE}, not ${path.basename(out)}`);
    return path.dirname(path.resolve(out));
  }
  const dir = path.resolve(out);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new InvalidArgumentError(`--out: ${dir} is a file: give the data folder, or its ${SNAPSHOT_FILE}`);
  return dir;
}

/** The checkout's commit, when git can say (a release records its own). */
function checkoutCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

/** `storemap --version`: what an operator quotes in a bug report. */
export function versionText(): string {
  const commit = RELEASE?.commit ?? PACKAGE_COMMIT ?? checkoutCommit();
  const node = RELEASE ? `Node ${RELEASE.node} (embedded)` : `Node ${process.version}`;
  return `storemap ${API_VERSION} (commit ${commit}; snapshot format ${DATA_DEFAULTS.snapshotFormat}; ${node})`;
}

const program = new Command('storemap').description('Store-location data service');
// Answered in main() before parsing, so that ordinary commands never ask git for the commit.
program.option('-V, --version', 'print the version, commit, snapshot format and Node');
program.command('serve').description('run the HTTP service (builds the default dataset on first start)').action(serve);

const data = program.command('data').description('build, import, refresh and inspect the dataset');
data
  .command('build')
  .description('generate the synthetic world and build its snapshot')
  // The largest scale is the pipeline's to check (storemap-ingest's world::MAX_SCALE, 10).
  .option('--scale <s>', 'dataset scale (1 = the full-size world, at most 10)', number(0.0001, Number.MAX_VALUE), 0.1)
  .option('--seed <n>', 'generator seed (a whole number)', (v: string) => {
    const n = number(0, Number.MAX_SAFE_INTEGER)(v);
    if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number');
    return n;
  }, 1)
  .option('--as-of <time>', 'refresh time stamped into every row (ISO 8601); default now', asOfText)
  .option('--rewrite-history', REWRITE_HISTORY_HELP)
  .option('--shard <k/n>', SHARD_HELP, shardText)
  .option('--part <dir>', 'where a shard writes its part (with --shard)', pathText('--part'))
  .action(async (o: { scale: number; seed: number; asOf?: string; rewriteHistory?: boolean; shard?: string; part?: string }) => {
    const config = loadConfig();
    const summary = (await buildDataset({
      dataDir: config.dataDir,
      scale: o.scale,
      seed: o.seed,
      asOf: o.asOf,
      rewriteHistory: o.rewriteHistory,
      disabledSources: config.disabledSources,
      multiSource: config.multiSource,
      keepHistory: config.historySnapshots,
      progress: true,
      ...shardOptions(o),
    })) as { snapshot: string; rows: number; snapshot_version: string } | PartSummary;
    if ('part' in summary) printPart(summary);
    else console.log(`${summary.snapshot}: ${summary.rows} rows, version ${summary.snapshot_version}`);
  });
data
  .command('import')
  .description('build a snapshot from real extracts (any subset of the four sources)')
  .option('--osm <path>', 'OpenStreetMap .osm.pbf, or an osmium GeoJSON sequence (osmium export -f geojsonseq -a type,id), or a folder of them', pathText('--osm'))
  .option('--overture <path>', 'Overture places GeoParquet file, or a release folder (theme=places/type=place/)', pathText('--overture'))
  .option('--fsq <path>', 'Foursquare OS Places Parquet file or folder of parts', pathText('--fsq'))
  .option('--atp <path>', "AllThePlaces output.zip, a spider's .geojson/.ndgeojson, or a folder of them", pathText('--atp'))
  .option('--country <cc>', 'keep only stores in this country (ISO 3166-1 alpha-2); repeatable', collect, [] as string[])
  .option('--bbox <s,w,n,e>', 'keep only stores inside this box (degrees)', bboxText)
  .option('--as-of <time>', 'refresh time stamped into every row (ISO 8601); default now', asOfText)
  .option('--rewrite-history', REWRITE_HISTORY_HELP)
  .option('--shard <k/n>', SHARD_HELP, shardText)
  .option('--part <dir>', 'where a shard writes its part (with --shard)', pathText('--part'))
  .action(async (o: { osm?: string; overture?: string; fsq?: string; atp?: string; country: string[]; bbox?: string; asOf?: string; rewriteHistory?: boolean; shard?: string; part?: string }) => {
    if (!o.osm && !o.overture && !o.fsq && !o.atp) throw new InvalidArgumentError('give at least one of --osm, --overture, --fsq, --atp');
    const config = loadConfig();
    const summary = (await importSources({
      ...o,
      countries: o.country,
      dataDir: config.dataDir,
      disabledSources: config.disabledSources,
      multiSource: config.multiSource,
      keepHistory: config.historySnapshots,
      progress: true,
      ...shardOptions(o),
    })) as ImportSummary | PartSummary;
    if ('part' in summary) printPart(summary);
    else printImport(summary);
  });
data
  .command('merge <parts...>')
  .description("join a sharded build's parts (every shard once) into the data folder's snapshot: the one a one-process build writes")
  .option('--out <path>', "the data folder, or its snapshot.smap, that the merge replaces (default: STOREMAP_DATA_DIR's)", pathText('--out'))
  .option('--rewrite-history', REWRITE_HISTORY_HELP)
  .action(async (parts: string[], o: { out?: string; rewriteHistory?: boolean }) => {
    const config = loadConfig();
    const dataDir = mergeTarget(o.out, config.dataDir);
    const summary = (await mergeParts({ parts, dataDir, keepHistory: config.historySnapshots, rewriteHistory: o.rewriteHistory, progress: true })) as ImportSummary & { snapshot_version: string };
    printImport(summary);
    console.log(`version ${summary.snapshot_version}, from ${parts.length} part${parts.length === 1 ? '' : 's'}`);
  });
data
  .command('rollback')
  .description('serve the snapshot the last build or import replaced (and keep the current one as the previous); a running server swaps to it')
  .action(async () => {
    const config = loadConfig();
    const { current, previous } = await rollbackSnapshot(config.dataDir);
    console.log(`${current} is now the snapshot ${previous} was; run \`storemap data rollback\` again to undo`);
  });
data
  .command('refresh')
  .description('read again what the last import read (its files, country and box) into a new snapshot, or age a synthetic build to the new time (its scale and seed), and stamp brand_summary; a running server swaps to it')
  .option('--as-of <time>', 'refresh time stamped into every row (ISO 8601); default now', asOfText)
  .option('--rewrite-history', REWRITE_HISTORY_HELP)
  .action(async (o: { asOf?: string; rewriteHistory?: boolean }) => {
    const config = loadConfig();
    const work = refreshWork(config, o.asOf, o.rewriteHistory);
    // The ledger first: a refresh that could not stamp brand_summary would have swapped the
    // snapshot already.
    const ledger = await openLedger(config, { existing: true });
    try {
      const summary = (await work()) as ImportSummary;
      console.error(importTable(summary.imports));
      const brands = await writeBrandSummary(ledger, loadStoreSync(summary.snapshot), Date.now());
      console.log(`${summary.snapshot}: ${summary.rows} rows; brand_summary stamped for ${brands} brands`);
      warnIfNothingServed(summary);
    } finally {
      await ledger.close();
    }
  });
data
  .command('fetch')
  .description("download the publishers' current files into the data folder's downloads/ (resumable, verified)")
  .option('--country <cc>', 'ISO 3166-1 alpha-2 code: picks the OpenStreetMap extract and cuts Overture to the country')
  .option('--bbox <S,W,N,E>', "cut Overture to this box instead of the country's (degrees; west east of east crosses 180°)")
  .option('--sources <list>', `comma-separated, any of ${FETCH_SOURCES.join(', ')}`, FETCH_SOURCES.join(','))
  .option('--out <dir>', 'the folder to fill instead of $STOREMAP_DATA_DIR/downloads (one folder per source inside)', pathText('--out'))
  .option('--overture-release <release>', 'Overture release such as 2026-04-15.0 (default: the latest)')
  .option('--overture-worldwide', "download Overture's worldwide files whole instead of cutting them to the area")
  .option('--fsq-release <date>', 'Foursquare OS Places release date such as 2026-03-12 (default: the latest)')
  .action(async (o: { country?: string; bbox?: string; sources: string; out?: string; overtureRelease?: string; overtureWorldwide?: boolean; fsqRelease?: string }) => {
    if (o.country === undefined && o.bbox === undefined) throw new InvalidArgumentError('give --country, --bbox or both');
    const config = loadFetchConfig();
    const dataDir = loadConfig().dataDir;
    // A code the borders do not know is refused here, before any request (the extract's index
    // would be asked for it first).
    const code = o.country === undefined ? undefined : parseCountry(o.country);
    const boxes = code === undefined ? null : loadRenderer(await ensureReference(dataDir)).countryBoxes(code);
    if (code !== undefined && !boxes?.length) throw new InvalidArgumentError(`--country: ${code} is not a country the reference borders know`);
    // Not sources/: that is the synthetic world's, which a build replaces whole, and a folder
    // import reads every file in a folder.
    const outDir = o.out ? path.resolve(o.out) : path.join(dataDir, 'downloads');
    const progress = { isTTY: process.stderr.isTTY === true, write: (s: string) => process.stderr.write(s) };
    let area: Area | undefined;
    if (!o.overtureWorldwide && parseSources(o.sources).includes('overture')) {
      if (o.bbox !== undefined) area = { label: `--bbox ${o.bbox}`, boxes: [parseBbox(o.bbox)] };
      else area = countryArea(code!, boxes);
    }
    const { bbox: _bbox, overtureWorldwide: _worldwide, ...rest } = o;
    try {
      const summary = await fetchSources({ ...rest, area, outDir, config, progress, log: (line) => console.error(line) });
      // Every source asked for skipped (Foursquare without its token): a `data fetch && data
      // refresh` must not go on to read last week's files as this week's.
      if (summary.files.length === 0 && summary.skipped.length > 0) {
        throw new Error(`nothing fetched: ${summary.skipped.map((s) => `${s.source}: ${s.reason}`).join('; ')}`);
      }
      printCutTotals(summary.files);
      for (const f of summary.files) console.log(f.path);
    } catch (e) {
      // Some sources failed: the ones fetched are still listed, then the command fails.
      if (e instanceof FetchFailed) for (const f of e.summary.files) console.log(f.path);
      throw e;
    }
  });

/** What the cut files cost against their whole size. */
function printCutTotals(files: FetchedFile[]): void {
  const cuts = files.flatMap((f) => (f.cut ? [f.cut] : []));
  if (cuts.length === 0) return;
  const read = cuts.reduce((n, c) => n + c.bytesRead, 0);
  const whole = cuts.reduce((n, c) => n + c.fileSize, 0);
  const share = whole > 0 ? ((read / whole) * 100).toFixed(1) : '0';
  console.error(`overture: read ${formatBytes(read)} of ${formatBytes(whole)} (${share} %) in ${cuts.reduce((n, c) => n + c.requests, 0)} requests for ${cuts.reduce((n, c) => n + c.rows, 0)} rows`);
}
data
  .command('report')
  .description("the dataset's figures")
  .option('--json', 'one JSON object')
  .action(async (o: { json?: boolean }) => {
    const {
      realism,
      ticker_countries: tickers,
      home_markets: homes,
      ...report
    } = (await datasetReport(datasetDir())) as Record<string, unknown> & {
      realism?: Realism[];
      ticker_countries?: TickerCountries[];
      home_markets?: HomeMarkets | null;
    };
    if (o.json) return console.log(JSON.stringify({ ...report, realism, ticker_countries: tickers, home_markets: homes }));
    for (const [k, v] of Object.entries(report)) console.log(`${k.padEnd(26)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
    if (realism?.length) printRealism(realism);
    if (tickers?.length) printTickerCountries(tickers);
    if (homes) printHomeMarkets(homes);
  });

/** The data folder of a command that reads its snapshot, refused by name when it has none. */
function datasetDir(): string {
  const dir = loadConfig().dataDir;
  if (!existsSync(snapshotPath(dir))) throw new Error(`no dataset in ${dir} (STOREMAP_DATA_DIR): \`storemap data build\` or \`data import\` makes one`);
  return dir;
}

/** `data report`'s brands without published counts against their home markets (storemap-ingest's `HomeMarkets`). */
interface HomeMarkets {
  min_rows: number;
  brands: number;
  home_first: number;
  rows_of_brands_based_abroad: number;
  us_share_of_those: number;
  home_not_first: [string, string, [string, number][]][];
}

function printHomeMarkets(h: HomeMarkets): void {
  console.log(`
home markets: brands without published counts whose home the tables name, with ${h.min_rows} verified rows or more`);
  console.log(`  home has most rows for ${h.home_first} of ${h.brands}; the US holds ${(100 * h.us_share_of_those).toFixed(1)} % of the ${h.rows_of_brands_based_abroad} rows of those based elsewhere`);
  for (const [brand, home, top] of h.home_not_first) console.log(`  ! ${brand.slice(0, 30).padEnd(30)} home ${home}, served ${top.map(([c, n]) => `${c} ${n}`).join(', ')}`);
}

/** One ticker of `data report`'s country table (storemap-ingest's `TickerCountries`). */
interface TickerCountries {
  ticker: string;
  brand: string;
  served: [string, number][];
  published: [string, number][];
  /** Whether the served top country is the published one; null where none is published. */
  top_matches: boolean | null;
}

function printTickerCountries(rows: TickerCountries[]): void {
  const list = (l: [string, number][]) => l.map(([c, n]) => `${c} ${n}`).join(', ') || '-';
  const off = rows.filter((r) => r.top_matches === false);
  console.log(`
tickers: served top three countries (verified rows) beside the published ones (data/footprints.csv, full size)`);
  console.log(`  ${rows.filter((r) => r.top_matches).length} lead in their published top country, ${off.length} do not, ${rows.filter((r) => r.top_matches === null).length} publish none`);
  for (const r of rows) console.log(`  ${r.top_matches === false ? '!' : ' '} ${r.ticker.padEnd(10)} ${r.brand.slice(0, 24).padEnd(24)} ${list(r.served).padEnd(34)} ${list(r.published)}`);
}

/** One brand of `data report`'s realism table (storemap-ingest's `Realism`). */
interface Realism {
  brand: string;
  true_open: number;
  verified: number;
  real: number | null;
  true_ratio: number | null;
  verified_ratio: number | null;
  /** No one lists the chain's size: the line compares its published countries only. */
  published_only: boolean;
}

function printRealism(rows: Realism[]): void {
  const ratio = (r: number | null) => (r === null ? '-' : r.toFixed(2));
  console.log(`\nrealism: the ${rows.length} brands with the most true open stores, against the real chain (real = published figure x scale)`);
  console.log(`  ${'brand'.padEnd(32)} ${'true'.padStart(8)} ${'verified'.padStart(9)} ${'real'.padStart(9)} ${'true/real'.padStart(10)} ${'verif/real'.padStart(10)}`);
  for (const r of rows) {
    const real = r.real === null ? '-' : r.real.toFixed(0);
    const brand = r.published_only ? `${r.brand.slice(0, 30)} *` : r.brand.slice(0, 32);
    console.log(
      `  ${brand.padEnd(32)} ${String(r.true_open).padStart(8)} ${String(r.verified).padStart(9)} ${real.padStart(9)} ${ratio(r.true_ratio).padStart(10)} ${ratio(r.verified_ratio).padStart(10)}`,
    );
  }
  if (rows.some((r) => r.published_only)) console.log('  * no listed size: compared in the countries with a published count only');
}

const keys = program.command('keys').description('API keys: create, list, revoke, top up');
const withKeys = async <T>(f: (k: KeyStore) => Promise<T>, opts: { existing?: boolean } = { existing: true }): Promise<T> => {
  const ledger = await openLedger(loadConfig(), opts);
  try {
    return await f(new KeyStore(ledger));
  } finally {
    await ledger.close();
  }
};
keys
  .command('create')
  .description('create a key and print it alone on stdout (it is stored hashed and never shown again)')
  .requiredOption('--plan <plan>', `one of ${PLANS.join(', ')}`, (v: string) => {
    if (!(PLANS as readonly string[]).includes(v)) throw new InvalidArgumentError(`must be one of ${PLANS.join(', ')}`);
    return v as Plan;
  })
  .option('--credits <n>', 'starting balance (default: the plan default)', number(0, Number.MAX_SAFE_INTEGER))
  .option('--name <text>', `a label for the key (printable, at most ${MAX_KEY_NAME} characters)`, (v: string) => {
    try {
      checkKeyName(v);
    } catch (e) {
      throw new InvalidArgumentError((e as Error).message);
    }
    return v;
  })
  .action(async (o: { plan: Plan; credits?: number; name?: string }) => {
    if (o.credits !== undefined && !Number.isInteger(o.credits)) throw new InvalidArgumentError('--credits must be a whole number');
    console.log(await withKeys(async (k) => (await k.create(o)).key, { existing: false }));
  });
keys
  .command('list')
  .description('every key: id, prefix, plan, credits, state')
  .action(async () => {
    for (const k of await withKeys((ks) => ks.list())) {
      const state = k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= Date.now() ? 'expired' : 'active';
      console.log([k.id, `${k.prefix}…`, k.plan, k.credits, state, k.name ?? ''].join('\t'));
    }
  });
keys
  .command('revoke <id>')
  .description('revoke a key by id')
  .action(async (id: string) => {
    if (!(await withKeys((k) => k.revoke(id)))) throw new Error(`no active key with id ${id}`);
    console.log(`revoked ${id}`);
  });
keys
  .command('topup <id> <credits>')
  .description('add credits to a key')
  .action(async (id: string, credits: string) => {
    const n = isDecimalText(credits) ? Number(credits) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('credits must be a whole number > 0, written in decimal');
    const k = await withKeys((ks) => ks.topUp(id, n));
    if (!k) throw new Error(`no key with id ${id}`);
    console.log(`${id}: ${k.credits} credits`);
  });

program
  .command('db')
  .description('the ledger (keys, balances, usage)')
  .command('migrate')
  .description('copy the SQLite ledger (STOREMAP_DB) into an empty PostgreSQL ledger, checked by counts and sums')
  .requiredOption('--to <url>', 'the PostgreSQL ledger: postgres://…')
  .action(async (o: { to: string }) => {
    if (!/^postgres(ql)?:\/\//.test(o.to)) throw new InvalidArgumentError('--to must be a postgres:// URL');
    const config = loadConfig();
    if (!existsSync(config.dbPath)) throw new Error(`no SQLite ledger at ${config.dbPath}`);
    const { openPostgres } = await import('./db/postgres.ts');
    const { copyLedger } = await import('./db/copy-ledger.ts');
    const db = openDatabase(config.dbPath);
    // "connect ECONNREFUSED" or "Invalid URL" alone does not say it is about --to.
    const pool = await openPostgres(o.to, { poolSize: 2, connectTimeoutMs: config.databaseConnectTimeoutMs }).catch((e: unknown) => {
      db.close();
      throw new Error(`the PostgreSQL ledger at ${shownUrl(o.to)} (--to): ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    });
    try {
      const t = await copyLedger(db, pool);
      console.log(
        `copied ${t.keys} keys (${t.credits} credits), ${t.usageRows} usage rows (${t.usageRequests} requests, ${t.usageCredits} credits), ${t.dailyRows} daily rollups, ${t.brandStamps} brand stamps; both ledgers agree`,
      );
    } finally {
      db.close();
      await pool.end();
    }
  });

const basemap = program.command('basemap').description('street-map tiles (STOREMAP_BASEMAP)');
basemap
  .command('info <file>')
  .description("a PMTiles archive's schema, zooms, bounds and attribution, as the renderer reads them")
  .option('--json', 'print it as JSON')
  .action((file: string, o: { json?: boolean }) => {
    const i = basemapInfo(file);
    if (o.json) return void console.log(JSON.stringify(i, null, 2));
    const [w, s, e, n] = i.bounds;
    console.log(
      [
        `${file}${i.name ? ` (${i.name})` : ''}`,
        `  schema       ${i.schema}`,
        `  zooms        ${i.minZoom}-${i.maxZoom} (maps deeper than ${i.maxZoom + 1} stretch zoom-${i.maxZoom} tiles)`,
        `  bounds       west ${w}, south ${s}, east ${e}, north ${n}`,
        `  center       ${i.center[1]}, ${i.center[0]} at zoom ${i.center[2]}`,
        `  tiles        ${i.addressedTiles} addressed, ${i.tileContents} distinct, ${i.tileCompression}`,
        `  size         ${(i.bytes / 2 ** 20).toFixed(1)} MiB`,
        `  attribution  ${i.attribution}`,
      ].join('\n'),
    );
  });

basemap
  .command('extract')
  .description('cut a region out of a PMTiles archive (an https URL, read with range requests, or a file) into a new archive')
  .requiredOption('--from <url|file>', 'the source archive: the Protomaps daily build, or any PMTiles file or URL')
  .requiredOption('--out <file>', 'the archive to write', archiveOut)
  .option('--bbox <S,W,N,E>', 'the region: south, west, north, east in degrees (west greater than east crosses the antimeridian)')
  .option('--country <CC>', "the region: a country's mainland as focus maps cut it and 5 % around it (the box a map of the country is fitted to), by ISO 3166-1 alpha-2 code")
  .option('--minzoom <n>', 'the shallowest zoom to keep', number(0, 31), 0)
  .option('--maxzoom <n>', "the deepest zoom to keep (default: the source's)", number(0, 31))
  .action(async (o: { from: string; out: string; bbox?: string; country?: string; minzoom: number; maxzoom?: number }) => {
    if ((o.bbox === undefined) === (o.country === undefined)) throw new InvalidArgumentError('give one of --bbox or --country');
    let bbox: [number, number, number, number];
    if (o.bbox !== undefined) bbox = parseBbox(o.bbox);
    else {
      const config = loadConfig();
      const code = parseCountry(o.country!);
      const frame = loadRenderer(await ensureReference(config.dataDir)).countryFrame(code);
      if (!frame) throw new Error(`no country ${code} in the reference shapes`);
      const [s, w, n, e] = frame;
      bbox = [w, s, e, n];
    }
    // Said, since a swapped pair reads as a box around the rest of the world.
    if (bbox[0] > bbox[2]) console.error(`basemap extract: the box crosses the antimeridian (west ${bbox[0]} is east of east ${bbox[2]}): it holds the longitudes from ${bbox[0]} to 180 and from -180 to ${bbox[2]}`);
    const started = performance.now();
    const r = await extractBasemap({ from: o.from, out: o.out, bbox, minZoom: o.minzoom, maxZoom: o.maxzoom ?? 31, stallMs: fetchStallMs() });
    const of = r.sourceBytes ? ` of ${formatBytes(r.sourceBytes)}` : '';
    console.log(
      `wrote ${o.out}: ${r.tiles} tiles (${r.tileContents} distinct), zooms ${r.minZoom}-${r.maxZoom}, ${formatBytes(r.bytes)}; read ${formatBytes(r.bytesRead)}${of} in ${r.requests} requests, ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  });

/** `basemap extract --out`: a file to write in a folder that is there, checked before any
 * tile is read (a folder given here left the whole result beside it as `.part`, and a missing
 * folder was reported as a temporary file that could not be read). */
function archiveOut(v: string): string {
  const out = pathText('--out')(v);
  if (existsSync(out) && statSync(out).isDirectory()) throw new InvalidArgumentError(`${out} is a folder: name the .pmtiles file to write in it`);
  // The archive is renamed into place: over a link, a device (/dev/null as root) or a pipe it
  // would replace the thing itself.
  const there = lstatSync(out, { throwIfNoEntry: false });
  if (there && !there.isFile()) throw new InvalidArgumentError(`${out} is there and is not a regular file (a link, a device or a pipe): name a new file, or a file to replace`);
  const dir = path.dirname(path.resolve(out));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InvalidArgumentError(`the folder ${dir} does not exist`);
  return out;
}

/** Runs one command line (`node bin/storemap.js …`, or the single executable's). */
export async function main(argv: string[]): Promise<void> {
  if (argv[2] === '--version' || argv[2] === '-V') return void console.log(versionText());
  await program.parseAsync(argv).catch((e: unknown) => {
    console.error(`storemap: ${e instanceof Error ? e.message : String(e)}`);
    const signal = stopSignal();
    process.exit(signal ? 128 + os.constants.signals[signal] : 1);
  });
}
