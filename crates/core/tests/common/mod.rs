//! What the core's integration tests share: a folder of one test, and a snapshot written and
//! loaded back through the real file format.
// Each test file is its own crate and uses only part of this.
#![allow(dead_code)]

pub mod world;

use std::path::PathBuf;

use storemap_core::{Snapshot, SnapshotBuilder};

/// A folder of this test alone (named by the test file and `name`), removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(file: &str, name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("storemap-core-{file}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `builder` written to a file and loaded back, as the service loads one.
pub fn write_and_load(builder: SnapshotBuilder, file: &str, name: &str) -> storemap_core::Result<Snapshot> {
    let dir = TempDir::new(file, name);
    let path = dir.file("snapshot.smap");
    builder.write(&path).unwrap();
    Snapshot::load(&path)
}
