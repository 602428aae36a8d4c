// The snapshot the server answers from, swappable without downtime: requests in flight keep
// the Store they started with; new requests get the new one.
import { statSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { loadStore, type SnapshotInfo, type Store } from './native.ts';

export class StoreHolder {
  #store: Store;
  #info: SnapshotInfo;
  constructor(store: Store) {
    this.#store = store;
    this.#info = store.info();
  }
  get current(): Store {
    return this.#store;
  }
  /** The current snapshot's facts, read once when it is loaded (not per request). */
  get info(): SnapshotInfo {
    return this.#info;
  }
  /** The current snapshot's content version (caches key on it). */
  get version(): string {
    return this.#info.snapshot_version;
  }
  /** Loads a snapshot file off the event loop and swaps it in; the old one stays valid. */
  async reload(path: string, load: (path: string) => Promise<Store> = loadStore): Promise<Store> {
    const next = await load(path);
    this.#store = next;
    this.#info = next.info();
    return next;
  }
}

/**
 * Swaps in the snapshot at `file` whenever it is replaced (a data refresh writes a new file and
 * renames it over the old one), polling its stat every `intervalMs`. A file that fails to load
 * (its checksum, a truncated copy) is logged and the current snapshot keeps serving. A change
 * that lands while a reload runs is loaded after it: the last file written is the one served.
 * Returns the function that stops watching.
 */
export function watchSnapshot(
  holder: StoreHolder,
  file: string,
  log: (line: string) => void,
  intervalMs = 2000,
  load: (path: string) => Promise<Store> = loadStore,
): () => void {
  let loading = false;
  let seen = safeStat(file);
  const changed = (curr: Stats) => curr.mtimeMs !== 0 && !(seen && curr.mtimeMs === seen.mtimeMs && curr.ino === seen.ino && curr.size === seen.size);
  const onChange = (curr: Stats) => {
    // While loading, the change is left for the check after the load (below).
    if (loading || !changed(curr)) return;
    loading = true;
    seen = curr;
    holder
      .reload(file, load)
      .then(() => log(`snapshot reloaded: version ${holder.version}`))
      .catch((e: unknown) => log(`snapshot reload failed, still serving ${holder.version}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        loading = false;
        // The file may have been replaced again while it loaded; the poll will not say so twice.
        const now = safeStat(file);
        if (now) onChange(now);
      });
  };
  watchFile(file, { interval: intervalMs, persistent: false }, onChange);
  return () => unwatchFile(file, onChange);
}

function safeStat(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
