//! `tamebi index report`: the `queries` table, classified, so the trigger
//! for adding embeddings is a number rather than an argument.
//!
//! Each search is classified by its all-words query, even when the
//! any-word fallback then answered (`queries.matched = 'any'`; the row
//! keeps the all-words query's candidates):
//!
//! - candidates = 0: a hole in the index (nothing read says it — or the
//!   words are not the document's words);
//! - candidates > 0, survivors = 0: a permission boundary doing its job;
//! - answered by the fallback: counted apart as well — some of the words
//!   are not the document's, the first sign of vocabulary mismatch. Before
//!   the column existed such a search read as answered, undercounting both.
//!   A fallback by words and one by meaning (`matched = 'meaning'`, with
//!   embeddings on) are counted apart: the first says how often words
//!   alone fall short, the second how often embeddings stepped in;
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
    /// Queries whose all-words query returned passages.
    pub answered: usize,
    /// Holes and boundaries of the all-words query that the any-word
    /// fallback answered with passages having some of the words.
    pub answered_by_some_words: usize,
    /// Searches the nearest passages in meaning answered: as the fallback
    /// of the all-words query (counted in its hole or boundary too), or as
    /// the only query.
    pub answered_by_meaning: usize,
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
        let fallback = row.fallback_after.is_some();
        if row.by_meaning && row.fallback_after.is_none() {
            // By meaning alone: no all-words query to classify.
            if row.returned > 0 {
                report.answered_by_meaning += 1;
            }
            continue;
        }
        match (row.all_words_candidates(), fallback, row.survivors, row.returned) {
            (0, _, _, _) => {
                report.holes += 1;
                *holes.entry(row.query.to_lowercase()).or_default() += 1;
            }
            // The fallback runs only when no all-words passage was readable.
            (_, true, _, _) | (_, false, 0, _) => report.boundaries += 1,
            (_, false, _, returned) if returned > 0 => report.answered += 1,
            _ => {}
        }
        match (fallback && row.returned > 0, row.by_meaning) {
            (true, false) => report.answered_by_some_words += 1,
            (true, true) => report.answered_by_meaning += 1,
            (false, _) => {}
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
            "  by some words only  {:>6}  {:5.1} %  (no readable passage has them all; the any-word fallback answered — counted in the holes or boundaries below too)",
            report.answered_by_some_words,
            share(report.answered_by_some_words)
        ),
        format!(
            "  by meaning          {:>6}  {:5.1} %  (the nearest passages in meaning answered: embeddings; as a fallback, counted in the holes or boundaries below too)",
            report.answered_by_meaning,
            share(report.answered_by_meaning)
        ),
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
        QueryRow {
            at,
            query: query.into(),
            candidates,
            survivors,
            returned,
            fallback_after: None,
            by_meaning: false,
        }
    }

    /// A search the any-word fallback answered, after the all-words query
    /// had `all_words` candidate files.
    fn fallback(at: i64, query: &str, all_words: u64, candidates: u64, returned: u64) -> QueryRow {
        QueryRow {
            at,
            query: query.into(),
            candidates,
            survivors: u64::from(returned > 0),
            returned,
            fallback_after: Some(all_words),
            by_meaning: false,
        }
    }

    /// The report's (queries, holes, boundaries, answered).
    fn counts(report: &Report) -> (usize, usize, usize, usize) {
        (report.queries, report.holes, report.boundaries, report.answered)
    }

    /// The fallback once recorded its own candidates as the search's, so a
    /// phrase no passage holds read as answered.
    #[test]
    fn a_fallback_answer_counts_the_hole_or_boundary_behind_it() {
        let rows = [
            fallback(0, "congés payés RTT", 0, 4, 2),
            fallback(1000, "salaire direction 2026", 3, 6, 1),
            fallback(2000, "nobody qqqqzz", 0, 1, 0),
            row(3000, "budget", 3, 2, 4),
        ];
        let report = classify(&rows);
        assert_eq!(counts(&report), (4, 2, 1, 1), "{report:?}");
        assert_eq!(report.answered_by_some_words, 2, "{report:?}");
        assert_eq!(
            report.top_holes,
            vec![("congés payés rtt".to_string(), 1), ("nobody qqqqzz".to_string(), 1)]
        );
        let text = render(&report);
        assert!(text.contains("by some words only       2"), "{text}");
        assert!(text.contains("hole in the index        2"), "{text}");
    }

    /// Before the column said `meaning`, an answer by embeddings read as
    /// one by some of the words.
    #[test]
    fn an_answer_by_meaning_is_counted_apart_from_one_by_some_words() {
        let by_meaning = |row: QueryRow| QueryRow { by_meaning: true, ..row };
        let rows = [
            fallback(0, "congés payés RTT", 0, 4, 2),
            by_meaning(fallback(1000, "time off rules", 3, 5, 2)),
            // By meaning alone (the `meaning` fusion): no all-words query.
            by_meaning(row(2000, "holidays", 5, 2, 3)),
            by_meaning(row(3000, "vacation", 5, 0, 0)),
        ];
        let report = classify(&rows);
        assert_eq!(counts(&report), (4, 1, 1, 0), "{report:?}");
        assert_eq!((report.answered_by_some_words, report.answered_by_meaning), (1, 2));
        let text = render(&report);
        assert!(text.contains("by some words only       1"), "{text}");
        assert!(text.contains("by meaning               2"), "{text}");
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
        assert_eq!(counts(&report), (7, 2, 1, 4), "{report:?}");
        assert_eq!(report.rephrasing_runs, vec![vec!["RTT", "jours de repos", "récupération"]]);
        assert_eq!(report.rephrased, 3);
        assert_eq!(report.top_holes, vec![("congés payés".to_string(), 2)]);
        let text = render(&report);
        assert!(text.contains("hole in the index        2"), "{text}");
        assert!(text.contains("run: RTT → jours de repos → récupération"), "{text}");
    }
}
