//! One writer per data folder. A build, an import and a merge each replace the folder's
//! snapshot, keep the one before as `snapshot.prev.smap` and extend the history; two at once
//! interleave those steps (three imports run together left the history naming two of them and
//! the previous snapshot a sibling's, not the one they replaced). The lock is the operating
//! system's (`flock`): it goes with the process, so one killed with -9 leaves nothing to clear.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use crate::error::{IngestError, Result};

/// The lock file inside the data folder; its content is nothing, the lock on it is everything.
pub const LOCK_FILE: &str = ".storemap.lock";

/// Held while a run writes the folder; dropping it (or the process ending) lets the next in.
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
}

impl FolderLock {
    /// Takes the folder's lock, creating the folder, or refuses at once naming the folder when
    /// another run holds it (waiting would leave the caller unsure what it will replace).
    pub fn acquire(dir: &Path) -> Result<FolderLock> {
        std::fs::create_dir_all(dir).map_err(|e| IngestError::io(dir.display(), e))?;
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(|e| IngestError::io(path.display(), e))?;
        match file.try_lock() {
            Ok(()) => Ok(FolderLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(IngestError::Invalid(format!(
                "{}: another build, import or merge is writing this data folder; run this one when it has finished",
                dir.display()
            ))),
            // Some network and FUSE file systems have no flock: the run goes on unlocked, as it
            // did before there was a lock, and says so.
            Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported || e.raw_os_error() == Some(ENOLCK) => {
                eprintln!("storemap: {}: this file system cannot lock ({e}); nothing stops another run writing the folder at the same time", path.display());
                Ok(FolderLock { _file: file })
            }
            Err(TryLockError::Error(e)) => Err(IngestError::io(path.display(), e)),
        }
    }
}

/// ENOLCK on Linux: "no locks available", what NFS without a lock daemon answers.
const ENOLCK: i32 = 37;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;

    #[test]
    fn a_second_writer_is_refused_until_the_first_lets_go() {
        let dir = TestDir::new("folder-lock");
        let data = dir.join("data");
        let first = FolderLock::acquire(&data).unwrap();
        let refused = FolderLock::acquire(&data).unwrap_err().to_string();
        assert!(refused.contains("another build, import or merge is writing this data folder"), "{refused}");
        assert!(refused.contains(&data.display().to_string()), "{refused}");
        drop(first);
        let _again = FolderLock::acquire(&data).unwrap();
    }
}
