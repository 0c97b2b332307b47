//! The whole stack under load: many users chatting at once through the
//! fake Nextcloud's login and its Tamebi app, each turn one data tool call
//! on mcp-nextcloud and a streamed answer, against the same answer asked
//! straight of the fake model in the same run; every service's RSS idle,
//! at its peak, and after each of two identical rounds.
//!
//! ```text
//! cargo build --release --bin tamebi
//! cargo run --release -p system --example load_bench
//! BENCH_USERS=100 BENCH_SECONDS=20 BENCH_ROUNDS=2 cargo run --release -p system --example load_bench
//! ```
//!
//! The stack is `target/release/tamebi up --base-port N --data-dir TMP
//! --fresh --fixture TMP/fixture.toml`, the demo fixture with BENCH_USERS
//! more users (each with a notes file of their own); `up` starts every
//! service as its own process, and their pids are found through /proc (the
//! children of `up`, named by their subcommand). The fake model's script is
//! put through its admin endpoint once the stack is up. Exits 1 if any turn
//! failed. See docs/performance.md.

mod common;

use common::{ProcStatus, TempDir, env_or, ms, percentile, tamebi_binary};
use scenario::browser::Browser;
use serde_json::json;
use std::collections::VecDeque;
use std::io::BufRead as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The answer, streamed a word at a time at a real model's pace.
const ANSWER: &str = "Your notes are in Documents: the budget is 120 k€, the kickoff is planned \
    for the second week of April, and the open question is who leads the design review. \
    Ask me to open the file if you want the details of each point.";
/// Milliseconds before each streamed delta of the answer.
const TOKEN_DELAY_MS: u64 = 20;
/// Turns per conversation before a user starts a new one.
const TURNS_PER_CONVERSATION: usize = 5;

const SCRIPT: &str = r#"
# Asked straight of the model (the baseline): the answer, no tools.
[[rules]]
name = "direct"
when = { last_user_contains = "[direct]" }
text = "ANSWER"
fault = { delta_delay_ms = DELAY }

# A question: one data tool call on mcp-nextcloud.
[[rules]]
name = "search"
when = { last_role = "user", tool_available = "files_search" }
tool_calls = [{ name = "files_search", arguments = { name = "notes" } }]

# Its result: the answer.
[[rules]]
name = "answer"
when = { last_role = "tool" }
text = "ANSWER"
fault = { delta_delay_ms = DELAY }
"#;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let users: usize = env_or("BENCH_USERS", 100);
    let seconds: u64 = env_or("BENCH_SECONDS", 20) as u64;
    let rounds: usize = env_or("BENCH_ROUNDS", 2).max(1);
    let binary = tamebi_binary()?;
    let temp = TempDir::new("load-bench")?;
    let fixture = write_fixture(temp.path(), users)?;
    let base_port = free_base_port()?;
    let stack = Up::start(&binary, base_port, temp.path(), &fixture).await?;
    let result = run(&stack, users, seconds, rounds).await;
    stack.stop();
    let errors = result?;
    if errors > 0 {
        eprintln!("load bench: {errors} failed turns");
        drop(temp);
        std::process::exit(1);
    }
    Ok(())
}

async fn run(stack: &Up, users: usize, seconds: u64, rounds: usize) -> anyhow::Result<usize> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(users + 16)
        .build()?;
    let script = fake_model::Script::from_toml(
        &SCRIPT.replace("ANSWER", ANSWER).replace("DELAY", &TOKEN_DELAY_MS.to_string()),
    )?;
    let put = http
        .put(format!("{}/__fake/script", stack.model))
        .header(
            fake_model::admin::TOKEN_HEADER,
            std::fs::read_to_string(stack.data.join(MODEL_ADMIN_TOKEN_FILE))?.trim(),
        )
        .json(&serde_json::to_value(script.source())?)
        .send()
        .await?;
    anyhow::ensure!(put.status().is_success(), "the fake model refused the script: {put:?}");

    let services = stack.services()?;
    println!(
        "load bench: {users} users, {seconds} s a round, {rounds} rounds, the model at {TOKEN_DELAY_MS} ms a token ({} words an answer); services: {}",
        ANSWER.split_whitespace().count(),
        services
            .iter()
            .map(|s| format!("{} (pid {})", s.name, s.pid))
            .collect::<Vec<_>>()
            .join(", ")
    );

    let idle = services.iter().map(|s| s.memory()).collect::<Vec<_>>();
    // Baselines: a bare round trip, and the answer straight from the model.
    let mut health = Vec::new();
    for _ in 0..50 {
        http.get(format!("{}/health", stack.orchestrator)).send().await?;
    }
    for _ in 0..500 {
        let started = Instant::now();
        let response = http.get(format!("{}/health", stack.orchestrator)).send().await?;
        anyhow::ensure!(response.status().is_success(), "/health answered {}", response.status());
        response.bytes().await?;
        health.push(ms(started.elapsed()));
    }
    let baseline_seconds = (seconds / 4).max(3);
    let model_url = format!("{}/v1/chat/completions", stack.model);
    let baseline = {
        let http = http.clone();
        closed_loop(users, baseline_seconds, move |_user, n| {
            let (http, url) = (http.clone(), model_url.clone());
            async move { model_alone(&http, &url, n).await }
        })
    }
    .await;
    anyhow::ensure!(baseline.errors.is_empty(), "the model alone failed: {:?}", baseline.errors);

    // Log every user in, as a browser does.
    let started = Instant::now();
    let mut logins = Vec::new();
    let mut browsers = Vec::new();
    for n in 1..=users {
        let began = Instant::now();
        browsers.push(Arc::new(login(&http, &stack.nextcloud, &uid(n)).await?));
        logins.push(ms(began.elapsed()));
    }
    let login_wall = started.elapsed();
    let browsers = Arc::new(browsers);

    let mut loads = Vec::new();
    let mut cpus = Vec::new();
    let mut db_sizes = Vec::new();
    let mut peaks = Vec::new();
    let mut afters = Vec::new();
    for round in 1..=rounds {
        let sampling = Arc::new(AtomicBool::new(true));
        let sampler = {
            let (services, sampling) = (services.clone(), sampling.clone());
            tokio::task::spawn_blocking(move || {
                let mut peak = vec![0u64; services.len()];
                while sampling.load(Ordering::Relaxed) {
                    for (peak, service) in peak.iter_mut().zip(&services) {
                        *peak = (*peak).max(service.memory().rss_kib);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                peak
            })
        };
        let cpu_before: Vec<f64> = services
            .iter()
            .map(|s| cpu_seconds(s.pid))
            .chain([cpu_seconds(std::process::id())])
            .collect();
        let browsers = browsers.clone();
        let load = closed_loop(users, seconds, move |user, n| {
            let browser = browsers[user].clone();
            let conversation = format!("load-r{round}-u{user}-c{}", n / TURNS_PER_CONVERSATION);
            async move { turn(&browser, &conversation, n).await }
        })
        .await;
        sampling.store(false, Ordering::Relaxed);
        let cpu_after =
            services.iter().map(|s| cpu_seconds(s.pid)).chain([cpu_seconds(std::process::id())]);
        cpus.push(
            cpu_after.zip(&cpu_before).map(|(after, before)| after - before).collect::<Vec<_>>(),
        );
        peaks.push(sampler.await?);
        // Let the services drop what the round held.
        tokio::time::sleep(Duration::from_secs(2)).await;
        afters.push(services.iter().map(|s| s.memory()).collect::<Vec<_>>());
        db_sizes.push(database_sizes(&stack.data.join("orchestrator")));
        loads.push(load);
    }

    // The report.
    println!();
    println!(
        "logins: {users} in {:.1} s, p50 {:.1} ms, p99 {:.1} ms (form post, chat page)",
        login_wall.as_secs_f64(),
        percentile(&logins, 50.0),
        percentile(&logins, 99.0)
    );
    println!(
        "{:<36} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "row",
        "turns",
        "errors",
        "turns/s",
        "first50",
        "first90",
        "first99",
        "whole50",
        "whole90",
        "whole99"
    );
    let health_p50 = percentile(&health, 50.0);
    println!(
        "{:<36} {:>7} {:>6} {:>8} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
        "GET /health (baseline, sequential)",
        health.len(),
        0,
        "-",
        health_p50,
        percentile(&health, 90.0),
        percentile(&health, 99.0),
        health_p50,
        percentile(&health, 90.0),
        percentile(&health, 99.0)
    );
    baseline.row(&format!("model alone ({users} at once, baseline)"));
    for (round, load) in loads.iter().enumerate() {
        load.row(&format!("full stack, round {}", round + 1));
        if round == 0 {
            let first = Load {
                wall: load.wall,
                timings: load.timings.iter().filter(|t| t.n == 0).copied().collect(),
                errors: Vec::new(),
            };
            let rest = Load {
                wall: load.wall,
                timings: load.timings.iter().filter(|t| t.n > 0).copied().collect(),
                errors: Vec::new(),
            };
            first.row("  · each user's first turn");
            rest.row("  · the later turns");
        }
    }
    println!("(milliseconds; first = first text-delta frame, whole = the stream read to its end)");
    for (round, load) in loads.iter().enumerate() {
        println!(
            "round {} × model alone: first text p50 {:.2}, p99 {:.2}; whole turn p50 {:.2}, p99 {:.2}; turns/s {:.2}; full stack − model, p50 whole turn: {:.1} ms",
            round + 1,
            load.first(50.0) / baseline.first(50.0),
            load.first(99.0) / baseline.first(99.0),
            load.whole(50.0) / baseline.whole(50.0),
            load.whole(99.0) / baseline.whole(99.0),
            load.rate() / baseline.rate(),
            load.whole(50.0) - baseline.whole(50.0),
        );
    }

    println!();
    let mut header = format!("{:<20}", "CPU");
    for round in 1..=rounds {
        header.push_str(&format!(
            " {:>12} {:>12}",
            format!("r{round} s"),
            format!("r{round} ms/turn")
        ));
    }
    println!("{header}");
    let names = services.iter().map(|s| s.name.as_str()).chain(["load_bench (client)"]);
    for (index, name) in names.enumerate() {
        let mut line = format!("{name:<20}");
        for (round, load) in loads.iter().enumerate() {
            let cpu = cpus[round][index];
            let turns = load.timings.len().max(1) as f64;
            line.push_str(&format!(" {cpu:>12.2} {:>12.2}", cpu * 1000.0 / turns));
        }
        println!("{line}");
    }
    println!(
        "(CPU seconds, user + system, in each round and per turn; {} CPUs)",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );

    println!();
    let mut header = format!("{:<14} {:>9} {:>9} {:>9}", "RSS MiB", "idle", "peak", "HWM");
    for round in 1..=rounds {
        header.push_str(&format!(" {:>9}", format!("after r{round}")));
    }
    header.push_str(&format!(" {:>12}", "last − r1"));
    println!("{header}");
    let mib = |kib: u64| kib as f64 / 1024.0;
    let mut grew = Vec::new();
    for (index, service) in services.iter().enumerate() {
        let peak = peaks.iter().map(|p| p[index]).max().unwrap_or(0);
        let hwm = afters.last().map(|a| a[index].hwm_kib).unwrap_or(0);
        let mut line = format!(
            "{:<14} {:>9.1} {:>9.1} {:>9.1}",
            service.name,
            mib(idle[index].rss_kib),
            mib(peak),
            mib(hwm)
        );
        for after in &afters {
            line.push_str(&format!(" {:>9.1}", mib(after[index].rss_kib)));
        }
        let first = afters[0][index].rss_kib as f64;
        let last = afters[afters.len() - 1][index].rss_kib as f64;
        let delta = (last - first) / 1024.0;
        line.push_str(&format!(" {:>+8.1} MiB", delta));
        // A small margin: allocator noise, a settled cache. The fake model
        // keeps its last 1000 requests by design (docs/fake-model.md).
        if service.name == "fake-model" {
            line.push_str("  (keeps its last 1000 requests)");
        } else if rounds > 1 && delta > 2.0 && (last - first) / first > 0.05 {
            grew.push(service.name.clone());
            line.push_str("  GREW");
        }
        println!("{line}");
    }
    println!(
        "(idle: once up, before anything was asked; peak: VmRSS sampled every 100 ms during the rounds; HWM: VmHWM at the end; after: 2 s after a round ended)"
    );
    for (round, after) in afters.iter().enumerate() {
        let parts = services
            .iter()
            .zip(after)
            .map(|(service, m)| {
                format!(
                    "{} anon {:.1} file+shm {:.1} threads {}",
                    service.name,
                    mib(m.anon_kib),
                    mib(m.file_kib),
                    m.threads
                )
            })
            .collect::<Vec<_>>();
        println!("after r{}: {}", round + 1, parts.join("; "));
    }
    for (round, sizes) in db_sizes.iter().enumerate() {
        println!("after r{}: orchestrator databases {sizes}", round + 1);
    }
    if grew.is_empty() && rounds > 1 {
        println!(
            "no growth: each service's RSS after the last round is within 2 MiB or 5 % of after round 1"
        );
    } else if !grew.is_empty() {
        println!("RSS grew between rounds: {}", grew.join(", "));
    }

    let errors: usize = loads.iter().map(|load| load.errors.len()).sum();
    for (round, load) in loads.iter().enumerate() {
        let mut kinds: Vec<(&String, usize)> = Vec::new();
        for error in &load.errors {
            match kinds.iter_mut().find(|(kind, _)| *kind == error) {
                Some((_, count)) => *count += 1,
                None => kinds.push((error, 1)),
            }
        }
        for (kind, count) in kinds.iter().take(10) {
            println!("round {} error ×{count}: {kind}", round + 1);
        }
    }
    Ok(errors)
}

/// The turns of one closed loop: `users` clients, each posting its next
/// turn as soon as the last ended, for `seconds`.
struct Load {
    wall: Duration,
    timings: Vec<Timing>,
    errors: Vec<String>,
}

#[derive(Clone, Copy)]
struct Timing {
    /// The user's turn number in the round (0: its first).
    n: usize,
    first: f64,
    whole: f64,
}

impl Load {
    fn first(&self, at: f64) -> f64 {
        percentile(&self.timings.iter().map(|t| t.first).collect::<Vec<_>>(), at)
    }

    fn whole(&self, at: f64) -> f64 {
        percentile(&self.timings.iter().map(|t| t.whole).collect::<Vec<_>>(), at)
    }

    fn rate(&self) -> f64 {
        self.timings.len() as f64 / self.wall.as_secs_f64()
    }

    fn row(&self, name: &str) {
        println!(
            "{name:<36} {:>7} {:>6} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
            self.timings.len() + self.errors.len(),
            self.errors.len(),
            self.rate(),
            self.first(50.0),
            self.first(90.0),
            self.first(99.0),
            self.whole(50.0),
            self.whole(90.0),
            self.whole(99.0)
        );
    }
}

async fn closed_loop<F, R>(users: usize, seconds: u64, make: F) -> Load
where
    F: Fn(usize, usize) -> R + Send + Sync + 'static,
    R: std::future::Future<Output = Result<Timing, String>> + Send + 'static,
{
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let make = Arc::new(make);
    let clients: Vec<_> = (0..users)
        .map(|user| {
            let make = make.clone();
            tokio::spawn(async move {
                let mut results = Vec::new();
                let mut n = 0;
                while Instant::now() < deadline {
                    results.push(make(user, n).await.map(|timing| Timing { n, ..timing }));
                    n += 1;
                }
                results
            })
        })
        .collect();
    let mut load = Load { wall: Duration::ZERO, timings: Vec::new(), errors: Vec::new() };
    for client in clients {
        match client.await {
            Ok(results) => {
                for result in results {
                    match result {
                        Ok(timing) => load.timings.push(timing),
                        Err(error) => load.errors.push(error),
                    }
                }
            }
            Err(error) => load.errors.push(format!("a client panicked: {error}")),
        }
    }
    load.wall = started.elapsed();
    load
}

async fn login(http: &reqwest::Client, base: &str, uid: &str) -> anyhow::Result<Browser> {
    Browser::login(http, base, uid, &password(uid))
        .await
        .map_err(|error| anyhow::anyhow!("login of {uid}: {error}"))
}

/// One conversation turn through the app: post a question, read the
/// stream to its end; any non-200, error frame, failed tool call or broken
/// stream is an error.
async fn turn(browser: &Browser, conversation: &str, n: usize) -> Result<Timing, String> {
    let body = json!({
        "id": conversation, "trigger": "submit-message",
        "message": {"id": format!("u{n}"), "role": "user",
            "parts": [{"type": "text", "text": format!("Where are my notes? ({n})")}]},
    });
    let started = Instant::now();
    let response = browser
        .request(reqwest::Method::POST, "/apps/tamebi/api/chat")
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| format!("the chat post failed: {error}"))?;
    let status = response.status();
    let seen = read_stream(response, started, "\"type\":\"text-delta\"").await;
    let (timing, seen) = seen?;
    if status != 200 {
        return Err(format!("status {status}: {}", clip(&seen)));
    }
    for bad in ["\"type\":\"error\"", "\"type\":\"tool-output-error\""] {
        if seen.contains(bad) {
            return Err(format!("an error frame: {}", clip(&seen)));
        }
    }
    if seen.matches("\"type\":\"tool-output-available\"").count() != 1 {
        return Err(format!("not one tool output: {}", clip(&seen)));
    }
    if !seen.trim_end().ends_with("data: [DONE]") {
        return Err(format!("the stream ended without [DONE]: {}", clip(&seen)));
    }
    Ok(timing)
}

/// The same answer, streamed straight from the fake model.
async fn model_alone(http: &reqwest::Client, url: &str, n: usize) -> Result<Timing, String> {
    let body = json!({
        "model": "fake-model", "stream": true,
        "messages": [{"role": "system", "content": "bench"},
            {"role": "user", "content": format!("[direct] Where are my notes? ({n})")}],
    });
    let started = Instant::now();
    let response =
        http.post(url).json(&body).send().await.map_err(|error| format!("post: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("the model answered {}", response.status()));
    }
    let (timing, seen) = read_stream(response, started, "\"content\":\"Your").await?;
    if !seen.trim_end().ends_with("data: [DONE]") {
        return Err("the model's stream ended without [DONE]".to_string());
    }
    Ok(timing)
}

/// Reads a stream to its end; `first` is when `marker` first arrived.
async fn read_stream(
    response: reqwest::Response,
    started: Instant,
    marker: &str,
) -> Result<(Timing, String), String> {
    let timed = scenario::sse::read_timed(response, started, marker)
        .await
        .map_err(|error| format!("the stream broke: {error}"))?;
    let Some(first) = timed.first else {
        return Err(format!("no text in the answer: {}", clip(&timed.text)));
    };
    Ok((Timing { n: 0, first: ms(first), whole: ms(timed.whole) }, timed.text))
}

fn clip(text: &str) -> String {
    let mut clipped: String = text.chars().take(300).collect();
    if clipped.len() < text.len() {
        clipped.push('…');
    }
    clipped.replace('\n', " ")
}

fn uid(n: usize) -> String {
    format!("load{n:04}")
}

fn password(uid: &str) -> String {
    format!("{uid}-bench-password")
}

/// The demo fixture with `users` more users, each owning a notes file;
/// its `source` paths made absolute, since the copy lives elsewhere.
fn write_fixture(dir: &Path, users: usize) -> anyhow::Result<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures");
    let fixtures = std::fs::canonicalize(&fixtures)?;
    let demo = std::fs::read_to_string(fixtures.join("demo.toml"))?;
    let mut text = demo.replace("source = \"", &format!("source = \"{}/", fixtures.display()));
    for n in 1..=users {
        let uid = uid(n);
        text.push_str(&format!(
            "\n[[users]]\nuid = \"{uid}\"\ndisplay_name = \"Load User {n}\"\npassword = \"{}\"\n\
             groups = [\"staff\"]\nlanguage = \"en\"\ntimezone = \"UTC\"\n\n\
             [[files]]\nowner = \"{uid}\"\npath = \"Documents/notes-{uid}.md\"\n\
             content = \"# Notes\\n\\n## Budget\\n\\nThe budget is 120 k€.\\n\"\n",
            password(&uid)
        ));
    }
    let path = dir.join("fixture.toml");
    std::fs::write(&path, text)?;
    Ok(path)
}

/// A base port whose whole layout (N to N+30) is free.
fn free_base_port() -> anyhow::Result<u16> {
    let offsets = [0u16, 3, 10, 20, 21, 22, 30];
    let seed = std::process::id() as u16;
    for attempt in 0..200u16 {
        let base = 20000 + (seed.wrapping_add(attempt.wrapping_mul(97)) % 400) * 100;
        if offsets.iter().all(|o| std::net::TcpListener::bind(("127.0.0.1", base + o)).is_ok()) {
            return Ok(base);
        }
    }
    anyhow::bail!("no free port layout found")
}

/// Where `tamebi up` keeps the fake model's admin token (mode 0600; `up.rs`
/// `MODEL_ADMIN_TOKEN_FILE`).
const MODEL_ADMIN_TOKEN_FILE: &str = "fake-model-admin-token";

/// The `tamebi up` child (every service its own process, so that each
/// RSS is its own; not the in-process `scenario::harness::Stack`), its
/// output drained (the last lines kept for errors).
struct Up {
    up: std::process::Child,
    log: Arc<Mutex<VecDeque<String>>>,
    nextcloud: String,
    model: String,
    orchestrator: String,
    data: PathBuf,
}

#[derive(Clone)]
struct Service {
    name: String,
    pid: u32,
}

/// The size of each file in `dir`, in MiB.
fn database_sizes(dir: &Path) -> String {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|entry| {
            Some((entry.file_name().to_string_lossy().into_owned(), entry.metadata().ok()?.len()))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|(name, size)| format!("{name} {:.1}", *size as f64 / 1048576.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// CPU seconds (user + system) the process has used so far.
fn cpu_seconds(pid: u32) -> f64 {
    let ticks = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let rest = stat.rsplit_once(')')?.1.split_whitespace().collect::<Vec<_>>();
            // After the comm: state is field 3, utime 14 and stime 15.
            Some(rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?)
        })
        .unwrap_or(0);
    // SAFETY: sysconf reads a constant. A benchmark, not the product: the
    // workspace denies unsafe code elsewhere.
    #[allow(unsafe_code)]
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    ticks as f64 / per_second as f64
}

#[derive(Clone, Copy, Default)]
struct Memory {
    rss_kib: u64,
    hwm_kib: u64,
    anon_kib: u64,
    file_kib: u64,
    threads: u64,
}

impl Service {
    fn memory(&self) -> Memory {
        let status = ProcStatus::of(self.pid);
        let field = |name: &str| status.field(name);
        Memory {
            rss_kib: field("VmRSS:").unwrap_or(0),
            hwm_kib: field("VmHWM:").unwrap_or(0),
            anon_kib: field("RssAnon:").unwrap_or(0),
            file_kib: field("RssFile:").unwrap_or(0) + field("RssShmem:").unwrap_or(0),
            threads: field("Threads:").unwrap_or(0),
        }
    }
}

impl Up {
    async fn start(binary: &Path, base: u16, temp: &Path, fixture: &Path) -> anyhow::Result<Up> {
        let mut command = std::process::Command::new(binary);
        command
            .arg("up")
            .args(["--base-port", &base.to_string(), "--fresh", "--data-dir"])
            .arg(temp.join("data"))
            .arg("--fixture")
            .arg(fixture)
            .env("RUST_LOG", "warn")
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        // SAFETY: prctl is async-signal-safe; `up` (and through it every
        // service) stops if this bench dies without stopping it. A
        // benchmark's child, like `up`'s own: allowed here.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut up = command.spawn()?;
        let log = Arc::new(Mutex::new(VecDeque::new()));
        let (ready, is_ready) = std::sync::mpsc::channel();
        for stream in [
            Box::new(up.stdout.take().expect("piped")) as Box<dyn std::io::Read + Send>,
            Box::new(up.stderr.take().expect("piped")),
        ] {
            let (log, ready) = (log.clone(), ready.clone());
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stream).lines().map_while(Result::ok) {
                    if line.starts_with("Tamebi is up.") {
                        let _ = ready.send(());
                    }
                    let mut log = log.lock().expect("log lock");
                    if log.len() == 40 {
                        log.pop_front();
                    }
                    log.push_back(line);
                }
            });
        }
        let stack = Up {
            up,
            log,
            nextcloud: format!("http://127.0.0.1:{base}"),
            model: format!("http://127.0.0.1:{}", base + 10),
            orchestrator: format!("http://127.0.0.1:{}", base + 20),
            data: temp.join("data"),
        };
        let started = Instant::now();
        let deadline = started + Duration::from_secs(180);
        loop {
            if is_ready.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
            let exited = std::fs::metadata(format!("/proc/{}", stack.up.id())).is_err()
                || std::fs::read_to_string(format!("/proc/{}/stat", stack.up.id()))
                    .is_ok_and(|stat| stat.contains(") Z "));
            if exited || Instant::now() > deadline {
                let lines = stack.last_lines();
                stack.stop();
                anyhow::bail!("tamebi up did not come up; its last lines:\n{lines}");
            }
        }
        println!(
            "stack up in {:.1} s (tamebi up --base-port {base})",
            started.elapsed().as_secs_f64()
        );
        Ok(stack)
    }

    fn last_lines(&self) -> String {
        self.log.lock().expect("log lock").iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// The services: the children of `up`, named by their subcommand.
    fn services(&self) -> anyhow::Result<Vec<Service>> {
        let mut services = Vec::new();
        for entry in std::fs::read_dir("/proc")? {
            let Some(pid) = entry?.file_name().to_str().and_then(|name| name.parse::<u32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // pid (comm) state ppid …: comm may hold spaces, so split after ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok());
            if ppid != Some(self.up.id()) {
                continue;
            }
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            let name = cmdline
                .split(|byte| *byte == 0)
                .nth(1)
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .unwrap_or_default();
            services.push(Service { name, pid });
        }
        let order = ["fake-nextcloud", "fake-model", "orchestrator", "mcp-nextcloud", "mcp-mail"];
        services.sort_by_key(|s| order.iter().position(|o| *o == s.name).unwrap_or(order.len()));
        anyhow::ensure!(
            services.len() == order.len(),
            "expected the five services as children of up, found {:?}",
            services.iter().map(|s| &s.name).collect::<Vec<_>>()
        );
        Ok(services)
    }

    /// SIGTERM to `up`, which stops every service; SIGKILL after 15 s.
    fn stop(mut self) {
        let pid = libc::pid_t::try_from(self.up.id()).expect("a pid fits pid_t");
        // SAFETY: kill has no memory effects; `up` is our child, not reaped.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.up.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.up.kill();
        let _ = self.up.wait();
    }
}
