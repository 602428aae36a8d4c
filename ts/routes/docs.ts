// The documentation endpoints: /api/openapi.yaml, /api/agent-docs, /llms.txt and
// /ATTRIBUTION.txt. Public and free. Each body is built once, when the server starts (from
// OPERATIONS and the zod schemas, or read from data/ATTRIBUTION.txt), and served from memory;
// ATTRIBUTION.txt ends with the spider licences of the snapshot being served, rebuilt when a
// refresh swaps the snapshot.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'restify';
import { agentDocs } from '../docs/agent-docs.ts';
import { llmsTxt } from '../docs/llms.ts';
import { openApiYaml } from '../docs/openapi.ts';
import { OPERATIONS, wireType } from '../api/operations.ts';
import { TABLES_DIR } from '../paths.ts';
import type { ApiDeps } from '../http/context.ts';
import { limitFreeEndpoint } from '../http/free-limit.ts';
import type { Handlers } from '../http/mount.ts';

export const ATTRIBUTION_FILE = path.join(TABLES_DIR, 'ATTRIBUTION.txt');

/** Every documentation body, keyed by its operation id. */
export function documents(deps: Pick<ApiDeps, 'config'>): Record<'openapi' | 'agentDocs' | 'llms' | 'attribution', string> {
  return {
    openapi: openApiYaml(),
    agentDocs: agentDocs(OPERATIONS, deps.config),
    llms: llmsTxt(),
    attribution: readFileSync(ATTRIBUTION_FILE, 'utf8'),
  };
}

/** The licences AllThePlaces spiders declared in the snapshot's source files, grouped. */
export function spiderLicences(info: { atp_spider_licences?: Record<string, string[]> }): string {
  const groups = Object.entries(info.atp_spider_licences ?? {});
  const lines = ['', '', 'Spider licences in the current dataset', '======================================', ''];
  if (groups.length === 0) {
    lines.push('No AllThePlaces spider in the current dataset declares a licence.');
  } else {
    for (const [licence, spiders] of groups) {
      lines.push(`${licence}: ${spiders.length} spider${spiders.length === 1 ? '' : 's'}`);
      // Comma-separated, wrapped at 96 characters like the rest of the file.
      let line = ' ';
      spiders.forEach((spider, i) => {
        const word = i < spiders.length - 1 ? `${spider},` : spider;
        if (line.length + word.length + 1 > 96) {
          lines.push(line);
          line = ' ';
        }
        line += ` ${word}`;
      });
      lines.push(line, '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

export function handlers(deps: ApiDeps): Handlers {
  const docs = documents(deps);
  let attribution: { version: string; body: Buffer } | undefined;
  const attributionBody = (): Buffer => {
    if (attribution?.version !== deps.store.version) {
      const text = docs.attribution.trimEnd() + spiderLicences(deps.store.info);
      attribution = { version: deps.store.version, body: Buffer.from(text, 'utf8') };
    }
    return attribution.body;
  };
  const free = limitFreeEndpoint(deps);
  const out: Handlers = {};
  for (const [id, text] of Object.entries(docs) as [keyof typeof docs, string][]) {
    const op = OPERATIONS.find((o) => o.id === id);
    if (!op) throw new Error(`documentation operation ${id} is missing from OPERATIONS`);
    // Sent with the media type the operation documents, so the two cannot disagree.
    const type = wireType(op.success.content[0].type);
    const fixed = Buffer.from(text, 'utf8');
    out[id] = [free, (_req: Request, res: Response, next: () => void) => {
      const body = id === 'attribution' ? attributionBody() : fixed;
      res.status(200);
      res.header('content-type', type);
      res.header('content-length', String(body.length));
      res.end(body);
      next();
    }];
  }
  return out;
}
