// A small RFC 4180 parser for the tests (no dependency): records end with CRLF or LF, the
// last line break is optional, quoted fields may hold commas, doubled quotes, CR and LF.
// Strict on purpose: a stray quote or an unterminated quoted field throws, so a writer bug
// cannot be papered over by a lenient reader.

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  const n = text.length;
  if (n === 0) return rows;
  let row: string[] = [];
  let i = 0;
  for (;;) {
    let field: string;
    if (text[i] === '"') {
      // Quoted field: runs to the next quote that is not doubled.
      field = '';
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error(`CSV: unterminated quoted field (opened before offset ${i})`);
        field += text.slice(i, q);
        if (text[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      if (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
        throw new Error(`CSV: unexpected ${JSON.stringify(text[i])} after a closing quote at offset ${i}`);
      }
    } else {
      let j = i;
      while (j < n && text[j] !== ',' && text[j] !== '\n' && !(text[j] === '\r' && text[j + 1] === '\n')) {
        if (text[j] === '"') throw new Error(`CSV: quote inside an unquoted field at offset ${j}`);
        j++;
      }
      field = text.slice(i, j);
      i = j;
    }
    row.push(field);
    if (i >= n) {
      rows.push(row);
      return rows;
    }
    if (text[i] === ',') {
      i++;
      continue; // a comma at the very end still opens one last (empty) field
    }
    i += text[i] === '\r' ? 2 : 1;
    rows.push(row);
    row = [];
    if (i >= n) return rows;
  }
}

/** Rows as objects keyed by the header row. */
export function parseCsvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows.map((r, k) => {
    if (r.length !== header.length) throw new Error(`CSV: record ${k + 1} has ${r.length} fields, the header ${header.length}`);
    return Object.fromEntries(header.map((h, c) => [h, r[c]]));
  });
}
