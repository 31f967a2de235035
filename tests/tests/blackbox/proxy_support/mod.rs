//! The shipped nginx configuration (`deploy/nginx/svc.conf`) in front of two loopback replicas,
//! with TLS from a test CA made here: shared by `behind_nginx.rs` and `hosted_deployment.rs`.
//! Needs Debian's nginx and `openssl`; [`available`] skips (or fails under `SVC_REQUIRE_PROXY=1`).

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use svc_tests::external::deps_present;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

pub const NGINX: &str = "/usr/sbin/nginx";

pub fn shipped_config() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/nginx/svc.conf");
    std::fs::read_to_string(path).expect("deploy/nginx/svc.conf")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// True when nginx and openssl are installed; otherwise skips, or fails under `SVC_REQUIRE_PROXY=1`.
pub fn available(test: &str) -> bool {
    let needed = [PathBuf::from(NGINX), PathBuf::from("/usr/bin/openssl")];
    deps_present(
        test,
        &needed,
        "SVC_REQUIRE_PROXY",
        "nginx and openssl",
        "apt-get install nginx-light openssl",
    )
}

/// The shipped file with its marked lines pointed at this test's replicas, port and certificate.
fn rendered_config(dir: &Path, port: u16, replicas: [u16; 2]) -> String {
    let shipped = shipped_config();
    let mut out = shipped
        .replace(
            "    server 127.0.0.1:6781;\n    server 127.0.0.1:6782;",
            &format!(
                "    server 127.0.0.1:{};\n    server 127.0.0.1:{};",
                replicas[0], replicas[1]
            ),
        )
        .replace("listen 443 ssl;", &format!("listen 127.0.0.1:{port} ssl;"))
        .replace("server_name svc.example.com;", "server_name 127.0.0.1;")
        .replace(
            "/etc/ssl/svc/fullchain.pem",
            &dir.join("cert.pem").display().to_string(),
        )
        .replace("/etc/ssl/svc/privkey.pem", &dir.join("key.pem").display().to_string())
        .replace(
            "/var/log/nginx/svc-access.log",
            &dir.join("svc-access.log").display().to_string(),
        );
    assert_ne!(out, shipped);
    let directives: Vec<&str> = out.lines().filter(|line| !line.trim_start().starts_with('#')).collect();
    // Whole directives, not numbers: a random port may well end in 443 or 6781.
    let marked_lines = [
        "server 127.0.0.1:6781;",
        "server 127.0.0.1:6782;",
        "listen 443 ssl;",
        "server_name svc.example.com;",
        "/etc/ssl/svc/",
        "/var/log/nginx/",
    ];
    for marked in marked_lines {
        assert!(
            directives.iter().all(|line| !line.contains(marked)),
            "the shipped file changed shape: {marked} is still there"
        );
    }
    // A main configuration around it, as /etc/nginx/nginx.conf is around conf.d/.
    out = format!(
        "worker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log warn;\ndaemon off;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log {dir}/access.log;\n  client_body_temp_path {dir}/body;\n  proxy_temp_path {dir}/proxy;\n\
         fastcgi_temp_path {dir}/fastcgi;\n  uwsgi_temp_path {dir}/uwsgi;\n  scgi_temp_path {dir}/scgi;\n{out}\n}}\n",
        dir = dir.display()
    );
    out
}

/// A test CA (`ca.pem`, what the clients trust) and the proxy's certificate for 127.0.0.1
/// signed by it (`cert.pem`, `key.pem`): rustls refuses a CA certificate as a server's own.
fn certificates(dir: &Path) {
    let openssl = |args: &[&str]| {
        let status = Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("openssl");
        assert!(status.success(), "openssl {args:?} failed");
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=svc test CA",
        "-keyout",
        "ca-key.pem",
        "-out",
        "ca.pem",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        "key.pem",
        "-out",
        "proxy.csr",
    ]);
    std::fs::write(
        dir.join("proxy.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "proxy.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca-key.pem",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "proxy.ext",
        "-out",
        "cert.pem",
    ]);
}

/// The proxy's address, decided before the replicas start (they are told it as their public
/// base URL), and its certificate.
pub struct ProxyPlan {
    pub dir: PathBuf,
    pub port: u16,
    pub public: String,
    pub replica_ports: [u16; 2],
}

impl ProxyPlan {
    /// Ports for the proxy and two replicas, and the test CA in `dir`.
    pub fn new(dir: &Path) -> Self {
        certificates(dir);
        let port = free_port();
        Self {
            dir: dir.to_path_buf(),
            port,
            public: format!("https://127.0.0.1:{port}"),
            replica_ports: [free_port(), free_port()],
        }
    }

    /// `http://127.0.0.1:<port>` of replica `index`.
    pub fn replica_base(&self, index: usize) -> String {
        format!("http://127.0.0.1:{}", self.replica_ports[index])
    }

    pub fn ca_path(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// `nginx -t`, then nginx in the foreground; answers once `/healthz` does through it.
    pub async fn start(&self) -> Nginx {
        let conf = self.dir.join("nginx.conf");
        std::fs::write(&conf, rendered_config(&self.dir, self.port, self.replica_ports)).unwrap();
        let check = Command::new(NGINX)
            .arg("-t")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(&self.dir)
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "nginx -t: {}",
            String::from_utf8_lossy(&check.stderr)
        );
        let nginx = Nginx(
            Command::new(NGINX)
                .arg("-c")
                .arg(&conf)
                .arg("-p")
                .arg(&self.dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let client = self.client();
        // nginx takes a moment to listen.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while let Err(error) = client.get(format!("{}/healthz", self.public)).send().await {
            assert!(
                std::time::Instant::now() < deadline,
                "nginx never answered on {}: {error:?}",
                self.public
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        nginx
    }

    /// An HTTPS client that trusts the test CA.
    pub fn client(&self) -> reqwest::Client {
        self.client_builder().build().unwrap()
    }

    /// The same, for adding options (a redirect policy).
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        let certificate = std::fs::read(self.ca_path()).unwrap();
        reqwest::Client::builder().add_root_certificate(reqwest::Certificate::from_pem(&certificate).unwrap())
    }

    /// A TLS stream to the proxy, trusting the test CA (for a `wss://` upgrade).
    pub async fn tls_stream(&self) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
        let certificate = std::fs::read(self.ca_path()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(&certificate).unwrap())
            .unwrap();
        let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        tokio_rustls::TlsConnector::from(Arc::new(tls))
            .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
            .await
            .expect("TLS to nginx")
    }
}

pub struct Nginx(Child);

impl Drop for Nginx {
    /// SIGTERM (nginx's fast shutdown), so the master takes its workers down with it.
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status();
        let _ = self.0.wait();
    }
}
