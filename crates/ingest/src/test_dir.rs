//! A folder of its own for a unit test, made fresh and removed when the test ends, whether it
//! passes or fails (a failed test left its folder in the system's temp folder before).

use std::path::{Path, PathBuf};

pub struct TestDir(PathBuf);

impl TestDir {
    /// `storemap-{name}-{pid}` in the system's temp folder, empty.
    pub fn new(name: &str) -> TestDir {
        let dir = std::env::temp_dir().join(format!("storemap-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        TestDir(dir)
    }
}

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
