//! `tamebi doctor` against the whole stack in this process (the fake
//! Nextcloud with the demo fixture, mcp-nextcloud, mcp-mail, the fake model,
//! the orchestrator): the real binary, run with flags, must say ok to a
//! healthy stack and name the fix for each documented trap.

#![allow(clippy::unwrap_used)] // a test: a panic is its failure report

use scenario::harness::{MCP_MAIL_AUDIENCE, MCP_NEXTCLOUD_AUDIENCE, Stack};
use serde_json::{Value, json};
use std::path::PathBuf;

const REDIRECT_URI: &str = "http://127.0.0.1:8080/index.php/apps/tamebi/oauth/callback";
const CLIENTS: &str = "mcp-nextcloud=tamebi-mcp-nextcloud:demo-secret-mcp-nextcloud,mcp-mail=tamebi-mcp-mail:demo-secret-mcp-mail,nextcloud=nextcloud:demo-secret-nextcloud";
const CONVERTER_SECRET: &str = "demo-converter-secret";

/// Every variable the doctor reads: the child must see only our flags.
const VARIABLES: &[&str] = &[
    "NEXTCLOUD_URL",
    "TAMEBI_PUBLIC_URL",
    "TAMEBI_OIDC_ISSUER",
    "TAMEBI_NEXTCLOUD_AUDIENCE",
    "TAMEBI_MCP_SERVERS",
    "TAMEBI_MCP_NEXTCLOUD_URL",
    "TAMEBI_MCP_MAIL_URL",
    "TAMEBI_ORCHESTRATOR_URL",
    "TAMEBI_MODEL_URL",
    "TAMEBI_MODEL",
    "TAMEBI_MODEL_API_KEY",
    "ONLYOFFICE_URL",
    "ONLYOFFICE_PUBLIC_URL",
    "ONLYOFFICE_JWT_SECRET",
    "TAMEBI_DOCTOR_USER",
    "TAMEBI_DOCTOR_PASSWORD",
    "TAMEBI_OIDC_CLIENTS",
    "TAMEBI_OIDC_REDIRECT_URI",
    "NEXTCLOUD_ADMIN_USER",
    "NEXTCLOUD_ADMIN_PASSWORD",
    "TAMEBI_WEBHOOK_ENDPOINT",
    "TAMEBI_DATA_DIR",
    "TAMEBI_INDEX_DB",
];

/// The whole system with mcp-nextcloud's webhooks registered, and the
/// directory whose files the doctor's checks 9 look at.
struct Doctor {
    stack: Stack,
    dir: PathBuf,
}

impl std::ops::Deref for Doctor {
    type Target = Stack;

    fn deref(&self) -> &Stack {
        &self.stack
    }
}

struct Outcome {
    code: i32,
    stdout: String,
    findings: Vec<Value>,
}

impl Outcome {
    /// The finding of `check`, once the doctor is checked to have exited
    /// with `code` and the finding to have `status`.
    fn expect(&self, code: i32, check: &str, status: &str) -> &Value {
        assert_eq!(self.code, code, "{}", self.stdout);
        let finding = self.finding(check);
        assert_eq!(finding["status"], status, "{}", self.stdout);
        finding
    }

    fn finding(&self, check: &str) -> &Value {
        self.findings
            .iter()
            .find(|finding| finding["check"].as_str().is_some_and(|name| name.contains(check)))
            .unwrap_or_else(|| panic!("no finding {check:?} in {}", self.stdout))
    }
}

impl Doctor {
    async fn start() -> Doctor {
        let stack = Stack::builder().webhooks().start().await.unwrap();
        let fake = &stack.fake;
        let dir = std::env::temp_dir().join(format!(
            "tamebi-doctor-{}-{}",
            std::process::id(),
            fake.base_url().rsplit(':').next().unwrap()
        ));
        std::fs::create_dir_all(dir.join("orchestrator")).unwrap();
        // As the services make them: private (check 9, data file modes).
        for private in [dir.clone(), dir.join("orchestrator")] {
            std::fs::set_permissions(&private, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .unwrap();
        }
        Doctor { stack, dir }
    }

    /// The flags of a healthy configuration.
    fn flags(&self) -> Vec<(String, String)> {
        let base = self.fake.base_url().to_string();
        let flag = |name: &str, value: String| (format!("--{name}"), value);
        vec![
            flag("nextcloud-url", base.clone()),
            flag(
                "mcp",
                format!("nextcloud={}/mcp,mail={}/mcp", self.mcp().url(), self.mail().url()),
            ),
            flag("mcp-nextcloud-url", MCP_NEXTCLOUD_AUDIENCE.into()),
            flag("mcp-mail-url", MCP_MAIL_AUDIENCE.into()),
            flag("orchestrator-url", self.orchestrator().url().to_string()),
            flag("model-url", self.model().api_base()),
            flag("model", "fake-model".into()),
            flag("converter-url", self.fake.converter_url().to_string()),
            flag("converter-public-url", self.fake.converter_url().to_string()),
            flag("converter-secret", CONVERTER_SECRET.into()),
            flag("user", "alice".into()),
            flag("password", "alice-demo-password".into()),
            flag("oidc-client", CLIENTS.into()),
            flag("redirect-uri", REDIRECT_URI.into()),
            flag("admin-user", "admin".into()),
            flag("admin-password", "admin-demo-password".into()),
            flag("webhook-endpoint", format!("{}/webhooks/nextcloud", self.mcp().url())),
            flag("data-dir", self.dir.join("orchestrator").display().to_string()),
            flag("index-db", self.dir.join("index.db").display().to_string()),
        ]
    }

    /// Runs `tamebi doctor --json` with these flags, and once more as text.
    async fn doctor(&self, flags: Vec<(String, String)>) -> Outcome {
        let run = move |json: bool| {
            let flags = flags.clone();
            tokio::task::spawn_blocking(move || {
                let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tamebi"));
                command.arg("doctor");
                for name in VARIABLES {
                    command.env_remove(name);
                }
                command.env("RUST_LOG", "error");
                for (name, value) in &flags {
                    command.arg(format!("{name}={value}"));
                }
                if json {
                    command.arg("--json");
                }
                command.output().unwrap()
            })
        };
        let json_output = run(true).await.unwrap();
        let text_output = run(false).await.unwrap();
        let report: Value = serde_json::from_slice(&json_output.stdout).unwrap_or_else(|_| {
            panic!(
                "doctor --json printed JSON: {}{}",
                String::from_utf8_lossy(&json_output.stdout),
                String::from_utf8_lossy(&json_output.stderr)
            )
        });
        let code = json_output.status.code().unwrap();
        assert_eq!(text_output.status.code().unwrap(), code, "the same verdict as text");
        Outcome {
            code,
            stdout: String::from_utf8_lossy(&text_output.stdout).to_string(),
            findings: report["findings"].as_array().unwrap().clone(),
        }
    }

    fn with(&self, name: &str, value: &str) -> Vec<(String, String)> {
        let mut flags = self.flags();
        flags.retain(|(flag, _)| flag != &format!("--{name}"));
        flags.push((format!("--{name}"), value.to_string()));
        flags
    }

    async fn shutdown(self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        self.stack.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_healthy_stack_is_ok_on_every_check() {
    let stack = Doctor::start().await;
    let outcome = stack.doctor(stack.flags()).await;
    assert_eq!(outcome.code, 0, "{}", outcome.stdout);
    assert!(outcome.findings.iter().all(|finding| finding["status"] == "ok"), "{}", outcome.stdout);
    for check in [
        "1. Nextcloud reachable",
        "2. OIDC issuer",
        "3. Nextcloud URL pair",
        "3. OnlyOffice URL pair",
        "4. OIDC client mcp-nextcloud",
        "4. OIDC client mcp-mail",
        "4. OIDC client nextcloud",
        "5. Nextcloud accepts the bearer",
        "5. mcp-nextcloud accepts its token",
        "5. mcp-mail accepts its token",
        "6. webhooks",
        "7. converter",
        "8. model",
        "8. orchestrator",
        "9. orchestrator data dir",
        "9. index.db",
        "9. data file modes",
    ] {
        assert_eq!(outcome.finding(check)["status"], "ok", "{check}: {}", outcome.stdout);
    }
    assert!(outcome.stdout.contains("0 ERROR(s)"), "{}", outcome.stdout);
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unset_overwritehost_is_named_with_its_occ_fix() {
    let stack = Doctor::start().await;
    let base = stack.fake.base_url().to_string();
    let port = base.rsplit(':').next().unwrap().to_string();
    let public = format!("http://localhost:{port}");
    // Browsers use localhost; the services reach 127.0.0.1. With
    // overwritehost the issuer is the browser-facing URL whatever the Host...
    let set = stack
        .nextcloud_admin(reqwest::Method::POST, "/__fake/server")
        .json(&json!({ "overwritehost": format!("localhost:{port}") }))
        .send()
        .await
        .unwrap();
    assert!(set.status().is_success());
    let mut flags = stack.with("public-url", &public);
    flags.push(("--issuer".into(), public.clone()));
    let healthy = stack.doctor(flags.clone()).await;
    assert_eq!(healthy.finding("2. OIDC issuer")["status"], "ok", "{}", healthy.stdout);
    assert_eq!(healthy.finding("3. Nextcloud URL pair")["status"], "ok", "{}", healthy.stdout);
    // ... and without it, the issuer follows the Host of each request.
    stack.nextcloud_faults(&json!({ "overwritehost_unset": true })).await.unwrap();
    let outcome = stack.doctor(flags).await;
    let issuer = outcome.expect(1, "2. OIDC issuer", "error");
    let fix = issuer["fix"].as_str().unwrap();
    assert!(
        fix.contains(&format!("occ config:system:set overwritehost --value=localhost:{port}")),
        "{fix}"
    );
    assert!(fix.contains("overwriteprotocol --value=http"), "{fix}");
    assert!(issuer["why"].as_str().unwrap().contains("bare 401"), "{issuer}");
    assert!(outcome.stdout.contains("overwritehost"), "{}", outcome.stdout);
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_converter_secret_is_an_error_with_the_fix() {
    let stack = Doctor::start().await;
    // Our side: no ONLYOFFICE_JWT_SECRET, and the document server checks JWT.
    let mut flags = stack.flags();
    flags.retain(|(flag, _)| flag != "--converter-secret");
    let outcome = stack.doctor(flags).await;
    let converter = outcome.expect(1, "7. converter", "error");
    assert!(converter["fix"].as_str().unwrap().contains("ONLYOFFICE_JWT_SECRET"), "{converter}");
    // The other side: the document server runs with JWT off (the fake's
    // converter_secret_missing): it accepts anything, which the doctor
    // catches by signing with a wrong secret.
    stack.nextcloud_faults(&json!({ "converter_secret_missing": true })).await.unwrap();
    let outcome = stack.doctor(stack.flags()).await;
    let converter = outcome.expect(1, "7. converter", "error");
    assert!(converter["fix"].as_str().unwrap().contains("JWT_ENABLED=true"), "{converter}");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_on_a_closed_port_is_an_error() {
    let stack = Doctor::start().await;
    // A port nothing listens on: bind one, then let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let outcome =
        stack.doctor(stack.with("model-url", &format!("http://127.0.0.1:{port}/v1"))).await;
    let model = outcome.expect(1, "8. model", "error");
    assert!(model["fix"].as_str().unwrap().contains("TAMEBI_MODEL_URL"), "{model}");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_refusing_streamed_tool_calls_is_a_warning() {
    let stack = Doctor::start().await;
    stack.model_faults(&json!({ "refuse_streaming_with_tools": true })).await.unwrap();
    let outcome = stack.doctor(stack.flags()).await;
    let model = outcome.expect(0, "8. model", "warning");
    assert!(model["what"].as_str().unwrap().contains("unstreamed"), "{model}");
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_test_user_skips_the_token_checks_and_says_what_they_need() {
    let stack = Doctor::start().await;
    let mut flags = stack.flags();
    flags.retain(|(flag, _)| flag != "--user" && flag != "--password");
    let outcome = stack.doctor(flags).await;
    assert_eq!(outcome.code, 0, "{}", outcome.stdout);
    let client = outcome.finding("4. OIDC client nextcloud");
    assert_eq!(client["status"], "skipped");
    assert!(client["what"].as_str().unwrap().contains("--user"), "{client}");
    assert!(outcome.stdout.contains("skipped: needs"), "{}", outcome.stdout);
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_minted_for_another_audience_names_the_occ_fix() {
    let stack = Doctor::start().await;
    // mcp-nextcloud claims a canonical URL the client does not name.
    let outcome = stack.doctor(stack.with("mcp-nextcloud-url", "http://mcp.example/mcp")).await;
    let client = outcome.expect(1, "4. OIDC client mcp-nextcloud", "error");
    let fix = client["fix"].as_str().unwrap();
    assert!(
        fix.contains("occ oidc:create --token_type=jwt --resource_url=http://mcp.example/mcp"),
        "{fix}"
    );
    stack.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn nextcloud_refusing_the_bearer_names_user_oidc_settings() {
    let stack = Doctor::start().await;
    stack
        .nextcloud_faults(&json!({ "bearer_rejected_on": ["/ocs/v2.php/cloud/user"] }))
        .await
        .unwrap();
    let outcome = stack.doctor(stack.flags()).await;
    let bearer = outcome.expect(1, "5. Nextcloud accepts the bearer", "error");
    let fix = bearer["fix"].as_str().unwrap();
    assert!(fix.contains("oidc_provider_bearer_validation"), "{fix}");
    assert!(fix.contains("selfencoded_bearer_validation_audience_check"), "{fix}");
    stack.shutdown().await;
}

/// The check sends what a turn with a tool call sends, the result read back
/// included: a server that answers the question but not the follow-up
/// (llama-cpp-python refused `content: null` there) is an error.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_cannot_read_a_tool_result_back_is_an_error() {
    let stack = Doctor::start().await;
    let script = json!({"rules": [
        {"name": "refuse the result", "when": {"last_role": "tool"}, "fault": {"error": "server_error"}}
    ]});
    let set = stack.model_admin(reqwest::Method::PUT, "/__fake/script").json(&script);
    assert!(set.send().await.unwrap().status().is_success());
    let outcome = stack.doctor(stack.flags()).await;
    let model = outcome.expect(1, "8. model", "error");
    assert!(model["what"].as_str().unwrap().contains("a tool result read back"), "{model}");
    stack.shutdown().await;
}
