// What a ledger error means for the service, by its code (better-sqlite3 sets SQLite's extended
// result code as the error's `code`; pg sets PostgreSQL's SQLSTATE, Node a socket's errno).
// No imports: the error writer reads these too.

/** "Another connection holds the lock": SQLite busy or locked, or PostgreSQL past lock_timeout. */
export function isBusy(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  // 55P03: PostgreSQL's lock_not_available, a charge that waited its lock_timeout for a key's row.
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === '55P03');
}

/** The database cannot take writes at all (full disk, I/O error, read-only file). */
export function isUnwritable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB)/.test(code);
}

/**
 * PostgreSQL cannot be reached or is going away: a refused or dropped connection, the server
 * shutting down or starting up (SQLSTATE class 08, 57P01-57P03), too many connections (53300).
 * The service answers 503 with Retry-After and keeps serving what needs no ledger.
 */
export function isUnavailable(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND)$/.test(code) || /^(08...|57P0[123]|53300)$/.test(code))) return true;
  // pg's own words when the server closes a connection under it.
  return e instanceof Error && /Connection terminated|connection error|Client has encountered a connection error/i.test(e.message);
}
