// The documentation endpoints: /api/openapi.yaml, /api/agent-docs, /llms.txt and
// /ATTRIBUTION.txt. Public and free. Each body is built once, when the server starts (from
// OPERATIONS and the zod schemas, or read from data/ATTRIBUTION.txt), and served from memory.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response, Server } from 'restify';
import { agentDocs } from '../docs/agent-docs.ts';
import { llmsTxt } from '../docs/llms.ts';
import { openApiYaml, wireType } from '../docs/openapi.ts';
import { OPERATIONS } from '../http/operations.ts';
import { TABLES_DIR } from '../paths.ts';
import type { ApiDeps } from '../server.ts';

export const ATTRIBUTION_FILE = path.join(TABLES_DIR, 'ATTRIBUTION.txt');

/** Every documentation body, keyed by its operation id. */
export function documents(deps: Pick<ApiDeps, 'config'>): Record<string, string> {
  return {
    openapi: openApiYaml(),
    agentDocs: agentDocs(OPERATIONS, deps.config),
    llms: llmsTxt(),
    attribution: readFileSync(ATTRIBUTION_FILE, 'utf8'),
  };
}

export function mount(server: Server, deps: ApiDeps): void {
  const docs = documents(deps);
  for (const [id, text] of Object.entries(docs)) {
    const op = OPERATIONS.find((o) => o.id === id);
    if (!op) throw new Error(`documentation operation ${id} is missing from OPERATIONS`);
    // Sent with the media type the operation documents, so the two cannot disagree.
    const type = wireType(op.success.content[0].type);
    const body = Buffer.from(text, 'utf8');
    server.get({ name: op.id, path: op.path }, (_req: Request, res: Response, next: () => void) => {
      res.status(200);
      res.header('content-type', type);
      res.header('content-length', String(body.length));
      res.end(body);
      next();
    });
  }
}
