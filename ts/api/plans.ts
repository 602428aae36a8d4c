// The plans a key can have and what each allows: the one list (the ledgers' schemas check the
// same four names; their migrations are append-only, so a new plan is a new migration, and
// test/unit/plans.test.ts keeps the two in step).
export const PLANS = ['trial', 'standard', 'enterprise', 'internal'] as const;
export type Plan = (typeof PLANS)[number];

export const PLAN_RULES: Record<Plan, { dataFormats: boolean; unlimited: boolean; defaultCredits: number; trialDays?: number; maxLocations?: number }> = {
  trial: { dataFormats: false, unlimited: false, defaultCredits: 50, trialDays: 5, maxLocations: 50 },
  standard: { dataFormats: false, unlimited: false, defaultCredits: 1_000 },
  enterprise: { dataFormats: true, unlimited: false, defaultCredits: 10_000 },
  internal: { dataFormats: true, unlimited: true, defaultCredits: 0 },
};

/** The largest balance a key may hold: past 2^53 the ledger's numbers stop being exact in
 * JavaScript (a top-up of 3 on top of it would store …984, not …985). An unlimited key reports
 * it as its credits left. */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;
