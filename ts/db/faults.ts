// What a SQLite error means for the service, by its code (better-sqlite3 sets SQLite's extended
// result code as the error's \`code\`). No imports: the error writer reads these too.

/** SQLite's word for "another connection holds the lock". */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** The database cannot take writes at all (full disk, I/O error, read-only file). */
export function isUnwritable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(code);
}
