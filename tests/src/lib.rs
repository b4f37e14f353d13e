//! End-to-end test crate; the tests live in this directory as `[[test]]`
//! targets (see `README.md`). This library holds what only they share.

use std::path::PathBuf;

/// The `tests/` directory holding the data files (`slt/`, `psql/`,
/// `python/`). Read at run time from `CARGO_MANIFEST_DIR` (which `cargo test`
/// sets), so a test binary built from another checkout sharing the target
/// directory still reads this checkout's files; the compile-time path is the
/// fallback for running a test binary directly.
pub fn tests_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}
