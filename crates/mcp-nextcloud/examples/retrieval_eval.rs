//! `files_grep` retrieval quality on a realistic drive: does the passage
//! index find what people mean, in real documents?
//!
//! Build the drive first (Python; see eval/retrieval/README.md), then run
//!
//! ```text
//! python3 eval/retrieval/build.py                       # target/retrieval-drive
//! cargo run --release -p mcp-nextcloud --example retrieval_eval
//! cargo run --release -p mcp-nextcloud --example retrieval_eval -- --drive target/retrieval-drive --json
//! ```
//!
//! It seeds the fake Nextcloud with every file of `DRIVE/drive/` as
//! alice's own (the demo fixture's users and OIDC clients, none of its
//! files), starts mcp-nextcloud in front of it (second-token mode, as in
//! production) and lets the index fill the way it does in production: by
//! the passes `files_grep` calls start, until alice's index is ready.
//! Then, for each question of `eval/retrieval/questions.jsonl`, it calls
//! `files_grep` over MCP with the question as the user wrote it and
//! `limit: 5`, and scores the five passages:
//!
//! - recall@5: a passage of the expected file is among them;
//! - section@5: a passage of the expected file under the expected heading
//!   (compared case-insensitively, Markdown markers and spaces trimmed);
//! - MRR: 1 / rank of the first passage of the expected file (0 if none).
//!
//! It prints one table, overall, by question kind (exact, paraphrase,
//! vocabulary mismatch, French) and by the target's file type (from
//! `DRIVE/manifest.json`: md, docx, odt, pdf, txt, scan); `--json` prints
//! the same figures and every question's ranks as JSON instead. A
//! benchmark, not a test: nothing here runs in CI.
//!
//! With embeddings (`--embeddings`: the real all-MiniLM-L6-v2 of
//! `ci/embeddings/serve.py`, started here; `--embeddings-e5`: its
//! multilingual-e5-small, with E5's `query: `/`passage: ` prefixes; or
//! `--embeddings-url URL
//! --embeddings-model NAME`: an endpoint of your own), the index lives in a
//! file, is filled and embedded once, and then mcp-nextcloud is started
//! again over it for each way of combining words and meaning (`--fusion
//! words,meaning-fallback,...`; all of them by default), one table each.

mod common;

use fake_nextcloud::fixture::FileFixture;
use fake_nextcloud::{FakeNextcloud, Fixture};
use mcp_nextcloud::index::IndexConfig;
use mcp_nextcloud::index::embed::EmbeddingsConfig;
use mcp_nextcloud::index::search::Fusion;
use mcp_nextcloud::index::store;
use scenario::mcp_client::McpClient;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

const USER: &str = "alice";
const TOP: usize = 5;
/// Passes started before giving up on a ready index.
const FILL_ROUNDS_MAX: usize = 400;
const KINDS: [&str; 4] = ["exact", "paraphrase", "vocabulary", "french"];
const FORMATS: [&str; 6] = ["md", "docx", "odt", "pdf", "txt", "scan"];

#[derive(Debug, Deserialize)]
struct Question {
    id: String,
    question: String,
    file: String,
    heading: String,
    kind: String,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    documents: Vec<ManifestEntry>,
}

#[derive(Debug, Deserialize)]
struct ManifestEntry {
    path: String,
    format: String,
}

struct Args {
    drive: PathBuf,
    questions: PathBuf,
    json: bool,
    embeddings: Embeddings,
    fusions: Option<Vec<Fusion>>,
}

enum Embeddings {
    None,
    /// Start `ci/embeddings/serve.py` with this model.
    Local(scenario::embeddings_server::Engine),
    Endpoint {
        url: String,
        model: String,
    },
}

/// One question's outcome.
struct Scored {
    id: String,
    kind: String,
    format: String,
    /// 1-based rank of the first passage of the expected file.
    file_rank: Option<usize>,
    /// 1-based rank of the first passage of the expected file and heading.
    section_rank: Option<usize>,
    matched: String,
    /// The passages found, best first, as `[path, heading]`, for `--json`
    /// readers who want to see why a question missed.
    found: Vec<(String, Option<String>)>,
}

#[derive(Default, Clone, Copy)]
struct Totals {
    questions: usize,
    recall: usize,
    section: usize,
    reciprocal: f64,
}

impl Totals {
    fn add(&mut self, scored: &Scored) {
        self.questions += 1;
        self.recall += usize::from(scored.file_rank.is_some());
        self.section += usize::from(scored.section_rank.is_some());
        self.reciprocal += scored.file_rank.map_or(0.0, |rank| 1.0 / rank as f64);
    }

    fn ratio(&self, count: usize) -> f64 {
        if self.questions == 0 { 0.0 } else { count as f64 / self.questions as f64 }
    }

    fn json(&self) -> Value {
        json!({
            "questions": self.questions,
            "recall_at_5": self.ratio(self.recall),
            "section_at_5": self.ratio(self.section),
            "mrr": if self.questions == 0 { 0.0 } else { self.reciprocal / self.questions as f64 },
        })
    }
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    let questions = load_questions(&args.questions);
    let formats = load_formats(&args.drive.join("manifest.json"));
    let drive = args.drive.join("drive");

    let fixture_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/fixtures/demo.toml");
    let mut fixture = Fixture::load(&fixture_path).expect("the demo fixture loads");
    fixture.files.clear();
    fixture.shares.clear();
    fixture.base_dir = drive.clone();
    let mut bytes = 0u64;
    for path in formats.keys() {
        bytes += std::fs::metadata(drive.join(path)).map(|m| m.len()).unwrap_or_else(|error| {
            fail(&format!(
                "{} is missing ({error}): run python3 eval/retrieval/build.py again",
                drive.join(path).display()
            ))
        });
        fixture.files.push(FileFixture {
            owner: USER.into(),
            path: path.clone(),
            content: None,
            source: Some(path.clone()),
            mtime: Some("2026-01-05T09:00:00Z".into()),
            mime: None,
            favorite: false,
        });
    }
    let fake = FakeNextcloud::start(&fixture, fake_nextcloud::Config::default())
        .await
        .expect("the fake Nextcloud starts with the drive");
    let local_server;
    let embeddings = match &args.embeddings {
        Embeddings::None => None,
        Embeddings::Local(engine) => {
            local_server = scenario::embeddings_server::EmbeddingsServer::start_engine(*engine)
                .unwrap_or_else(|message| fail(&message));
            Some(local_server.config())
        }
        Embeddings::Endpoint { url, model } => {
            Some(EmbeddingsConfig { url: url.clone(), model: model.clone(), ..Default::default() })
        }
    };
    let fusions = match (&args.fusions, &embeddings) {
        (Some(fusions), _) => fusions.clone(),
        (None, Some(_)) => Fusion::ALL.to_vec(),
        (None, None) => vec![Fusion::Words],
    };
    let scratch = std::env::temp_dir().join(format!("tamebi-retrieval-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch folder");
    let index_path = embeddings.as_ref().map(|_| scratch.join("index.db"));
    let mut reports = Vec::new();
    for fusion in fusions {
        let index = IndexConfig {
            path: index_path.clone(),
            embeddings: embeddings.clone(),
            fusion,
            ..IndexConfig::default()
        };
        let run = evaluate(&fake, index, &questions, &formats).await;
        reports.push((fusion, run));
    }
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&scratch);
    let model = embeddings.as_ref().map(|config| config.model.clone());

    let mut json_runs = Vec::new();
    for (fusion, run) in &reports {
        let mut overall = Totals::default();
        let mut by_kind: BTreeMap<&str, Totals> = BTreeMap::new();
        let mut by_format: BTreeMap<&str, Totals> = BTreeMap::new();
        for one in &run.scored {
            overall.add(one);
            by_kind.entry(one.kind.as_str()).or_default().add(one);
            by_format.entry(one.format.as_str()).or_default().add(one);
        }
        let fell_back = run.scored.iter().filter(|one| one.matched == "any").count();
        let by_meaning = run.scored.iter().filter(|one| one.matched == "meaning").count();
        if args.json {
            let table = |totals: &BTreeMap<&str, Totals>| -> Value {
                totals.iter().map(|(name, t)| (name.to_string(), t.json())).collect()
            };
            let questions: Vec<Value> = run
                .scored
                .iter()
                .map(|one| {
                    json!({"id": one.id, "kind": one.kind, "format": one.format,
                           "file_rank": one.file_rank, "section_rank": one.section_rank,
                           "matched": one.matched, "found": one.found})
                })
                .collect();
            json_runs.push(json!({
                "fusion": fusion.name(),
                "fill_seconds": run.fill_seconds,
                "search_ms_mean": run.search_ms,
                "overall": overall.json(),
                "by_kind": table(&by_kind),
                "by_format": table(&by_format),
                "matched_any": fell_back,
                "matched_meaning": by_meaning,
                "questions": questions,
            }));
            continue;
        }
        let embedded = match &model {
            Some(model) => format!(
                "embeddings: {model} ({} passages embedded, in the filling time of the first run), fusion {}",
                run.embedded,
                fusion.name()
            ),
            None => "embeddings: none".to_string(),
        };
        println!(
            "files_grep retrieval: {} questions over {} files ({:.1} MB, {} passages); index filled in {:.1} s ({} passes), {:.1} ms per search; {embedded}",
            questions.len(),
            formats.len(),
            bytes as f64 / 1e6,
            run.passages,
            run.fill_seconds,
            run.rounds,
            run.search_ms
        );
        println!(
            "{fell_back} of {} searches fell back to passages with some of the words, {by_meaning} to the nearest in meaning",
            run.scored.len()
        );
        println!();
        println!(
            "{:<22} {:>5} {:>10} {:>10} {:>7}",
            "questions", "n", "recall@5", "section@5", "MRR"
        );
        print_row("all", &overall);
        for kind in KINDS {
            if let Some(totals) = by_kind.get(kind) {
                print_row(&format!("kind: {kind}"), totals);
            }
        }
        for format in FORMATS {
            if let Some(totals) = by_format.get(format) {
                print_row(&format!("type: {format}"), totals);
            }
        }
        println!();
    }
    if args.json {
        let report = json!({
            "drive": {"files": formats.len(), "bytes": bytes},
            "embeddings": model,
            "runs": json_runs,
        });
        println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    }
}

/// One configuration's answers.
struct Run {
    scored: Vec<Scored>,
    /// Filling, and with embeddings on, embedding: the passes wait for
    /// both.
    fill_seconds: f64,
    rounds: usize,
    passages: u64,
    embedded: u64,
    search_ms: f64,
}

/// Starts mcp-nextcloud over `index`, fills (and embeds) it as alice's
/// searches do, then asks every question.
async fn evaluate(
    fake: &FakeNextcloud,
    index: IndexConfig,
    questions: &[Question],
    formats: &BTreeMap<String, String>,
) -> Run {
    let embeddings = index.embeddings.is_some();
    let mcp = common::start_mcp_nextcloud_with(fake, index).await;
    let client = McpClient::new(format!("{}/mcp", mcp.url()));
    let headers = common::mcp_headers(fake, USER);

    // The index fills in passes that files_grep calls start: call until
    // alice's index is ready.
    let filling = Instant::now();
    let mut rounds = 0;
    loop {
        grep(&client, &headers, "debian").await;
        mcp.index().idle().await;
        rounds += 1;
        if matches!(mcp.index().readiness(USER), mcp_nextcloud::index::Readiness::Ready) {
            break;
        }
        if rounds == FILL_ROUNDS_MAX {
            fail("the index was not ready after 400 passes");
        }
    }
    // Embedding runs after each pass until nothing is pending (idle waits
    // for it); a search starts it again after an endpoint failure.
    let mut status = index_status(&mcp);
    while embeddings && status.embedded < status.passages {
        if filling.elapsed().as_secs() > 3600 {
            fail("the passages were not all embedded within an hour");
        }
        grep(&client, &headers, "debian").await;
        mcp.index().idle().await;
        status = index_status(&mcp);
    }
    let fill_seconds = filling.elapsed().as_secs_f64();

    let searching = Instant::now();
    let mut scored = Vec::with_capacity(questions.len());
    for question in questions {
        let result = grep(&client, &headers, &question.question).await;
        let passages =
            result["structuredContent"]["passages"].as_array().cloned().unwrap_or_default();
        let wanted_heading = normalize_heading(&question.heading);
        let mut file_rank = None;
        let mut section_rank = None;
        let mut found = Vec::with_capacity(TOP);
        for (rank, passage) in passages.iter().take(TOP).enumerate() {
            let path = passage["path"].as_str().unwrap_or_default().trim_start_matches('/');
            found.push((path.to_string(), passage["heading"].as_str().map(str::to_string)));
            if path != question.file {
                continue;
            }
            file_rank.get_or_insert(rank + 1);
            let heading = passage["heading"].as_str().map(normalize_heading);
            if heading.as_deref() == Some(wanted_heading.as_str()) {
                section_rank.get_or_insert(rank + 1);
            }
        }
        scored.push(Scored {
            id: question.id.clone(),
            kind: question.kind.clone(),
            format: formats.get(&question.file).cloned().unwrap_or_else(|| {
                fail(&format!("{}: {} is not in the drive's manifest", question.id, question.file))
            }),
            file_rank,
            section_rank,
            matched: result["structuredContent"]["matched"].as_str().unwrap_or("?").to_string(),
            found,
        });
    }
    let search_ms = searching.elapsed().as_secs_f64() * 1000.0 / questions.len().max(1) as f64;
    // Searches start passes; let them end before the server does.
    mcp.index().idle().await;
    mcp.shutdown().await;
    Run {
        scored,
        fill_seconds,
        rounds,
        passages: status.passages,
        embedded: status.embedded,
        search_ms,
    }
}

fn index_status(mcp: &mcp_nextcloud::McpNextcloud) -> store::Status {
    mcp.index()
        .store()
        .run_blocking(|connection| store::status(connection))
        .unwrap_or_else(|error| fail(&format!("the index status could not be read: {error}")))
}

fn print_row(label: &str, totals: &Totals) {
    println!(
        "{:<22} {:>5} {:>10.3} {:>10.3} {:>7.3}",
        label,
        totals.questions,
        totals.ratio(totals.recall),
        totals.ratio(totals.section),
        if totals.questions == 0 { 0.0 } else { totals.reciprocal / totals.questions as f64 }
    );
}

async fn grep(client: &McpClient, headers: &[(String, String)], query: &str) -> Value {
    let result =
        client.call_tool_with(headers, "files_grep", json!({"query": query, "limit": TOP})).await;
    if result["isError"] == json!(true) {
        fail(&format!("files_grep {query:?} failed: {result}"));
    }
    result
}

/// A heading as files_grep or a question names it, for comparison: no
/// Markdown markers (`#`, `*`, `_`, backquotes), no outer spaces, folded
/// case, inner spaces collapsed.
fn normalize_heading(heading: &str) -> String {
    let trimmed = heading
        .trim()
        .trim_start_matches('#')
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_' | '`' | '='));
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn parse_args() -> Args {
    let usage = "usage: retrieval_eval [--drive DIR] [--questions FILE] [--json] \
                 [--embeddings | --embeddings-e5 | --embeddings-url URL --embeddings-model NAME] [--fusion MODE,...]";
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut parsed = Args {
        drive: root.join("target/retrieval-drive"),
        questions: root.join("eval/retrieval/questions.jsonl"),
        json: false,
        embeddings: Embeddings::None,
        fusions: None,
    };
    let mut url = None;
    let mut model = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--json" => parsed.json = true,
            "--embeddings" => {
                parsed.embeddings = Embeddings::Local(scenario::embeddings_server::Engine::MiniLm)
            }
            "--embeddings-e5" => {
                parsed.embeddings = Embeddings::Local(scenario::embeddings_server::Engine::E5)
            }
            "--embeddings-url" => url = Some(args.next().unwrap_or_else(|| fail(usage))),
            "--embeddings-model" => model = Some(args.next().unwrap_or_else(|| fail(usage))),
            "--fusion" => {
                let list = args.next().unwrap_or_else(|| fail(usage));
                let fusions = list
                    .split(',')
                    .map(|name| {
                        Fusion::parse(name.trim()).unwrap_or_else(|| {
                            fail(&format!("{name:?} is not one of {}", Fusion::names().join(", ")))
                        })
                    })
                    .collect();
                parsed.fusions = Some(fusions);
            }
            "--drive" => {
                parsed.drive = args.next().map(PathBuf::from).unwrap_or_else(|| fail(usage))
            }
            "--questions" => {
                parsed.questions = args.next().map(PathBuf::from).unwrap_or_else(|| fail(usage))
            }
            _ => fail(usage),
        }
    }
    match (url, model) {
        (Some(url), Some(model)) => parsed.embeddings = Embeddings::Endpoint { url, model },
        (None, None) => {}
        _ => fail("--embeddings-url and --embeddings-model go together"),
    }
    parsed
}

fn load_questions(path: &Path) -> Vec<Question> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|error| fail(&format!("cannot read {}: {error}", path.display())));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(number, line)| {
            serde_json::from_str(line).unwrap_or_else(|error| {
                fail(&format!("{} line {}: {error}", path.display(), number + 1))
            })
        })
        .collect()
}

/// Drive path -> file type (md, docx, odt, pdf, txt, scan).
fn load_formats(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| {
        fail(&format!(
            "cannot read {} ({error}): build the drive with python3 eval/retrieval/build.py",
            path.display()
        ))
    });
    let manifest: Manifest = serde_json::from_str(&text)
        .unwrap_or_else(|error| fail(&format!("{}: {error}", path.display())));
    manifest.documents.into_iter().map(|entry| (entry.path, entry.format)).collect()
}

fn fail(message: &str) -> ! {
    eprintln!("retrieval_eval: {message}");
    std::process::exit(2)
}
