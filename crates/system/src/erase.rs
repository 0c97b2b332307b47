//! `tamebi erase`: what an operator runs for a user's erasure request, or to
//! take back what the agent wrote into memory.
//!
//! Erasing a user removes their conversations (messages, summaries and
//! approvals go with them) from chat.db and their facts from memory.db;
//! audit.db is not touched — the record of which tools ran for whom is
//! kept apart on purpose and backed up on its own. `--agent-facts` instead
//! removes only the facts the agent wrote (source `agent`), for one user
//! or everyone: the purge for an agent that misbehaved. The databases are
//! opened as the running orchestrator opens them (WAL, busy timeout), so
//! it need not be stopped.

use anyhow::Context as _;
use orchestrator::store::{chat, memory};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct EraseArgs {
    /// The user whose data goes (their Nextcloud uid).
    #[arg(long)]
    uid: Option<String>,
    /// Remove only the facts the agent wrote (for --uid, or for every user).
    #[arg(long)]
    agent_facts: bool,
    /// The orchestrator's data directory (chat.db, memory.db).
    #[arg(long, env = "TAMEBI_DATA_DIR", default_value = "data/orchestrator")]
    data_dir: PathBuf,
}

pub async fn run(args: EraseArgs) -> anyhow::Result<()> {
    let chat_path = args.data_dir.join("chat.db");
    let memory_path = args.data_dir.join("memory.db");
    for path in [&chat_path, &memory_path] {
        anyhow::ensure!(
            path.exists(),
            "{} does not exist: point --data-dir at the orchestrator's data directory",
            path.display()
        );
    }
    let memory_db = memory::open(Some(&memory_path))
        .with_context(|| format!("cannot open {}", memory_path.display()))?;
    if args.agent_facts {
        let uid = args.uid.clone();
        let purged = memory_db.run(move |c| memory::purge_agent_facts(c, uid.as_deref())).await?;
        let whose = args.uid.as_deref().map_or("every user".to_string(), |uid| uid.to_string());
        println!(
            "Removed {purged} fact(s) the agent wrote, for {whose}. Facts the users gave are kept."
        );
        return Ok(());
    }
    let Some(uid) = args.uid else {
        anyhow::bail!(
            "say whose data to erase with --uid, or --agent-facts to purge agent-written facts"
        );
    };
    let chat_db = chat::open(Some(&chat_path))
        .with_context(|| format!("cannot open {}", chat_path.display()))?;
    let who = uid.clone();
    let conversations = chat_db.run(move |c| chat::erase_user(c, &who)).await?;
    let who = uid.clone();
    let facts = memory_db.run(move |c| memory::erase_user(c, &who)).await?;
    println!(
        "Erased {uid}: {conversations} conversation(s) with their messages, summaries and approvals, and {facts} memory fact(s). The audit trail (audit.db) is kept."
    );
    Ok(())
}
