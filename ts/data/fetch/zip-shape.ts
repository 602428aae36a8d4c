// A zip's own structure, checked after a download that has no published checksum
// (AllThePlaces' zips). Its size matching the listing proves little when the listing gives none,
// or when a proxy answered with its own page; the end records (APPNOTE 6.3.10 §4.3.16, §4.3.14,
// §4.3.15) are at the end of every whole zip and say where the central directory begins, so a
// file cut short, an error page, or bytes added before or after the zip do not pass.
import { open, type FileHandle } from 'node:fs/promises';

const EOCD = { sig: 0x06054b50, len: 22 };
const ZIP64_LOCATOR = { sig: 0x07064b50, len: 20 };
const ZIP64_EOCD = { sig: 0x06064b50, len: 56 };
const CENTRAL_HEADER_SIG = 0x02014b50;
const MAX_COMMENT = 0xffff;

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

/** Where the central directory is, and where it must end (the end record after it). */
interface Directory {
  entries: number;
  size: number;
  offset: number;
  end: number;
}

/** The directory the ZIP64 records give, undefined when there is no locator, or why the records
 * it points at are not there. */
async function zip64Directory(fh: FileHandle, endAt: number): Promise<Directory | string | undefined> {
  const locatorAt = endAt - ZIP64_LOCATOR.len;
  if (locatorAt < 0) return undefined;
  const locator = await readAt(fh, locatorAt, ZIP64_LOCATOR.len);
  if (locator.length < ZIP64_LOCATOR.len || locator.readUInt32LE(0) !== ZIP64_LOCATOR.sig) return undefined;
  const recordAt = Number(locator.readBigUInt64LE(8));
  const record = recordAt + ZIP64_EOCD.len <= locatorAt ? await readAt(fh, recordAt, ZIP64_EOCD.len) : Buffer.alloc(0);
  if (record.length < ZIP64_EOCD.len || record.readUInt32LE(0) !== ZIP64_EOCD.sig) return `no ZIP64 end record at byte ${recordAt}, where its locator points`;
  return { entries: Number(record.readBigUInt64LE(32)), size: Number(record.readBigUInt64LE(40)), offset: Number(record.readBigUInt64LE(48)), end: recordAt };
}

/** Why the file is not a whole zip, or undefined when its end records and central directory
 * are where they say. Reads at most 64 KiB and a few records, however large the file. */
export async function zipProblem(file: string): Promise<string | undefined> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size < EOCD.len) return `not a zip file: ${size} bytes, fewer than a zip's end record alone`;
    const tailStart = Math.max(0, size - EOCD.len - MAX_COMMENT);
    const tail = await readAt(fh, tailStart, size - tailStart);
    // The end record is the one whose comment runs exactly to the end of the file.
    let at = -1;
    for (let i = tail.length - EOCD.len; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD.sig && i + EOCD.len + tail.readUInt16LE(i + 20) === tail.length) {
        at = i;
        break;
      }
    }
    if (at < 0) return 'not a whole zip file: no end-of-central-directory record at its end (cut short, or not a zip)';
    const endAt = tailStart + at;
    const plain: Directory = { entries: tail.readUInt16LE(at + 10), size: tail.readUInt32LE(at + 12), offset: tail.readUInt32LE(at + 16), end: endAt };
    // A ZIP64 locator just before the end record points at the 64-bit end record, which follows
    // the central directory. Writers add one whenever a value outgrew its field (Python's zipfile
    // once the directory starts past 2 GiB, with the 32-bit fields still holding true values), so
    // it is looked for whatever the plain fields say.
    const zip64 = await zip64Directory(fh, endAt);
    let cd: Directory;
    if (typeof zip64 === 'object') cd = zip64;
    else if (plain.offset + plain.size === plain.end) cd = plain; // 65,535 entries fit without ZIP64
    else if (zip64 !== undefined) return `not a whole zip file: ${zip64}`;
    else if (plain.entries === 0xffff || plain.size === 0xffffffff || plain.offset === 0xffffffff) return 'not a whole zip file: its end record asks for ZIP64 but no ZIP64 locator precedes it';
    else {
      return `not a whole zip file: its central directory (${plain.size} bytes from byte ${plain.offset}) should end at byte ${plain.end}, where its end record is (bytes missing, or added before it)`;
    }
    if (cd.offset + cd.size !== cd.end) {
      return `not a whole zip file: its central directory (${cd.size} bytes from byte ${cd.offset}) should end at byte ${cd.end}, where its ZIP64 end record is (bytes missing, or added before it)`;
    }
    const { entries, offset: cdOffset } = cd;
    if (entries > 0) {
      const first = await readAt(fh, cdOffset, 4);
      if (first.length < 4 || first.readUInt32LE(0) !== CENTRAL_HEADER_SIG) return `not a whole zip file: no central directory entry at byte ${cdOffset}, where its end record says the directory begins`;
    }
    return undefined;
  } finally {
    await fh.close();
  }
}
