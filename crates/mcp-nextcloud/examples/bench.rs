//! tools/call latency and throughput of mcp-nextcloud against the fake
//! Nextcloud on loopback, next to a bare HTTP round trip measured in the
//! same run.
//!
//! Run it with
//!
//! ```text
//! cargo run --release -p mcp-nextcloud --example bench
//! BENCH_REQUESTS=5000 cargo run --release -p mcp-nextcloud --example bench
//! BENCH_ROWS=calendar cargo run --release -p mcp-nextcloud --example bench
//! ```
//!
//! It starts the fake Nextcloud with the demo fixture and an mcp-nextcloud
//! in front of it (second-token mode, as in production), both on 127.0.0.1
//! in this process, and mints alice's two tokens once. Every tools/call is a
//! stateless JSON-RPC POST that mcp-nextcloud authenticates in full (both
//! JWTs: signature, `typ`, `iss`, `aud`, `exp`) before it calls Nextcloud.
//! Each row is measured at concurrency 1, 8 and 64 after a warm-up:
//!
//! - `GET /health` on mcp-nextcloud: the baseline, a bare loopback round trip;
//! - `files_search` (`name: "notes"`): one DAV SEARCH upstream;
//! - `files_read` (4 KiB of a Markdown file by path): PROPFIND + ranged GET;
//! - `calendar_events` (a week of alice's calendar, recurrences expanded):
//!   the calendar home PROPFIND and one REPORT per calendar;
//! - `files_grep` (`budget réunion` over the warmed index): FTS5 candidates,
//!   then the batched permission SEARCH of the survivors;
//! - the same upstream requests sent straight to the fake, so the table
//!   shows what mcp-nextcloud itself adds.
//!
//! It prints one table: p50 and p99 latency in milliseconds, throughput in
//! requests per second, and the p50 and throughput of each row relative to
//! the baseline at the same concurrency, e.g.
//!
//! ```text
//! workload                          conc    p50 ms    p99 ms      req/s  p50 ×base  req/s ×base
//! GET /health (baseline)               1     0.023     0.030      42213        1.0         1.00
//! tools/call files_search              1     0.821     4.995       1084       35.9         0.03
//! ```
//!
//! (figures from a shared 2-core machine; see docs/benchmarks.md).
//!
//! Any failed request aborts the run: a benchmark of errors measures nothing.

mod common;

use fake_nextcloud::{FakeNextcloud, Fixture};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests per row and concurrency, unless `BENCH_REQUESTS` says otherwise.
const REQUESTS_DEFAULT: usize = 2000;
/// Requests sent before each row is measured (connections, caches, JWKS).
const WARMUP_REQUESTS: usize = 100;
const CONCURRENCIES: [usize; 3] = [1, 8, 64];

/// One kind of request the benchmark repeats.
#[derive(Clone)]
enum Workload {
    Health,
    ToolCall {
        name: &'static str,
        arguments: serde_json::Value,
    },
    /// Requests sent straight to the fake, one after the other.
    Upstream(Vec<UpstreamRequest>),
}

#[derive(Clone)]
struct UpstreamRequest {
    method: http::Method,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Option<String>,
}

/// Everything a request needs, shared by the tasks of a row.
struct Target {
    http: reqwest::Client,
    mcp_url: String,
    nextcloud_url: String,
    mcp_headers: Vec<(String, String)>,
    nextcloud_token: String,
}

struct Row {
    label: String,
    concurrency: usize,
    p50: Duration,
    p99: Duration,
    requests_per_second: f64,
}

#[tokio::main]
async fn main() {
    let requests: usize = std::env::var("BENCH_REQUESTS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(REQUESTS_DEFAULT);
    let fixture_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    let fixture = Fixture::load(&fixture_path).expect("the demo fixture loads");
    let fake = FakeNextcloud::start(&fixture, fake_nextcloud::Config::default())
        .await
        .expect("the fake Nextcloud starts");
    let mcp = common::start_mcp_nextcloud(&fake).await;

    let mcp_headers = common::mcp_headers(&fake, "alice");
    let nextcloud_token = mcp_headers[1].1.clone();
    let target = Arc::new(Target {
        http: reqwest::Client::new(),
        mcp_url: mcp.url().to_string(),
        nextcloud_url: fake.base_url().to_string(),
        mcp_headers,
        nextcloud_token,
    });

    let file = "Documents/notes-reunion.md";
    let workloads = [
        ("GET /health (baseline)", Workload::Health),
        (
            "tools/call files_search",
            Workload::ToolCall { name: "files_search", arguments: json!({"name": "notes"}) },
        ),
        (
            "tools/call files_read",
            Workload::ToolCall {
                name: "files_read",
                arguments: json!({"path": file, "length": 4096}),
            },
        ),
        (
            "tools/call calendar_events",
            Workload::ToolCall {
                name: "calendar_events",
                arguments: json!({"start": "2026-03-16T00:00:00", "end": "2026-03-23T00:00:00", "time_zone": "Europe/Berlin"}),
            },
        ),
        (
            "tools/call files_grep",
            Workload::ToolCall {
                name: "files_grep",
                arguments: json!({"query": "budget réunion"}),
            },
        ),
        ("  upstream only: SEARCH", Workload::Upstream(vec![search_request()])),
        (
            "  upstream only: PROPFIND+GET",
            Workload::Upstream(vec![
                UpstreamRequest {
                    method: http::Method::from_bytes(b"PROPFIND").expect("method"),
                    path: format!("/remote.php/dav/files/alice/{file}"),
                    headers: vec![("depth", "0".into())],
                    body: None,
                },
                UpstreamRequest {
                    method: http::Method::GET,
                    path: format!("/remote.php/dav/files/alice/{file}"),
                    headers: vec![("range", "bytes=0-4098".into())],
                    body: None,
                },
            ]),
        ),
    ];

    // files_grep reads documents in passes its searches start: warm the
    // index first, so the row measures searching, not reading.
    for _ in 0..20 {
        send(&target, &workloads[4].1).await;
        mcp.index().idle().await;
        if matches!(mcp.index().readiness("alice"), mcp_nextcloud::index::Readiness::Ready) {
            break;
        }
    }
    println!(
        "mcp-nextcloud tools/call benchmark: {requests} requests per row after {WARMUP_REQUESTS} warm-up, loopback, {} CPUs",
        std::thread::available_parallelism().map(usize::from).unwrap_or(0)
    );
    // BENCH_ROWS=calendar,grep keeps only the rows naming one of these
    // (the baseline always runs): for profiling one workload.
    let only: Vec<String> = std::env::var("BENCH_ROWS")
        .map(|rows| rows.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let mut rows = Vec::new();
    for concurrency in CONCURRENCIES {
        for (label, workload) in &workloads {
            let wanted = only.is_empty()
                || matches!(workload, Workload::Health)
                || only.iter().any(|row| label.contains(row.as_str()));
            if !wanted {
                continue;
            }
            rows.push(measure(&target, label, workload, concurrency, requests).await);
        }
    }
    print_table(&rows);
    mcp.shutdown().await;
    fake.shutdown().await;
}

/// What files_search sends for `name: "notes"`.
fn search_request() -> UpstreamRequest {
    let body = r#"<?xml version="1.0" encoding="UTF-8"?>
<d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">
<d:basicsearch>
<d:select><d:prop><d:resourcetype/><d:getlastmodified/><d:getcontentlength/><d:getcontenttype/><d:getetag/><oc:fileid/><oc:size/><oc:permissions/><oc:owner-id/></d:prop></d:select>
<d:from><d:scope><d:href>/files/alice</d:href><d:depth>infinity</d:depth></d:scope></d:from>
<d:where><d:like><d:prop><d:displayname/></d:prop><d:literal>%notes%</d:literal></d:like></d:where>
<d:orderby><d:order><d:prop><d:getlastmodified/></d:prop><d:descending/></d:order></d:orderby>
<d:limit><d:nresults>21</d:nresults></d:limit>
</d:basicsearch>
</d:searchrequest>"#;
    UpstreamRequest {
        method: http::Method::from_bytes(b"SEARCH").expect("method"),
        path: "/remote.php/dav/".to_string(),
        headers: vec![("content-type", "text/xml; charset=utf-8".into())],
        body: Some(body.to_string()),
    }
}

/// One request of the workload; panics on any failure.
async fn send(target: &Target, workload: &Workload) {
    match workload {
        Workload::Health => {
            let response = target
                .http
                .get(format!("{}/health", target.mcp_url))
                .send()
                .await
                .expect("health answers");
            assert!(response.status().is_success());
            response.bytes().await.expect("health body");
        }
        Workload::ToolCall { name, arguments } => {
            let mut request = target
                .http
                .post(format!("{}/mcp", target.mcp_url))
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .json(&json!({
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": name, "arguments": arguments},
                }));
            for (header, value) in &target.mcp_headers {
                request = request.header(header, value);
            }
            let response = request.send().await.expect("tools/call answers");
            assert_eq!(response.status(), 200, "tools/call {name}");
            let body = response.text().await.expect("tools/call body");
            assert!(
                !body.contains("\"isError\":true") && !body.contains("\"error\""),
                "tools/call {name} failed: {body}"
            );
        }
        Workload::Upstream(requests) => {
            for upstream in requests {
                let mut request = target
                    .http
                    .request(
                        upstream.method.clone(),
                        format!("{}{}", target.nextcloud_url, upstream.path),
                    )
                    .bearer_auth(&target.nextcloud_token);
                for (header, value) in &upstream.headers {
                    request = request.header(*header, value);
                }
                if let Some(body) = &upstream.body {
                    request = request.body(body.clone());
                }
                let response = request.send().await.expect("Nextcloud answers");
                assert!(
                    response.status().is_success(),
                    "{} {}",
                    upstream.method,
                    response.status()
                );
                response.bytes().await.expect("Nextcloud body");
            }
        }
    }
}

async fn measure(
    target: &Arc<Target>,
    label: &str,
    workload: &Workload,
    concurrency: usize,
    requests: usize,
) -> Row {
    for _ in 0..WARMUP_REQUESTS {
        send(target, workload).await;
    }
    let per_task = requests.div_ceil(concurrency);
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let target = target.clone();
        let workload = workload.clone();
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(per_task);
            for _ in 0..per_task {
                let sent = Instant::now();
                send(&target, &workload).await;
                latencies.push(sent.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::with_capacity(per_task * concurrency);
    while let Some(joined) = tasks.join_next().await {
        latencies.extend(joined.expect("a benchmark task finished"));
    }
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    let percentile = |fraction: f64| {
        let index = ((latencies.len() as f64 * fraction) as usize).min(latencies.len() - 1);
        latencies[index]
    };
    Row {
        label: label.to_string(),
        concurrency,
        p50: percentile(0.50),
        p99: percentile(0.99),
        requests_per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<32} {:>5} {:>9} {:>9} {:>10} {:>10} {:>12}",
        "workload", "conc", "p50 ms", "p99 ms", "req/s", "p50 ×base", "req/s ×base"
    );
    for row in rows {
        let baseline = rows
            .iter()
            .find(|candidate| candidate.concurrency == row.concurrency)
            .expect("the baseline is measured first at each concurrency");
        println!(
            "{:<32} {:>5} {:>9.3} {:>9.3} {:>10.0} {:>10.1} {:>12.2}",
            row.label,
            row.concurrency,
            milliseconds(row.p50),
            milliseconds(row.p99),
            row.requests_per_second,
            milliseconds(row.p50) / milliseconds(baseline.p50),
            row.requests_per_second / baseline.requests_per_second,
        );
    }
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
