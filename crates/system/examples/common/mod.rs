//! What both benchmarks of the `tamebi` binary measure with: the release
//! binary beside them, a scratch directory removed at the end, `BENCH_*`
//! settings and percentiles, so the two report numbers computed the same way.
//! Included by `orchestrator_bench.rs` and `load_bench.rs` as `mod common`.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// `target/release/tamebi`, next to the examples' folder.
pub fn tamebi_binary() -> anyhow::Result<PathBuf> {
    std::env::current_exe()?
        .parent()
        .and_then(|examples| examples.parent())
        .map(|release| release.join("tamebi"))
        .filter(|path| path.exists())
        .ok_or_else(|| {
            anyhow::anyhow!("build the binary first: cargo build --release --bin tamebi")
        })
}

/// A directory of this run (`tamebi-NAME-PID` in the temporary folder),
/// removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Made private (0700), as the services make their data directories:
    /// one given as a data directory is then not "tightened" with a warning.
    pub fn new(name: &str) -> anyhow::Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt as _;
        let path = std::env::temp_dir().join(format!("tamebi-{name}-{}", std::process::id()));
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&path)?;
        Ok(TempDir(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `BENCH_*` setting, or its default when unset or not a number.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The value at `at` percent of the sorted values (nearest rank); NaN for none.
pub fn percentile(values: &[f64], at: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let index = ((at / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[index]
}

/// A process's `/proc/PID/status`, read once; empty once it is gone.
pub struct ProcStatus(String);

impl ProcStatus {
    pub fn of(pid: u32) -> ProcStatus {
        ProcStatus(std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default())
    }

    /// A field such as `VmRSS:` as a number (its `kB` dropped).
    pub fn field(&self, name: &str) -> Option<u64> {
        self.0.lines().find_map(|line| {
            line.strip_prefix(name)
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        })
    }
}
