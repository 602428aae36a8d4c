// Raw HTTP for the API tests, through node:http so a test controls every byte and header
// (no Content-Type added behind its back, chunked or declared bodies, Content-Encoding). Only
// 127.0.0.1 is allowed, and every request has a deadline.
import http from 'node:http';

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  text: string;
  /** The body parsed as JSON (throws with the text when it is not JSON). */
  json<T = any>(): T;
  /** A single header value ('' when absent). */
  header(name: string): string;
}

export interface RequestOptions {
  method?: string;
  path: string;
  headers?: Record<string, string | number | undefined>;
  /** A string, raw bytes, or chunks written one by one (no Content-Length: chunked). */
  body?: string | Buffer | Buffer[];
  agent?: http.Agent | false;
  timeoutMs?: number;
}

export function request(base: string, o: RequestOptions): Promise<HttpResult> {
  const url = new URL(o.path, base);
  if (url.hostname !== '127.0.0.1') throw new Error(`tests only talk to 127.0.0.1, not ${url.hostname}`);
  const headers: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k] = v;
  const chunked = Array.isArray(o.body);
  if (o.body !== undefined && !chunked && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) {
    headers['content-length'] = Buffer.byteLength(o.body as string | Buffer);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: Number(url.port), path: url.pathname + url.search, method: o.method ?? 'POST', headers, agent: o.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            raw,
            text,
            json() {
              try {
                return JSON.parse(text);
              } catch {
                throw new Error(`not JSON (status ${res.statusCode}): ${text.slice(0, 300)}`);
              }
            },
            header(name: string) {
              const v = res.headers[name.toLowerCase()];
              return Array.isArray(v) ? v.join(', ') : (v ?? '');
            },
          });
        });
      },
    );
    req.setTimeout(o.timeoutMs ?? 20_000, () => req.destroy(new Error(`request to ${o.path} timed out`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      // The server may answer (413, 401) and close before a large body is fully written.
      reject(e);
    });
    if (Array.isArray(o.body)) {
      for (const c of o.body) req.write(c);
      req.end();
    } else {
      req.end(o.body);
    }
  });
}

export const LOCATION_MAP = '/api/v1/location-map';

/** POST /api/v1/location-map with a JSON body and a key. */
export function postMap(base: string, key: string | undefined, body: unknown, extra: Omit<RequestOptions, 'path' | 'body'> = {}): Promise<HttpResult> {
  return request(base, {
    ...extra,
    path: LOCATION_MAP,
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-key': key }), ...extra.headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

/** Runs `count` tasks with at most `workers` in flight; results in task order. */
export async function pooled<T>(count: number, workers: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(workers, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}
