//! What the orchestrator costs on top of its model: time to first token and
//! per-step overhead through the signed chat API, against the fake model's
//! own time measured in the same run; idle and loaded RSS of the
//! orchestrator process; 100 conversations streaming at once.
//!
//! ```text
//! cargo build --release --bin tamebi
//! cargo run --release -p system --example orchestrator_bench
//! BENCH_REQUESTS=500 BENCH_CONCURRENT=100 cargo run --release -p system --example orchestrator_bench
//! ```
//!
//! The fake model runs in this process; the orchestrator runs as its own
//! process (`target/release/tamebi orchestrator`, no MCP server, fresh data
//! directory) so its RSS is its own. See docs/benchmarks.md.

mod common;
#[path = "../tests/common/orchestrator_process.rs"]
mod orchestrator_process;

use common::{ProcStatus, TempDir, env_or, ms, percentile, tamebi_binary};
use orchestrator_process::{Flags, OrchestratorProcess};
use scenario::harness::{Service, Stack};
use serde_json::json;
use std::time::{Duration, Instant};

const SECRET: &str = "orchestrator-bench-secret-0123456789abcdef";

const SCRIPT: &str = r#"
[[rules]]
name = "look up"
when = { last_role = "user", last_user_contains = "steps" }
tool_calls = [{ name = "memory_search", arguments = { query = "tea" } }]

[[rules]]
name = "look again"
when = { last_role = "tool", turn = 1 }
tool_calls = [{ name = "memory_search", arguments = { query = "coffee" } }]

[[rules]]
name = "answer"
when = { last_role = "tool" }
text = "Nothing remembered about tea or coffee yet, so I cannot say which you prefer."

[[rules]]
name = "hello"
when = { last_role = "user" }
text = "Hello! How can I help you with your files, calendar, contacts or Deck today?"
"#;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let requests: usize = env_or("BENCH_REQUESTS", 200);
    let concurrent: usize = env_or("BENCH_CONCURRENT", 100);
    // Only the fake model from the harness (beside the fake Nextcloud it
    // always runs, idle here): the orchestrator is a process of its own.
    let stack = Stack::builder()
        .only(&[Service::Model])
        .model_script(SCRIPT)
        .start()
        .await
        .map_err(anyhow::Error::msg)?;
    let model = stack.model();
    let orchestrator = Process::start(&model.api_base()).await?;
    let http = reqwest::Client::new();
    let idle_rss = orchestrator.rss_kib();

    // Warm up both paths.
    for n in 0..20 {
        model_alone(&http, &model.api_base(), "hello").await?;
        chat(&http, &orchestrator.url, &format!("warm-{n}"), "hello").await?;
    }

    let mut alone = Vec::new();
    let mut calls = Vec::new();
    let mut through = Vec::new();
    for n in 0..requests {
        alone.push(model_alone(&http, &model.api_base(), "hello").await?);
        calls.push(model_alone(&http, &model.api_base(), "three steps").await?);
        through.push(chat(&http, &orchestrator.url, &format!("one-{n}"), "hello").await?);
    }
    let mut steps = Vec::new();
    for n in 0..requests {
        steps.push(chat(&http, &orchestrator.url, &format!("three-{n}"), "three steps").await?);
    }
    anyhow::ensure!(
        steps.iter().all(|t| t.tool_outputs == 2),
        "a three-step answer did not make its two tool calls"
    );

    println!("orchestrator bench: {requests} requests per row, sequential");
    println!("{:<44} {:>9} {:>9} {:>9}", "row", "p50 ms", "p99 ms", "× model");
    let model_ttft = percentile(&alone.iter().map(|t| t.first).collect::<Vec<_>>(), 50.0);
    let model_total = percentile(&alone.iter().map(|t| t.total).collect::<Vec<_>>(), 50.0);
    row("fake model alone: first token", &alone, |t| t.first, model_ttft);
    row("fake model alone: whole answer", &alone, |t| t.total, model_total);
    let call_total = percentile(&calls.iter().map(|t| t.total).collect::<Vec<_>>(), 50.0);
    row("fake model alone: a tool-call answer", &calls, |t| t.total, call_total);
    row("through the orchestrator: first token", &through, |t| t.first, model_ttft);
    row("through the orchestrator: whole answer", &through, |t| t.total, model_total);
    row(
        "3 steps (2 tool calls): whole answer",
        &steps,
        |t| t.total,
        model_total + 2.0 * call_total,
    );
    let one = percentile(&through.iter().map(|t| t.total).collect::<Vec<_>>(), 50.0);
    let three = percentile(&steps.iter().map(|t| t.total).collect::<Vec<_>>(), 50.0);
    println!(
        "orchestrator overhead (p50): {:.2} ms per request (signature, stores, prompt, stream), {:.2} ms per further step (a memory_search call, audit, stores)",
        one - model_total,
        (three - one) / 2.0 - call_total
    );

    // Many at once: the model streams slowly, like a real one; the same
    // load straight to the model is the baseline.
    model.set_faults(fake_model::Faults { delta_delay_ms: Some(20), ..Default::default() });
    println!("{concurrent} concurrent streaming conversations, the model at 20 ms a token:");
    let base = model.api_base();
    let (_, alone) = concurrently(concurrent, &orchestrator, |n| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let _ = n;
            model_alone(&http, &base, "hello").await
        }
    })
    .await;
    let (peak, through) = concurrently(concurrent, &orchestrator, |n| {
        let (http, url) = (http.clone(), orchestrator.url.clone());
        async move { chat(&http, &url, &format!("many-{n}"), "hello").await }
    })
    .await;
    report_concurrent("fake model alone", &alone, None);
    report_concurrent("through the orchestrator", &through, Some(&alone));
    model.set_faults(fake_model::Faults::default());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = orchestrator.rss_kib();
    println!(
        "orchestrator RSS: idle {} MiB, peak during the concurrent run {} MiB, after {} MiB",
        idle_rss / 1024,
        peak / 1024,
        after / 1024
    );
    drop(orchestrator);
    stack.shutdown().await;
    Ok(())
}

struct Concurrent {
    wall_ms: f64,
    errors: usize,
    timings: Vec<Timing>,
}

/// Runs `count` requests at once; returns the orchestrator's peak RSS
/// sampled meanwhile, and the results.
async fn concurrently<F, R>(count: usize, orchestrator: &Process, make: F) -> (u64, Concurrent)
where
    F: Fn(usize) -> R,
    R: std::future::Future<Output = anyhow::Result<Timing>> + Send + 'static,
{
    let started = Instant::now();
    let tasks: Vec<_> = (0..count).map(|n| tokio::spawn(make(n))).collect();
    let mut peak = 0;
    let mut results = Vec::new();
    for task in tasks {
        peak = peak.max(orchestrator.rss_kib());
        results.push(task.await.map_err(anyhow::Error::from).and_then(|r| r));
    }
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let errors = results.iter().filter(|r| r.is_err()).count();
    let timings = results.into_iter().filter_map(Result::ok).collect();
    (peak, Concurrent { wall_ms, errors, timings })
}

fn report_concurrent(name: &str, run: &Concurrent, baseline: Option<&Concurrent>) {
    let pick = |run: &Concurrent, f: fn(&Timing) -> f64, at| {
        percentile(&run.timings.iter().map(f).collect::<Vec<_>>(), at)
    };
    let first = pick(run, |t| t.first, 50.0);
    let total = pick(run, |t| t.total, 50.0);
    let ratio = baseline
        .map(|b| {
            format!(
                " (× {:.2} first token, × {:.2} whole answer)",
                first / pick(b, |t| t.first, 50.0),
                total / pick(b, |t| t.total, 50.0)
            )
        })
        .unwrap_or_default();
    println!(
        "  {name:<26} wall {:.0} ms, errors {}, first token p50 {first:.1} ms p99 {:.1} ms, whole answer p50 {total:.0} ms p99 {:.0} ms{ratio}",
        run.wall_ms,
        run.errors,
        pick(run, |t| t.first, 99.0),
        pick(run, |t| t.total, 99.0),
    );
}

#[derive(Clone, Copy)]
struct Timing {
    first: f64,
    total: f64,
    tool_outputs: usize,
}

fn row(name: &str, timings: &[Timing], pick: impl Fn(&Timing) -> f64, baseline: f64) {
    let values: Vec<f64> = timings.iter().map(pick).collect();
    let p50 = percentile(&values, 50.0);
    println!("{name:<44} {p50:>9.2} {:>9.2} {:>9.2}", percentile(&values, 99.0), p50 / baseline);
}

/// One streamed request straight to the fake model.
async fn model_alone(http: &reqwest::Client, base: &str, text: &str) -> anyhow::Result<Timing> {
    let body = json!({
        "model": "fake-model", "stream": true,
        "messages": [{"role": "system", "content": "bench"}, {"role": "user", "content": text}],
    });
    let started = Instant::now();
    let response = http.post(format!("{base}/chat/completions")).json(&body).send().await?;
    anyhow::ensure!(response.status().is_success(), "model answered {}", response.status());
    let marker = if text == "hello" { "\"content\":\"Hello" } else { "tool_calls" };
    read_stream(response, started, marker).await
}

/// One signed chat request to the orchestrator.
async fn chat(
    http: &reqwest::Client,
    url: &str,
    conversation: &str,
    text: &str,
) -> anyhow::Result<Timing> {
    let body = serde_json::to_vec(&json!({
        "id": conversation, "trigger": "submit-message",
        "message": {"id": "u", "role": "user", "parts": [{"type": "text", "text": text}]},
    }))?;
    let route = orchestrator::identity::Route { method: "POST", path: "/api/chat" };
    let signed = orchestrator::identity::signed_headers(SECRET.as_bytes(), "alice", route, &body);
    let started = Instant::now();
    let mut request = http.post(format!("{url}/api/chat"));
    for (name, value) in signed {
        request = request.header(name, value);
    }
    let response =
        request.header("x-request-id", format!("bench-{conversation}")).body(body).send().await?;
    anyhow::ensure!(response.status().is_success(), "orchestrator answered {}", response.status());
    read_stream(response, started, "\"type\":\"text-delta\"").await
}

/// Reads a stream to its end; `first` is when `marker` first arrived.
async fn read_stream(
    response: reqwest::Response,
    started: Instant,
    marker: &str,
) -> anyhow::Result<Timing> {
    let timed = scenario::sse::read_timed(response, started, marker).await?;
    let Some(first) = timed.first else {
        anyhow::bail!("no text in the answer: {}", timed.text);
    };
    let tool_outputs = timed.text.matches("tool-output-available").count();
    Ok(Timing { first: ms(first), total: ms(timed.whole), tool_outputs })
}

/// The orchestrator as its own process (no MCP server, a fresh data
/// directory removed at the end).
struct Process {
    process: OrchestratorProcess,
    url: String,
    _data: TempDir,
}

impl Process {
    async fn start(model_base: &str) -> anyhow::Result<Process> {
        let command = std::process::Command::new(tamebi_binary()?);
        let data = TempDir::new("orchestrator-bench")?;
        let flags = Flags { model_url: model_base, mcp: "", data_dir: data.path(), secret: SECRET };
        let process = OrchestratorProcess::start(command, flags)
            .await
            .map_err(|error| anyhow::anyhow!("the orchestrator did not come up: {error}"))?;
        let url = process.url.clone();
        Ok(Process { process, url, _data: data })
    }

    fn rss_kib(&self) -> u64 {
        ProcStatus::of(self.process.child.id()).field("VmRSS:").unwrap_or(0)
    }
}
