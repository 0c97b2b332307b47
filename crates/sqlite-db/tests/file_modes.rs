//! Database files and the folders made for them are private to the
//! service's account whatever the umask, `-wal` and `-shm` included, and a
//! looser file left behind is tightened on open. The umask is the whole
//! process's, so each case runs this test binary again as a child under
//! `sh -c 'umask …'` rather than changing it under other tests' feet.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

const CHILD: &str = "TAMEBI_SQLITE_DB_MODES_CHILD";
const UMASK: &str = "TAMEBI_SQLITE_DB_MODES_UMASK";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn companion(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// What the child checks, in a fresh folder under the umask it was given.
fn check_modes(root: &Path, umask: u32) {
    // The umask really is in force: a plain file gets 0666 less it.
    let plain = root.join("plain");
    std::fs::write(&plain, b"").unwrap();
    assert_eq!(mode(&plain), 0o666 & !umask, "the child runs under umask {umask:o}");

    // A new database in a new folder.
    let path = root.join("data/nested/new.db");
    let db = sqlite_db::Database::open(Some(&path), &["CREATE TABLE a (x TEXT)"]).unwrap();
    db.run_blocking(|c| {
        c.execute("INSERT INTO a (x) VALUES ('secret text')", []).map_err(Into::into)
    })
    .unwrap();
    assert_eq!(mode(&root.join("data")), 0o700, "a created folder");
    assert_eq!(mode(&root.join("data/nested")), 0o700, "a created folder");
    assert_eq!(mode(&path), 0o600, "the database file");
    // While the connection is open, SQLite keeps its WAL and shared memory.
    assert_eq!(mode(&companion(&path, "-wal")), 0o600, "the WAL file");
    assert_eq!(mode(&companion(&path, "-shm")), 0o600, "the shared-memory file");
    drop(db);

    // A database and a stale WAL left world-readable by an older version.
    let old = root.join("old.db");
    drop(sqlite_db::Database::open(Some(&old), &[]).unwrap());
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    let stale = companion(&old, "-journal");
    std::fs::write(&stale, b"").unwrap();
    std::fs::set_permissions(&stale, std::fs::Permissions::from_mode(0o666)).unwrap();
    let reopened = sqlite_db::Database::open(Some(&old), &[]).unwrap();
    assert_eq!(mode(&old), 0o600, "tightened on open");
    assert_eq!(mode(&stale), 0o600, "a companion tightened on open");
    assert_eq!(mode(&companion(&old, "-wal")), 0o600);
    drop(reopened);

    // A service's own data folder.
    let owned = root.join("owned");
    std::fs::create_dir(&owned).unwrap();
    std::fs::set_permissions(&owned, std::fs::Permissions::from_mode(0o755)).unwrap();
    sqlite_db::private_dir(&owned).unwrap();
    assert_eq!(mode(&owned), 0o700, "an existing data folder tightened");
    sqlite_db::private_dir(&root.join("made/deeper")).unwrap();
    assert_eq!(mode(&root.join("made")), 0o700);
    assert_eq!(mode(&root.join("made/deeper")), 0o700);
}

#[test]
fn database_files_are_private_whatever_the_umask() {
    if let Ok(root) = std::env::var(CHILD) {
        let umask = u32::from_str_radix(&std::env::var(UMASK).unwrap(), 8).unwrap();
        check_modes(Path::new(&root), umask);
        return;
    }
    for umask in ["022", "000"] {
        let root = std::env::temp_dir()
            .join(format!("tamebi-sqlite-db-modes-{}-{umask}", std::process::id()));
        let test = "database_files_are_private_whatever_the_umask";
        sqlite_db::umask_child::run(test, umask, CHILD, &root, &[(UMASK, umask.as_ref())]);
    }
}
