import { DATA_FORMATS, IMAGE_FORMATS, type DataFormat, type ImageKind } from '../native.ts';

// The one credit calculator. Base cost by result count (DESIGN.md section 3; it fits both
// examples of the contract: 5K-10K costs 5, about 43K in JSON costs 8); images cost twice.
export const TIERS: { upTo: number; credits: number }[] = [
  { upTo: 500, credits: 1 },
  { upTo: 2_000, credits: 2 },
  { upTo: 5_000, credits: 3 },
  { upTo: 10_000, credits: 5 },
  { upTo: Number.POSITIVE_INFINITY, credits: 8 },
];

export { DATA_FORMATS, IMAGE_FORMATS };
export type ImageFormat = ImageKind;
export type Format = DataFormat | ImageFormat;
/** Every response format: the addon's data formats, then its image formats. */
export const FORMATS: [Format, ...Format[]] = [...DATA_FORMATS, ...IMAGE_FORMATS];

export function isImageFormat(format: Format): format is ImageFormat {
  return (IMAGE_FORMATS as readonly string[]).includes(format);
}

/** The tier table as prose ("1-500 locations cost 1, ..."): the docs quote this, never a copy. */
export function tiersText(unit = 'locations'): string {
  return TIERS.map((t, i) => {
    const from = i === 0 ? 1 : TIERS[i - 1].upTo + 1;
    const range = Number.isFinite(t.upTo) ? `${from.toLocaleString('en-US')}-${t.upTo.toLocaleString('en-US')}` : `more than ${TIERS[i - 1].upTo.toLocaleString('en-US')}`;
    return `${range} ${unit} cost ${t.credits}`;
  }).join(', ');
}

export function baseCredits(resultCount: number): number {
  if (!Number.isInteger(resultCount) || resultCount < 0) throw new RangeError(`result count ${resultCount}`);
  return TIERS.find((t) => resultCount <= t.upTo)!.credits;
}

export function creditsFor(resultCount: number, format: Format): number {
  const multiplier = isImageFormat(format) ? 2 : 1;
  return baseCredits(resultCount) * multiplier;
}

/** Below this balance responses carry X-Credits-Low: true. */
export const LOW_CREDIT_THRESHOLD = 50;

/**
 * The most rows a balance pays for in `format`: what the addon may serve before it stops
 * without serializing or drawing anything (price before work). Undefined when the balance
 * pays for any count.
 */
export function affordableRows(balance: number, format: Format): number | undefined {
  const multiplier = isImageFormat(format) ? 2 : 1;
  let rows = 0;
  for (const t of TIERS) {
    if (t.credits * multiplier > balance) return rows;
    rows = t.upTo;
  }
  return undefined;
}
