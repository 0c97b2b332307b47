//! `tamebi fake-model` as the built binary: a script with problems stops it
//! with every problem listed; a good one is served with its API key, and the
//! start banner says where.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use common::{KillOnDrop, banner, tamebi};
use std::process::Stdio;
use std::time::Duration;

/// A fresh directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    common::scratch("fake-model-command", name)
}

#[test]
fn a_script_with_problems_is_refused_with_all_of_them() {
    let dir = scratch("bad");
    let script = common::script_file(
        &dir,
        "[[rules]]\nname = \"mute\"\n[[rules]]\nwhen.last_user_regex = \"(\"\ntext = \"x\"\n",
    );
    let output = tamebi()
        .args(["fake-model", "--listen", "127.0.0.1:0", "--script"])
        .arg(&script)
        .output()
        .unwrap();
    let stderr = common::stderr_of_exit(&output, 1);
    assert!(stderr.contains("rules[0] (mute): says nothing"), "{stderr}");
    assert!(stderr.contains("rules[1]: when.last_user_regex does not compile"), "{stderr}");
}

#[tokio::test]
async fn a_script_is_served_behind_its_key() {
    let dir = scratch("good");
    let script = common::script_file(&dir, "[[rules]]\ntext = \"scripted answer\"\n");
    let mut child = KillOnDrop(
        tamebi()
            .args(["fake-model", "--listen", "127.0.0.1:0", "--api-key", "sk-cli-test", "--script"])
            .arg(&script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let printed = banner(&mut child.0);
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
