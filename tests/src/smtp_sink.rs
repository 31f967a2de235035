//! A real SMTP server on loopback that keeps the mail it receives: Python's aiosmtpd
//! (`tests/peers/smtp_sink.py`, in the venv `tests/peers/install.sh` builds). Without the venv a
//! test using it prints `skipped:` and passes, unless `SVC_REQUIRE_PEERS=1`.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One message the sink accepted.
#[derive(Debug, Clone)]
pub struct ReceivedMail {
    pub from: String,
    pub to: Vec<String>,
    /// The raw message (headers and body) as received.
    pub data: String,
    /// The decoded `Subject`.
    pub subject: String,
    /// The decoded text body (quoted-printable or base64 undone).
    pub body: String,
}

impl ReceivedMail {
    /// The first `http(s)://` URL of the body that contains `path`.
    pub fn link(&self, path: &str) -> Option<String> {
        self.body
            .split_whitespace()
            .find(|w| (w.starts_with("http://") || w.starts_with("https://")) && w.contains(path))
            .map(str::to_owned)
    }
}

pub struct SmtpSink {
    pub port: u16,
    dir: PathBuf,
    child: Child,
}

fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("peers")
}

impl SmtpSink {
    /// Starts a sink that answers the first `fail_first` messages `451` (a temporary failure);
    /// `None` (skipped) when the venv is not installed.
    pub fn start(test: &str, fail_first: u32) -> Option<Self> {
        let python = peers_dir().join(".venv/bin/python");
        if !crate::external::deps_present(
            test,
            std::slice::from_ref(&python),
            "SVC_REQUIRE_PEERS",
            "the SMTP sink (aiosmtpd)",
            "run tests/peers/install.sh",
        ) {
            return None;
        }
        let dir = crate::temp_dir("svc-smtp-sink");
        let mut child = Command::new(python)
            .arg(peers_dir().join("smtp_sink.py"))
            .arg(&dir)
            .args(["--fail-first", &fail_first.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the SMTP sink starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut line)
            .expect("the sink says where it listens");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected sink output: {line:?}"));
        Some(Self { port, dir, child })
    }

    /// `smtp://127.0.0.1:<port>`, for `mail.smtp_url`.
    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Everything received so far, in arrival order.
    pub fn received(&self) -> Vec<ReceivedMail> {
        let mut mails = Vec::new();
        for n in 1.. {
            let Ok(text) = std::fs::read_to_string(self.dir.join(format!("{n}.json"))) else {
                break;
            };
            let v: serde_json::Value = serde_json::from_str(&text).expect("sink record");
            mails.push(ReceivedMail {
                from: v["from"].as_str().unwrap_or_default().to_owned(),
                to: v["to"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default(),
                data: v["data"].as_str().unwrap_or_default().to_owned(),
                subject: v["subject"].as_str().unwrap_or_default().to_owned(),
                body: v["body"].as_str().unwrap_or_default().to_owned(),
            });
        }
        mails
    }

    /// Waits until a mail to `recipient` whose subject contains `subject` arrives.
    pub async fn wait_for(&self, recipient: &str, subject: &str, within: Duration) -> ReceivedMail {
        let started = Instant::now();
        loop {
            if let Some(mail) = self
                .received()
                .into_iter()
                .find(|m| m.to.iter().any(|t| t == recipient) && m.subject.contains(subject))
            {
                return mail;
            }
            assert!(
                started.elapsed() < within,
                "no mail `{subject}` to {recipient} within {within:?}; received: {:?}",
                self.received()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
