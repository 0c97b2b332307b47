//! `tamebi up` and `tamebi ask` as a user runs them: real processes, real
//! ports. The whole stack comes up, answers a question with a citation and
//! stops on SIGTERM leaving no child behind; a port in use is refused with
//! exit code 2; the data directory and its secret survive restarts unless
//! `--fresh`.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TAMEBI: &str = env!("CARGO_BIN_EXE_tamebi");
/// The offsets `--base-port` uses (docs/up.md).
const PORT_OFFSETS: [u16; 7] = [0, 3, 10, 20, 21, 22, 30];
const UP_TIMEOUT: Duration = Duration::from_secs(90);
const QUESTION: &str = "Quel est le budget prévisionnel d'Apollo ?";

static NEXT_CANDIDATE: AtomicU16 = AtomicU16::new(0);

/// A base port whose whole layout is free right now, below Linux's
/// ephemeral range (32768 and up), where outgoing connections would race
/// the servers for it.
fn free_base_port() -> u16 {
    let start = (std::process::id() % 500) as u16 * 40;
    for _ in 0..200 {
        let step = NEXT_CANDIDATE.fetch_add(1, Ordering::SeqCst);
        let base = 12_000 + (start + step * 40) % 20_000;
        let free = PORT_OFFSETS
            .iter()
            .all(|offset| std::net::TcpListener::bind(("127.0.0.1", base + offset)).is_ok());
        if free {
            return base;
        }
    }
    panic!("no free range of ports for tamebi up");
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tamebi-up-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A running `tamebi up` and everything it printed so far.
struct Up {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    base_url: String,
}

impl Up {
    /// Starts `tamebi up` and waits for its "Open …" line.
    fn start(base_port: u16, data_dir: &Path, extra: &[&str]) -> Up {
        let mut child = Command::new(TAMEBI)
            .args(["up", "--base-port", &base_port.to_string(), "--data-dir"])
            .arg(data_dir)
            // Tests never run npm; the page's own tests are in fake-nextcloud.
            .arg("--no-web-build")
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (sender, lines) = mpsc::channel();
        for stream in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let sender = sender.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let base_url = format!("http://127.0.0.1:{base_port}");
        let mut up = Up { child, lines, seen: Vec::new(), base_url };
        let open = format!("Open {}/apps/tamebi/", up.base_url);
        let deadline = Instant::now() + UP_TIMEOUT;
        while !up.seen.iter().any(|line| line.starts_with(&open)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match up.lines.recv_timeout(left) {
                Ok(line) => up.seen.push(line),
                Err(_) => panic!("tamebi up did not say {open:?}:\n{}", up.seen.join("\n")),
            }
        }
        up
    }

    /// The pids of its children (from /proc: every process whose parent it is).
    fn child_pids(&self) -> Vec<u32> {
        let parent = self.child.id();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
            // The fields after the command name, which is in parentheses.
            let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
            let ppid = after.split_whitespace().nth(1).and_then(|field| field.parse::<u32>().ok());
            if ppid == Some(parent) {
                pids.push(pid);
            }
        }
        pids
    }

    /// SIGTERM, then its exit status within 10 s.
    fn terminate(mut self) -> (std::process::ExitStatus, Vec<String>) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill has no memory effects; the pid is our unreaped child.
        // A test signalling its own child: allowed here, denied elsewhere.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, libc::SIGTERM)
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                self.seen.extend(self.lines.try_iter());
                return (status, self.seen);
            }
            assert!(Instant::now() < deadline, "tamebi up did not exit within 10 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn ask(base_url: &str) -> (bool, String) {
    let output = Command::new(TAMEBI)
        .args(["ask", "--url", base_url, "--user", "alice", "--password"])
        .args(["alice-demo-password", QUESTION])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

fn secret_in(data_dir: &Path) -> String {
    std::fs::read_to_string(data_dir.join("shared-secret")).unwrap()
}

#[test]
fn up_answers_a_question_with_a_citation_and_stops_on_sigterm() {
    let dir = temp_dir("answers");
    let up = Up::start(free_base_port(), &dir.join("data"), &[]);
    let children = up.child_pids();
    assert_eq!(children.len(), 5, "nextcloud, mcp-nextcloud, mcp-mail, fake-model, orchestrator");

    // The index may still be cold: the demo then says it is being built.
    let mut answer = String::new();
    for _ in 0..30 {
        let (success, text) = ask(&up.base_url);
        assert!(success, "{text}");
        answer = text;
        if answer.contains("— ") && answer.contains("Documents/") {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(answer.contains("→ files_grep {\"query\":\"budget prévisionnel apollo\"}"), "{answer}");
    assert!(answer.contains("← ok"), "{answer}");
    assert!(answer.contains("Documents/notes-reunion.md"), "a citation: {answer}");
    assert!(answer.contains("--conversation c-"), "{answer}");

    let (status, lines) = up.terminate();
    assert!(status.success(), "{status}:\n{}", lines.join("\n"));
    let deadline = Instant::now() + Duration::from_secs(2);
    while children.iter().any(|pid| Path::new(&format!("/proc/{pid}")).exists()) {
        assert!(Instant::now() < deadline, "a child outlived tamebi up: {children:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(lines.iter().any(|line| line.starts_with("[mcp-nextcloud] ")), "prefixed lines");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_port_in_use_exits_2_naming_the_port_and_the_flag() {
    let dir = temp_dir("port");
    // Hold the port from the moment the range is chosen: a range found free
    // can be taken by someone else before it is bound again.
    let (base, _taken) = (0..20)
        .find_map(|_| {
            let base = free_base_port();
            std::net::TcpListener::bind(("127.0.0.1", base + 21)).ok().map(|taken| (base, taken))
        })
        .expect("a free range whose mcp-nextcloud port can be held");
    let output = Command::new(TAMEBI)
        .args(["up", "--base-port", &base.to_string(), "--data-dir"])
        .arg(dir.join("data"))
        .output()
        .unwrap();
    let stderr = common::stderr_of_exit(&output, 2);
    assert!(stderr.contains(&format!("port {} (mcp-nextcloud)", base + 21)), "{stderr}");
    assert!(stderr.contains("--base-port"), "{stderr}");
    assert!(!dir.join("data").exists(), "nothing was made before the check");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_secret_survives_a_restart_and_fresh_starts_over() {
    let dir = temp_dir("fresh");
    let data_dir = dir.join("data");
    let base = free_base_port();
    let (status, lines) = Up::start(base, &data_dir, &[]).terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    let first = secret_in(&data_dir);
    assert!(first.trim().len() >= 32, "{first:?}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(data_dir.join("shared-secret")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    // The data files are no other account's to read (docs/reliability.md).
    let mode_of = |path: &Path| {
        let metadata =
            std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        format!("{:o}", std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o777)
    };
    assert_eq!(mode_of(&data_dir), "700", "the data directory");
    assert_eq!(mode_of(&data_dir.join("orchestrator")), "700", "the orchestrator's");
    for database in
        ["index.db", "orchestrator/chat.db", "orchestrator/memory.db", "orchestrator/audit.db"]
    {
        assert_eq!(mode_of(&data_dir.join(database)), "600", "{database}");
    }
    // So are the fakes' admin tokens: only this account may steer the demo.
    for token in ["fake-nextcloud-admin-token", "fake-model-admin-token"] {
        assert_eq!(mode_of(&data_dir.join(token)), "600", "{token}");
        let text = std::fs::read_to_string(data_dir.join(token)).unwrap();
        assert_eq!(text.trim().len(), 64, "{token}: 32 random bytes, hex");
    }
    std::fs::write(data_dir.join("marker"), "old").unwrap();

    let (status, lines) = Up::start(base, &data_dir, &[]).terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    assert_eq!(secret_in(&data_dir), first, "reused");
    assert!(data_dir.join("marker").exists(), "kept");
    assert!(data_dir.join("orchestrator").is_dir(), "{}", lines.join("\n"));

    let (status, lines) = Up::start(base, &data_dir, &["--fresh"]).terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    assert_ne!(secret_in(&data_dir), first, "a new secret");
    assert!(!data_dir.join("marker").exists(), "deleted");

    // A directory that is not ours is left alone.
    let foreign = dir.join("foreign");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "precious").unwrap();
    let output = Command::new(TAMEBI)
        .args(["up", "--fresh", "--base-port", &base.to_string(), "--data-dir"])
        .arg(&foreign)
        .output()
        .unwrap();
    let stderr = common::stderr_of_exit(&output, 1);
    assert!(stderr.contains("does not look like Tamebi's data directory"), "{stderr}");
    assert!(foreign.join("thesis.tex").exists());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_child_that_dies_stops_the_rest_and_up_fails_with_its_last_lines() {
    let dir = temp_dir("dies");
    let mut up = Up::start(free_base_port(), &dir.join("data"), &[]);
    let children = up.child_pids();
    let orchestrator = children
        .iter()
        .copied()
        .find(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmdline.split(|byte| *byte == 0).nth(1) == Some(b"orchestrator".as_slice())
        })
        .expect("an orchestrator child");
    // SAFETY: kill has no memory effects; the pid is a live child of `up`.
    // A test signalling a child: allowed here, denied elsewhere.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(libc::pid_t::try_from(orchestrator).unwrap(), libc::SIGKILL)
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = up.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "tamebi up outlived its orchestrator");
        std::thread::sleep(Duration::from_millis(50));
    };
    up.seen.extend(up.lines.try_iter());
    let seen = up.seen.join("\n");
    assert_eq!(status.code(), Some(1), "{seen}");
    assert!(seen.contains("orchestrator stopped on its own"), "{seen}");
    assert!(seen.contains("  Orchestrator is running."), "its last lines: {seen}");
    for pid in children {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(Instant::now() < deadline, "child {pid} outlived tamebi up");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The fake model's script replaced at run time, through its admin endpoint.
/// Scripts the fake model `up` started, with the admin token `up` wrote to
/// its data directory (`up.rs` `MODEL_ADMIN_TOKEN_FILE`).
fn script_model(model_url: &str, data_dir: &Path, script: serde_json::Value) {
    let token = std::fs::read_to_string(data_dir.join("fake-model-admin-token")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        // Without the token the demo cannot be steered (issue 14).
        let anonymous = reqwest::Client::new()
            .put(format!("{model_url}/__fake/script"))
            .json(&script)
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status(), 401);
        let response = reqwest::Client::new()
            .put(format!("{model_url}/__fake/script"))
            .header(fake_model::admin::TOKEN_HEADER, token.trim())
            .header("Content-Type", "application/json")
            .body(script.to_string())
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{}", response.text().await.unwrap());
    });
}

#[test]
fn ask_answers_an_approval_request_by_flag() {
    let dir = temp_dir("approval");
    let base = free_base_port();
    let up = Up::start(base, &dir.join("data"), &[]);
    script_model(
        &format!("http://127.0.0.1:{}", base + 10),
        &dir.join("data"),
        serde_json::json!({"rules": [
            {"name": "compose", "when": {"last_role": "user", "last_user_contains": "write to bob"},
             "tool_calls": [{"name": "mail_compose", "arguments": {
                 "to": ["bob@example.com"], "subject": "Stand-up", "body": "At 10:00."}}]},
            {"name": "after", "when": {"last_role": "tool"}, "text": "Done."},
        ]}),
    );
    let run = |decision: &str| {
        let output = Command::new(TAMEBI)
            .args(["ask", "--url", &up.base_url, decision, "Please write to bob"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        (output.status.success(), text)
    };
    let (success, approved) = run("--approve");
    assert!(success, "{approved}");
    assert!(approved.contains("→ mail_compose {"), "{approved}");
    assert!(approved.contains("? waits for your approval: mail_compose"), "{approved}");
    assert!(approved.contains("✓ approved\n← ok"), "{approved}");
    assert!(approved.contains("Done."), "{approved}");
    let (success, denied) = run("--deny");
    assert!(success, "{denied}");
    assert!(denied.contains("✗ denied\n← denied"), "{denied}");
    let wrong = Command::new(TAMEBI)
        .args(["ask", "--url", &up.base_url, "--password", "not-it", "hello"])
        .output()
        .unwrap();
    let stderr = common::stderr_of_exit(&wrong, 1);
    assert!(stderr.contains("refused the login of alice"), "{stderr}");
    assert!(stderr.contains("check --user and --password"), "{stderr}");
    let (status, lines) = up.terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_model_script_that_does_not_load_stops_up_before_anything_starts() {
    let dir = temp_dir("bad-script");
    let script = common::script_file(
        &dir,
        "[[rules]]\nname = \"typo\"\nwhen = { last_user_contain = \"x\" }\ntext = \"y\"\n",
    );
    let output = Command::new(TAMEBI)
        .args(["up", "--no-web-build", "--base-port", &free_base_port().to_string(), "--data-dir"])
        .arg(dir.join("data"))
        .arg("--model-script")
        .arg(&script)
        .output()
        .unwrap();
    let stderr = common::stderr_of_exit(&output, 1);
    assert!(stderr.contains("cannot load the model script"), "{stderr}");
    assert!(!dir.join("data").exists(), "nothing was made");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_banner_says_whether_the_chat_page_is_built() {
    let dir = temp_dir("web");
    let built = dir.join("built");
    std::fs::create_dir_all(&built).unwrap();
    std::fs::write(built.join("tamebi-main.mjs"), "export {};\n").unwrap();
    let base = free_base_port();
    let data_dir = dir.join("data");
    let (status, lines) =
        Up::start(base, &data_dir, &["--web-dir", built.to_str().unwrap()]).terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    let open = format!("Open http://127.0.0.1:{base}/apps/tamebi/ (the chat page).");
    assert!(lines.contains(&open), "{}", lines.join("\n"));

    let absent = dir.join("absent");
    let (status, lines) =
        Up::start(base, &data_dir, &["--web-dir", absent.to_str().unwrap()]).terminate();
    assert!(status.success(), "{}", lines.join("\n"));
    let not_built = format!(
        "Open http://127.0.0.1:{base}/apps/tamebi/ (the chat page is not built: run npm --prefix web ci && npm --prefix web run build)."
    );
    assert!(lines.contains(&not_built), "{}", lines.join("\n"));
    let _ = std::fs::remove_dir_all(dir);
}
