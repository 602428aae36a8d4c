// The image cache on its own: least recently used out first, bounded by the bytes it holds,
// an entry larger than the whole budget never stored, a zero budget storing nothing.
import test from 'ava';
import { ImageCache, type CachedImage } from '../../ts/services/image-cache.ts';

const image = (bytes: number, tag = 0): CachedImage => ({ body: Buffer.alloc(bytes, tag), count: 1, total: 1, sources: ['osm'], region: 'worldwide' });

test('evicts the least recently used entries until the bytes fit', (t) => {
  const c = new ImageCache(300);
  c.set('a', image(100, 1));
  c.set('b', image(100, 2));
  c.set('c', image(100, 3));
  t.deepEqual(c.size, { entries: 3, bytes: 300 });
  t.is(c.get('a')?.body[0], 1, 'a hit makes "a" the most recently used');
  c.set('d', image(150, 4));
  // 450 bytes: "b" (least recent) and then "c" go, leaving a + d = 250.
  t.is(c.get('b'), undefined);
  t.is(c.get('c'), undefined);
  t.is(c.get('a')?.body[0], 1);
  t.is(c.get('d')?.body[0], 4);
  t.deepEqual(c.size, { entries: 2, bytes: 250 });
});

test('replacing a key counts its bytes once', (t) => {
  const c = new ImageCache(1000);
  c.set('a', image(400));
  c.set('a', image(300));
  t.deepEqual(c.size, { entries: 1, bytes: 300 });
});

test('an entry larger than the budget is not stored, and a zero budget stores nothing', (t) => {
  const c = new ImageCache(100);
  c.set('small', image(60));
  c.set('big', image(101));
  t.is(c.get('big'), undefined);
  t.truthy(c.get('small'), 'storing nothing for the big one evicted nothing');
  const off = new ImageCache(0);
  off.set('a', image(1));
  t.is(off.get('a'), undefined);
  t.deepEqual(off.size, { entries: 0, bytes: 0 });
});

test('keys are the same for the same parts and differ for any difference', (t) => {
  const a = ImageCache.key(['v1', { brands: [3], style: 'light' }]);
  t.is(a, ImageCache.key(['v1', { brands: [3], style: 'light' }]));
  t.not(a, ImageCache.key(['v2', { brands: [3], style: 'light' }]));
  t.not(a, ImageCache.key(['v1', { brands: [3], style: 'dark' }]));
});
