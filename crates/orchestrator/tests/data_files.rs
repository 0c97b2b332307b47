//! The orchestrator's data directory and its three databases are private
//! to its account even under a permissive umask: the test runs itself again
//! as a child under `umask 022` (the umask is the whole process's), starts
//! the orchestrator there on a data directory left 0755 by an older
//! version, and checks what it finds.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

#[path = "support/alone.rs"]
mod alone;

use orchestrator::service::Orchestrator;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

const CHILD: &str = "TAMEBI_ORCHESTRATOR_DATA_FILES_CHILD";

fn mode(path: &Path) -> String {
    let mode = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    format!("{:o}", mode.permissions().mode() & 0o777)
}

async fn child(root: &Path) {
    let data_dir = root.join("orchestrator");
    std::fs::create_dir_all(&data_dir).unwrap();
    std::fs::set_permissions(&data_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = alone::config(b"data-files-test-secret-0123456789abcdef", Some(data_dir.clone()));
    let orchestrator = Orchestrator::start(config).await.unwrap();
    assert_eq!(mode(&data_dir), "700", "the data directory");
    for name in ["chat.db", "audit.db", "memory.db"] {
        let path = data_dir.join(name);
        assert_eq!(mode(&path), "600", "{name}");
        for suffix in ["-wal", "-shm"] {
            let companion = data_dir.join(format!("{name}{suffix}"));
            if companion.exists() {
                assert_eq!(mode(&companion), "600", "{name}{suffix}");
            }
        }
    }
    orchestrator.shutdown().await;
}

#[tokio::test]
async fn the_data_directory_and_databases_are_private_under_umask_022() {
    if let Ok(root) = std::env::var(CHILD) {
        child(Path::new(&root)).await;
        return;
    }
    let root =
        std::env::temp_dir().join(format!("tamebi-orchestrator-modes-{}", std::process::id()));
    let test = "the_data_directory_and_databases_are_private_under_umask_022";
    sqlite_db::umask_child::run(test, "022", CHILD, &root, &[]);
}
