//! For tests that check files are private whatever the umask: the umask is
//! the whole process's, so such a test runs its own binary again as a child
//! under `sh -c 'umask …'` (rather than changing it under other tests'
//! feet), and the child, finding its variable set, does the checks. Used by
//! this crate's tests and the orchestrator's; nothing else calls it.

use std::ffi::OsStr;
use std::path::Path;

/// Runs `test` of this test binary again under `umask` (octal, as `sh`
/// reads it), with `child_env` set to `root` (a fresh folder, removed
/// afterwards) and `extra` variables; panics with the child's output unless
/// it ran that one test and it passed.
pub fn run(test: &str, umask: &str, child_env: &str, root: &Path, extra: &[(&str, &OsStr)]) {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("the test binary: {e}"));
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(&exe)
        .args([test, "--exact", "--nocapture"])
        .env(child_env, root)
        .envs(extra.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("sh: {e}"));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "under umask {umask}: {said}");
    assert!(said.contains("1 passed"), "the child ran the checks: {said}");
    let _ = std::fs::remove_dir_all(root);
}
