//! Recording an `https://` upstream (the `tls` feature).
//!
//! A CA and a certificate for 127.0.0.1 are made with rcgen; a small
//! upstream speaks just enough MCP over HTTP (JSON answers to `initialize`
//! and `tools/list`) over tokio-rustls. The proxy trusts the CA through
//! `MCPCASSETTE_CA_FILE`; clients reach the proxy over plain HTTP.

#![cfg(feature = "tls")]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcpcassette::cassette::{self, Cassette, Transport};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::support::http_client::{post, request};
use crate::support::mcpcassette;
use crate::support::recorder::Recorder;

/// How long any one step may take before the test calls it stuck.
const PATIENCE: Duration = Duration::from_secs(10);

const CA_FILE_VAR: &str = "MCPCASSETTE_CA_FILE";

// ---------------------------------------------------------------------------
// Certificates.

/// A certificate authority made for the test.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Ca {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A TLS server configuration for 127.0.0.1, with a certificate this
    /// CA signed.
    fn server_config(&self) -> Arc<ServerConfig> {
        let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "127.0.0.1");
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![CertificateDer::from(cert.der().to_vec())], key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

/// The CA every recorder in this process trusts, through
/// `MCPCASSETTE_CA_FILE` (set once, before the first recorder starts).
fn trusted() -> &'static Ca {
    static TRUSTED: OnceLock<(Ca, PathBuf)> = OnceLock::new();
    let (ca, _) = TRUSTED.get_or_init(|| {
        let ca = Ca::new("mcpcassette test CA");
        let dir = tempfile::Builder::new()
            .prefix("mcpcassette-tls-")
            .tempdir()
            .unwrap()
            .keep();
        let path = dir.join("ca.pem");
        std::fs::write(&path, &ca.pem).unwrap();
        // SAFETY: set once, from one thread, before any recorder reads it;
        // no other test in this binary reads or writes this variable.
        unsafe { std::env::set_var(CA_FILE_VAR, &path) };
        (ca, path)
    });
    ca
}

// ---------------------------------------------------------------------------
// The upstream over TLS.

/// A small MCP server over HTTPS on 127.0.0.1.
struct Upstream {
    addr: SocketAddr,
    /// The Host header of every request it received.
    hosts: Arc<Mutex<Vec<String>>>,
}

impl Upstream {
    async fn start(ca: &Ca) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let acceptor = TlsAcceptor::from(ca.server_config());
        let hosts = Arc::new(Mutex::new(Vec::new()));
        let seen = hosts.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let seen = seen.clone();
                tokio::spawn(async move {
                    // A client that does not trust us ends the handshake.
                    let Ok(stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let service = service_fn(move |request| answer(seen.clone(), request));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Upstream { addr, hosts }
    }

    fn url(&self) -> String {
        format!("https://{}/mcp", self.addr)
    }
}

async fn answer(
    hosts: Arc<Mutex<Vec<String>>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    if let Some(host) = parts.headers.get("host") {
        hosts
            .lock()
            .unwrap()
            .push(host.to_str().unwrap().to_owned());
    }
    let body = body.collect().await.unwrap().to_bytes();
    if parts.method != Method::POST || parts.uri.path() != "/mcp" {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    let message: Value = serde_json::from_slice(&body).unwrap();
    let Some(id) = message.get("id").cloned() else {
        return Ok(status(StatusCode::ACCEPTED));
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tls-fake", "version": "1"}
        }),
        Some("tools/list") => json!({
            "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]
        }),
        _ => {
            let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}});
            return Ok(json_response(&error));
        }
    };
    Ok(json_response(
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    ))
}

fn status(status: StatusCode) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::default());
    *response.status_mut() = status;
    response
}

fn json_response(message: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(message.to_string())));
    response
        .headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    response
}

// ---------------------------------------------------------------------------
// The recorder, and a plain-HTTP client of it.

/// The recorder in front of an HTTPS upstream, trusting the test CA.
async fn recorder(cassette: &Path, upstream: String) -> Recorder {
    trusted();
    Recorder::start(Some(cassette.to_owned()), upstream).await
}

/// Sends `initialize`, `notifications/initialized` and `tools/list` to
/// `url` and checks the answers.
async fn session(url: &str) {
    let reply = post(url, &request(1, "initialize", json!({})), &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.lossy());
    let init: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "tls-fake");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(url, &initialized, &[]).await.status,
        StatusCode::ACCEPTED
    );

    let reply = post(url, &request(2, "tools/list", json!({})), &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    let tools: Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(tools["result"]["tools"][0]["name"], "echo");
}

/// Checks a cassette recorded from `upstream` by [`session`].
fn check_cassette(recorded: &Cassette, upstream: &Upstream) {
    let Transport::StreamableHttp { url, endpoint, .. } = &recorded.transport else {
        panic!("not Streamable HTTP: {:?}", recorded.transport)
    };
    assert!(url.starts_with("https://"), "{url}");
    assert_eq!(url, &upstream.url());
    assert_eq!(endpoint, "/mcp");
    assert_eq!(recorded.server.as_ref().unwrap().info["name"], "tls-fake");
    let methods: Vec<&str> = recorded.interactions.iter().map(|i| i.method()).collect();
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/list"]
    );
    let tools = &recorded.interactions[2].response.as_ref().unwrap()["result"]["tools"];
    assert_eq!(tools[0]["name"], "echo");
    let http = recorded.interactions[0].http.as_ref().unwrap();
    assert_eq!(http.status, 200);
    assert_eq!(http.content_type.as_deref(), Some("application/json"));
}

// ---------------------------------------------------------------------------
// Tests.

#[tokio::test(flavor = "multi_thread")]
async fn records_an_https_upstream_trusted_through_the_ca_file() {
    let upstream = Upstream::start(trusted()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tls.json");
    let recorder = recorder(&path, upstream.url()).await;
    session(&recorder.url("/mcp")).await;
    let outcome = recorder.finish().await;

    assert_eq!(outcome.interactions, 3);
    check_cassette(&cassette::load(&path).unwrap(), &upstream);
    // The upstream sees its own authority as the Host, not the proxy's.
    let hosts = upstream.hosts.lock().unwrap();
    assert!(!hosts.is_empty());
    assert!(
        hosts.iter().all(|host| *host == upstream.addr.to_string()),
        "{hosts:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_whose_certificate_is_not_trusted_is_a_502() {
    let stranger = Ca::new("a CA nobody trusts");
    let upstream = Upstream::start(&stranger).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("untrusted.json");
    let recorder = recorder(&path, upstream.url()).await;
    let reply = post(
        &recorder.url("/mcp"),
        &request(1, "initialize", json!({})),
        &[],
    )
    .await;
    let text = reply.lossy();
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{text}");
    assert!(text.contains(&upstream.url()), "{text}");
    assert!(text.contains("certificate"), "{text}");
    recorder.finish().await;
    assert!(upstream.hosts.lock().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_upstreams_still_work_with_the_feature() {
    // An https upstream's answer, relayed by a first recorder, stands in
    // for a plain http upstream of a second one.
    let upstream = Upstream::start(trusted()).await;
    let dir = tempfile::tempdir().unwrap();
    let inner = recorder(&dir.path().join("inner.json"), upstream.url()).await;
    let outer_path = dir.path().join("outer.json");
    let outer = recorder(&outer_path, inner.url("/mcp")).await;
    session(&outer.url("/mcp")).await;
    outer.finish().await;
    inner.finish().await;
    let recorded = cassette::load(&outer_path).unwrap();
    let Transport::StreamableHttp { url, .. } = &recorded.transport else {
        panic!("not Streamable HTTP: {:?}", recorded.transport)
    };
    assert!(url.starts_with("http://"), "{url}");
    assert_eq!(recorded.interactions.len(), 3);
}

// ---------------------------------------------------------------------------
// The command line, with the variable in its own environment.

/// `mcpcassette record --upstream URL` with `MCPCASSETTE_CA_FILE=ca_file`.
fn record_command(cassette: &Path, upstream: &str, ca_file: &Path) -> Command {
    let mut command = mcpcassette();
    command
        .arg("record")
        .arg("--cassette")
        .arg(cassette)
        .args(["--upstream", upstream, "--listen", "127.0.0.1:0"])
        .env(CA_FILE_VAR, ca_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    command
}

/// Kills the child if the test fails before it stops it.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_command_line_records_an_https_upstream() {
    use std::io::{BufRead, BufReader};

    let ca = Ca::new("mcpcassette CLI test CA");
    let upstream = Upstream::start(&ca).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, &ca.pem).unwrap();
    let path = dir.path().join("cli.json");

    let mut child = Killed(
        record_command(&path, &upstream.url(), &ca_file)
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line.trim().to_owned()
    });
    let url = tokio::time::timeout(PATIENCE, url).await.unwrap().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    session(&url).await;

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.0.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = tokio::task::spawn_blocking(move || child.0.wait().unwrap());
    let status = tokio::time::timeout(PATIENCE, status)
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    check_cassette(&cassette::load(&path).unwrap(), &upstream);
}

#[test]
fn the_command_line_names_a_bad_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("missing-ca.pem");
    let output = record_command(
        &dir.path().join("never.json"),
        "https://127.0.0.1:9/mcp",
        &ca_file,
    )
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(CA_FILE_VAR), "{stderr}");
    assert!(stderr.contains("missing-ca.pem"), "{stderr}");
    assert!(!dir.path().join("never.json").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn verify_reaches_an_https_server_trusted_through_the_ca_file() {
    let upstream = Upstream::start(trusted()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tls.json");
    let recorder = recorder(&path, upstream.url()).await;
    session(&recorder.url("/mcp")).await;
    recorder.finish().await;

    // The same HTTPS server again, through verify's HTTP client (which owns
    // a runtime of its own, so it runs off this one).
    let recorded = cassette::load(&path).unwrap();
    let url = upstream.url();
    let live = tokio::task::spawn_blocking(move || {
        let mut live = mcpcassette::client::HttpLive::connect(&url, recorded.protocol.era)
            .expect("https is supported with the tls feature");
        let observed = mcpcassette::verify::drive(
            &recorded,
            &mut live,
            &mcpcassette::verify::DriveConfig::default(),
        )
        .unwrap();
        (recorded, observed)
    })
    .await
    .unwrap();
    let (recorded, observed) = live;
    let report = mcpcassette::verify::compare(&path, &recorded, &observed, &[]);
    assert_eq!(report.counts.same, 3, "{report:#?}");
    assert!(!report.has_drift(), "{report:#?}");
}
