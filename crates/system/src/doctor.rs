//! `tamebi doctor`: checks a configuration against a running Nextcloud (or
//! the fake) and the Tamebi services, one finding per check: what is wrong,
//! why it matters, and the exact fix. It reads the same flags and
//! environment variables the services read, so it judges the configuration
//! they actually run with. See docs/doctor.md.

mod checks;
mod oidc;

use serde_json::{Value, json};
use std::path::PathBuf;

/// The configuration under examination: the services' own variables.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Nextcloud's internal URL, where the services reach DAV, OCS and OIDC.
    #[arg(long, env = "NEXTCLOUD_URL", default_value = "http://127.0.0.1:8080")]
    pub nextcloud_url: String,
    /// Nextcloud's browser-facing URL (overwritehost); default: the internal URL.
    #[arg(long, env = "TAMEBI_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// The issuer the MCP servers compare `iss` to; default: the browser-facing URL.
    #[arg(long, env = "TAMEBI_OIDC_ISSUER")]
    pub issuer: Option<String>,
    /// The audience of Nextcloud tokens (user_oidc's provider client id).
    #[arg(long, env = "TAMEBI_NEXTCLOUD_AUDIENCE", default_value = "nextcloud")]
    pub nextcloud_audience: String,
    /// Where the MCP servers are reached, as name=URL (the orchestrator's --mcp).
    #[arg(
        long = "mcp",
        env = "TAMEBI_MCP_SERVERS",
        value_delimiter = ',',
        default_value = "nextcloud=http://127.0.0.1:9101/mcp,mail=http://127.0.0.1:9102/mcp"
    )]
    pub mcp: Vec<String>,
    /// mcp-nextcloud's canonical URL (its token audience); default: where it is reached.
    #[arg(long, env = "TAMEBI_MCP_NEXTCLOUD_URL")]
    pub mcp_nextcloud_url: Option<String>,
    /// mcp-mail's canonical URL (its token audience); default: where it is reached.
    #[arg(long, env = "TAMEBI_MCP_MAIL_URL")]
    pub mcp_mail_url: Option<String>,
    /// The orchestrator's base URL (the Nextcloud app's chat proxy target).
    #[arg(long, env = "TAMEBI_ORCHESTRATOR_URL", default_value = "http://127.0.0.1:9100")]
    pub orchestrator_url: String,
    /// The model API root including its version (OpenAI-compatible).
    #[arg(long, env = "TAMEBI_MODEL_URL", default_value = "http://127.0.0.1:8090/v1")]
    pub model_url: String,
    /// The model name the orchestrator sends.
    #[arg(long, env = "TAMEBI_MODEL", default_value = "fake-model")]
    pub model: String,
    /// The provider's API key, if it needs one.
    #[arg(long, env = "TAMEBI_MODEL_API_KEY", hide_env_values = true)]
    pub model_api_key: Option<String>,
    /// The document server's internal URL (DocumentServerInternalUrl), as mcp-nextcloud uses it.
    #[arg(long, env = "ONLYOFFICE_URL")]
    pub converter_url: Option<String>,
    /// The document server's browser-facing URL (DocumentServerUrl).
    #[arg(long, env = "ONLYOFFICE_PUBLIC_URL")]
    pub converter_public_url: Option<String>,
    /// The document server's JWT secret (its JWT_SECRET).
    #[arg(long, env = "ONLYOFFICE_JWT_SECRET", hide_env_values = true)]
    pub converter_secret: Option<String>,
    /// A test user whose tokens are obtained by the browser's code flow.
    #[arg(long, env = "TAMEBI_DOCTOR_USER")]
    pub user: Option<String>,
    /// That user's password (the login form's, not an app password).
    #[arg(long, env = "TAMEBI_DOCTOR_PASSWORD", hide_env_values = true)]
    pub password: Option<String>,
    /// The OIDC clients as audience=client_id:client_secret, for the audiences
    /// mcp-nextcloud, mcp-mail and nextcloud (what the Tamebi app holds).
    #[arg(
        long = "oidc-client",
        env = "TAMEBI_OIDC_CLIENTS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub oidc_clients: Vec<String>,
    /// The clients' registered redirect URI; default:
    /// <public URL>/index.php/apps/tamebi/oauth/callback.
    #[arg(long, env = "TAMEBI_OIDC_REDIRECT_URI")]
    pub redirect_uri: Option<String>,
    /// A Nextcloud administrator, for the webhook registrations.
    #[arg(long, env = "NEXTCLOUD_ADMIN_USER")]
    pub admin_user: Option<String>,
    /// That administrator's password or app password.
    #[arg(long, env = "NEXTCLOUD_ADMIN_PASSWORD", hide_env_values = true)]
    pub admin_password: Option<String>,
    /// Where Nextcloud calls mcp-nextcloud's webhook endpoint.
    #[arg(
        long,
        env = "TAMEBI_WEBHOOK_ENDPOINT",
        default_value = "http://127.0.0.1:9101/webhooks/nextcloud"
    )]
    pub webhook_endpoint: String,
    /// Where the orchestrator keeps chat.db, audit.db and memory.db.
    #[arg(long, env = "TAMEBI_DATA_DIR", default_value = "data/orchestrator")]
    pub data_dir: PathBuf,
    /// mcp-nextcloud's index file.
    #[arg(long, env = "TAMEBI_INDEX_DB", default_value = "data/index.db")]
    pub index_db: PathBuf,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Warning,
    Error,
    Skipped,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Error => "ERROR",
            Status::Skipped => "skipped",
        }
    }
}

/// One finding: the check, its status, and for anything not ok, why it
/// matters and the exact fix.
#[derive(Debug, Clone)]
pub struct Finding {
    pub check: String,
    pub status: Status,
    pub what: String,
    pub why: String,
    pub fix: String,
}

impl Finding {
    pub fn ok(check: impl Into<String>, what: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Ok,
            what: what.into(),
            why: String::new(),
            fix: String::new(),
        }
    }

    pub fn skipped(check: impl Into<String>, needs: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Skipped,
            what: format!("skipped: needs {}", needs.into()),
            why: String::new(),
            fix: String::new(),
        }
    }

    pub fn error(
        check: impl Into<String>,
        what: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check: check.into(),
            status: Status::Error,
            what: what.into(),
            why: why.into(),
            fix: fix.into(),
        }
    }

    pub fn warning(
        check: impl Into<String>,
        what: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding { status: Status::Warning, ..Finding::error(check, what, why, fix) }
    }

    fn to_json(&self) -> Value {
        json!({
            "check": self.check,
            "status": self.status.label().to_lowercase(),
            "what": self.what,
            "why": self.why,
            "fix": self.fix,
        })
    }
}

/// Runs every check, prints the findings, and exits 1 when any is an ERROR.
pub async fn run(args: DoctorArgs) -> anyhow::Result<()> {
    let findings = checks::run_all(&args).await;
    let errors = findings.iter().filter(|finding| finding.status == Status::Error).count();
    if args.json {
        let count = |status: Status| findings.iter().filter(|f| f.status == status).count();
        let report = json!({
            "findings": findings.iter().map(Finding::to_json).collect::<Vec<_>>(),
            "ok": count(Status::Ok),
            "warnings": count(Status::Warning),
            "errors": errors,
            "skipped": count(Status::Skipped),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&findings));
    }
    if errors > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// The findings as text, one block per finding and a summary line.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::new();
    for finding in findings {
        let label = format!("[{}]", finding.status.label());
        out.push_str(&format!("{label:<10} {}: {}\n", finding.check, finding.what));
        if !finding.why.is_empty() {
            out.push_str(&format!("{:<10} why: {}\n", "", finding.why));
        }
        if !finding.fix.is_empty() {
            out.push_str(&format!("{:<10} fix: {}\n", "", finding.fix));
        }
    }
    let count = |status: Status| findings.iter().filter(|f| f.status == status).count();
    out.push_str(&format!(
        "\n{} ok, {} warning(s), {} ERROR(s), {} skipped\n",
        count(Status::Ok),
        count(Status::Warning),
        count(Status::Error),
        count(Status::Skipped)
    ));
    out
}
