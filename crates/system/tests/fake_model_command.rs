//! `tamebi fake-model` as the built binary: a script with problems stops it
//! with every problem listed; a good one is served with its API key, and the
//! start banner says where.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fake-model-command-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `tamebi` with no Tamebi variables inherited from the environment.
fn tamebi() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tamebi"));
    for (name, _) in std::env::vars() {
        if name.starts_with("TAMEBI_") {
            command.env_remove(name);
        }
    }
    command.stdin(Stdio::null());
    command
}

/// Stops the server even when an assertion fails first.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_script_with_problems_is_refused_with_all_of_them() {
    let dir = scratch("bad");
    let script = dir.join("script.toml");
    std::fs::write(
        &script,
        "[[rules]]\nname = \"mute\"\n[[rules]]\nwhen.last_user_regex = \"(\"\ntext = \"x\"\n",
    )
    .unwrap();
    let output = tamebi()
        .args(["fake-model", "--listen", "127.0.0.1:0", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("rules[0] (mute): says nothing"), "{stderr}");
    assert!(stderr.contains("rules[1]: when.last_user_regex does not compile"), "{stderr}");
}

#[tokio::test]
async fn a_script_is_served_behind_its_key() {
    let dir = scratch("good");
    let script = dir.join("script.toml");
    std::fs::write(&script, "[[rules]]\ntext = \"scripted answer\"\n").unwrap();
    let mut child = KillOnDrop(
        tamebi()
            .args(["fake-model", "--listen", "127.0.0.1:0", "--api-key", "sk-cli-test", "--script"])
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut printed = Vec::new();
    for line in BufReader::new(child.0.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("Press Ctrl-C");
        printed.push(line);
        if done {
            break;
        }
    }
    let printed = printed.join("\n");
    let api_base = printed
        .lines()
        .find_map(|line| line.trim().strip_prefix("API base:"))
        .map(|base| base.trim().to_string());
    let answer = async {
        let api_base = api_base.as_deref().unwrap_or_else(|| panic!("no API base in:\n{printed}"));
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
        let body =
            serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let refused =
            http.post(format!("{api_base}/chat/completions")).json(&body).send().await.unwrap();
        let answered = http
            .post(format!("{api_base}/chat/completions"))
            .bearer_auth("sk-cli-test")
            .json(&body)
            .send()
            .await
            .unwrap();
        let answer: serde_json::Value = answered.json().await.unwrap();
        (refused.status().as_u16(), answer)
    }
    .await;
    drop(child);
    assert!(printed.contains("(1 rule)"), "{printed}");
    assert!(printed.contains("API key:     required"), "{printed}");
    assert!(!printed.contains("sk-cli-test"), "the key is not printed:\n{printed}");
    let (refused, answer) = answer;
    assert_eq!(refused, 401);
    assert_eq!(answer["choices"][0]["message"]["content"], "scripted answer");
}
