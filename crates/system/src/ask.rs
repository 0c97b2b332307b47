//! `tamebi ask`: the chat from a terminal, exactly as the browser uses it. It
//! logs in with Nextcloud's login form, reads the request token from the
//! chat page, posts the question to the Tamebi app and prints the UI message
//! stream as it arrives; approvals are answered by flag or on the terminal.
//! It holds no token of its own: the session cookie is the user's, like a
//! browser's, so the app stays the only one that signs for the user.

use anyhow::Context as _;
use serde_json::{Value, json};
use std::io::{IsTerminal as _, Write as _};

/// A bound on approve-then-continue rounds in one invocation.
const APPROVAL_ROUNDS_MAX: usize = 10;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// Nextcloud's URL (the one `tamebi up` prints).
    #[arg(long, env = "NEXTCLOUD_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// Who asks.
    #[arg(long, default_value = "alice")]
    pub user: String,
    /// Their password (default: the demo's alice-demo-password; prefer
    /// TAMEBI_ASK_PASSWORD for a real one: flags show in `ps`).
    #[arg(
        long,
        env = "TAMEBI_ASK_PASSWORD",
        hide_env_values = true,
        default_value = "alice-demo-password"
    )]
    pub password: String,
    /// Continue this conversation (default: a new one, whose id is printed).
    #[arg(long)]
    pub conversation: Option<String>,
    /// Approve every action the answer asks approval for.
    #[arg(long, conflicts_with = "deny")]
    pub approve: bool,
    /// Deny every action the answer asks approval for.
    #[arg(long)]
    pub deny: bool,
    /// The question.
    pub question: String,
}

/// A logged-in session: cookies plus the page's request token.
struct Session {
    base: String,
    cookies: String,
    request_token: String,
    http: reqwest::Client,
}

/// What one streamed answer left to decide.
#[derive(Default)]
struct Answer {
    message_id: Option<String>,
    approvals: Vec<Approval>,
    failed: bool,
}

struct Approval {
    approval_id: String,
    tool_call_id: String,
}

pub async fn ask(args: AskArgs) -> anyhow::Result<()> {
    let base = args.url.trim_end_matches('/').to_string();
    let conversation = match &args.conversation {
        Some(conversation) => conversation.clone(),
        None => format!("c-{}", crate::up::random_hex(8)?),
    };
    let session = Session::login(&base, &args.user, &args.password).await?;
    eprintln!("conversation {conversation}");
    let question = json!({
        "id": conversation,
        "trigger": "submit-message",
        "message": {
            "id": format!("u-{}", crate::up::random_hex(8)?),
            "role": "user",
            "parts": [{"type": "text", "text": args.question}],
        },
    });
    let mut answer = session.chat(&question).await?;
    let mut rounds = 0;
    while !answer.approvals.is_empty() && !answer.failed {
        rounds += 1;
        anyhow::ensure!(
            rounds <= APPROVAL_ROUNDS_MAX,
            "more than {APPROVAL_ROUNDS_MAX} rounds of approvals in one question: stopped"
        );
        let mut parts = Vec::new();
        for approval in &answer.approvals {
            let approved = if args.approve {
                true
            } else if args.deny {
                false
            } else if std::io::stdin().is_terminal() {
                confirm()?
            } else {
                println!(
                    "\nNothing was done: ask again with --approve or --deny (or on a terminal, to answer y/n)."
                );
                return finish(&conversation, false);
            };
            println!("{}", if approved { "✓ approved" } else { "✗ denied" });
            parts.push(json!({
                "type": "dynamic-tool",
                "toolCallId": approval.tool_call_id,
                "state": "approval-responded",
                "approval": {"id": approval.approval_id, "approved": approved},
            }));
        }
        let decision = json!({
            "id": conversation,
            "trigger": "submit-message",
            "message": {
                "id": answer.message_id.clone().unwrap_or_else(|| "a".to_string()),
                "role": "assistant",
                "parts": parts,
            },
        });
        answer = session.chat(&decision).await?;
    }
    finish(&conversation, answer.failed)
}

fn finish(conversation: &str, failed: bool) -> anyhow::Result<()> {
    println!();
    eprintln!("(continue with: tamebi ask --conversation {conversation} \"…\")");
    anyhow::ensure!(!failed, "the answer ended with an error (above)");
    Ok(())
}

fn confirm() -> anyhow::Result<bool> {
    print!("Approve? [y/N] ");
    std::io::stdout().flush().context("cannot write to the terminal")?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).context("cannot read the answer")?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes" | "oui"))
}

impl Session {
    async fn login(base: &str, user: &str, password: &str) -> anyhow::Result<Session> {
        anyhow::ensure!(
            base.starts_with("http://"),
            "{base}: this build of tamebi speaks plain HTTP only; give the http:// URL with --url"
        );
        let http = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("cannot build an HTTP client")?;
        use scenario::browser::LoginError;
        let scenario::browser::Session { cookies, request_token } = scenario::browser::login(
            &http, base, user, password,
        )
        .await
        .map_err(|error| match error {
            LoginError::Unreachable(_) => {
                anyhow::anyhow!("cannot reach {base}: is `tamebi up` running? (--url)")
            }
            LoginError::Refused(status) => anyhow::anyhow!(
                "{base} refused the login of {user} ({status}): check --user and --password"
            ),
            LoginError::Page(error) => {
                anyhow::anyhow!("cannot load {base}/apps/tamebi/: {error}")
            }
            LoginError::NoRequestToken => anyhow::anyhow!(
                "{base}/apps/tamebi/ carries no request token: is the Tamebi app enabled there?"
            ),
        })?;
        Ok(Session { base: base.to_string(), cookies, request_token, http })
    }

    /// Posts one message and prints the answer as it streams.
    async fn chat(&self, body: &Value) -> anyhow::Result<Answer> {
        let url = format!("{}/apps/tamebi/api/chat", self.base);
        let mut response = self
            .http
            .post(&url)
            .header("Cookie", &self.cookies)
            .header("requesttoken", &self.request_token)
            .header("Content-Type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .with_context(|| format!("cannot reach {url}"))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            let envelope: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let error = if envelope["error"].is_object() { &envelope["error"] } else { &envelope };
            match error["message"].as_str() {
                Some(message) => anyhow::bail!(
                    "{message} (HTTP {status}, request id {})",
                    error["requestId"].as_str().unwrap_or("none")
                ),
                None => anyhow::bail!("{url} answered {status}: {}", text.trim()),
            }
        }
        let mut printer = Printer::default();
        let mut buffer = String::new();
        while let Some(bytes) = response.chunk().await.context("the answer was cut")? {
            buffer.push_str(&String::from_utf8_lossy(&bytes));
            while let Some(end) = buffer.find("\n\n") {
                let frame = buffer[..end].to_string();
                buffer.drain(..end + 2);
                printer.frame(&frame);
            }
        }
        printer.frame(&buffer);
        Ok(printer.answer)
    }
}

/// Prints chunks compactly and remembers what needs deciding.
#[derive(Default)]
struct Printer {
    answer: Answer,
    tool_names: std::collections::HashMap<String, (String, Value)>,
    in_text: bool,
}

impl Printer {
    fn frame(&mut self, frame: &str) {
        let Some(data) = frame.trim().strip_prefix("data:") else { return };
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            self.line(&format!("(unreadable chunk: {data})"));
            return;
        };
        let text = |key: &str| chunk[key].as_str().unwrap_or_default().to_string();
        match chunk["type"].as_str().unwrap_or_default() {
            "start" => self.answer.message_id = chunk["messageId"].as_str().map(str::to_string),
            "text-delta" => {
                print!("{}", text("delta"));
                let _ = std::io::stdout().flush();
                self.in_text = true;
            }
            "tool-input-available" => {
                let name = text("toolName");
                let input = chunk["input"].clone();
                self.line(&format!("→ {name} {input}"));
                self.tool_names.insert(text("toolCallId"), (name, input));
            }
            "tool-output-available" => self.line("← ok"),
            "tool-output-error" => self.line(&format!("← error: {}", text("errorText"))),
            "tool-output-denied" => self.line("← denied"),
            "tool-approval-request" => {
                let tool_call_id = text("toolCallId");
                let what = match self.tool_names.get(&tool_call_id) {
                    Some((name, input)) => format!("{name} {input}"),
                    None => format!("tool call {tool_call_id}"),
                };
                self.line(&format!("? waits for your approval: {what}"));
                self.answer
                    .approvals
                    .push(Approval { approval_id: text("approvalId"), tool_call_id });
            }
            "error" => {
                let error_text = text("errorText");
                let envelope: Value = serde_json::from_str(&error_text).unwrap_or(Value::Null);
                let message = match envelope["message"].as_str() {
                    Some(message) => format!(
                        "error: {message} (request id {})",
                        envelope["requestId"].as_str().unwrap_or("none")
                    ),
                    None => format!("error: {error_text}"),
                };
                self.line(&message);
                self.answer.failed = true;
            }
            _ => {}
        }
    }

    /// A line of its own, after any text printed so far.
    fn line(&mut self, line: &str) {
        if self.in_text {
            println!();
            self.in_text = false;
        }
        println!("{line}");
    }
}
