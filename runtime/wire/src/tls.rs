//! TLS on pw's gRPC ports (rustls, through tonic): a process serves with
//! its certificate and key, and checks the servers it calls against a CA.
//!
//! * `--tls-cert`/`--tls-key` (`PW_TLS_CERT`, `PW_TLS_KEY`): PEM files of
//!   the certificate pw-server or pw-worker presents on its gRPC port.
//! * `--tls-ca` (`PW_TLS_CA`): the PEM of the CA that signed the servers'
//!   certificates; a process that has one calls every pw port over TLS
//!   (`https`), checking the certificate against it and the address's host.
//!
//! Credentials (token, session keys, cluster secret) travel inside TLS
//! then. The data plane's TCP connections use the same files
//! ([`data_plane`]): a worker with a certificate takes pieces over TLS
//! only, and one with a CA sends them over TLS; the data plane's own
//! handshake (`crate::auth`) then runs inside TLS. pw-server's status page
//! (`--http`) serves HTTPS with the same certificate ([`http_server`]).

use crate::Error;
use std::{
    path::{Path, PathBuf},
    sync::{Arc, OnceLock},
};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// The files a process was given (none: plain TCP).
#[derive(Debug, Clone, Default)]
pub struct Files {
    /// This process's certificate and key, to serve with.
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// The CA to check the servers this process calls.
    pub ca: Option<PathBuf>,
}

/// What the files hold, read once.
struct Loaded {
    identity: Option<Identity>,
    ca: Option<Certificate>,
    data: DataPlane,
}

/// rustls configurations of the data plane's TCP connections.
#[derive(Default)]
pub struct DataPlane {
    /// What a worker's data port serves with (it has a certificate).
    pub server: Option<Arc<rustls::ServerConfig>>,
    /// What a worker sends pieces with (it has a CA).
    pub client: Option<Arc<rustls::ClientConfig>>,
}

static LOADED: OnceLock<Result<Loaded, Error>> = OnceLock::new();

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl Files {
    /// The files `PW_TLS_CERT`, `PW_TLS_KEY` and `PW_TLS_CA` name.
    pub fn from_env() -> Files {
        Files {
            cert: env_path("PW_TLS_CERT"),
            key: env_path("PW_TLS_KEY"),
            ca: env_path("PW_TLS_CA"),
        }
    }
}

fn read(path: &Path, flag: &'static str) -> Result<Vec<u8>, Error> {
    let bytes = std::fs::read(path).map_err(|e| Error::Tls {
        flag,
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    if !String::from_utf8_lossy(&bytes).contains("-----BEGIN ") {
        return Err(Error::Tls {
            flag,
            path: path.to_owned(),
            reason: "not a PEM file".into(),
        });
    }
    Ok(bytes)
}

const CERT: &str = "--tls-cert (PW_TLS_CERT)";
const KEY: &str = "--tls-key (PW_TLS_KEY)";
const CA: &str = "--tls-ca (PW_TLS_CA)";

fn load(files: &Files) -> Result<Loaded, Error> {
    let pair = match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => Some(((cert, read(cert, CERT)?), (key, read(key, KEY)?))),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => return Err(Error::TlsPair),
    };
    let ca = files
        .ca
        .as_deref()
        .map(|p| read(p, CA).map(|pem| (p, pem)))
        .transpose()?;
    let data = DataPlane {
        server: pair
            .as_ref()
            .map(|(cert, key)| data_server(cert, key))
            .transpose()?,
        client: ca
            .as_ref()
            .map(|(p, pem)| data_client(p, pem))
            .transpose()?,
    };
    Ok(Loaded {
        identity: pair.map(|((_, cert), (_, key))| Identity::from_pem(cert, key)),
        ca: ca.map(|(_, pem)| Certificate::from_pem(pem)),
        data,
    })
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn bad(flag: &'static str, path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::Tls {
        flag,
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

/// The data port's server configuration, from the certificate chain and
/// key (PEM).
fn data_server(
    (cert_path, cert): &(&PathBuf, Vec<u8>),
    (key_path, key): &(&PathBuf, Vec<u8>),
) -> Result<Arc<rustls::ServerConfig>, Error> {
    use rustls_pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(CERT, cert_path, e))?;
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| bad(KEY, key_path, e))?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(CERT, cert_path, e))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| bad(KEY, key_path, e))?;
    Ok(Arc::new(config))
}

/// The configuration pieces are sent with: servers checked against the CA.
fn data_client(path: &Path, pem: &[u8]) -> Result<Arc<rustls::ClientConfig>, Error> {
    use rustls_pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| bad(CA, path, e))?;
        roots.add(cert).map_err(|e| bad(CA, path, e))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(CA, path, e))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Reads `files` and makes them this process's TLS settings (once, at
/// start, before any channel or server exists; later calls change
/// nothing). Without a call, the environment's files are read when first
/// needed.
pub fn init(files: &Files) -> Result<(), Error> {
    let loaded = load(files);
    let outcome = loaded.as_ref().map(|_| ()).map_err(Clone::clone);
    let _ = LOADED.set(loaded);
    outcome
}

fn loaded() -> Result<&'static Loaded, Error> {
    LOADED
        .get_or_init(|| load(&Files::from_env()))
        .as_ref()
        .map_err(Clone::clone)
}

/// The TLS a server of this process serves with, if it has a certificate.
pub fn server() -> Result<Option<ServerTlsConfig>, Error> {
    Ok(loaded()?
        .identity
        .clone()
        .map(|identity| ServerTlsConfig::new().identity(identity)))
}

/// The data plane's TLS configurations (none: plain TCP).
pub fn data_plane() -> Result<&'static DataPlane, Error> {
    Ok(&loaded()?.data)
}

/// What the status page serves HTTPS with, if this process has a
/// certificate: the data port's configuration, offering HTTP/1.1.
pub fn http_server() -> Result<Option<Arc<rustls::ServerConfig>>, Error> {
    Ok(loaded()?.data.server.as_ref().map(|config| {
        let mut config = rustls::ServerConfig::clone(config);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }))
}

/// The TLS a channel of this process calls with, if it has a CA.
pub fn client() -> Result<Option<ClientTlsConfig>, Error> {
    Ok(loaded()?
        .ca
        .clone()
        .map(|ca| ClientTlsConfig::new().ca_certificate(ca)))
}
