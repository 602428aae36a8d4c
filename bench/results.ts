// bench/RESULTS.md holds one section per benchmark, between markers, so each script rewrites
// only its own numbers and the file always says which command produced them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'RESULTS.md');

const HEADER = `# Benchmark results

Each section is rewritten by the command named in it. Machine: ${os.cpus().length} cores
(${os.cpus()[0]?.model ?? 'unknown CPU'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB.
`;

export function writeSection(name: string, markdown: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const body = `${start}\n${markdown.trim()}\n\n_Measured ${new Date().toISOString()}, Node ${process.version}._\n${end}`;
  let text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : HEADER;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  text = i >= 0 && j > i ? text.slice(0, i) + body + text.slice(j + end.length) : `${text.trimEnd()}\n\n${body}\n`;
  writeFileSync(FILE, text);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
