//! `tamebi index status` and `tamebi index report`: what an operator sees of
//! mcp-nextcloud's `index.db` from outside the server.
//!
//! Both open the file the running server writes (SQLite in WAL mode, so a
//! reader never blocks it) and only read it. They refuse a path where no
//! index exists rather than create an empty one, which would answer "0
//! documents" about the wrong file. The numbers come from the library
//! (`store::status`, `report::classify`); this module only formats them and
//! measures progress between two looks.

use anyhow::Context as _;
use mcp_nextcloud::index::report;
use mcp_nextcloud::index::store::{self, Status, Store};
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What `--index-db` says: a file, or the server-only in-memory index.
pub const IN_MEMORY: &str = ":memory:";

/// How `index status` runs.
#[derive(Debug, Clone)]
pub struct StatusOptions {
    pub json: bool,
    /// `Some` reprints every interval.
    pub watch: Option<Watch>,
}

#[derive(Debug, Clone, Copy)]
pub struct Watch {
    pub interval: Duration,
    /// Stop by itself once nothing is pending.
    pub until_idle: bool,
}

/// One look at the index: its numbers and its size on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub status: Status,
    /// `index.db` itself.
    pub file_bytes: u64,
    /// `index.db-wal`, absent (or empty) when everything is checkpointed.
    pub wal_bytes: Option<u64>,
    /// Unix seconds when the look was taken.
    pub taken_at: i64,
}

/// What changed between the first look of a watch and the latest one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub elapsed: Duration,
    /// Documents read since the watch began.
    pub read: u64,
    pub pending: u64,
}

pub async fn status(index_db: &Path, options: StatusOptions) -> anyhow::Result<()> {
    let store = open_existing(index_db)?;
    let first = snapshot(&store, index_db).await?;
    if options.json {
        println!("{}", serde_json::to_string_pretty(&first.status)?);
        return Ok(());
    }
    let Some(watch) = options.watch else {
        println!("{}", render_status(index_db, &first));
        return Ok(());
    };
    watch_status(&store, index_db, first, watch).await
}

pub async fn report(index_db: &Path, since: Option<Since>, json: bool) -> anyhow::Result<()> {
    let store = open_existing(index_db)?;
    let from = since.as_ref().map_or(0, |since| mcp_nextcloud::index::now() - since.seconds);
    let rows = store.run(move |connection| store::queries(connection, from)).await?;
    let report = report::classify(&rows);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    match since {
        Some(since) => println!("{}, searches of the last {}:", index_db.display(), since.text),
        None => println!("{}, every recorded search:", index_db.display()),
    }
    println!("{}", report::render(&report));
    Ok(())
}

/// A `--since` window: `30m`, `24h`, `7d`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Since {
    pub seconds: i64,
    /// As the operator wrote it, for the report's heading.
    pub text: String,
}

/// Reads `<number><unit>` with unit `s`, `m`, `h`, `d` or `w`.
pub fn parse_since(text: &str) -> Result<Since, String> {
    let usage =
        || format!("{text:?} is not a duration: write a number and a unit, e.g. 30m, 24h, 7d");
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(usage)?;
    let (number, unit) = text.split_at(split);
    let number: i64 = number.parse().map_err(|_| usage())?;
    let unit_seconds = match unit.trim() {
        "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(usage()),
    };
    let seconds = number.checked_mul(unit_seconds).ok_or_else(usage)?;
    Ok(Since { seconds, text: text.to_string() })
}

/// Reads `--interval` seconds (fractions allowed, at least 0.1 s).
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    let seconds: f64 =
        text.trim().parse().map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(0.1..=86_400.0).contains(&seconds) {
        return Err(format!("the interval must be between 0.1 and 86400 seconds, not {seconds}"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The index as `index status` prints it.
pub fn render_status(index_db: &Path, snapshot: &Snapshot) -> String {
    let status = &snapshot.status;
    let on_disk = match snapshot.wal_bytes.filter(|wal_bytes| *wal_bytes > 0) {
        Some(wal_bytes) => format!(
            "{} on disk ({} + {} write-ahead log)",
            human_bytes(snapshot.file_bytes + wal_bytes),
            human_bytes(snapshot.file_bytes),
            human_bytes(wal_bytes)
        ),
        None => format!("{} on disk", human_bytes(snapshot.file_bytes)),
    };
    let mut pending = String::new();
    if status.retrying > 0 {
        pending.push_str(&format!(" ({} retrying)", status.retrying));
    }
    if let Some(oldest) = status.oldest_pending {
        let age = Duration::from_secs((snapshot.taken_at - oldest).max(0) as u64);
        pending.push_str(&format!(", oldest waiting {}", human_duration(age)));
    }
    let row = |label: &str, count: u64, rest: &str| format!("{label:<12}{count:>10}{rest}");
    [
        format!("{:<12}{}, {on_disk}", "index", index_db.display()),
        row("documents", status.known, " known"),
        row("  read", status.read, ""),
        row("  pending", status.pending, &pending),
        row("  failed", status.failed, ""),
        row("  needs OCR", status.needs_ocr, ""),
        row("passages", status.passages, &format!(", {} of text", human_bytes(status.text_bytes))),
        match &status.embeddings_model {
            Some(model) => row(
                "  embedded",
                status.embedded,
                &format!(
                    " by {model}, {} pending",
                    status.passages.saturating_sub(status.embedded)
                ),
            ),
            None => format!("{:<12}off", "embeddings"),
        },
        row("searches", status.queries, ""),
    ]
    .join("\n")
}

/// The live line under the status block while watching.
pub fn render_progress(progress: &Progress) -> String {
    let mut line = format!(
        "watching for {}: {} read ({:.1}/min), {} pending",
        human_duration(progress.elapsed),
        progress.read,
        progress.rate_per_minute(),
        progress.pending
    );
    line.push_str(&match (progress.pending, progress.eta()) {
        (0, _) => ", nothing left to read".to_string(),
        (_, Some(eta)) => format!(", about {} left", human_duration(eta)),
        (_, None) => ", no estimate until a document is read".to_string(),
    });
    line
}

/// One line per tick, for logs and pipes.
pub fn render_tick(snapshot: &Snapshot, progress: &Progress) -> String {
    let status = &snapshot.status;
    let eta = match (progress.pending, progress.eta()) {
        (0, _) => "idle".to_string(),
        (_, Some(eta)) => format!("eta {}", human_duration(eta)),
        (_, None) => "eta unknown".to_string(),
    };
    format!(
        "+{}s read {} (+{}, {:.1}/min) pending {} (retrying {}) failed {} needs_ocr {} passages {} {eta}",
        progress.elapsed.as_secs(),
        status.read,
        progress.read,
        progress.rate_per_minute(),
        status.pending,
        status.retrying,
        status.failed,
        status.needs_ocr,
        status.passages,
    )
}

impl Progress {
    pub fn between(first: &Status, latest: &Status, elapsed: Duration) -> Progress {
        // A read document can become pending again (a webhook, a changed
        // etag), so `read` may shrink; progress never goes negative.
        Progress { elapsed, read: latest.read.saturating_sub(first.read), pending: latest.pending }
    }

    pub fn rate_per_minute(&self) -> f64 {
        let minutes = self.elapsed.as_secs_f64() / 60.0;
        if minutes <= 0.0 { 0.0 } else { self.read as f64 / minutes }
    }

    /// Time left at the rate so far; `None` before anything was read.
    pub fn eta(&self) -> Option<Duration> {
        let rate = self.rate_per_minute();
        (rate > 0.0).then(|| Duration::from_secs_f64(self.pending as f64 / rate * 60.0))
    }
}

/// `1023 B`, `1.5 KiB`, `12.3 MiB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `42 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`: two units at most.
pub fn human_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 if seconds.is_multiple_of(60) => format!("{} min", seconds / 60),
        60..3600 => format!("{} min {} s", seconds / 60, seconds % 60),
        3600..86_400 => format!("{} h {} min", seconds / 3600, seconds % 3600 / 60),
        _ => format!("{} d {} h", seconds / 86_400, seconds % 86_400 / 3600),
    }
}

/// Opens an index that exists; never creates one.
fn open_existing(index_db: &Path) -> anyhow::Result<Store> {
    if index_db.as_os_str() == IN_MEMORY {
        anyhow::bail!(
            "an in-memory index ({IN_MEMORY}) lives inside the server process and cannot be looked at from outside: run the server with --index-db pointing at a file"
        );
    }
    if !index_db.exists() {
        anyhow::bail!(
            "there is no index at {}: mcp-nextcloud creates it when it starts; pass the path it uses with --index-db (or TAMEBI_INDEX_DB)",
            index_db.display()
        );
    }
    if !index_db.is_file() {
        anyhow::bail!("{} is not a file: --index-db names the index.db file", index_db.display());
    }
    Store::open_read_only(index_db)
        .with_context(|| format!("cannot open the index at {}", index_db.display()))
}

async fn snapshot(store: &Store, index_db: &Path) -> anyhow::Result<Snapshot> {
    let status = store.run(|connection| store::status(connection)).await?;
    let file_bytes = std::fs::metadata(index_db)
        .with_context(|| format!("cannot read the size of {}", index_db.display()))?
        .len();
    let wal_bytes = std::fs::metadata(wal_path(index_db)).ok().map(|metadata| metadata.len());
    Ok(Snapshot { status, file_bytes, wal_bytes, taken_at: mcp_nextcloud::index::now() })
}

fn wal_path(index_db: &Path) -> PathBuf {
    let mut path = index_db.as_os_str().to_owned();
    path.push("-wal");
    PathBuf::from(path)
}

/// Reprints until Ctrl-C, or until nothing is pending with `until_idle`.
/// It is meant to run until the operator stops it, so its loop has no
/// count bound.
async fn watch_status(
    store: &Store,
    index_db: &Path,
    first: Snapshot,
    watch: Watch,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let terminal = std::io::stdout().is_terminal();
    let mut latest = first.clone();
    let mut lines_drawn = 0;
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let progress = Progress::between(&first.status, &latest.status, started.elapsed());
        let mut stdout = std::io::stdout().lock();
        if terminal {
            let block =
                format!("{}\n{}", render_status(index_db, &latest), render_progress(&progress));
            if lines_drawn > 0 {
                // Up to the first line of the previous block, then clear
                // everything below the cursor.
                write!(stdout, "\x1b[{lines_drawn}A\x1b[J")?;
            }
            writeln!(stdout, "{block}")?;
            lines_drawn = block.lines().count();
        } else {
            writeln!(stdout, "{}", render_tick(&latest, &progress))?;
        }
        stdout.flush()?;
        drop(stdout);
        if watch.until_idle && latest.status.pending == 0 {
            return Ok(());
        }
        tokio::select! {
            signal = &mut stop => {
                signal.context("cannot listen for Ctrl-C")?;
                return Ok(());
            }
            () = tokio::time::sleep(watch.interval) => {}
        }
        latest = snapshot(store, index_db).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status() -> Status {
        Status {
            known: 1234,
            read: 1000,
            pending: 200,
            failed: 20,
            needs_ocr: 14,
            retrying: 15,
            passages: 45_678,
            text_bytes: 12_900_000,
            oldest_pending: Some(1_000),
            queries: 321,
            embeddings_model: None,
            embedded: 0,
        }
    }

    #[test]
    fn status_reads_as_a_table() {
        let snapshot = Snapshot {
            status: status(),
            file_bytes: 3 * 1024 * 1024,
            wal_bytes: Some(512 * 1024),
            taken_at: 1_000 + 3 * 3600 + 12 * 60,
        };
        let text = render_status(Path::new("data/index.db"), &snapshot);
        assert_eq!(
            text,
            "\
index       data/index.db, 3.5 MiB on disk (3.0 MiB + 512.0 KiB write-ahead log)
documents         1234 known
  read            1000
  pending          200 (15 retrying), oldest waiting 3 h 12 min
  failed            20
  needs OCR         14
passages         45678, 12.3 MiB of text
embeddings  off
searches           321"
        );
        let embedding = Snapshot {
            status: Status {
                embeddings_model: Some("all-minilm-l6-v2".into()),
                embedded: 40_000,
                ..status()
            },
            ..snapshot
        };
        let text = render_status(Path::new("data/index.db"), &embedding);
        assert!(
            text.contains("\npassages         45678, 12.3 MiB of text\n  embedded       40000 by all-minilm-l6-v2, 5678 pending\nsearches"),
            "{text}"
        );
    }

    #[test]
    fn progress_estimates_from_the_rate_so_far() {
        let first = status();
        let latest = Status { read: 1030, pending: 170, ..status() };
        let progress = Progress::between(&first, &latest, Duration::from_secs(120));
        assert_eq!(progress.read, 30);
        assert_eq!(progress.rate_per_minute(), 15.0);
        assert_eq!(progress.eta(), Some(Duration::from_secs(680)));
        assert_eq!(
            render_progress(&progress),
            "watching for 2 min: 30 read (15.0/min), 170 pending, about 11 min 20 s left"
        );
        let stalled = Progress::between(&first, &first, Duration::from_secs(10));
        assert_eq!(stalled.eta(), None);
        assert!(render_progress(&stalled).ends_with("no estimate until a document is read"));
        let shrunk = Progress::between(&latest, &first, Duration::from_secs(10));
        assert_eq!(shrunk.read, 0, "re-dirtied documents do not count backwards");
        let at_start = Progress::between(&first, &first, Duration::ZERO);
        assert_eq!(at_start.rate_per_minute(), 0.0);
    }

    #[test]
    fn durations_and_sizes_are_human() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 * 1024 * 1024 * 1024), "5.0 GiB");
        assert_eq!(human_duration(Duration::from_secs(59)), "59 s");
        assert_eq!(human_duration(Duration::from_secs(185)), "3 min 5 s");
        assert_eq!(human_duration(Duration::from_secs(7800)), "2 h 10 min");
        assert_eq!(human_duration(Duration::from_secs(3 * 86_400 + 4 * 3600)), "3 d 4 h");
    }

    #[test]
    fn since_takes_a_number_and_a_unit() {
        assert_eq!(parse_since("7d").unwrap().seconds, 7 * 86_400);
        assert_eq!(parse_since("24h").unwrap().seconds, 86_400);
        assert_eq!(parse_since("30m").unwrap().seconds, 1800);
        assert_eq!(parse_since("2w").unwrap().seconds, 14 * 86_400);
        for bad in ["7", "d", "7y", "-1d", "", "99999999999999999999d"] {
            let error = parse_since(bad).unwrap_err();
            assert!(error.contains("e.g. 30m, 24h, 7d"), "{bad}: {error}");
        }
        assert_eq!(parse_interval("0.5").unwrap(), Duration::from_millis(500));
        assert!(parse_interval("0").is_err());
        assert!(parse_interval("soon").is_err());
    }
}
