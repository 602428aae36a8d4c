// The ledger's operations on PostgreSQL. A charge is one transaction that locks the key's row
// (SELECT ... FOR UPDATE), so charges on one key from every node queue on that row and each
// sees the balance the one before it left: a balance of N credits admits exactly N one-credit
// requests however many nodes race, and never goes below zero (the column's CHECK would refuse
// it anyway). Charges on different keys do not wait for each other.
import type pg from 'pg';
import { planCharge, WriteCancelled, type ChargeRequest, type ChargeResult, type LedgerOps, type UsageBatchRow, type UsageEntry } from './ledger.ts';

const INSERT_USAGE = 'INSERT INTO usage (key_id, at, endpoint, status, format, credits, requests) VALUES ($1, $2, $3, $4, $5, $6, $7)';

export class PgLedger implements LedgerOps {
  constructor(private readonly pool: pg.Pool) {}

  async charge(req: ChargeRequest, cancelled: () => boolean = () => false): Promise<ChargeResult> {
    const { keyId, entry, at } = req;
    const client = await this.pool.connect();
    if (cancelled()) {
      client.release();
      throw new WriteCancelled('the request was answered while it waited for the ledger');
    }
    try {
      await client.query('BEGIN');
      const found = await client.query<{ credits: string; revoked_at: string | null }>('SELECT credits, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE', [keyId]);
      const row = found.rows[0];
      const plan = planCharge(row ? { credits: Number(row.credits), revoked: row.revoked_at !== null } : null, req);
      if (plan.debit > 0) await client.query('UPDATE api_keys SET credits = credits - $1 WHERE id = $2', [plan.debit, keyId]);
      if (plan.usage) await client.query(INSERT_USAGE, [keyId, at, entry.endpoint, plan.usage.status, entry.format, plan.usage.credits, 1]);
      await client.query('COMMIT');
      return plan.result;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  async record(keyId: string, entry: UsageEntry, at: number, requests = 1): Promise<void> {
    await this.pool.query(INSERT_USAGE, [keyId, at, entry.endpoint, entry.status, entry.format, 0, requests]);
  }

  async recordMany(rows: UsageBatchRow[]): Promise<void> {
    if (rows.length === 0) return;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      for (const r of rows) await client.query(INSERT_USAGE, [r.keyId, r.at, r.entry.endpoint, r.entry.status, r.entry.format, 0, r.n]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }

  async pruneUsage(before: number, limit: number): Promise<number> {
    const r = await this.pool.query('DELETE FROM usage WHERE id IN (SELECT id FROM usage WHERE at < $1 ORDER BY id LIMIT $2)', [before, limit]);
    return r.rowCount ?? 0;
  }

  async balance(keyId: string): Promise<number> {
    const r = await this.pool.query<{ credits: string }>('SELECT credits FROM api_keys WHERE id = $1', [keyId]);
    return r.rows.length > 0 ? Number(r.rows[0].credits) : 0;
  }
}
