//! The store's rules, each as the seeds' bug it guards against.

use super::*;
use crate::index::query::FtsQuery;
use crate::index::words::Language;

fn store() -> Store {
    Store::open(None).unwrap()
}

/// Runs `work` on a fresh in-memory store; an error fails the test.
fn in_store(work: impl FnOnce(&mut Connection) -> Result<(), StoreError>) {
    store().run_blocking(work).unwrap();
}

fn seen(fileid: u64, mtime: Option<i64>) -> SeenFile {
    SeenFile {
        fileid,
        path: format!("Documents/{fileid}.md"),
        mtime,
        etag: Some(format!("etag-{fileid}")),
        size: Some(10),
        mime: Some("text/markdown".into()),
    }
}

fn queued_ids(connection: &Connection, limit: usize) -> Vec<u64> {
    queue(connection, 0, limit).unwrap().into_iter().map(|row| row.fileid).collect()
}

fn passage(text: &str) -> NewPassage {
    NewPassage {
        heading: Some("§3. Budget prévisionnel".into()),
        offset: 0,
        length: text.len(),
        text: text.into(),
    }
}

#[test]
fn no_table_has_a_user_column() {
    in_store(|connection| {
        let mut tables =
            connection.prepare("SELECT name FROM sqlite_master WHERE type IN ('table')")?;
        let names: Vec<String> =
            tables.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
        assert!(names.contains(&"docs".to_string()) && names.contains(&"queries".to_string()));
        for name in names {
            let mut columns = connection.prepare(&format!("PRAGMA table_info(\"{name}\")"))?;
            let columns: Vec<String> =
                columns.query_map([], |row| row.get(1))?.collect::<Result<_, _>>()?;
            for column in columns {
                let column = column.to_lowercase();
                assert!(
                    !["user", "uid", "owner", "account", "principal"]
                        .iter()
                        .any(|word| column.contains(word)),
                    "{name}.{column} names a user"
                );
            }
        }
        Ok(())
    });
}

/// Records files 1..=`count` as seen, file `n` modified at `mtime + n`.
fn seed_backlog(connection: &Connection, count: u64, mtime: i64) -> Result<(), StoreError> {
    for fileid in 1..=count {
        record_seen(connection, &seen(fileid, Some(mtime + fileid as i64)), 0)?;
    }
    Ok(())
}

#[test]
fn a_file_written_a_minute_ago_is_read_first_even_behind_a_500_file_backlog() {
    in_store(|connection| {
        seed_backlog(connection, 500, 1_000_000)?;
        record_seen(connection, &seen(9_999, Some(2_000_000)), 0)?;
        assert_eq!(queued_ids(connection, 20)[0], 9_999);
        assert_eq!(queued_ids(connection, 20)[1], 500, "then newest first");
        Ok(())
    });
}

#[test]
fn a_webhook_row_with_unknown_mtime_counts_as_just_now() {
    in_store(|connection| {
        seed_backlog(connection, 50, 1_000_000)?;
        mark_dirty(connection, 777, "Documents/fresh.md", 5)?;
        assert_eq!(queued_ids(connection, 1), vec![777]);
        // An already-read file written again also jumps the queue.
        record_passages(connection, 3, 1, None, &[passage("old text")], 10)?;
        mark_dirty(connection, 3, "Documents/3.md", 11)?;
        assert_eq!(&queued_ids(connection, 2)[..], &[777, 3][..]);
        Ok(())
    });
}

#[test]
fn rows_that_failed_before_wait_behind_everything_untried() {
    in_store(|connection| {
        seed_backlog(connection, 30, 1_000)?;
        // The five newest are broken.
        for fileid in 26..=30 {
            record_failure(connection, fileid, 1, Failure::Attempt, "malformed")?;
        }
        let order = queued_ids(connection, 30);
        assert_eq!(&order[..3], &[25, 24, 23]);
        assert_eq!(&order[25..], &[30, 29, 28, 27, 26]);
        Ok(())
    });
}

#[test]
fn only_the_third_failure_gives_up_and_a_changed_file_gets_a_new_chance() {
    in_store(|connection| {
        record_seen(connection, &seen(1, Some(5)), 0)?;
        record_failure(connection, 1, 1, Failure::Attempt, "timeout")?;
        record_failure(connection, 1, 1, Failure::Attempt, "timeout")?;
        let doc1 = doc(connection, 1)?.unwrap();
        assert_eq!((doc1.dirty, doc1.attempts, doc1.status.as_str()), (true, 2, "pending"));
        record_failure(connection, 1, 1, Failure::Attempt, "timeout")?;
        let doc1 = doc(connection, 1)?.unwrap();
        assert_eq!((doc1.dirty, doc1.attempts, doc1.status.as_str()), (false, 3, "failed"));
        assert!(queued_ids(connection, 10).is_empty());
        let mut changed = seen(1, Some(6));
        changed.etag = Some("etag-new".into());
        assert_eq!(record_seen(connection, &changed, 1)?, Seen::Changed);
        assert_eq!(queued_ids(connection, 10), vec![1]);
        Ok(())
    });
}

#[test]
fn a_scan_is_parked_once_and_never_queued_again() {
    in_store(|connection| {
        record_seen(connection, &seen(1, Some(5)), 0)?;
        record_failure(connection, 1, 1, Failure::NeedsOcr, "needs_ocr")?;
        assert!(queued_ids(connection, 10).is_empty());
        assert_eq!(record_seen(connection, &seen(1, Some(5)), 1)?, Seen::Unchanged);
        assert!(queued_ids(connection, 10).is_empty());
        assert_eq!(status(connection)?.needs_ocr, 1);
        Ok(())
    });
}

#[test]
fn a_read_finished_after_the_file_changed_again_is_not_recorded() {
    in_store(|connection| {
        record_seen(connection, &seen(1, Some(5)), 0)?;
        let queued = queue(connection, 0, 1)?.remove(0);
        mark_dirty(connection, 1, "Documents/1.md", 6)?;
        assert!(!record_passages(connection, 1, queued.version, None, &[passage("x")], 7)?);
        assert_eq!(queued_ids(connection, 10), vec![1], "still waiting for the newer file");
        Ok(())
    });
}

#[test]
fn accents_do_not_matter_and_passages_are_replaced_not_added() {
    in_store(|connection| {
        record_seen(connection, &seen(42, Some(5)), 0)?;
        let text = "Compte rendu de la réunion: le budget prévu est de quarante mille euros.";
        assert!(record_passages(connection, 42, 1, None, &[passage(text)], 1)?);
        let fts = |text: &str| FtsQuery::parse(text).unwrap().all();
        for query in ["reunion", "\"prevu\"", "budget previsionnel", "RÉUNION", "réunions"] {
            let found = candidates(connection, &fts(query), 10)?;
            assert_eq!(found.len(), 1, "{query}");
            assert_eq!(found[0].fileid, 42);
        }
        let reunion = fts("reunion");
        let still = Still { matching: Some(reunion.clone()), embedded_by: None };
        let hits = hits(connection, &still, &[candidates(connection, &reunion, 1)?[0].rowid])?;
        assert_eq!(hits[0].text, text);
        assert_eq!(hits[0].language, Language::French);
        assert_eq!(hits[0].heading.as_deref(), Some("§3. Budget prévisionnel"));
        mark_dirty(connection, 42, "Documents/42.md", 2)?;
        let version = queue(connection, 0, 1)?[0].version;
        assert!(record_passages(connection, 42, version, None, &[passage("autre chose")], 3)?);
        assert!(candidates(connection, &reunion, 10)?.is_empty());
        assert_eq!(status(connection)?.passages, 1);
        remove(connection, 42)?;
        assert_eq!(status(connection)?, Status { queries: 0, ..Status::default() });
        Ok(())
    });
}

#[test]
fn reopening_a_database_keeps_it_and_a_newer_schema_is_refused() {
    let directory = std::env::temp_dir().join(format!("tamebi-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    let path = directory.join("index.db");
    Store::open(Some(&path))
        .unwrap()
        .run_blocking(|connection| record_seen(connection, &seen(1, None), 0).map(|_| ()))
        .unwrap();
    let status = Store::open(Some(&path)).unwrap().run_blocking(|c| status(c)).unwrap();
    assert_eq!(status.known, 1);
    Store::open(Some(&path))
        .unwrap()
        .run_blocking(|connection| {
            connection.pragma_update(None, "user_version", 99)?;
            Ok(())
        })
        .unwrap();
    assert!(matches!(Store::open(Some(&path)), Err(StoreError::TooNew { found: 99, .. })));
    let _ = std::fs::remove_dir_all(&directory);
}

/// Migration 2 records which query answered: an index.db written before it
/// keeps its searches (all-words answers), and a fallback's row keeps the
/// all-words query's candidates.
#[test]
fn the_fallback_is_recorded_and_older_searches_read_as_all_words() {
    let directory = std::env::temp_dir().join(format!("tamebi-store-v1-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("index.db");
    let old = Database::open(Some(&path), &MIGRATIONS[..1]).unwrap();
    old.run_blocking(|connection| {
        connection.execute(
            "INSERT INTO queries (at, query, candidates, survivors, returned)
             VALUES (10, 'budget', 3, 2, 4)",
            [],
        )?;
        Ok(())
    })
    .unwrap();
    drop(old);

    let store = Store::open(Some(&path)).unwrap();
    let rows = store
        .run_blocking(|connection| {
            let search = Search {
                candidates: 4,
                survivors: 1,
                returned: 2,
                fallback_after: Some(0),
                by_meaning: false,
            };
            record_search(connection, 20, "congés payés RTT", &search)?;
            let meaning = Search { fallback_after: Some(3), by_meaning: true, ..search };
            record_search(connection, 25, "time off", &meaning)?;
            let meaning_only = Search { fallback_after: None, ..meaning };
            record_search(connection, 26, "holidays", &meaning_only)?;
            record_query(connection, 30, "budget", 3, 2, 4)?;
            queries(connection, 0)
        })
        .unwrap();
    let answered: Vec<(&str, Option<u64>, u64, bool)> = rows
        .iter()
        .map(|row| {
            (row.query.as_str(), row.fallback_after, row.all_words_candidates(), row.by_meaning)
        })
        .collect();
    assert_eq!(
        answered,
        [
            ("budget", None, 3, false),
            ("congés payés RTT", Some(0), 0, false),
            ("time off", Some(3), 3, true),
            ("holidays", None, 4, true),
            ("budget", None, 3, false)
        ]
    );
    drop(store);
    let _ = std::fs::remove_dir_all(&directory);
}

/// A file of `texts` read at version 1 (recorded as seen first).
fn read_file(connection: &mut Connection, fileid: u64, texts: &[&str]) -> Result<(), StoreError> {
    record_seen(connection, &seen(fileid, Some(1)), 1)?;
    let version = vectors_version(connection, fileid)?;
    let passages: Vec<NewPassage> = texts.iter().map(|text| passage(text)).collect();
    assert!(record_passages(connection, fileid, version, None, &passages, 2)?);
    Ok(())
}

fn vectors_version(connection: &Connection, fileid: u64) -> Result<i64, StoreError> {
    Ok(version(connection, fileid)?.expect("the row exists"))
}

fn pending_texts(connection: &Connection, model: &str) -> Vec<String> {
    vectors::pending(connection, model, 100).unwrap().into_iter().map(|(_, text)| text).collect()
}

#[test]
fn passages_wait_for_a_vector_of_the_configured_model_and_a_new_model_embeds_again() {
    in_store(|connection| {
        read_file(connection, 1, &["first", "second"])?;
        read_file(connection, 2, &["third"])?;
        assert_eq!(pending_texts(connection, "m1"), ["third", "second", "first"], "newest first");
        let pending = vectors::pending(connection, "m1", 2)?;
        let rows: Vec<(i64, String, Vec<f32>)> =
            pending.into_iter().map(|(rowid, text)| (rowid, text, vec![0.5, -1.0])).collect();
        assert_eq!(vectors::record(connection, "m1", &rows)?, vec![true, true]);
        assert_eq!(pending_texts(connection, "m1"), ["first"]);
        assert_eq!(vectors::embedded(connection, "m1")?, 2);
        // Another model: every passage waits again; the old vectors are
        // replaced one by one, never counted for the new model.
        assert_eq!(pending_texts(connection, "m2").len(), 3);
        assert_eq!(vectors::embedded(connection, "m2")?, 0);
        let (rowid, text) = vectors::pending(connection, "m2", 1)?.remove(0);
        assert_eq!(vectors::record(connection, "m2", &[(rowid, text, vec![1.0])])?, vec![true]);
        assert_eq!(
            (vectors::embedded(connection, "m1")?, vectors::embedded(connection, "m2")?),
            (1, 1)
        );
        let blob: Vec<u8> = connection.query_row(
            "SELECT vector FROM vectors WHERE rowid = ?1",
            [rowid],
            |row| row.get(0),
        )?;
        assert_eq!(vectors::from_blob(&blob), Some(vec![1.0]));
        Ok(())
    });
}

#[test]
fn a_vector_for_a_passage_replaced_meanwhile_is_not_written_and_a_reread_drops_vectors() {
    in_store(|connection| {
        read_file(connection, 7, &["old text"])?;
        let (rowid, text) = vectors::pending(connection, "m", 1)?.remove(0);
        // The file changes while the endpoint computes: same rowid, new text.
        mark_dirty(connection, 7, "Documents/7.md", 3)?;
        let version = vectors_version(connection, 7)?;
        assert!(record_passages(connection, 7, version, None, &[passage("new text")], 4)?);
        assert_eq!(vectors::record(connection, "m", &[(rowid, text, vec![1.0])])?, vec![false]);
        assert_eq!(pending_texts(connection, "m"), ["new text"]);
        let (rowid, text) = vectors::pending(connection, "m", 1)?.remove(0);
        assert_eq!(vectors::record(connection, "m", &[(rowid, text, vec![1.0])])?, vec![true]);
        // Read again: its passages are new rows, and so are their vectors.
        mark_dirty(connection, 7, "Documents/7.md", 5)?;
        let version = vectors_version(connection, 7)?;
        assert!(record_passages(connection, 7, version, None, &[passage("newer")], 6)?);
        assert_eq!(vectors::embedded(connection, "m")?, 0);
        remove(connection, 7)?;
        let left: i64 =
            connection.query_row("SELECT COUNT(*) FROM vectors", [], |row| row.get(0))?;
        assert_eq!(left, 0, "a removed file leaves no vector");
        Ok(())
    });
}

#[test]
fn status_counts_vectors_of_the_configured_model_only() {
    in_store(|connection| {
        read_file(connection, 1, &["one", "two"])?;
        assert_eq!(status(connection)?.embeddings_model, None);
        vectors::set_model(connection, Some("m"))?;
        let (rowid, text) = vectors::pending(connection, "m", 1)?.remove(0);
        vectors::record(connection, "m", &[(rowid, text, vec![1.0])])?;
        let now = status(connection)?;
        assert_eq!(
            (now.embeddings_model.as_deref(), now.embedded, now.passages),
            (Some("m"), 1, 2)
        );
        vectors::set_model(connection, Some("other"))?;
        assert_eq!(status(connection)?.embedded, 0);
        vectors::set_model(connection, None)?;
        assert_eq!(status(connection)?.embeddings_model, None);
        Ok(())
    });
}

#[test]
fn blobs_round_trip_and_a_torn_blob_is_refused() {
    let vector = vec![0.0, -1.5, f32::MIN_POSITIVE, 3.25];
    assert_eq!(vectors::from_blob(&vectors::to_blob(&vector)), Some(vector));
    assert_eq!(vectors::from_blob(&[0, 0, 128]), None);
}
