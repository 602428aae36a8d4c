// The playground in a real browser: Debian's Chromium, headless, driven over the DevTools
// protocol (puppeteer-core), against a real server on 127.0.0.1. A person's steps: open the
// page, paste the key, type a brand (the autocomplete offers it), pick png and a size, send;
// the image shown is a PNG of that size (its bytes decoded here), the curl text is the request
// sent, the headers show the charge. Then a nearby request shown as a table, and the page at
// phone width. Screenshots go to test-artifacts/ (not in git).
import test from 'ava';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { decodePng } from './helpers/png.ts';
import { largestBrand } from './helpers/dataset.ts';
import { server } from './helpers/location-map.ts';
import { ARTIFACTS, browser, fill } from './helpers/browser.ts';

/** The curl command's -d body. */
function curlBody(text: string): unknown {
  const m = /-d '([^']*)'/.exec(text);
  return m ? JSON.parse(m[1]) : undefined;
}

test('a person sends a PNG request from the page and sees the map, the curl command and the charge', async (t) => {
  t.timeout(120_000);
  const s = await server(t);
  const b = await browser(t);
  const page = await b.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(`${s.base}/`, { waitUntil: 'networkidle0' });
  t.is(await page.title(), 'storemap playground');

  await page.type('#api-key', s.key);
  // Every input has a label (the page's accessibility floor).
  const unlabelled = await page.$$eval('input, select', (els) => els.filter((e) => !document.querySelector(`label[for="${e.id}"]`)).map((e) => e.id || e.outerHTML));
  t.deepEqual(unlabelled, []);

  // The autocomplete offers the brand once part of it is typed.
  await page.type('#f-brand', 'Starb');
  await page.waitForFunction(() => [...document.querySelectorAll('#brand-suggestions option')].some((o) => (o as HTMLOptionElement).value === 'Starbucks'), { timeout: 60_000 });
  await fill(page, '#f-brand', 'Starbucks');
  await page.select('#f-format', 'png');
  await fill(page, '#f-width', '640');
  await fill(page, '#f-height', '400');
  await page.click('#send');
  await page.waitForFunction(() => {
    const img = document.getElementById('preview-image') as HTMLImageElement | null;
    return img !== null && img.complete && img.naturalWidth > 0;
  }, { timeout: 60_000 });

  const shown = await page.$eval('#preview-image', (img) => ({ w: (img as HTMLImageElement).naturalWidth, h: (img as HTMLImageElement).naturalHeight }));
  t.deepEqual(shown, { w: 640, h: 400 });
  // The bytes behind the image, decoded here as a PNG.
  const base64 = await page.$eval('#preview-image', async (img) => {
    const bytes = new Uint8Array(await (await fetch((img as HTMLImageElement).src)).arrayBuffer());
    let text = '';
    for (const x of bytes) text += String.fromCharCode(x);
    return btoa(text);
  });
  const png = decodePng(Buffer.from(base64, 'base64'));
  t.deepEqual([png.width, png.height], [640, 400]);

  const curl = await page.$eval('#curl', (e) => e.textContent ?? '');
  t.true(curl.startsWith(`curl -s '${s.base}/api/v1/location-map' -o map.png`), curl);
  t.deepEqual(curlBody(curl), { brand: 'Starbucks', format: 'png', width: 640, height: 400 });
  t.false(curl.includes(s.key), 'the key is not printed');
  const headers = await page.$eval('#headers', (e) => e.textContent ?? '');
  t.regex(headers, /x-credits-charged: [1-9]/);
  t.regex(await page.$eval('#status', (e) => e.textContent ?? ''), /^200 OK/);
  t.is(await page.evaluate(() => sessionStorage.getItem('storemap.apiKey')), s.key, 'the key is kept in session storage');
  t.deepEqual(errors, []);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'playground-png.png'), fullPage: true });
});

test('a nearby request shown as a table, and the page at phone width', async (t) => {
  t.timeout(120_000);
  const s = await server(t);
  const b = await browser(t);
  const page = await b.newPage();
  await page.setViewport({ width: 390, height: 844, isMobile: true });
  await page.goto(`${s.base}/playground`, { waitUntil: 'networkidle0' });
  await page.type('#api-key', s.key);
  await page.select('#endpoint', 'nearby');
  await page.type('#f-brand', largestBrand().name);
  await page.type('#f-lat', '40.75');
  await page.type('#f-lng', '-73.99');
  await page.type('#f-limit', '5');
  await page.click('#send');
  await page.waitForSelector('#preview table', { timeout: 60_000 });
  const table = await page.$eval('#preview table', (tbl) => ({
    head: [...tbl.querySelectorAll('th')].map((th) => th.textContent),
    rows: [...tbl.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')),
  }));
  t.is(table.rows.length, 5);
  const d = table.head.indexOf('distance_m');
  t.true(d >= 0, `columns ${table.head}`);
  const distances = table.rows.map((r) => Number(r[d]));
  t.deepEqual(distances, [...distances].sort((x, y) => x - y), 'nearest first');
  t.deepEqual(curlBody(await page.$eval('#curl', (e) => e.textContent ?? '')), { brand: largestBrand().name, lat: 40.75, lng: -73.99, limit: 5 });
  // Nothing wider than the phone's 390 px screen but the results' own scrolling box (a mobile
  // browser would otherwise zoom the whole page out to the widest element).
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  t.true(width <= 390, `the page is ${width} px wide on a 390 px screen`);
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'playground-phone.png'), fullPage: true });
});
