//! TLS to an `https://` upstream (the `tls` feature).
//!
//! rustls with the ring provider. Trusted: the system's root certificates
//! (as `rustls-native-certs` finds them, which honours `SSL_CERT_FILE` and
//! `SSL_CERT_DIR`), plus every certificate in the PEM file that
//! `MCPCASSETTE_CA_FILE` names: a private CA, a corporate proxy's, or a
//! test's own. Only the leg to the upstream is encrypted; the proxy itself
//! listens on plain HTTP.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore};

use super::LiveError;

/// The environment variable naming a PEM file of extra trusted roots.
const CA_FILE_VAR: &str = "MCPCASSETTE_CA_FILE";

/// A connector for both `http://` and `https://` upstreams, over `http`.
/// `https` says whether the upstream is `https://`: only then is a trust
/// store without any root an error.
pub(super) fn connector(
    mut http: HttpConnector,
    https: bool,
) -> Result<HttpsConnector<HttpConnector>, LiveError> {
    // The HTTP connector must let `https://` URIs through to the TLS layer.
    http.enforce_http(false);
    let roots = roots(https)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(LiveError::TlsConfig)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_http1()
        .wrap_connector(http))
}

/// The system's roots and those of `MCPCASSETTE_CA_FILE`.
fn roots(https: bool) -> Result<RootCertStore, LiveError> {
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for error in &native.errors {
        tracing::debug!("loading the system's root certificates: {error}");
    }
    let (added, ignored) = roots.add_parsable_certificates(native.certs);
    tracing::debug!("{added} root certificate(s) from the system, {ignored} unusable");

    if let Some(path) = std::env::var_os(CA_FILE_VAR).filter(|value| !value.is_empty()) {
        let path = PathBuf::from(path);
        for cert in ca_file(&path)? {
            roots.add(cert).map_err(|e| ca_file_error(&path, e))?;
        }
    }
    if https && roots.is_empty() {
        let why = native
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(LiveError::NoRoots { why });
    }
    Ok(roots)
}

/// The certificates in the PEM file at `path`; at least one.
fn ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, LiveError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| ca_file_error(path, e))?;
    if certs.is_empty() {
        return Err(ca_file_error(
            path,
            "no certificate in it (a PEM `CERTIFICATE` block)",
        ));
    }
    Ok(certs)
}

fn ca_file_error(
    path: &Path,
    source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
) -> LiveError {
    LiveError::CaFile {
        var: CA_FILE_VAR,
        path: path.to_owned(),
        source: source.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_without_certificates_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let error = crate::error_chain::chain(&ca_file(&path).unwrap_err());
        assert!(error.contains(CA_FILE_VAR), "{error}");
        assert!(error.contains("no certificate"), "{error}");

        let missing = dir.path().join("missing.pem");
        let error = crate::error_chain::chain(&ca_file(&missing).unwrap_err());
        assert!(error.contains("missing.pem"), "{error}");
    }
}
