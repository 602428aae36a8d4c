// The snapshot the server answers from, swappable without downtime: requests in flight keep
// the Store they started with; new requests get the new one.
import { loadStore, type Store } from './native.ts';

export class StoreHolder {
  #store: Store;
  constructor(store: Store) {
    this.#store = store;
  }
  get current(): Store {
    return this.#store;
  }
  /** Loads a snapshot file off the event loop and swaps it in; the old one stays valid. */
  async reload(path: string): Promise<Store> {
    const next = await loadStore(path);
    this.#store = next;
    return next;
  }
}
