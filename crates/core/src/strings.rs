//! An interned string pool: one UTF-8 blob and an offset table. The snapshot stores every
//! text field as a `u32` id into it, so repeated values (city names, brand names) cost 4 bytes
//! a row and the whole pool loads with two copies.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Id 0 is always the empty string, so "missing" needs no separate flag.
pub const EMPTY: u32 = 0;

#[derive(Debug, Clone, Default)]
pub struct StringPool {
    blob: String,
    /// `offsets[i]..offsets[i+1]` is string i.
    offsets: Vec<u32>,
}

impl StringPool {
    pub fn from_parts(blob: String, offsets: Vec<u32>) -> Option<StringPool> {
        let ok = !offsets.is_empty()
            && offsets.windows(2).all(|w| w[0] <= w[1])
            && *offsets.last().unwrap() as usize == blob.len()
            && offsets.iter().all(|&o| blob.is_char_boundary(o as usize));
        ok.then_some(StringPool { blob, offsets })
    }

    pub fn get(&self, id: u32) -> &str {
        let i = id as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.blob[a as usize..b as usize],
            _ => "",
        }
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn parts(&self) -> (&str, &[u32]) {
        (&self.blob, &self.offsets)
    }
}

/// Builds a pool; ids are handed out in first-seen order, so the same input order gives the
/// same bytes. Lookups go by a 64-bit hash to the id, confirmed against the blob, so the
/// builder holds each distinct string once (a full-size build interns some 20 million); the
/// rare hash collision between different strings falls back to a map keyed by the text.
/// The hash decides nothing but where a lookup looks: ids, and so the bytes, are the same
/// whatever it is. A build interns every row's text on one thread (the rows' order is the
/// pool's), so it is foldhash, which reads a string 16 bytes at a time, and the table uses
/// the hash as it is.
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
        self.offsets.push(self.blob.len() as u32);
        id
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        let h = text_hash(s);
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
        StringPool { blob: self.blob, offsets: self.offsets }
    }
}

/// Lays a pool's strings out again in the order they are first asked for, dropping the ones
/// never asked for. The snapshot asks in row order, so the text of consecutive rows sits side
/// by side: writing a brand's rows then reads the blob front to back instead of taking a cache
/// (and TLB) miss per field in a pool of hundreds of megabytes. Only the new order and offsets
/// are held; the new blob is copied from the old pool as it is written (a second blob beside
/// the first set a scale-1 build's peak).
pub struct PoolRelayout<'a> {
    old: &'a StringPool,
    map: Vec<u32>,
    /// The old id of each new string.
    order: Vec<u32>,
    offsets: Vec<u32>,
}

impl<'a> PoolRelayout<'a> {
    const UNSEEN: u32 = u32::MAX;

    pub fn new(old: &'a StringPool) -> Self {
        let mut map = vec![Self::UNSEEN; old.len()];
        if !map.is_empty() {
            map[EMPTY as usize] = EMPTY;
        }
        PoolRelayout { old, map, order: vec![EMPTY], offsets: vec![0, 0] }
    }

    /// The new id of old string `id`.
    pub fn id(&mut self, id: u32) -> u32 {
        let slot = &mut self.map[id as usize];
        if *slot == Self::UNSEEN {
            *slot = self.order.len() as u32;
            self.order.push(id);
            let end = self.offsets[self.offsets.len() - 1] + self.old.get(id).len() as u32;
            self.offsets.push(end);
        }
        *slot
    }

    pub fn finish(self) -> RelaidPool<'a> {
        RelaidPool { old: self.old, order: self.order, offsets: self.offsets }
    }
}

/// A pool laid out again, its text still in the old pool: the offsets are the new pool's, and
/// [`RelaidPool::write_blob`] writes its blob.
pub struct RelaidPool<'a> {
    old: &'a StringPool,
    order: Vec<u32>,
    offsets: Vec<u32>,
}

impl RelaidPool<'_> {
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    pub fn blob_len(&self) -> usize {
        self.offsets[self.offsets.len() - 1] as usize
    }

    /// The new blob, written to `sink` in pieces of about 64 KiB.
    pub fn write_blob(&self, sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
        const PIECE: usize = 1 << 16;
        let mut piece = Vec::with_capacity(PIECE);
        for &old in &self.order {
            let s = self.old.get(old).as_bytes();
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
        StringPool::from_parts(blob, self.offsets.clone()).expect("offsets of the strings just written")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relayout_orders_by_first_use_and_drops_unused() {
        let mut b = StringPoolBuilder::default();
        let (x, y, z) = (b.intern("x"), b.intern("yy"), b.intern("zzz"));
        let old = b.finish();
        let mut r = PoolRelayout::new(&old);
        let (nz, nx, nz2, ne) = (r.id(z), r.id(x), r.id(z), r.id(EMPTY));
        let new = r.finish().to_pool();
        assert_eq!((nz, nx, nz2, ne), (1, 2, 1, EMPTY));
        assert_eq!((new.get(nz), new.get(nx), new.get(EMPTY)), ("zzz", "x", ""));
        assert_eq!(new.len(), 3, "{y} was never asked for and is gone");
        assert_eq!(new.parts().0, "zzzx");
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
    fn rejects_offsets_off_char_boundaries() {
        assert!(StringPool::from_parts("東".into(), vec![0, 1, 3]).is_none());
        assert!(StringPool::from_parts("ab".into(), vec![0, 1, 2]).is_some());
    }
}
