#!/usr/bin/env node
// No import circle between the modules of a crate: for each crate under crates/ and native/,
// the top-level modules of src/ (a file `x.rs` or a folder `x/`) and the `crate::` paths each
// one names form a graph, and that graph must have no cycle. cargo has no such check (modules
// of one crate may name each other freely), and a circle is where one capability per file
// quietly becomes two files that must change together.
//
//   node scripts/rust-circles.mjs        (exits 1 and prints each cycle when there is one)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const crates = [...readdirSync(path.join(root, 'crates')).map((c) => path.join(root, 'crates', c)), path.join(root, 'native')];

/** Every .rs file under dir. */
function files(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return files(p);
    return n.endsWith('.rs') ? [p] : [];
  });
}

/** The top-level module a file belongs to (lib.rs and main.rs are the crate root, not a module). */
function moduleOf(src, file) {
  const rel = path.relative(src, file).split(path.sep);
  if (rel.length === 1) {
    const name = rel[0].replace(/\.rs$/, '');
    return name === 'lib' || name === 'main' ? null : name;
  }
  return rel[0];
}

/** Comments and string literals blanked, so a path in a doc comment is not an import. */
function code(text) {
  return text.replace(/\/\/[^\n]*/g, '').replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

/** The modules named from `crate::`, including `use crate::{a, b::c}` groups. */
function named(text) {
  const out = new Set();
  for (const m of text.matchAll(/\bcrate::(\{[^}]*\}|\w+)/g)) {
    const t = m[1];
    if (t.startsWith('{')) for (const part of t.slice(1, -1).split(',')) out.add(part.trim().split('::')[0]);
    else out.add(t);
  }
  out.delete('');
  return out;
}

let cycles = 0;
for (const crate of crates) {
  const src = path.join(crate, 'src');
  let list;
  try {
    list = files(src);
  } catch {
    continue;
  }
  const graph = new Map();
  for (const f of list) {
    const from = moduleOf(src, f);
    if (!from) continue;
    const edges = graph.get(from) ?? new Set();
    for (const to of named(code(readFileSync(f, 'utf8')))) if (to !== from) edges.add(to);
    graph.set(from, edges);
  }
  // Depth-first search; a grey node reached again closes a cycle.
  const state = new Map();
  const stack = [];
  const visit = (m) => {
    state.set(m, 'grey');
    stack.push(m);
    for (const n of graph.get(m) ?? []) {
      if (!graph.has(n)) continue;
      if (state.get(n) === 'grey') {
        cycles++;
        console.error(`${path.relative(root, crate)}: ${[...stack.slice(stack.indexOf(n)), n].join(' -> ')}`);
      } else if (!state.has(n)) visit(n);
    }
    stack.pop();
    state.set(m, 'black');
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
}
if (cycles > 0) {
  console.error(`${cycles} module cycle(s)`);
  process.exit(1);
}
console.log(`no module cycle in ${crates.length} crates`);
