//! An interned string pool: one UTF-8 blob and an offset table. The snapshot stores every
//! text field as a `u32` id into it, so repeated values (city names, brand names) cost 4 bytes
//! a row and the whole pool loads with two copies.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Id 0 is always the empty string, so "missing" needs no separate flag.
pub const EMPTY: u32 = 0;

/// Where each string of a pool starts, as the snapshot stores it: a `u32` per string, the
/// offset modulo 2^32, and `wraps`, the indexes at which the offsets passed another 2^32 (the
/// first offset in each further 4 GiB of text; a pool under 4 GiB has none, and its file is the
/// one it always was). Offsets that wrap are no longer rising, so a reader that knows nothing of
/// `wraps` refuses such a pool rather than misreading it. `PAGE_BITS` is 32 but in tests, which
/// cannot afford 4 GiB of text each.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Offsets<const PAGE_BITS: u32 = 32> {
    low: Vec<u32>,
    wraps: Vec<u32>,
}

impl<const PAGE_BITS: u32> Offsets<PAGE_BITS> {
    const MASK: u64 = (1 << PAGE_BITS) - 1;

    /// Offsets as a file holds them; None unless they rise (their wraps counted).
    pub(crate) fn from_parts(low: Vec<u32>, wraps: Vec<u32>) -> Option<Self> {
        let o = Offsets { low, wraps };
        let rising = o.wraps.windows(2).all(|w| w[0] <= w[1])
            && o.wraps.last().is_none_or(|&w| (w as usize) < o.low.len())
            && o.low.iter().all(|&l| u64::from(l) <= Self::MASK)
            && (1..o.low.len()).all(|i| o.at(i - 1) <= o.at(i));
        rising.then_some(o)
    }

    /// One offset, 0.
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Offsets { low: vec![0], wraps: Vec::new() }
    }

    /// The next offset, at or past the last.
    #[cfg(test)]
    pub(crate) fn push(&mut self, at: u64) {
        let low = Self::stored(self.low.len() as u32, self.last(), at, &mut self.wraps);
        self.low.push(low);
    }

    /// Offset `i`, `at`, as the table stores it after offset `before`: its low bits, and `i` in
    /// `wraps` once for each page boundary it passes.
    fn stored(i: u32, before: u64, at: u64, wraps: &mut Vec<u32>) -> u32 {
        debug_assert!(at >= before, "offsets rise");
        wraps.extend(std::iter::repeat_n(i, ((at >> PAGE_BITS) - (before >> PAGE_BITS)) as usize));
        (at & Self::MASK) as u32
    }

    /// Offset `i`, whole.
    #[inline]
    pub(crate) fn at(&self, i: usize) -> u64 {
        let page = if self.wraps.is_empty() { 0 } else { self.wraps.partition_point(|&w| w as usize <= i) as u64 };
        u64::from(self.low[i]) | page << PAGE_BITS
    }

    pub(crate) fn last(&self) -> u64 {
        self.at(self.low.len() - 1)
    }

    pub(crate) fn len(&self) -> usize {
        self.low.len()
    }
}

#[derive(Debug, Clone, Default)]
pub struct StringPool {
    blob: String,
    /// `offsets.at(i)..offsets.at(i+1)` is string i.
    offsets: Offsets,
}

impl StringPool {
    /// A pool as a snapshot stores it: its blob, the `u32` offsets and where they wrap (see
    /// [`relayout`]); None unless they fit the blob.
    pub fn from_parts(blob: String, offsets: Vec<u32>, wraps: Vec<u32>) -> Option<StringPool> {
        let offsets = Offsets::from_parts(offsets, wraps)?;
        let ok = offsets.len() > 0 && offsets.last() == blob.len() as u64 && (0..offsets.len()).all(|i| blob.is_char_boundary(offsets.at(i) as usize));
        ok.then_some(StringPool { blob, offsets })
    }

    pub fn get(&self, id: u32) -> &str {
        let i = id as usize;
        if i + 1 >= self.offsets.len() {
            return "";
        }
        let low = &self.offsets.low;
        if self.offsets.wraps.is_empty() {
            &self.blob[low[i] as usize..low[i + 1] as usize]
        } else {
            &self.blob[self.offsets.at(i) as usize..self.offsets.at(i + 1) as usize]
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn blob(&self) -> &str {
        &self.blob
    }
}

/// Builds a pool; ids are handed out in first-seen order, so the same input order gives the
/// same bytes. Lookups go by a 64-bit hash to the id, confirmed against the blob, so the
/// builder holds each distinct string once (a full-size build interns some 20 million); the
/// rare hash collision between different strings falls back to a map keyed by the text.
/// The hash decides nothing but where a lookup looks: ids, and so the bytes, are the same
/// whatever it is. A build interns some 70 million texts (scale 1), so it is foldhash, which
/// reads a string 16 bytes at a time, and the table uses the hash as it is. A build's
/// snapshot rows are interned on every reconciling core at once, in a [`SharedStrings`] of
/// these.
#[derive(Debug)]
pub struct StringPoolBuilder {
    blob: String,
    offsets: Vec<u32>,
    ids: HashMap<u64, u32, BuildHasherDefault<KeyIsHash>>,
    collisions: HashMap<Box<str>, u32>,
}

impl Default for StringPoolBuilder {
    fn default() -> Self {
        let mut b = StringPoolBuilder { blob: String::new(), offsets: vec![0, 0], ids: HashMap::default(), collisions: HashMap::new() };
        b.ids.insert(text_hash(""), EMPTY);
        b
    }
}

/// The interning table's hash of a text (fixed seed: a build's lookups do not depend on the run).
fn text_hash(s: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x5354_4f52_454d_4150).hash_one(s)
}

/// A hasher for keys that already are well-mixed 64-bit hashes: it hands the key on.
#[derive(Debug, Default, Clone, Copy)]
struct KeyIsHash(u64);

impl Hasher for KeyIsHash {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// FNV-1a, 64-bit: fixed across runs and platforms, so builds stay byte-identical.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

impl StringPoolBuilder {
    fn text(&self, id: u32) -> &str {
        &self.blob[self.offsets[id as usize] as usize..self.offsets[id as usize + 1] as usize]
    }

    fn append(&mut self, s: &str) -> u32 {
        let id = (self.offsets.len() - 1) as u32;
        self.blob.push_str(s);
        // A build's pool is 64 of these (`SharedStrings`): 4 GiB a shard is 256 GiB of text.
        self.offsets.push(u32::try_from(self.blob.len()).expect("a string pool builder holds under 4 GiB of text"));
        id
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        self.intern_hashed(s, text_hash(s))
    }

    /// `intern` with the text's [`text_hash`] already taken.
    fn intern_hashed(&mut self, s: &str, h: u64) -> u32 {
        match self.ids.get(&h) {
            Some(&id) if self.text(id) == s => id,
            Some(_) => {
                if let Some(&id) = self.collisions.get(s) {
                    return id;
                }
                let id = self.append(s);
                self.collisions.insert(s.into(), id);
                id
            }
            None => {
                let id = self.append(s);
                self.ids.insert(h, id);
                id
            }
        }
    }

    /// Appends without looking for an equal string: for text that is unique by nature
    /// (addresses, phone numbers, source ids), where a lookup table would cost more than the
    /// rare duplicate it saves.
    pub fn append_unique(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return EMPTY;
        }
        self.append(s)
    }

    pub fn finish(self) -> StringPool {
        StringPool { blob: self.blob, offsets: Offsets { low: self.offsets, wraps: Vec::new() } }
    }
}

/// How many bits of a [`SharedStrings`] id name its shard.
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;
/// Strings one shard may hold: its local ids use the bits above the shard's.
const SHARD_CAPACITY: usize = 1 << (32 - SHARD_BITS);

/// A [`StringPoolBuilder`] that every core interns into at once: 64 shards, each behind its
/// own lock, a text's shard chosen by its hash (so equal texts meet in one shard). A build's
/// reconciling threads pack their own rows with it, where one thread interned every row
/// before (at scale 1 on two cores, 8.6 s that no other core could take).
///
/// An id is the string's place in its shard above the shard's number. Which id a text gets
/// depends on which thread came first, so ids are not for keeping: the snapshot lays the pool
/// out again by first use in its own row order ([`relayout`]), and the file depends only
/// on which texts were equal. Id 0 ([`EMPTY`]) is the empty string, as in a one-thread pool.
#[derive(Debug)]
pub struct SharedStrings {
    shards: Box<[std::sync::Mutex<StringPoolBuilder>]>,
}

impl Default for SharedStrings {
    fn default() -> Self {
        SharedStrings { shards: (0..SHARDS).map(|_| Default::default()).collect() }
    }
}

impl SharedStrings {
    fn shard(&self, i: usize) -> std::sync::MutexGuard<'_, StringPoolBuilder> {
        // A thread that panicked while interning left its shard whole (each text is a lookup,
        // then one append of text and offset): the build stops on that panic anyway.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn global(shard: usize, local: u32) -> u32 {
        assert!((local as usize) < SHARD_CAPACITY, "a string pool shard outgrew {SHARD_CAPACITY} strings");
        local << SHARD_BITS | shard as u32
    }

    /// The id of `s`, the same for every equal text whichever thread asks.
    pub fn intern(&self, s: &str) -> u32 {
        if s.is_empty() {
            return EMPTY;
        }
        let h = text_hash(s);
        // Bits the shard's table does not look at: hashbrown places by the low bits and tells
        // entries apart by the top seven.
        let shard = (h >> 32) as usize & (SHARDS - 1);
        Self::global(shard, self.shard(shard).intern_hashed(s, h))
    }

    /// Appends a row's unique texts (see [`StringPoolBuilder::append_unique`]) under one lock,
    /// in the shard `key` picks: spread keys keep threads apart.
    pub fn unique(&self, key: u64) -> UniqueTexts<'_> {
        let shard = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SHARD_BITS)) as usize;
        UniqueTexts { shard, pool: self.shard(shard) }
    }

    /// Every shard's strings, for the one thread that lays them out again.
    pub fn finish(self) -> SharedPool {
        let shards: Vec<StringPool> = self.shards.into_vec().into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).finish()).collect();
        let mut base = Vec::with_capacity(shards.len());
        let mut n = 0usize;
        for s in &shards {
            base.push(n);
            n += s.len();
        }
        SharedPool { shards, base, len: n }
    }
}

/// One shard of a [`SharedStrings`], held for a row's unique texts.
pub struct UniqueTexts<'a> {
    shard: usize,
    pool: std::sync::MutexGuard<'a, StringPoolBuilder>,
}

impl UniqueTexts<'_> {
    pub fn append(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return EMPTY;
        }
        SharedStrings::global(self.shard, self.pool.append_unique(s))
    }
}

/// A [`SharedStrings`] done with: its shards' pools, read by [`relayout`].
#[derive(Debug)]
pub struct SharedPool {
    shards: Vec<StringPool>,
    /// Strings in the shards before each.
    base: Vec<usize>,
    len: usize,
}

/// A pool [`relayout`] can lay out again: its ids, numbered densely, and their text.
pub trait PoolTexts {
    /// How many dense indexes there are.
    fn count(&self) -> usize;
    /// The dense index of id `id`, below `count()`.
    fn index(&self, id: u32) -> usize;
    fn text(&self, id: u32) -> &str;
}

impl PoolTexts for StringPool {
    fn count(&self) -> usize {
        self.len()
    }
    fn index(&self, id: u32) -> usize {
        id as usize
    }
    fn text(&self, id: u32) -> &str {
        self.get(id)
    }
}

impl PoolTexts for SharedPool {
    fn count(&self) -> usize {
        self.len
    }
    fn index(&self, id: u32) -> usize {
        self.base[id as usize & (SHARDS - 1)] + (id >> SHARD_BITS) as usize
    }
    fn text(&self, id: u32) -> &str {
        self.shards[id as usize & (SHARDS - 1)].get(id >> SHARD_BITS)
    }
}

/// A string no use has reached yet.
const UNSEEN: u32 = u32::MAX;

/// Items a worker of [`relayout`] takes at a time.
const RELAYOUT_CHUNK: usize = 1 << 14;

/// The new ids [`relayout`] gave: old id to new, for the ids it was asked for.
pub struct RelaidIds(Vec<u32>);

impl RelaidIds {
    /// The new id of old string `id` (one of the ids the relayout was asked for).
    #[inline]
    pub fn id<P: PoolTexts>(&self, old: &P, id: u32) -> u32 {
        self.0[old.index(id)]
    }
}

/// Lays a pool's strings out again in the order they are first used, dropping the ones never
/// used. The snapshot uses them in row order, so the text of consecutive rows sits side by side:
/// writing a brand's rows then reads the blob front to back instead of taking a cache (and TLB)
/// miss per field in a pool of hundreds of megabytes. Only the new order and offsets are held;
/// the new blob is copied from the old pool as it is written (a second blob beside the first set
/// a scale-1 build's peak).
///
/// `uses(i, f)` calls `f` with item `i`'s ids in order; items are taken in order. The work runs
/// on every core in two passes over the uses: the first item to use each string (an atomic
/// minimum), then, in item order, the strings each chunk of items is first to use (a scale-1
/// snapshot's 2.8 s of one thread taking the uses one by one was the last serial piece of a
/// 16-core build). Those chunks, one after another, are the new order; they are never copied
/// into one table.
/// The result is that of taking the uses one by one (`OneByOne` in the tests).
///
/// The offsets are not made yet ([`Relaid::lay_out`]): a caller renumbers its ids with the
/// [`RelaidIds`] first and drops them, so the old-to-new table, the new order and the offsets
/// (each 4 bytes a string, 84 MB at scale 1) are never held all three at once.
pub fn relayout<P: PoolTexts + Sync>(old: &P, items: usize, uses: impl Fn(usize, &mut dyn FnMut(u32)) + Sync) -> (RelaidIds, Relaid<'_, P>) {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
    assert!(items < UNSEEN as usize, "items are numbered in u32");
    // The first item to use each string, by dense index; then, in the same memory, its new id.
    let first: Vec<AtomicU32> = (0..old.count()).into_par_iter().map(|_| AtomicU32::new(UNSEEN)).collect();
    let chunks = items.div_ceil(RELAYOUT_CHUNK);
    let span = |c: usize| c * RELAYOUT_CHUNK..((c + 1) * RELAYOUT_CHUNK).min(items);
    (0..chunks).into_par_iter().for_each(|c| {
        for i in span(c) {
            uses(i, &mut |id| {
                // A load first: the strings every row uses (a brand's name) are not written
                // by every core at once.
                if id != EMPTY {
                    let slot = &first[old.index(id)];
                    if slot.load(Relaxed) > i as u32 {
                        slot.fetch_min(i as u32, Relaxed);
                    }
                }
            });
        }
    });
    // Each chunk's first uses, in use order (a string used twice by its first item once),
    // after the empty string's piece.
    let pieces: Vec<Vec<u32>> = std::iter::once(vec![EMPTY])
        .chain(
            (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let mut out = Vec::new();
                    for i in span(c) {
                        let start = out.len();
                        uses(i, &mut |id| {
                            if id != EMPTY && first[old.index(id)].load(Relaxed) == i as u32 && !out[start..].contains(&id) {
                                out.push(id);
                            }
                        });
                    }
                    // Kept until the blob is written: no room left from its doublings.
                    out.shrink_to_fit();
                    out
                })
                .collect::<Vec<_>>(),
        )
        .collect();
    let starts = piece_starts(&pieces);
    assert!(starts.last().map_or(0, |&(s, n)| s + n) < UNSEEN as usize, "new ids fit in u32");
    if !first.is_empty() {
        pieces.par_iter().zip(&starts).for_each(|(ids, &(start, _))| {
            for (k, &id) in ids.iter().enumerate() {
                first[old.index(id)].store((start + k) as u32, Relaxed);
            }
        });
    }
    // The same allocation, read as plain ids.
    let map: Vec<u32> = first.into_iter().map(AtomicU32::into_inner).collect();
    (RelaidIds(map), Relaid { old, pieces })
}

/// Where each piece of an order starts, and its length.
fn piece_starts(pieces: &[Vec<u32>]) -> Vec<(usize, usize)> {
    let mut at = 0;
    pieces
        .iter()
        .map(|p| {
            let start = at;
            at += p.len();
            (start, p.len())
        })
        .collect()
}

/// A pool's new order, from [`relayout`], its offsets not made yet.
pub struct Relaid<'a, P: PoolTexts = StringPool> {
    old: &'a P,
    /// The old id of each new string, in pieces.
    pieces: Vec<Vec<u32>>,
}

impl<'a, P: PoolTexts + Sync> Relaid<'a, P> {
    /// The new pool's offsets: each piece's bytes, their sums before each piece, then each
    /// piece's offsets (and where they pass a multiple of 4 GiB) on its own core.
    pub fn lay_out(self) -> RelaidPool<'a, P> {
        use rayon::prelude::*;
        let Relaid { old, pieces } = self;
        let places = piece_starts(&pieces);
        let bytes: Vec<u64> = pieces.par_iter().map(|ids| ids.iter().map(|&id| old.text(id).len() as u64).sum()).collect();
        let byte_starts: Vec<u64> = bytes
            .iter()
            .scan(0u64, |sum, b| {
                let start = *sum;
                *sum += b;
                Some(start)
            })
            .collect();
        let total = places.last().map_or(0, |&(s, n)| s + n);
        let mut low = vec![0u32; total + 1];
        let mut slots: Vec<&mut [u32]> = Vec::with_capacity(pieces.len());
        let mut rest = &mut low[1..];
        for &(_, n) in &places {
            let (slot, after) = rest.split_at_mut(n);
            slots.push(slot);
            rest = after;
        }
        let wraps: Vec<Vec<u32>> = slots
            .into_par_iter()
            .zip(pieces.par_iter())
            .zip(places.par_iter().zip(byte_starts.par_iter()))
            .map(|((low, ids), (&(first, _), &start))| {
                let mut wraps = Vec::new();
                let mut at = start;
                for (j, (slot, &id)) in low.iter_mut().zip(ids).enumerate() {
                    let next = at + old.text(id).len() as u64;
                    // Index of this offset in the whole table (the first is the leading 0).
                    *slot = <Offsets>::stored((first + j + 1) as u32, at, next, &mut wraps);
                    at = next;
                }
                wraps
            })
            .collect();
        let offsets = Offsets { low, wraps: wraps.concat() };
        RelaidPool { old, pieces, offsets }
    }
}

/// [`relayout`] one use at a time, on one thread, as the build did before it ran on every core:
/// the tests' reference.
#[cfg(test)]
pub(crate) struct OneByOne<'a, P: PoolTexts = StringPool> {
    old: &'a P,
    map: Vec<u32>,
    /// The old id of each new string.
    order: Vec<u32>,
    offsets: Offsets,
}

#[cfg(test)]
impl<'a, P: PoolTexts> OneByOne<'a, P> {
    pub fn new(old: &'a P) -> Self {
        let mut map = vec![UNSEEN; old.count()];
        if !map.is_empty() {
            map[old.index(EMPTY)] = EMPTY;
        }
        let mut offsets = Offsets::new();
        offsets.push(0);
        OneByOne { old, map, order: vec![EMPTY], offsets }
    }

    /// The new id of old string `id`.
    pub fn id(&mut self, id: u32) -> u32 {
        let slot = &mut self.map[self.old.index(id)];
        if *slot == UNSEEN {
            *slot = self.order.len() as u32;
            self.order.push(id);
            let end = self.offsets.last() + self.old.text(id).len() as u64;
            self.offsets.push(end);
        }
        *slot
    }

    pub fn finish(self) -> RelaidPool<'a, P> {
        RelaidPool { old: self.old, pieces: vec![self.order], offsets: self.offsets }
    }
}

/// A pool laid out again, its text still in the old pool: the offsets are the new pool's, and
/// [`RelaidPool::write_blob`] writes its blob.
pub struct RelaidPool<'a, P: PoolTexts = StringPool> {
    old: &'a P,
    /// The old id of each new string, in pieces (as [`relayout`] found them).
    pieces: Vec<Vec<u32>>,
    offsets: Offsets,
}

impl<P: PoolTexts> RelaidPool<'_, P> {
    /// Each string's offset modulo 2^32, as the snapshot stores it.
    pub fn offsets(&self) -> &[u32] {
        &self.offsets.low
    }

    /// Where the offsets wrap: empty for a pool under 4 GiB.
    pub fn wraps(&self) -> &[u32] {
        &self.offsets.wraps
    }

    pub fn blob_len(&self) -> usize {
        self.offsets.last() as usize
    }

    /// The new blob, written to `sink` in pieces of about 64 KiB.
    pub fn write_blob(&self, sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        const PIECE: usize = 1 << 16;
        let mut piece = Vec::with_capacity(PIECE);
        for &old in self.pieces.iter().flatten() {
            let s = self.old.text(old).as_bytes();
            if piece.len() + s.len() > PIECE && !piece.is_empty() {
                sink(&piece)?;
                piece.clear();
            }
            if s.len() >= PIECE {
                sink(s)?;
            } else {
                piece.extend_from_slice(s);
            }
        }
        if !piece.is_empty() {
            sink(&piece)?;
        }
        Ok(())
    }

    /// The old id of each new string.
    #[cfg(test)]
    fn order(&self) -> Vec<u32> {
        self.pieces.concat()
    }

    /// The new pool, made whole.
    #[cfg(test)]
    pub fn to_pool(&self) -> StringPool {
        let mut blob = Vec::with_capacity(self.blob_len());
        self.write_blob(&mut |b| {
            blob.extend_from_slice(b);
            Ok(())
        })
        .expect("writing to memory");
        let blob = String::from_utf8(blob).expect("whole strings of a valid pool");
        StringPool::from_parts(blob, self.offsets.low.clone(), self.offsets.wraps.clone()).expect("offsets of the strings just written")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_past_a_page_wrap_and_read_back_whole() {
        // Pages of 16 bytes stand for 4 GiB: offsets that rise by 0 to 40 cross a page now and
        // then, two at a time at the biggest steps.
        let mut whole = vec![0u64, 0];
        for i in 0..200u64 {
            whole.push(whole[whole.len() - 1] + (i * 7919) % 41);
        }
        let mut o = Offsets::<4>::new();
        whole[1..].iter().for_each(|&at| o.push(at));
        assert_eq!((0..whole.len()).map(|i| o.at(i)).collect::<Vec<_>>(), whole);
        assert!(o.low.iter().all(|&l| l < 16), "each offset held modulo the page");
        assert_eq!(o.wraps.len() as u64, whole[whole.len() - 1] / 16, "one wrap a page");
        assert!(o.wraps.windows(2).any(|w| w[0] == w[1]), "a step over two pages at once");
        // As a file gives them back, and refused where they cannot rise.
        assert_eq!(Offsets::<4>::from_parts(o.low.clone(), o.wraps.clone()), Some(o.clone()));
        // A wrap dropped where one page was crossed and the offset held is below the one
        // before: the offsets fall there. (Of two wraps at one offset, one dropped still rises:
        // the snapshot's checksum, not this, is what finds a changed byte.)
        let k = (0..o.wraps.len())
            .find(|&k| {
                let w = o.wraps[k] as usize;
                o.wraps.iter().filter(|&&x| x as usize == w).count() == 1 && o.low[w] < o.low[w - 1]
            })
            .expect("a single wrap");
        let mut dropped = o.wraps.clone();
        dropped.remove(k);
        assert_eq!(Offsets::<4>::from_parts(o.low.clone(), dropped), None, "a wrap missing");
        assert_eq!(Offsets::<4>::from_parts(o.low.clone(), Vec::new()), None, "no wraps: offsets fall");
        let mut past = o.wraps.clone();
        past.push(o.low.len() as u32);
        assert_eq!(Offsets::<4>::from_parts(o.low.clone(), past), None, "a wrap past the last offset");
        let mut wide = o.low.clone();
        wide[3] = 16;
        assert_eq!(Offsets::<4>::from_parts(wide, o.wraps.clone()), None, "an offset wider than a page");
    }

    /// Strings of `len` bytes (1,000,003 unless said), each starting at its own letter, from one
    /// buffer: a pool of any size without holding it.
    struct Long {
        count: usize,
        len: usize,
        buffer: String,
    }

    impl Long {
        const LEN: usize = 1_000_003;
        fn new(count: usize) -> Long {
            Long::of(count, Self::LEN)
        }
        fn of(count: usize, len: usize) -> Long {
            Long { count, len, buffer: (0..len + 26).map(|i| (b'a' + (i % 26) as u8) as char).collect() }
        }
    }

    impl PoolTexts for Long {
        fn count(&self) -> usize {
            self.count
        }
        fn index(&self, id: u32) -> usize {
            id as usize
        }
        fn text(&self, id: u32) -> &str {
            if id == EMPTY {
                return "";
            }
            let at = id as usize % 26;
            &self.buffer[at..at + self.len]
        }
    }

    /// 70,000 strings of 61,500 bytes (4.3 GB): the offsets pass 2^32 in the fifth of the
    /// chunks' pieces [`relayout`] finds them in (one per 16,384 items, after the empty
    /// string's), where the wrap's index must count the pieces before.
    #[test]
    fn a_relayout_on_every_core_wraps_where_one_by_one_does() {
        let old = Long::of(70_001, 61_500);
        let mut r = OneByOne::new(&old);
        let ids: Vec<(u32, u32)> = (1..old.count() as u32).rev().map(|id| (id, r.id(id))).collect();
        let one_by_one = r.finish();
        let wrap = one_by_one.wraps()[0] as usize;
        assert!(wrap > 2 * RELAYOUT_CHUNK, "the wrap is past the first pieces");
        let (new_ids, at_once) = relayout(&old, ids.len(), |i, f| f(ids[i].0));
        let at_once = at_once.lay_out();
        assert_eq!((at_once.order(), &at_once.offsets), (one_by_one.order(), &one_by_one.offsets));
        assert!(ids.iter().all(|&(o, n)| new_ids.id(&old, o) == n));
    }

    /// A chunk that uses no string first leaves an empty piece, here between the first chunk's
    /// and the ones after, before the offsets pass 2^32: the new ids and the wrap's index
    /// still count every string before.
    #[test]
    fn an_empty_piece_before_a_wrap_counts_nothing() {
        let old = Long::of(70_001, 61_500);
        let chunk = RELAYOUT_CHUNK as u32;
        // Chunk 0 takes ids 1 to 16,384 first; chunk 1 only uses id 1 again; the rest, one a row.
        let uses: Vec<u32> = (1..=chunk).chain(std::iter::repeat_n(1, RELAYOUT_CHUNK)).chain(chunk + 1..old.count() as u32).collect();
        let mut r = OneByOne::new(&old);
        let asked: Vec<u32> = uses.iter().map(|&id| r.id(id)).collect();
        let one_by_one = r.finish();
        let (ids, relaid) = relayout(&old, uses.len(), |i, f| f(uses[i]));
        assert!(relaid.pieces[2].is_empty() && !relaid.pieces[3].is_empty(), "an empty piece between two full ones");
        let at_once = relaid.lay_out();
        assert!(one_by_one.wraps()[0] as usize > 2 * RELAYOUT_CHUNK, "the wrap is after the empty piece");
        assert_eq!((at_once.order(), &at_once.offsets), (one_by_one.order(), &one_by_one.offsets));
        assert!(uses.iter().zip(&asked).all(|(&o, &n)| ids.id(&old, o) == n));
    }

    #[test]
    fn a_pool_of_more_than_4_gib_lays_out_and_reads_back_every_string() {
        // 4,297 strings of 1,000,003 bytes: 4.297 GB of text, one string across 2^32. (It holds
        // the new pool, 4.3 GB, as the snapshot's load does.)
        let old = Long::new(4_298);
        let mut r = OneByOne::new(&old);
        // Laid out backwards, so each new id differs from its old one.
        let ids: Vec<(u32, u32)> = (1..old.count() as u32).rev().map(|id| (id, r.id(id))).collect();
        let relaid = r.finish();
        // On every core, one id an item: the same order, offsets and wrap.
        let (new_ids, at_once) = relayout(&old, ids.len(), |i, f| f(ids[i].0));
        let at_once = at_once.lay_out();
        assert_eq!((at_once.order(), &at_once.offsets), (relaid.order(), &relaid.offsets));
        assert!(ids.iter().all(|&(o, n)| new_ids.id(&old, o) == n));
        assert_eq!(relaid.blob_len(), 4_297 * Long::LEN);
        assert_eq!(relaid.wraps().len(), 1, "one wrap");
        let pool = relaid.to_pool();
        assert_eq!(pool.len(), 4_298);
        let wrap = relaid.wraps()[0] as usize;
        // Offset i is where new string i starts, after i - 1 strings (string 0 is empty).
        assert!((wrap - 2) * Long::LEN < 1 << 32 && (wrap - 1) * Long::LEN >= 1 << 32, "the wrap is the first offset past 2^32");
        for (old_id, new_id) in ids {
            let got = pool.get(new_id);
            assert!(got.len() == Long::LEN && got == old.text(old_id), "string {new_id} (old {old_id})");
        }
        assert_eq!(pool.get(EMPTY), "");
    }

    #[test]
    fn relayout_orders_by_first_use_and_drops_unused() {
        let mut b = StringPoolBuilder::default();
        let (x, y, z) = (b.intern("x"), b.intern("yy"), b.intern("zzz"));
        let old = b.finish();
        let mut r = OneByOne::new(&old);
        let (nz, nx, nz2, ne) = (r.id(z), r.id(x), r.id(z), r.id(EMPTY));
        let new = r.finish().to_pool();
        assert_eq!((nz, nx, nz2, ne), (1, 2, 1, EMPTY));
        assert_eq!((new.get(nz), new.get(nx), new.get(EMPTY)), ("zzz", "x", ""));
        assert_eq!(new.len(), 3, "{y} was never asked for and is gone");
        assert_eq!(new.blob(), "zzzx");
    }

    /// Items using strings of a pool many times over, in several workers' chunks and offset
    /// pieces, with repeats inside an item, the empty string and strings no item uses: laid out
    /// on every core, the pool and the ids are those of asking id by id.
    #[test]
    fn a_relayout_on_every_core_is_the_one_asked_id_by_id() {
        let mut b = StringPoolBuilder::default();
        let strings: Vec<u32> = (0..150_000u32).map(|i| b.intern(&format!("s{}", i.wrapping_mul(2_654_435_761) % 1_000_003))).collect();
        let old = b.finish();
        let mut x = 12_345u64;
        let mut next = || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) as usize
        };
        let items: Vec<Vec<u32>> = (0..100_000)
            .map(|_| {
                (0..next() % 7)
                    .map(|_| match next() % 10 {
                        0 => EMPTY,
                        // Half the pool is never used.
                        _ => strings[next() % (strings.len() / 2)],
                    })
                    .collect()
            })
            .map(|mut v: Vec<u32>| {
                if v.len() > 2 {
                    v.push(v[1]);
                }
                v
            })
            .collect();
        let mut one_by_one = OneByOne::new(&old);
        let asked: Vec<Vec<u32>> = items.iter().map(|v| v.iter().map(|&id| one_by_one.id(id)).collect()).collect();
        let one_by_one = one_by_one.finish();
        let (ids, at_once) = relayout(&old, items.len(), |i, f| items[i].iter().for_each(|&id| f(id)));
        let at_once = at_once.lay_out();
        assert!(at_once.pieces[1..].iter().filter(|p| !p.is_empty()).count() > 1, "strings in more than one chunk's piece");
        assert_eq!(at_once.order(), one_by_one.order());
        assert_eq!(at_once.offsets, one_by_one.offsets);
        for (v, got) in items.iter().zip(&asked) {
            assert_eq!(&v.iter().map(|&id| ids.id(&old, id)).collect::<Vec<_>>(), got);
        }
    }

    #[test]
    fn interns_once_and_reads_back() {
        let mut b = StringPoolBuilder::default();
        let a = b.intern("Chicago");
        let c = b.intern("東京");
        assert_eq!(b.intern("Chicago"), a);
        assert_eq!(b.intern(""), EMPTY);
        let pool = b.finish();
        assert_eq!(pool.get(a), "Chicago");
        assert_eq!(pool.get(c), "東京");
        assert_eq!(pool.get(EMPTY), "");
        assert_eq!(pool.get(999), "");
        assert_eq!(pool.len(), 3);
    }

    #[test]
    fn hash_collisions_still_intern_correctly() {
        let mut b = StringPoolBuilder::default();
        let a = b.intern("first");
        // Force the collision path: a different string under the same hash slot.
        let h = text_hash("second");
        b.ids.insert(h, a);
        let c = b.intern("second");
        assert_ne!(a, c);
        assert_eq!(b.intern("second"), c);
        assert_eq!(b.intern("first"), a);
        let pool = b.finish();
        assert_eq!((pool.get(a), pool.get(c)), ("first", "second"));
    }

    #[test]
    fn shared_strings_give_equal_texts_one_id_whichever_thread_asks_first() {
        // 2,000 texts, a fifth of them asked for twice, each thread starting elsewhere in the
        // list: every thread must see the same id for a text, and different texts different ids.
        let texts: Vec<String> = (0..2_000).map(|i| format!("store {}", i % 1_600)).collect();
        let pool = SharedStrings::default();
        let seen: Vec<Vec<u32>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4)
                .map(|t| {
                    let (pool, texts) = (&pool, &texts);
                    scope.spawn(move || {
                        let mut ids = vec![0; texts.len()];
                        for k in 0..texts.len() {
                            let i = (k + t * 517) % texts.len();
                            ids[i] = pool.intern(&texts[i]);
                        }
                        ids
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|ids| ids == &seen[0]), "threads disagree on an id");
        let ids = &seen[0];
        let distinct: std::collections::HashSet<u32> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), 1_600);
        assert!(!distinct.contains(&EMPTY));
        assert_eq!(pool.intern(""), EMPTY);
        let unique = pool.unique(7).append("a store's own address");
        let shared = pool.finish();
        let mut r = OneByOne::new(&shared);
        let new_ids: Vec<u32> = ids.iter().map(|&id| r.id(id)).collect();
        let (nu, ne) = (r.id(unique), r.id(EMPTY));
        let new = r.finish().to_pool();
        for (i, t) in texts.iter().enumerate() {
            assert_eq!(new.get(new_ids[i]), t);
        }
        assert_eq!((new.get(nu), ne), ("a store's own address", EMPTY));
        // Laid out by first use: the first 1,600 texts in order, then the address.
        assert_eq!(new_ids[..1_600], (1..=1_600).collect::<Vec<u32>>()[..]);
        assert_eq!(new.len(), 1 + 1_600 + 1);

        // On every core, over this pool whose dense index is not its id (as the snapshot's is),
        // three uses an item: the same as one by one.
        let uses: Vec<u32> = ids.iter().rev().copied().chain([EMPTY, unique]).collect();
        let mut r = OneByOne::new(&shared);
        let asked: Vec<u32> = uses.iter().map(|&id| r.id(id)).collect();
        let one_by_one = r.finish();
        let (at_once_ids, at_once) = relayout(&shared, uses.len().div_ceil(3), |i, f| uses.iter().skip(3 * i).take(3).for_each(|&id| f(id)));
        let at_once = at_once.lay_out();
        assert_eq!((at_once.order(), &at_once.offsets), (one_by_one.order(), &one_by_one.offsets));
        assert!(uses.iter().zip(&asked).all(|(&id, &n)| at_once_ids.id(&shared, id) == n));
    }

    #[test]
    fn rejects_offsets_off_char_boundaries() {
        assert!(StringPool::from_parts("東".into(), vec![0, 1, 3], vec![]).is_none());
        assert!(StringPool::from_parts("ab".into(), vec![0, 1, 2], vec![]).is_some());
    }
}
