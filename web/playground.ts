// The playground page's script: a form for each keyed operation it offers, built from the request
// schemas the server embeds (the same JSON Schema as /api/openapi.yaml, so a field added to a
// schema shows up here with nothing else to change), the answer shown as an image, a table or
// text (a store-count history also as a line chart drawn here in SVG), the curl command for
// what is on screen, and the response headers. No dependencies;
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
  method: 'get' | 'post';
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
  history: ['ticker', 'brand', 'interval', 'from', 'to', 'country', 'state', 'format'],
};
/** The history chart's size in SVG units (it scales to the column's width). */
const CHART = { width: 640, height: 310, left: 56, right: 16, top: 26, line: 200, bars: 56 };

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

for (const op of operations) endpoint.add(new Option(`${op.method.toUpperCase()} ${op.path}`, op.id));
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

/** A GET's query string: the form's values as text, lists comma-joined. */
function query(b: Record<string, unknown>): string {
  return new URLSearchParams(Object.entries(b).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)])).toString();
}

function curl(op: Operation, b: Record<string, unknown>): string {
  if (op.method === 'get') return `curl -s ${shellQuote(new URL(`${op.path}?${query(b)}`, location.href).href)} \\\n  -H "x-api-key: $STOREMAP_KEY"`;
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

interface Period {
  period: string;
  stores: number;
  opened: number;
  closed: number;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A store-count series as a chart: stores at each period's end as a line over the periods,
 * openings (up, green) and closings (down, red) as bars beneath, each point titled with its
 * numbers. */
function chart(series: Period[]): SVGSVGElement {
  const { width, height, left, right, top, line, bars } = CHART;
  const root = svg('svg', { id: 'history-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', width: '100%', 'aria-label': `Stores by period, ${series[0]?.period ?? ''} to ${series[series.length - 1]?.period ?? ''}` });
  root.append(svg('rect', { x: 0, y: 0, width, height, fill: '#fff' }));
  if (series.length === 0) return root;
  const legend: [string, string][] = [
    ['#1d4ed8', 'stores at period end'],
    ['#16a34a', 'opened'],
    ['#dc2626', 'closed'],
  ];
  legend.forEach(([colour, label], i) => {
    const lx = left + [0, 150, 230][i];
    root.append(svg('rect', { x: lx, y: 4, width: 10, height: 10, fill: colour }));
    root.append(svg('text', { x: lx + 14, y: 13, 'font-size': 11, fill: '#374151' }, label));
  });
  const n = series.length;
  const step = (width - left - right) / Math.max(n, 1);
  const x = (i: number) => left + step * (i + 0.5);
  const counts = series.map((p) => p.stores);
  // The y axis from a little under the lowest count to a little over the highest: a chain's
  // growth is a few percent, invisible on an axis from zero.
  const lo = Math.min(...counts);
  const hi = Math.max(...counts);
  const pad = Math.max(1, Math.ceil((hi - lo) * 0.1));
  const [y0, y1] = [Math.max(0, lo - pad), hi + pad];
  const y = (v: number) => top + line - ((v - y0) / (y1 - y0)) * line;
  for (const v of [y0, Math.round((y0 + y1) / 2), y1]) {
    root.append(svg('line', { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: '#e5e7eb' }));
    root.append(svg('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#6b7280' }, v.toLocaleString('en-US')));
  }
  root.append(svg('polyline', { points: series.map((p, i) => `${x(i).toFixed(1)},${y(p.stores).toFixed(1)}`).join(' '), fill: 'none', stroke: '#1d4ed8', 'stroke-width': 2 }));
  const base = top + line + 12 + bars / 2;
  const most = Math.max(1, ...series.map((p) => Math.max(p.opened, p.closed)));
  const barHeight = (v: number) => (v / most) * (bars / 2);
  root.append(svg('line', { x1: left, x2: width - right, y1: base, y2: base, stroke: '#d1d5db' }));
  series.forEach((p, i) => {
    const w = Math.max(2, Math.min(24, step * 0.5));
    root.append(svg('rect', { class: 'opened', x: x(i) - w / 2, y: base - barHeight(p.opened), width: w, height: barHeight(p.opened), fill: '#16a34a' }));
    root.append(svg('rect', { class: 'closed', x: x(i) - w / 2, y: base, width: w, height: barHeight(p.closed), fill: '#dc2626' }));
    const dot = svg('circle', { class: 'point', cx: x(i), cy: y(p.stores), r: 3.5, fill: '#1d4ed8' });
    dot.append(svg('title', {}, `${p.period}: ${p.stores.toLocaleString('en-US')} stores, ${p.opened} opened, ${p.closed} closed`));
    root.append(dot);
    // Every label where they fit, else every k-th.
    if (i % Math.ceil(n / 12) === 0) root.append(svg('text', { x: x(i), y: height - 4, 'text-anchor': 'middle', 'font-size': 11, fill: '#374151' }, p.period));
  });
  return root;
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
    const key = keyInput.value.trim();
    res =
      op.method === 'get'
        ? await fetch(`${op.path}?${query(b)}`, { headers: { 'x-api-key': key } })
        : await fetch(op.path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(b) });
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
    const rows = (doc.locations ?? doc.pairs ?? doc.features ?? doc.series ?? []) as Record<string, unknown>[];
    const summary = Object.fromEntries(Object.entries(doc).filter(([, v]) => !Array.isArray(v) || v.length < 20));
    if (Array.isArray(doc.series)) preview.append(chart(doc.series as Period[]));
    preview.append(Object.assign(document.createElement('pre'), { textContent: JSON.stringify(summary, null, 2).slice(0, 4000) }), table(rows));
  } else {
    preview.append(Object.assign(document.createElement('pre'), { id: 'preview-text', textContent: (await res.text()).slice(0, 20_000) }));
  }
});

render(current());
