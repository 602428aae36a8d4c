// Every error the API can return: one registry of stable codes and one class. It sits below
// every layer (services throw these, routes write them with http/errors.ts, the docs list every
// code here: a test checks that), so no layer imports upward to reach it.

export const ERRORS = {
  INVALID_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  INVALID_REQUEST: { status: 400, message: 'The request has invalid or missing fields.' },
  UNAUTHORIZED: { status: 401, message: 'A valid API key is required in the x-api-key header.' },
  INSUFFICIENT_CREDITS: { status: 402, message: 'The key has too few credits for this request.' },
  TRIAL_EXPIRED: { status: 402, message: 'The trial period of this key has ended.' },
  DATA_ACCESS_FORBIDDEN: { status: 403, message: 'Data formats (json, csv, geojson) need an enterprise plan; request format png or jpeg.' },
  NOT_FOUND: { status: 404, message: 'No locations found.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not allowed on this path.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be application/json.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests for this key; retry after the time in Retry-After.' },
  INTERNAL: { status: 500, message: 'An internal error occurred.' },
  NOT_IMPLEMENTED: { status: 501, message: 'This feature is not available yet.' },
  TIMEOUT: { status: 503, message: 'The request took too long and was stopped; retry later.' },
  SERVICE_BUSY: { status: 503, message: 'The service is at capacity; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface Suggestion {
  brand: string;
  location_count: number;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: { suggestions?: Suggestion[]; details?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message ?? ERRORS[code].message);
    this.status = ERRORS[code].status;
  }
}

/** The contract's error body: {error, code, suggestions?} (plus details for bad fields). */
export function errorBody(e: ApiError): Record<string, unknown> {
  const body: Record<string, unknown> = { error: e.message, code: e.code };
  if (e.extra.suggestions) body.suggestions = e.extra.suggestions;
  if (e.extra.details !== undefined) body.details = e.extra.details;
  return body;
}
