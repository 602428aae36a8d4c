// Encoded map images, least recently used first out, bounded by their total bytes. Keys are
// the normalized request (resolved brands, every filter and image option after defaults, the
// plan's row cap) together with the snapshot version, so a refreshed snapshot never serves an
// old picture and two spellings of one request ("MCD", "McDonald's") share an entry.
import { createHash } from 'node:crypto';

export interface CachedImage {
  body: Buffer;
  count: number;
  total: number;
  sources: string[];
  region: string;
}

export class ImageCache {
  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least
  // recently used.
  private readonly entries = new Map<string, CachedImage>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  static key(parts: unknown): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
  }

  get(key: string): CachedImage | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, image: CachedImage): void {
    const size = image.body.length;
    // An image bigger than the whole budget would only evict everything else.
    if (this.maxBytes <= 0 || size > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.bytes -= old.body.length;
      this.entries.delete(key);
    }
    this.entries.set(key, image);
    this.bytes += size;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.body.length;
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
