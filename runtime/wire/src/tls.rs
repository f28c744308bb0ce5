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
//! then. The data plane's TCP port and the status page stay plain (see
//! `docs/cluster.md`, Security model).

use crate::Error;
use std::{
    path::{Path, PathBuf},
    sync::OnceLock,
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

fn load(files: &Files) -> Result<Loaded, Error> {
    let identity = match (&files.cert, &files.key) {
        (Some(cert), Some(key)) => Some(Identity::from_pem(
            read(cert, "--tls-cert (PW_TLS_CERT)")?,
            read(key, "--tls-key (PW_TLS_KEY)")?,
        )),
        (None, None) => None,
        (Some(_), None) | (None, Some(_)) => return Err(Error::TlsPair),
    };
    let ca = files
        .ca
        .as_deref()
        .map(|p| read(p, "--tls-ca (PW_TLS_CA)").map(Certificate::from_pem))
        .transpose()?;
    Ok(Loaded { identity, ca })
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

/// The TLS a channel of this process calls with, if it has a CA.
pub fn client() -> Result<Option<ClientTlsConfig>, Error> {
    Ok(loaded()?
        .ca
        .clone()
        .map(|ca| ClientTlsConfig::new().ca_certificate(ca)))
}
