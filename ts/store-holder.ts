// The snapshot the server answers from, swappable without downtime: requests in flight keep
// the Store they started with; new requests get the new one.
import { loadStore, type Store } from './native.ts';

export class StoreHolder {
  #store: Store;
  #version: string;
  constructor(store: Store) {
    this.#store = store;
    this.#version = versionOf(store);
  }
  get current(): Store {
    return this.#store;
  }
  /** The current snapshot's content version (caches key on it). */
  get version(): string {
    return this.#version;
  }
  /** Loads a snapshot file off the event loop and swaps it in; the old one stays valid. */
  async reload(path: string): Promise<Store> {
    const next = await loadStore(path);
    this.#store = next;
    this.#version = versionOf(next);
    return next;
  }
}

function versionOf(store: Store): string {
  return String((store.info() as { snapshot_version?: string }).snapshot_version ?? '');
}
