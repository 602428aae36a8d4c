//! Each build records in the data folder's history which stores it serves
//! (`storemap_core::IdHistory`), and keeps, in `history/departed.smap`, the rows of stores that
//! stopped being served, as last served, for as long as the history reaches back. What the
//! change feed reads: ids added since a date are openings, ids removed are closures, and the
//! departed rows say what the closed stores were.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use storemap_core::{BrandRecord, CityRecord, IdHistory, Snapshot, SnapshotBuilder, SnapshotMeta, HISTORY_DEPARTED_FILE, HISTORY_DIR};

use crate::error::{IngestError, Result};

/// What recording one build did.
#[derive(Debug, Clone, Default, serde::Serialize, PartialEq, Eq)]
pub struct HistoryUpdate {
    /// Snapshots the history now holds.
    pub entries: u64,
    /// Stores this build serves that the one before did not, and the other way round.
    pub opened: u64,
    pub closed: u64,
    /// Rows of stores no longer served that the history keeps.
    pub departed_rows: u64,
}

/// The new snapshot, as the history needs it.
pub struct Built<'a> {
    pub as_of: i64,
    pub version: &'a str,
    /// The ids of its servable rows.
    pub served: Vec<u64>,
    pub brands: Vec<BrandRecord>,
    /// The gazetteer, so the departed rows answer a radius filter as the snapshot does.
    pub cities: Vec<CityRecord>,
    pub meta: &'a SnapshotMeta,
}

/// Records a build. `previous` is the snapshot it replaces when it is the same world (see
/// `pipeline`); without one the history starts over with this build. `keep` entries at most.
pub fn record(data_dir: &Path, previous: Option<&Snapshot>, built: Built, keep: usize) -> Result<HistoryUpdate> {
    let dir = data_dir.join(HISTORY_DIR);
    let ids_path = IdHistory::path(data_dir);
    let departed_path = dir.join(HISTORY_DEPARTED_FILE);
    let mut history = match previous {
        Some(_) => IdHistory::read(&ids_path).unwrap_or_else(|e| {
            eprintln!("storemap: the id history could not be read ({e}); it starts over");
            IdHistory::default()
        }),
        None => IdHistory::default(),
    };
    // The history's newest entry must be the snapshot being replaced. After a rollback (or a
    // build that died after recording) an older entry is: the history is cut back to it. When
    // no entry is, it starts over from that snapshot.
    let mut old_departed: Option<Snapshot> = None;
    if let Some(prev) = previous {
        let version = &prev.meta().snapshot_version;
        match history.entries().iter().rposition(|e| &e.version == version) {
            Some(k) => {
                history.truncate(k + 1);
                if departed_path.exists() {
                    old_departed = Snapshot::load(&departed_path).ok();
                }
            }
            None => {
                history = IdHistory::default();
                let as_of = storemap_core::parse_iso(&prev.meta().as_of).unwrap_or(i64::MIN);
                history.push(as_of, version, servable_ids(prev));
            }
        }
    }
    let served: HashSet<u64> = built.served.iter().copied().collect();
    let closed: HashSet<u64> = history.push(built.as_of, built.version, built.served).into_iter().collect();
    // The first entry's additions are everything it serves, not openings.
    let opened = match history.entries() {
        [.., _, last] => last.added.len() as u64,
        _ => 0,
    };
    history.trim(keep);
    let since = history.entries().first().map_or(i64::MIN, |e| e.as_of);

    // The departed rows: those kept before that are still gone and still within the window,
    // and the rows of the stores this build closed, as the previous snapshot served them.
    let index: HashMap<&str, u32> = built.brands.iter().enumerate().map(|(i, b)| (b.identity(), i as u32)).collect();
    let mut builder = SnapshotBuilder::new(built.meta.clone(), built.brands.clone(), built.cities, Vec::new());
    let mut copy = |snap: &Snapshot, r: usize| {
        let brand = &snap.brands()[snap.brand_of_row(r as u32) as usize];
        if let Some(&b) = index.get(brand.identity()) {
            let mut row = snap.row(r);
            row.brand = b;
            builder.push(&row);
        }
    };
    let mut kept: HashSet<u64> = HashSet::new();
    if let Some(old) = &old_departed {
        for r in 0..old.row_count() {
            let id = old.row_id(r);
            if !served.contains(&id) && !closed.contains(&id) && old.row_last_updated(r) >= since && kept.insert(id) {
                copy(old, r);
            }
        }
    }
    if let Some(prev) = previous {
        for r in 0..prev.row_count() {
            if prev.row_is_verified(r) && closed.contains(&prev.row_id(r)) && kept.insert(prev.row_id(r)) {
                copy(prev, r);
            }
        }
    }
    let departed_rows = builder.row_count() as u64;
    builder.set_version(&format!("departed-{}", built.version));
    std::fs::create_dir_all(&dir).map_err(|e| IngestError::io(dir.display(), e))?;
    builder.write(&departed_path)?;
    history.write(&ids_path)?;
    Ok(HistoryUpdate { entries: history.entries().len() as u64, opened, closed: closed.len() as u64, departed_rows })
}

/// The ids a snapshot serves.
pub fn servable_ids(s: &Snapshot) -> Vec<u64> {
    (0..s.row_count()).filter(|&r| s.row_is_verified(r)).map(|r| s.row_id(r)).collect()
}
