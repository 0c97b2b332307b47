//! `tamebi index report`: the `queries` table, classified, so the trigger
//! for adding embeddings is a number rather than an argument.
//!
//! - candidates = 0: a hole in the index (nothing read says it — or the
//!   words are not the document's words);
//! - candidates > 0, survivors = 0: a permission boundary doing its job;
//! - runs of rephrasings: [`RUN_LENGTH_MIN`] or more queries in quick
//!   succession (each within [`RUN_GAP_SECONDS`] of the previous) that all
//!   had candidates — the model kept rephrasing past what each search gave
//!   it, so what it got was not what it was after. That is vocabulary
//!   mismatch, the one failure embeddings fix. Whether the model finally
//!   kept a result is not in the table (it is the orchestrator's to know),
//!   so an answered last query still counts.
//!
//! `queries` has no user column, so a run is found by time alone: on a busy
//! server two users' searches can interleave into one run. The count is an
//! upper bound, which is the safe side for a trigger.

use super::store::QueryRow;

/// Longest pause inside a run of rephrasings.
pub const RUN_GAP_SECONDS: i64 = 120;
/// Queries a run needs.
pub const RUN_LENGTH_MIN: usize = 3;

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    pub queries: usize,
    /// Queries with no candidate at all.
    pub holes: usize,
    /// Candidates, none readable by the searcher.
    pub boundaries: usize,
    /// Queries that returned passages.
    pub answered: usize,
    /// Runs of rephrasings, each as its queries' text.
    pub rephrasing_runs: Vec<Vec<String>>,
    /// Queries inside those runs.
    pub rephrased: usize,
    /// The most frequent queries that found nothing, most frequent first.
    pub top_holes: Vec<(String, usize)>,
}

pub fn classify(rows: &[QueryRow]) -> Report {
    let mut report = Report { queries: rows.len(), ..Report::default() };
    let mut holes: std::collections::BTreeMap<String, usize> = Default::default();
    for row in rows {
        match (row.candidates, row.survivors, row.returned) {
            (0, _, _) => {
                report.holes += 1;
                *holes.entry(row.query.to_lowercase()).or_default() += 1;
            }
            (_, 0, _) => report.boundaries += 1,
            (_, _, returned) if returned > 0 => report.answered += 1,
            _ => {}
        }
    }
    let mut run: Vec<&QueryRow> = Vec::new();
    let close = |run: &mut Vec<&QueryRow>, report: &mut Report| {
        if run.len() >= RUN_LENGTH_MIN {
            report.rephrased += run.len();
            report.rephrasing_runs.push(run.iter().map(|row| row.query.clone()).collect());
        }
        run.clear();
    };
    for row in rows {
        let continues = run.last().is_some_and(|last| row.at - last.at <= RUN_GAP_SECONDS)
            && row.candidates > 0;
        if !continues {
            close(&mut run, &mut report);
        }
        if row.candidates > 0 {
            run.push(row);
        }
    }
    close(&mut run, &mut report);
    let mut top: Vec<(String, usize)> = holes.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(10);
    report.top_holes = top;
    report
}

/// The report as text for operators.
pub fn render(report: &Report) -> String {
    let share = |count: usize| match report.queries {
        0 => 0.0,
        total => 100.0 * count as f64 / total as f64,
    };
    let mut lines = vec![
        format!("{} searches", report.queries),
        format!("  answered            {:>6}  {:5.1} %", report.answered, share(report.answered)),
        format!(
            "  hole in the index   {:>6}  {:5.1} %  (no candidate at all)",
            report.holes,
            share(report.holes)
        ),
        format!(
            "  permission boundary {:>6}  {:5.1} %  (candidates, none readable by the searcher)",
            report.boundaries,
            share(report.boundaries)
        ),
        format!(
            "  rephrased           {:>6}  {:5.1} %  in {} runs of {}+ searches within {} s (vocabulary mismatch: what embeddings would fix)",
            report.rephrased,
            share(report.rephrased),
            report.rephrasing_runs.len(),
            RUN_LENGTH_MIN,
            RUN_GAP_SECONDS
        ),
    ];
    if !report.top_holes.is_empty() {
        lines.push("most frequent searches that found nothing:".into());
        for (query, count) in &report.top_holes {
            lines.push(format!("  {count:>4}  {query}"));
        }
    }
    for run in report.rephrasing_runs.iter().rev().take(5) {
        lines.push(format!("run: {}", run.join(" → ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(at: i64, query: &str, candidates: u64, survivors: u64, returned: u64) -> QueryRow {
        QueryRow { at, query: query.into(), candidates, survivors, returned }
    }

    #[test]
    fn each_kind_of_miss_is_counted_apart() {
        let rows = [
            row(0, "budget", 3, 2, 4),
            row(1000, "congés payés", 0, 0, 0),
            row(2000, "salaire direction", 5, 0, 0),
            row(3000, "RTT", 4, 1, 1),
            row(3030, "jours de repos", 6, 2, 3),
            row(3090, "récupération", 2, 1, 1),
            row(9000, "congés payés", 0, 0, 0),
        ];
        let report = classify(&rows);
        assert_eq!(report.queries, 7);
        assert_eq!(report.holes, 2);
        assert_eq!(report.boundaries, 1);
        assert_eq!(report.answered, 4);
        assert_eq!(report.rephrasing_runs, vec![vec!["RTT", "jours de repos", "récupération"]]);
        assert_eq!(report.rephrased, 3);
        assert_eq!(report.top_holes, vec![("congés payés".to_string(), 2)]);
        let text = render(&report);
        assert!(text.contains("hole in the index        2"), "{text}");
        assert!(text.contains("run: RTT → jours de repos → récupération"), "{text}");
    }
}
