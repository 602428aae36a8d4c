//! An interned string pool: one UTF-8 blob and an offset table. The snapshot stores every
//! text field as a `u32` id into it, so repeated values (city names, brand names) cost 4 bytes
//! a row and the whole pool loads with two copies.

use std::collections::HashMap;

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
/// same bytes.
#[derive(Debug)]
pub struct StringPoolBuilder {
    blob: String,
    offsets: Vec<u32>,
    ids: HashMap<Box<str>, u32>,
}

impl Default for StringPoolBuilder {
    fn default() -> Self {
        StringPoolBuilder { blob: String::new(), offsets: vec![0, 0], ids: HashMap::from([("".into(), EMPTY)]) }
    }
}

impl StringPoolBuilder {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = (self.offsets.len() - 1) as u32;
        self.blob.push_str(s);
        self.offsets.push(self.blob.len() as u32);
        self.ids.insert(s.into(), id);
        id
    }

    pub fn finish(self) -> StringPool {
        StringPool { blob: self.blob, offsets: self.offsets }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn rejects_offsets_off_char_boundaries() {
        assert!(StringPool::from_parts("東".into(), vec![0, 1, 3]).is_none());
        assert!(StringPool::from_parts("ab".into(), vec![0, 1, 2]).is_some());
    }
}
