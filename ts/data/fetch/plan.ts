// The vocabulary `storemap data fetch` is written in: the sources, a run's options, the files a
// publisher's plan names, and the context every step gets. Its own module so that the four
// publishers and the downloader share it without importing one another.
import type { FetchConfig } from '../../config.ts';

export const FETCH_SOURCES = ['osm', 'overture', 'atp', 'fsq'] as const;
export type FetchSource = (typeof FETCH_SOURCES)[number];

/** Where a fetch is for: boxes [west, south, east, north] (west east of east across the
 * antimeridian), and how to name them in messages. */
export interface Area {
  label: string;
  boxes: [number, number, number, number][];
}

export interface FetchOptions {
  /** ISO 3166-1 alpha-2; picks the OpenStreetMap extract, which needs one. */
  country?: string;
  /** What Overture's files are cut to by range requests (a country's boxes, or `--bbox`); none:
   * the whole worldwide files. */
  area?: Area;
  /** Default: all four. */
  sources?: string | readonly string[];
  /** The `sources` folder; each source goes to `<outDir>/<source>/`. */
  outDir: string;
  config: FetchConfig;
  /** Overture release such as `2026-04-15.0`; default: the STAC catalog's `latest`. */
  overtureRelease?: string;
  /** Foursquare release date such as `2026-03-12` (the `dt=` folder); default: the newest. */
  fsqRelease?: string;
  /** One line per event (file started, finished, skipped, notes). */
  log?: (line: string) => void;
  /** With `isTTY`, a live progress line per file is written here (with `\r`). */
  progress?: { isTTY: boolean; write: (s: string) => void };
  /** Defaults to the global `fetch`. */
  fetch?: typeof globalThis.fetch;
  /** The clock a release's age is read against. */
  now?: () => number;
}

export interface FetchedFile {
  source: FetchSource;
  url: string;
  path: string;
  bytes: number;
  /** What the file was checked against (`ranges`: cut to an area, every range's length). */
  check: 'md5' | 'sha256' | 'size' | 'ranges';
  /** `resumed`: continued from a `.part`; `up-to-date`: already in place and its checksum matched. */
  status: 'downloaded' | 'resumed' | 'up-to-date';
  /** A file cut to an area: what was read of how much. */
  cut?: { bytesRead: number; fileSize: number; requests: number; rowGroups: number; keptRowGroups: number; rows: number };
}

/** One file to download, with what the publisher says about it. */
export interface FileSpec {
  source: FetchSource;
  url: string;
  dest: string;
  headers?: Record<string, string>;
  /** Expected content checksum (lower-case hex) and where it was published. */
  checksum?: { alg: 'md5' | 'sha256'; hex: string; from: string };
  /** Expected size in bytes, from a listing. */
  size?: number;
  /** Where `size` came from, for messages. */
  sizeFrom?: string;
  /** Cut to this area by range requests (a GeoParquet file whose size is known). */
  cut?: Area;
  /** Checked as a whole zip once downloaded (`zip-shape.ts`), for files with no checksum. */
  zip?: boolean;
}

export interface Ctx {
  opts: FetchOptions;
  config: FetchConfig;
  fetch: typeof globalThis.fetch;
  log: (line: string) => void;
  /** A warning for the summary (and the log). */
  warn: (line: string) => void;
  now: () => number;
}

/** A source's files; `supersedes` names files of an older layout this fetch replaces (removed
 * once every file is in place), `supersedesGroups` the per-group zips of AllThePlaces. */
export type Plan = { files: FileSpec[]; supersedes?: string[]; supersedesGroups?: boolean } | { skip: string };
