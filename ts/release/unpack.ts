// The single executable's native parts and data, unpacked once into a per-build cache folder
// and checked on every start. A shared library can only be loaded from a file, so the addon,
// better-sqlite3's binding and the pipeline binary must be on disk; the tables, the reference
// data and the playground go with them so that the service finds everything under one root,
// laid out as in a checkout.
//
// Nothing here imports the service: the executable's entry point runs this before any module
// that reads ROOT is evaluated.
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

/** One file of the release: where it goes under the root, and what it must be. */
export interface ManifestFile {
  path: string;
  /** The SEA asset that holds it, brotli-compressed. */
  asset: string;
  size: number;
  sha256: string;
  /** 0o755 for the pipeline binary, 0o644 for the rest. */
  mode: number;
}

/** What the release build records about itself (`--version` prints it). */
export interface Manifest {
  version: string;
  commit: string;
  /** The Node the executable embeds. */
  node: string;
  /** The snapshot format its pipeline writes and its addon reads up to. */
  snapshotFormat: number;
  /** A digest over every file's path and digest: two builds of one version get two folders. */
  build: string;
  files: ManifestFile[];
}

/** The manifest's own asset key. */
export const MANIFEST_ASSET = 'manifest.json';

/** A failure the operator can act on: the message says what is damaged and what to do. */
export class UnpackError extends Error {
  constructor(
    message: string,
    readonly code: 'DAMAGED_EXECUTABLE' | 'DAMAGED_CACHE' | 'NO_CACHE_FOLDER',
  ) {
    super(message);
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The digest that names a build: every file's path and digest, in manifest order. */
export function buildDigest(files: Pick<ManifestFile, 'path' | 'sha256'>[]): string {
  const h = createHash('sha256');
  for (const f of files) h.update(`${f.path}\0${f.sha256}\n`);
  return h.digest('hex').slice(0, 12);
}

/** Where the cache folders live, and a warning when that is not where the operator expects. */
export interface CacheBase {
  dir: string;
  warning?: string;
}

function writableDir(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    const probe = path.join(dir, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`);
    closeSync(openSync(probe, 'wx'));
    rmSync(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * `$XDG_CACHE_HOME/storemap`, else `~/.cache/storemap`; when that cannot be written (a read-only
 * home, a service user without one), a folder of this user's own in the temporary directory,
 * with a warning. The temporary folder must be ours and not a link: another user could have made
 * it first to feed us their libraries.
 */
export function cacheBase(env: NodeJS.ProcessEnv = process.env, home = os.homedir(), tmp = os.tmpdir()): CacheBase {
  const xdg = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  const preferred = path.join(xdg ?? path.join(home || '/nonexistent', '.cache'), 'storemap');
  if (writableDir(preferred)) return { dir: preferred };
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const fallback = path.join(tmp, `storemap-${uid}`);
  try {
    mkdirSync(fallback, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new UnpackError(`storemap: cannot write the cache folder ${preferred}, nor ${fallback}: ${(e as Error).message}. Set XDG_CACHE_HOME to a writable folder.`, 'NO_CACHE_FOLDER');
    }
  }
  const st = lstatSync(fallback);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o022) !== 0) {
    throw new UnpackError(`storemap: cannot write the cache folder ${preferred}, and ${fallback} is not a private folder of this user's: set XDG_CACHE_HOME to a writable folder.`, 'NO_CACHE_FOLDER');
  }
  return { dir: fallback, warning: `storemap: ${preferred} cannot be written; unpacking into ${fallback} instead (set XDG_CACHE_HOME to choose the folder)` };
}

/** The folder one build unpacks into. */
export function cacheRoot(base: string, manifest: Pick<Manifest, 'version' | 'build'>): string {
  return path.join(base, `${manifest.version}-${manifest.build}`);
}

function damagedCache(root: string, file: string, what: string): UnpackError {
  return new UnpackError(
    `storemap: the cached file ${path.join(root, file)} ${what}. The cache folder is damaged: delete ${root} and start storemap again (it is unpacked anew from the executable).`,
    'DAMAGED_CACHE',
  );
}

/** Every file of an unpacked folder, against the manifest (size, then digest). */
export function verify(root: string, manifest: Manifest): void {
  for (const f of manifest.files) {
    const file = path.join(root, f.path);
    let bytes: Buffer;
    try {
      if (statSync(file).size !== f.size) throw damagedCache(root, f.path, `is ${statSync(file).size} bytes, not ${f.size}`);
      bytes = readFileSync(file);
    } catch (e) {
      if (e instanceof UnpackError) throw e;
      throw damagedCache(root, f.path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    if (sha256(bytes) !== f.sha256) throw damagedCache(root, f.path, 'does not match its checksum');
  }
}

function writeFileDurably(file: string, bytes: Buffer, mode: number): void {
  const fd = openSync(file, 'wx', mode);
  try {
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(file, mode); // the umask may have narrowed it
}

/**
 * The root for this build: unpacked from the assets when it is not there yet, then checked.
 * Unpacking writes into a folder of its own and renames it into place, so a second process
 * starting at the same time either finds the whole folder or none: the one whose rename comes
 * second drops its copy and uses the winner's.
 */
export function unpack(manifest: Manifest, asset: (key: string) => Buffer, base: string): string {
  const root = cacheRoot(base, manifest);
  if (!existsSync(root)) {
    const tmp = `${root}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      mkdirSync(tmp, { recursive: true });
      for (const f of manifest.files) {
        let bytes: Buffer;
        try {
          bytes = brotliDecompressSync(asset(f.asset));
        } catch (e) {
          throw damagedAsset(f, (e as Error).message);
        }
        if (bytes.length !== f.size || sha256(bytes) !== f.sha256) throw damagedAsset(f, 'its checksum does not match');
        mkdirSync(path.dirname(path.join(tmp, f.path)), { recursive: true });
        writeFileDurably(path.join(tmp, f.path), bytes, f.mode);
      }
      try {
        renameSync(tmp, root);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
        // Another process unpacked the same build first: its folder is as good as ours.
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  verify(root, manifest);
  return root;
}

function damagedAsset(f: ManifestFile, why: string): UnpackError {
  return new UnpackError(
    `storemap: the executable is damaged: its embedded file ${f.path} cannot be unpacked (${why}). Download it again and check it against SHA256SUMS (sha256sum -c SHA256SUMS).`,
    'DAMAGED_EXECUTABLE',
  );
}
