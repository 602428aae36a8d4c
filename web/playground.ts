// The playground page's script: a form for each keyed POST operation, built from the request
// schemas the server embeds (the same JSON Schema as /api/openapi.yaml, so a field added to a
// schema shows up here with nothing else to change), the answer shown as an image, a table or
// text, the curl command for what is on screen, and the response headers. No dependencies;
// compiled by the server at start (esbuild), type-checked by `tsc -p web`.

export {};

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  items?: Schema;
  prefixItems?: Schema[];
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
}

interface Operation {
  id: string;
  path: string;
  summary: string;
  body: Schema;
}

const KEY_STORAGE = 'storemap.apiKey';
/** Rows a table shows at most: enough to see the answer, few enough for a phone. */
const TABLE_ROWS = 200;
/** Fields each operation shows first, in this order; the rest follow in the schema's order. */
const FIRST: Record<string, string[]> = {
  locationMap: ['brand', 'tickers', 'format', 'country', 'state', 'city', 'width', 'height', 'style', 'focus_country'],
  nearby: ['brand', 'tickers', 'lat', 'lng', 'limit', 'radius_km', 'format'],
  overlap: ['tickers', 'brands', 'distance_m', 'country', 'format'],
};

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const operations = JSON.parse($('operations').textContent ?? '[]') as Operation[];
const endpoint = $<HTMLSelectElement>('endpoint');
const fields = $<HTMLFieldSetElement>('fields');
const keyInput = $<HTMLInputElement>('api-key');
const statusLine = $('status');
const curlOut = $('curl');
const preview = $('preview');
const headersOut = $('headers');

keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
keyInput.addEventListener('input', () => sessionStorage.setItem(KEY_STORAGE, keyInput.value.trim()));

for (const op of operations) endpoint.add(new Option(`POST ${op.path}`, op.id));
endpoint.addEventListener('change', () => render(current()));

function current(): Operation {
  return operations.find((o) => o.id === endpoint.value) ?? operations[0];
}

/** What kind of input a property gets. */
function kind(s: Schema): 'enum' | 'boolean' | 'number' | 'list' | 'numbers' | 'text' {
  if (s.enum) return 'enum';
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'boolean') return 'boolean';
  if (type === 'number' || type === 'integer') return 'number';
  if (type === 'array') {
    const item = s.items ?? s.prefixItems?.[0];
    const itemType = Array.isArray(item?.type) ? item?.type[0] : item?.type;
    return itemType === 'number' || itemType === 'integer' ? 'numbers' : 'list';
  }
  return 'text';
}

function render(op: Operation): void {
  $('endpoint-hint').textContent = op.summary;
  fields.replaceChildren(Object.assign(document.createElement('legend'), { textContent: 'Parameters' }));
  const props = op.body.properties ?? {};
  const first = (FIRST[op.id] ?? []).filter((n) => n in props);
  const names = [...first, ...Object.keys(props).filter((n) => !first.includes(n))];
  for (const name of names) fields.append(field(name, props[name]));
}

function field(name: string, s: Schema): HTMLElement {
  const wrap = document.createElement('div');
  const id = `f-${name}`;
  const k = kind(s);
  const hint = document.createElement('span');
  hint.className = 'hint';
  hint.id = `${id}-hint`;
  hint.textContent = (s.description ?? '') + (k === 'list' || k === 'numbers' ? ' (comma-separated)' : '');
  const label = Object.assign(document.createElement('label'), { htmlFor: id, textContent: name });
  let input: HTMLInputElement | HTMLSelectElement;
  if (k === 'enum') {
    const select = document.createElement('select');
    select.add(new Option(s.default !== undefined ? `(default: ${String(s.default)})` : '(none)', ''));
    for (const v of s.enum ?? []) select.add(new Option(String(v), String(v)));
    input = select;
  } else {
    input = document.createElement('input');
    input.type = k === 'boolean' ? 'checkbox' : k === 'number' ? 'number' : 'text';
    if (k === 'number') {
      input.step = 'any';
      if (s.minimum !== undefined) input.min = String(s.minimum);
      if (s.maximum !== undefined) input.max = String(s.maximum);
      if (s.default !== undefined) input.placeholder = String(s.default);
    }
    if (name === 'brand' || name === 'brands') input.setAttribute('list', 'brand-suggestions');
    if (k === 'text' || k === 'list') input.autocomplete = 'off';
  }
  input.id = id;
  input.name = name;
  input.dataset.kind = k;
  input.setAttribute('aria-describedby', hint.id);
  if (name === 'brand' || name === 'brands') input.addEventListener('input', () => suggest(input.value.split(',').pop()?.trim() ?? ''));
  if (k === 'boolean') {
    wrap.className = 'field check';
    wrap.append(input, label, hint);
  } else {
    wrap.className = 'field';
    wrap.append(label, input, hint);
  }
  return wrap;
}

/** The body: every field given, typed as its schema says; empty fields are left out. */
function body(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const el of fields.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input, select')) {
    const k = el.dataset.kind;
    if (k === 'boolean') {
      if ((el as HTMLInputElement).checked) out[el.name] = true;
      continue;
    }
    const v = el.value.trim();
    if (v === '') continue;
    if (k === 'number') out[el.name] = Number(v);
    else if (k === 'list') out[el.name] = v.split(',').map((x) => x.trim()).filter(Boolean);
    else if (k === 'numbers') out[el.name] = v.split(',').map((x) => Number(x.trim()));
    else out[el.name] = v;
  }
  return out;
}

/** Single quotes for a POSIX shell. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function curl(op: Operation, b: Record<string, unknown>): string {
  const url = new URL(op.path, location.href).href;
  const image = b.format === 'png' || b.format === 'jpeg';
  const out = image ? ` -o map.${b.format === 'png' ? 'png' : 'jpg'}` : '';
  return `curl -s ${shellQuote(url)}${out} \\\n  -H 'content-type: application/json' -H "x-api-key: $STOREMAP_KEY" \\\n  -d ${shellQuote(JSON.stringify(b))}`;
}

let suggestTimer: number | undefined;
function suggest(q: string): void {
  clearTimeout(suggestTimer);
  if (q.length < 2) return;
  suggestTimer = window.setTimeout(async () => {
    const res = await fetch(`/api/v1/brands/search?${new URLSearchParams({ q, limit: '10' })}`).catch(() => undefined);
    if (!res?.ok) return;
    const found = (await res.json()) as { results: { brand: string; ticker: string | null }[] };
    $('brand-suggestions').replaceChildren(...found.results.map((r) => new Option(r.ticker ? `${r.brand} (${r.ticker})` : r.brand, r.brand)));
  }, 150);
}

/** A table of rows: objects' scalar fields, nested objects flattened one level (a.name). */
function table(rows: Record<string, unknown>[]): HTMLElement {
  const flat = rows.slice(0, TABLE_ROWS).map((r) => {
    const o: Record<string, string> = {};
    for (const [k, v] of Object.entries(r)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) o[`${k}.${k2}`] = fmt(v2);
      else o[k] = fmt(v);
    }
    return o;
  });
  const cols = [...new Set(flat.flatMap((r) => Object.keys(r)))];
  const t = document.createElement('table');
  const head = t.createTHead().insertRow();
  for (const c of cols) head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: c }));
  const tbody = t.createTBody();
  for (const r of flat) {
    const tr = tbody.insertRow();
    for (const c of cols) tr.insertCell().textContent = r[c] ?? '';
  }
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  wrap.append(t);
  return wrap;
}

const fmt = (v: unknown): string => (v === null || v === undefined ? '' : Array.isArray(v) ? v.map(fmt).join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v));

let objectUrl: string | undefined;
$('request').addEventListener('submit', async (e) => {
  e.preventDefault();
  const op = current();
  const b = body();
  curlOut.textContent = curl(op, b);
  statusLine.textContent = 'Sending…';
  preview.replaceChildren();
  headersOut.textContent = '';
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(op.path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': keyInput.value.trim() }, body: JSON.stringify(b) });
  } catch (err) {
    statusLine.textContent = `The request failed: ${String(err)}`;
    return;
  }
  const ms = Math.round(performance.now() - started);
  headersOut.textContent = [...res.headers].filter(([k]) => k.startsWith('x-') || k === 'content-type').map(([k, v]) => `${k}: ${v}`).join('\n');
  const type = res.headers.get('content-type') ?? '';
  const charged = res.headers.get('x-credits-charged');
  const left = res.headers.get('x-credits-remaining');
  statusLine.textContent = `${res.status} ${res.statusText} in ${ms} ms` + (charged !== null ? ` · ${charged} credit(s) charged, ${left} left` : '') + (res.headers.get('x-location-count') ? ` · ${res.headers.get('x-location-count')} result(s)` : '');
  if (type.startsWith('image/')) {
    if (objectUrl) URL.revokeObjectURL(objectUrl);
    objectUrl = URL.createObjectURL(await res.blob());
    const img = Object.assign(document.createElement('img'), { id: 'preview-image', src: objectUrl, alt: `Map of ${String(b.brand ?? b.tickers ?? 'the request')}` });
    preview.append(img);
  } else if (type.includes('json') && res.ok) {
    const doc = (await res.json()) as Record<string, unknown>;
    const rows = (doc.locations ?? doc.pairs ?? doc.features ?? []) as Record<string, unknown>[];
    const summary = Object.fromEntries(Object.entries(doc).filter(([, v]) => !Array.isArray(v) || v.length < 20));
    preview.append(Object.assign(document.createElement('pre'), { textContent: JSON.stringify(summary, null, 2).slice(0, 4000) }), table(rows));
  } else {
    preview.append(Object.assign(document.createElement('pre'), { id: 'preview-text', textContent: (await res.text()).slice(0, 20_000) }));
  }
});

render(current());
