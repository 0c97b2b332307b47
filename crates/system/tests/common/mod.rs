//! What the tests that run the built `tamebi` binary share: a fresh
//! directory per test, the binary with no Tamebi settings inherited from
//! the environment, the start banner a server prints, and a child stopped
//! even when an assertion fails first. Included as `mod common;`.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A fresh directory `SUITE-NAME` under cargo's scratch folder for tests.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{suite}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tamebi` with no `TAMEBI_`, `NEXTCLOUD_` or `ONLYOFFICE_` variable
/// inherited from the environment (they are flags' defaults), stdin closed.
pub fn tamebi() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tamebi"));
    for (name, _) in std::env::vars() {
        if name.starts_with("TAMEBI_")
            || name.starts_with("NEXTCLOUD_")
            || name.starts_with("ONLYOFFICE_")
        {
            command.env_remove(name);
        }
    }
    command.stdin(Stdio::null());
    command
}

/// What a server printed on stdout up to its "Press Ctrl-C" line, which
/// ends every start banner.
pub fn banner(child: &mut Child) -> String {
    let mut printed = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("Press Ctrl-C");
        printed.push(line);
        if done {
            break;
        }
    }
    printed.join("\n")
}

/// Stops the server even when an assertion fails first.
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A command's stderr, once it is checked to have exited with `code`
/// (the stderr is the assertion's message otherwise).
pub fn stderr_of_exit(output: &std::process::Output, code: i32) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    stderr
}

/// A model script written as `script.toml` in `dir`.
pub fn script_file(dir: &Path, toml: &str) -> PathBuf {
    let script = dir.join("script.toml");
    std::fs::write(&script, toml).unwrap();
    script
}
