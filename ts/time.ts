// Time units the service counts in: one home, so the ledger's day buckets, trial expiry and the
// usage window agree.
export const DAY_MS = 86_400_000;
