// The `storemap` command: serve, data build/import/report/refresh. Names and flags are the
// operator interface of DESIGN.md section 6; scripts and tests rely on them.
import { existsSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, type Config } from './config.ts';
import { buildDataset, datasetReport, importSources, snapshotPath } from './data/ingest.ts';
import { loadStore } from './native.ts';
import { StoreHolder } from './store-holder.ts';

function number(min: number, max: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`must be a number from ${min} to ${max}`);
    return n;
  };
}

/** First start: build the default dataset (synthetic, scale from config) if there is none. */
async function ensureDataset(config: Config): Promise<string> {
  const snap = snapshotPath(config.dataDir);
  if (!existsSync(snap)) {
    console.error(`No dataset in ${config.dataDir}: building the synthetic default (scale ${config.defaultScale}); this takes a few seconds.`);
    await buildDataset({
      dataDir: config.dataDir,
      scale: config.defaultScale,
      seed: 1,
      disabledSources: config.disabledSources,
      multiSource: config.multiSource,
      progress: true,
    });
  }
  return snap;
}

async function serve(): Promise<void> {
  // Loaded here so the data commands do not pay for the HTTP stack.
  const { createServer, listen } = await import('./server.ts');
  const config = loadConfig();
  const store = new StoreHolder(await loadStore(await ensureDataset(config)));
  const server = createServer({ config, store });
  const url = await listen(server, config.host, config.port);
  const info = store.current.info() as { snapshot_version: string; rows: number };
  console.log(`storemap listening on ${url} (snapshot ${info.snapshot_version}, ${info.rows} rows)`);
  const stop = (signal: string) => {
    console.log(`${signal}: finishing in-flight requests`);
    server.close(() => process.exit(0));
    // Connections that stay idle must not hold the process forever.
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

const program = new Command('storemap').description('Store-location data service');
program.command('serve').description('run the HTTP service (builds the default dataset on first start)').action(serve);

const data = program.command('data').description('build, import, refresh and inspect the dataset');
data
  .command('build')
  .description('generate the synthetic world and build its snapshot')
  .option('--scale <s>', 'dataset scale (1 = the full-size world)', number(0.0001, 4), 0.1)
  .option('--seed <n>', 'generator seed', number(0, Number.MAX_SAFE_INTEGER), 1)
  .option('--as-of <time>', 'refresh time stamped into every row (ISO 8601); default now')
  .action(async (o: { scale: number; seed: number; asOf?: string }) => {
    const config = loadConfig();
    const summary = (await buildDataset({
      dataDir: config.dataDir,
      scale: o.scale,
      seed: o.seed,
      asOf: o.asOf,
      disabledSources: config.disabledSources,
      multiSource: config.multiSource,
      progress: true,
    })) as { snapshot: string; rows: number; snapshot_version: string };
    console.log(`${summary.snapshot}: ${summary.rows} rows, version ${summary.snapshot_version}`);
  });
data
  .command('import')
  .description('build a snapshot from real extracts (any subset of the four sources)')
  .option('--osm <path>', 'OpenStreetMap GeoJSON sequence (osmium export -f geojsonseq -a type,id)')
  .option('--overture <path>', 'Overture places GeoParquet file or folder')
  .option('--fsq <path>', 'Foursquare OS Places Parquet file or folder')
  .option('--atp <path>', 'AllThePlaces spider GeoJSON file or output folder')
  .option('--as-of <time>', 'refresh time stamped into every row (ISO 8601); default now')
  .action(async (o: { osm?: string; overture?: string; fsq?: string; atp?: string; asOf?: string }) => {
    if (!o.osm && !o.overture && !o.fsq && !o.atp) throw new InvalidArgumentError('give at least one of --osm, --overture, --fsq, --atp');
    const config = loadConfig();
    const summary = (await importSources({ ...o, dataDir: config.dataDir, disabledSources: config.disabledSources, multiSource: config.multiSource, progress: true })) as {
      snapshot: string;
      rows: number;
    };
    console.log(`${summary.snapshot}: ${summary.rows} rows`);
  });
data
  .command('report')
  .description("the dataset's figures")
  .option('--json', 'one JSON object')
  .action(async (o: { json?: boolean }) => {
    const report = (await datasetReport(loadConfig().dataDir)) as Record<string, unknown>;
    if (o.json) console.log(JSON.stringify(report));
    else for (const [k, v] of Object.entries(report)) console.log(`${k.padEnd(26)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  });

await program.parseAsync(process.argv).catch((e: unknown) => {
  console.error(`storemap: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
