// A data folder written by another storemap: its snapshot's format, read from the header before
// the addon loads it, so that the operator is told which storemap or which command fits instead
// of a bare "format version" error.
import { closeSync, openSync, readSync } from 'node:fs';
import { DATA_DEFAULTS } from '../native.ts';

/** The header: eight magic bytes, then the format as a little-endian u32. */
const MAGIC = 'STOREMAP';

/** The snapshot's format, or undefined when the file is not a snapshot (the loader says why). */
export function snapshotFormat(file: string): number | undefined {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) < 12 || head.toString('latin1', 0, 8) !== MAGIC) return undefined;
    return head.readUInt32LE(8);
  } finally {
    closeSync(fd);
  }
}

/** Throws, with what to do, when this build cannot serve the snapshot's format. */
export function checkSnapshotFormat(file: string, version: string): void {
  const format = snapshotFormat(file);
  const { snapshotFormat: newest, oldestSnapshotFormat: oldest } = DATA_DEFAULTS;
  if (format === undefined || (format >= oldest && format <= newest)) return;
  if (format > newest) {
    throw new Error(
      `${file} has snapshot format ${format}, written by a newer storemap; this one (${version}) reads formats ${oldest} to ${newest}. ` +
        'Run the newer storemap on this data folder, or point STOREMAP_DATA_DIR at another folder.',
    );
  }
  throw new Error(
    `${file} has snapshot format ${format}, which this storemap (${version}) no longer reads (formats ${oldest} to ${newest}). ` +
      'Build it again in this format: `storemap data build` for the synthetic world, `storemap data refresh` for imported sources.',
  );
}
