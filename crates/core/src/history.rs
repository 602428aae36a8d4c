//! Which stores each recent snapshot served: the record the change feed reads to say what
//! opened and closed since a date. The pipeline appends an entry per build; the service reads it.
//!
//! Kept as differences, since a refresh changes a few stores in a hundred: the oldest entry
//! holds its whole set of served ids (data rows: verified, not community-only), each later entry
//! the ids it added and removed. A year of weekly refreshes at full scale (2M served rows, about
//! 1 % churn a week) is 16 MB for the base and about 3 MB of differences.
//!
//! `history/ids.bin`, little-endian: the magic `SMHIST01`, a u32 count of entries, then per
//! entry: i64 as-of (unix seconds), u32 length and bytes of the snapshot version, u32 count of
//! added ids, u32 count of removed ids, the added ids (u64, ascending), the removed ids (u64,
//! ascending); a CRC-32 of all that follows as a u32. Written to a temp file and renamed.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{CoreError, Result};

const MAGIC: &[u8; 8] = b"SMHIST01";

/// The history's folder in a data folder, and its files.
pub const HISTORY_DIR: &str = "history";
pub const HISTORY_IDS_FILE: &str = "ids.bin";
/// The rows of stores that left the served set within the history's window, each as last
/// served (a snapshot file: its `last_updated` is when it was last seen).
pub const HISTORY_DEPARTED_FILE: &str = "departed.smap";
/// Entries kept by default: a year of weekly refreshes and some.
pub const DEFAULT_KEEP: usize = 60;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub as_of: i64,
    pub version: String,
    /// Ids served from this snapshot on that the one before did not serve (for the oldest
    /// entry: every id it served). Ascending.
    pub added: Vec<u64>,
    /// Ids the one before served that this one does not. Ascending.
    pub removed: Vec<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdHistory {
    entries: Vec<Entry>,
}

fn invalid(path: &Path, message: impl Into<String>) -> CoreError {
    CoreError::Snapshot { path: path.display().to_string(), message: message.into() }
}

/// `a - b` of two ascending lists.
fn minus(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut j = 0;
    for &x in a {
        while j < b.len() && b[j] < x {
            j += 1;
        }
        if j >= b.len() || b[j] != x {
            out.push(x);
        }
    }
    out
}

/// `a + added - removed`, ascending.
fn apply(a: &[u64], added: &[u64], removed: &[u64]) -> Vec<u64> {
    let mut out: Vec<u64> = minus(a, removed);
    out.extend_from_slice(added);
    out.sort_unstable();
    out.dedup();
    out
}

impl IdHistory {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(HISTORY_DIR).join(HISTORY_IDS_FILE)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Appends a snapshot that serves `served` (any order) as of `as_of`, and returns the ids
    /// it stopped serving. A snapshot as of a time the history already reaches (a rebuild, or
    /// a build for an earlier date) replaces the entries from that time on.
    pub fn push(&mut self, as_of: i64, version: &str, mut served: Vec<u64>) -> Vec<u64> {
        served.sort_unstable();
        served.dedup();
        let keep = self.entries.iter().take_while(|e| e.as_of < as_of).count();
        self.entries.truncate(keep);
        let last = self.set_at(self.entries.len());
        let removed = minus(&last, &served);
        let added = if self.entries.is_empty() { served } else { minus(&served, &last) };
        self.entries.push(Entry { as_of, version: version.to_string(), added, removed: removed.clone() });
        removed
    }

    /// Keeps the oldest `n` entries only.
    pub fn truncate(&mut self, n: usize) {
        self.entries.truncate(n);
    }

    /// Folds the oldest entries into one until at most `keep` (at least 1) remain.
    pub fn trim(&mut self, keep: usize) {
        let keep = keep.max(1);
        if self.entries.len() <= keep {
            return;
        }
        let fold = self.entries.len() - keep;
        let base = self.set_at(fold + 1);
        let newest_folded = &self.entries[fold];
        let merged = Entry { as_of: newest_folded.as_of, version: newest_folded.version.clone(), added: base, removed: Vec::new() };
        self.entries.splice(0..=fold, [merged]);
    }

    /// The ids the first `n` entries add up to: the set served by entry `n - 1` (ascending).
    pub fn set_at(&self, n: usize) -> Vec<u64> {
        let mut set: Vec<u64> = Vec::new();
        for e in &self.entries[..n.min(self.entries.len())] {
            set = apply(&set, &e.added, &e.removed);
        }
        set
    }

    /// The entry in force at `t`: the last one as of `t` or before. None before the first.
    pub fn index_at(&self, t: i64) -> Option<usize> {
        self.entries.iter().rposition(|e| e.as_of <= t)
    }

    /// How the entries after the `k`th first change `id`: `Some(true)` when one adds it (entry
    /// `k` did not serve it), `Some(false)` when one removes it (entry `k` served it), `None`
    /// when none does (entry `k` serves it exactly when the newest entry does). Reads only the
    /// differences after `k`, a binary search each: no set is rebuilt.
    pub fn first_change_after(&self, k: usize, id: u64) -> Option<bool> {
        self.entries.iter().skip(k + 1).find_map(|e| {
            if e.added.binary_search(&id).is_ok() {
                Some(true)
            } else if e.removed.binary_search(&id).is_ok() {
                Some(false)
            } else {
                None
            }
        })
    }

    /// Since when `id` has been served without a break up to the newest entry: the as-of of the
    /// entry that last added it. `None` when the newest entry does not serve it.
    pub fn first_seen(&self, id: u64) -> Option<i64> {
        self.entries.iter().rev().find_map(|e| {
            if e.added.binary_search(&id).is_ok() {
                Some(Some(e.as_of))
            } else if e.removed.binary_search(&id).is_ok() {
                Some(None)
            } else {
                None
            }
        })?
    }

    /// Reads `path`; a missing file is an empty history.
    pub fn read(path: &Path) -> Result<IdHistory> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(IdHistory::default()),
            Err(e) => return Err(CoreError::Io { path: path.display().to_string(), source: e }),
        };
        Self::from_bytes(path, &bytes)
    }

    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<IdHistory> {
        if bytes.len() < MAGIC.len() + 8 || &bytes[..8] != MAGIC {
            return Err(invalid(path, "not an id history (bad magic)"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 4);
        if crc32fast::hash(body).to_le_bytes() != sum {
            return Err(invalid(path, "checksum mismatch: the file is damaged"));
        }
        let mut at = 8;
        let mut take = |n: usize| -> Result<&[u8]> {
            let s = body.get(at..at + n).ok_or_else(|| invalid(path, "cut short"))?;
            at += n;
            Ok(s)
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap()) as usize;
        let count = u32_of(take(4)?);
        let mut entries = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            let as_of = i64::from_le_bytes(take(8)?.try_into().unwrap());
            let len = u32_of(take(4)?);
            let version = String::from_utf8(take(len)?.to_vec()).map_err(|_| invalid(path, "a version is not UTF-8"))?;
            let (na, nr) = (u32_of(take(4)?), u32_of(take(4)?));
            let ids = |b: &[u8]| b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect::<Vec<u64>>();
            let added = ids(take(na.checked_mul(8).ok_or_else(|| invalid(path, "too many ids"))?)?);
            let removed = ids(take(nr.checked_mul(8).ok_or_else(|| invalid(path, "too many ids"))?)?);
            entries.push(Entry { as_of, version, added, removed });
        }
        if at != body.len() {
            return Err(invalid(path, "bytes after the last entry"));
        }
        Ok(IdHistory { entries })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.as_of.to_le_bytes());
            out.extend_from_slice(&(e.version.len() as u32).to_le_bytes());
            out.extend_from_slice(e.version.as_bytes());
            out.extend_from_slice(&(e.added.len() as u32).to_le_bytes());
            out.extend_from_slice(&(e.removed.len() as u32).to_le_bytes());
            for id in e.added.iter().chain(&e.removed) {
                out.extend_from_slice(&id.to_le_bytes());
            }
        }
        let sum = crc32fast::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Writes to a temp file beside `path` and renames it into place.
    pub fn write(&self, path: &Path) -> Result<()> {
        let io = |e| CoreError::Io { path: path.display().to_string(), source: e };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = crate::snapshot::temp_path(path);
        let written = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&self.to_bytes())?;
            f.sync_all()
        })();
        if let Err(e) = written.and_then(|_| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three weekly snapshots: {1,2,3}, then 3 closes and 4 opens, then 2 closes, 3 comes back
    /// and 5 opens.
    fn weeks() -> IdHistory {
        let mut h = IdHistory::default();
        assert_eq!(h.push(100, "v1", vec![3, 1, 2]), Vec::<u64>::new());
        assert_eq!(h.push(200, "v2", vec![1, 2, 4]), vec![3]);
        assert_eq!(h.push(300, "v3", vec![5, 1, 4, 3]), vec![2]);
        h
    }

    #[test]
    fn each_entry_adds_and_removes_what_changed() {
        let h = weeks();
        let e = h.entries();
        assert_eq!((e[0].added.clone(), e[0].removed.clone()), (vec![1, 2, 3], vec![]));
        assert_eq!((e[1].added.clone(), e[1].removed.clone()), (vec![4], vec![3]));
        assert_eq!((e[2].added.clone(), e[2].removed.clone()), (vec![3, 5], vec![2]));
        assert_eq!(h.set_at(1), vec![1, 2, 3]);
        assert_eq!(h.set_at(2), vec![1, 2, 4]);
        assert_eq!(h.set_at(3), vec![1, 3, 4, 5]);
        assert_eq!((h.index_at(99), h.index_at(100), h.index_at(250), h.index_at(1000)), (None, Some(0), Some(1), Some(2)));
    }

    #[test]
    fn first_seen_follows_the_breaks() {
        let h = weeks();
        // 3 was served at 100, gone at 200, back at 300: served without a break since 300.
        let seen: Vec<Option<i64>> = [1, 3, 4, 5, 2, 9].iter().map(|&id| h.first_seen(id)).collect();
        assert_eq!(seen, vec![Some(100), Some(300), Some(200), Some(300), None, None]);
    }

    #[test]
    fn the_first_change_after_an_entry_tells_whether_it_served_an_id() {
        let h = weeks();
        // Expected from the sets themselves: an id's membership of entry k, against the newest.
        for k in 0..3 {
            let then = h.set_at(k + 1);
            let now = h.set_at(3);
            for id in 1..=6 {
                let served_then = match h.first_change_after(k, id) {
                    Some(added) => !added,
                    None => now.contains(&id),
                };
                assert_eq!(served_then, then.contains(&id), "id {id} at entry {k}");
            }
        }
    }

    #[test]
    fn a_rebuild_for_a_time_already_reached_replaces_the_entries_from_then_on() {
        let mut h = weeks();
        assert_eq!(h.push(200, "v2b", vec![1, 2, 3, 6]), Vec::<u64>::new(), "against the entry as of 100");
        assert_eq!(h.entries().len(), 2);
        assert_eq!(h.set_at(2), vec![1, 2, 3, 6]);
    }

    #[test]
    fn trimming_folds_the_oldest_entries_into_one_base() {
        let mut h = weeks();
        let newest = h.set_at(3);
        h.trim(2);
        assert_eq!(h.entries().len(), 2);
        assert_eq!(h.entries()[0].as_of, 200);
        assert_eq!(h.set_at(1), vec![1, 2, 4]);
        assert_eq!(h.set_at(2), newest);
        h.trim(0);
        assert_eq!(h.entries().len(), 1);
        assert_eq!(h.set_at(1), newest);
    }

    #[test]
    fn the_file_round_trips_and_a_damaged_one_is_refused() {
        let h = weeks();
        let dir = std::env::temp_dir().join(format!("storemap-history-{}", std::process::id()));
        let path = dir.join(HISTORY_IDS_FILE);
        h.write(&path).unwrap();
        // Read back, then the folder removed before anything is asserted, so a failure leaves
        // nothing in the system's temp folder.
        let (read, bytes, none) = (IdHistory::read(&path), std::fs::read(&path), IdHistory::read(&dir.join("none.bin")));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(read.unwrap(), h);
        let mut bytes = bytes.unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 1;
        let err = IdHistory::from_bytes(&path, &bytes).unwrap_err().to_string();
        assert!(err.contains("checksum"), "{err}");
        assert!(IdHistory::from_bytes(&path, &bytes[..bytes.len() - 9]).is_err());
        assert_eq!(none.unwrap(), IdHistory::default());
    }
}
