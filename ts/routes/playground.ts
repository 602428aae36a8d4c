// GET / and /playground: the browser playground, one page and its script, built once when the
// server starts from the project's own files (web/playground.html, web/playground.ts compiled
// by esbuild) and the request schemas of the OpenAPI document, so the form has the fields the
// API validates. No CDN, no framework; public and free like the other documents.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Request, Response } from 'restify';
import { openApiDocument } from '../docs/openapi.ts';
import { inlineSchema } from '../docs/json-schema.ts';
import { limitFreeEndpoint } from '../http/free-limit.ts';
import { OPERATIONS, wireType, type OperationId } from '../api/operations.ts';
import { ROOT } from '../paths.ts';
import type { ApiDeps } from '../http/context.ts';
import type { Handlers } from '../http/mount.ts';

const WEB_DIR = path.join(ROOT, 'web');
/** The operations the playground has a form for, in its menu's order. */
const FORMS: OperationId[] = ['locationMap', 'nearby', 'overlap', 'history'];
/** The page loads nothing from elsewhere; its script is /playground.js, its images blob: URLs. */
const CSP = "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** Each form's operation: method, path, summary and the JSON Schema of its body (a POST's, $refs
 * resolved) or of its query parameters (a GET's). */
function forms(): { id: string; method: string; path: string; summary: string; body: unknown }[] {
  const doc = openApiDocument();
  return FORMS.map((id) => {
    const op = OPERATIONS.find((o) => o.id === id)!;
    if (op.query) return { id, method: op.method, path: op.path, summary: op.summary, body: inlineSchema(op.query, 'input') };
    const ref = doc.paths[op.path][op.method].requestBody.content['application/json'].schema.$ref as string;
    return { id, method: op.method, path: op.path, summary: op.summary, body: doc.components.schemas[ref.split('/').pop()!] };
  });
}

/** The page and its script, as sent. */
export function playgroundFiles(): { page: Buffer; script: Buffer } {
  // JSON inside a script element: "<" escaped so no text can close the element.
  const embedded = JSON.stringify(forms()).replace(/</g, '\\u003c');
  const page = readFileSync(path.join(WEB_DIR, 'playground.html'), 'utf8').replace('__OPERATIONS__', () => embedded);
  const prebuilt = path.join(WEB_DIR, PLAYGROUND_SCRIPT);
  const script = existsSync(prebuilt) ? readFileSync(prebuilt, 'utf8') : compilePlaygroundScript();
  return { page: Buffer.from(page, 'utf8'), script: Buffer.from(script, 'utf8') };
}

/** The compiled script's name beside the page: a release carries it (it has no esbuild);
 * a checkout compiles web/playground.ts at start. */
export const PLAYGROUND_SCRIPT = 'playground.js';

/** web/playground.ts as the browser runs it. esbuild is loaded here only, on first use. */
export function compilePlaygroundScript(): string {
  const { transformSync } = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  return transformSync(readFileSync(path.join(WEB_DIR, 'playground.ts'), 'utf8'), { loader: 'ts', format: 'iife', target: 'es2020' }).code;
}

export function handlers(deps: ApiDeps): Handlers {
  const files = playgroundFiles();
  const free = limitFreeEndpoint(deps);
  const send = (id: OperationId, body: Buffer) => {
    const type = wireType(OPERATIONS.find((o) => o.id === id)!.success.content[0].type);
    return (_req: Request, res: Response, next: () => void) => {
      res.status(200);
      res.header('content-type', type);
      res.header('content-length', String(body.length));
      res.header('Content-Security-Policy', CSP);
      res.header('X-Content-Type-Options', 'nosniff');
      res.header('Cache-Control', 'public, max-age=300');
      res.end(body);
      next();
    };
  };
  return {
    home: [free, send('home', files.page)],
    playground: [free, send('playground', files.page)],
    playgroundScript: [free, send('playgroundScript', files.script)],
  };
}
