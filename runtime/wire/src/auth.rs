//! Who may speak to whom: the cluster secret that workers and the
//! controller share, the handshake of a data connection, and unguessable
//! numbers for session ids and their keys.
//!
//! * **Clients → controller**: the server's token (`--token`, `PW_TOKEN`)
//!   in the `x-pw-token` header ([`crate::net::TOKEN_KEY`]); then each
//!   session's own key, issued when it opens, in `x-pw-session-key`
//!   ([`crate::net::SESSION_KEY`]) on every request that names the session.
//! * **Workers ↔ controller, worker ↔ worker (gRPC)**: the cluster secret
//!   (`--cluster-secret`, `PW_CLUSTER_SECRET`) in `x-pw-cluster`
//!   ([`crate::net::CLUSTER_KEY`]). Clients never hold it, so a tenant
//!   cannot go around the controller to a worker.
//! * **Worker → worker (TCP data plane)**: a challenge-response
//!   ([`introduce`], [`admit`]) keyed by the cluster secret: each side
//!   sends a fresh nonce and proves it holds the secret with an HMAC-SHA256
//!   over both nonces and the sender's worker id, so an outsider can
//!   neither inject pieces nor replay a recorded handshake, and the id a
//!   connection speaks for is the one the MAC covers.
//!
//! * **Monitoring → `/metrics`** (pw-server's HTTP port, a worker's
//!   `--metrics`): a scrape token (`PW_METRICS_TOKEN`, [`metrics_token`])
//!   as `Authorization: Bearer`, besides the credentials each port takes
//!   anyway. It opens `/metrics` and nothing else, so Prometheus needs
//!   neither a client's token nor the cluster secret.
//!
//! Without a cluster secret the cluster's ports are open; the binaries
//! allow that only when they listen on loopback addresses alone.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::{
    io::{Read, Write},
    sync::OnceLock,
};

/// The least bytes a cluster secret may have.
pub const MIN_SECRET_BYTES: usize = 16;

/// A shared secret (its bytes never printed).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl Secret {
    /// A secret from its text; `what` names it in the error for one too
    /// short to resist guessing.
    pub fn new(text: &str, what: &str) -> Result<Secret, String> {
        if text.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "{what} has {} bytes; use at least {MIN_SECRET_BYTES} random ones (e.g. `openssl rand -hex 16`)",
                text.len()
            ));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "{what} must be printable ASCII without spaces (it travels in a header)"
            ));
        }
        Ok(Secret(text.as_bytes().to_vec()))
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

static CLUSTER: OnceLock<Option<Secret>> = OnceLock::new();

/// Sets this process's cluster secret (once, at start; later calls are
/// ignored). Unset, [`cluster_secret`] reads `PW_CLUSTER_SECRET`.
pub fn set_cluster_secret(secret: Option<Secret>) {
    let _ = CLUSTER.set(secret);
}

/// This process's cluster secret, if it has one.
pub fn cluster_secret() -> Option<&'static Secret> {
    CLUSTER
        .get_or_init(|| {
            std::env::var("PW_CLUSTER_SECRET")
                .ok()
                .filter(|s| !s.is_empty())
                .and_then(|s| Secret::new(&s, "PW_CLUSTER_SECRET").ok())
        })
        .as_ref()
}

static METRICS: OnceLock<Result<Option<Secret>, String>> = OnceLock::new();

/// This process's scrape token (`PW_METRICS_TOKEN`, unset or empty:
/// none), which admits to `/metrics` only; the error says why the
/// variable's value cannot be one (the binaries check at start).
pub fn metrics_token() -> Result<Option<&'static Secret>, &'static str> {
    METRICS
        .get_or_init(|| match std::env::var("PW_METRICS_TOKEN") {
            Ok(s) if !s.is_empty() => Secret::new(&s, "PW_METRICS_TOKEN").map(Some),
            _ => Ok(None),
        })
        .as_ref()
        .map(Option::as_ref)
        .map_err(String::as_str)
}

/// Whether the `Authorization` header value `given` is `Bearer S` for one
/// of `wanted` (compared with [`same`]).
pub fn bearer_is(given: Option<&str>, wanted: &[&[u8]]) -> bool {
    given
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|g| wanted.iter().any(|w| same(g.as_bytes(), w)))
}

/// Whether two byte strings are equal, in a time that does not depend on
/// where they differ.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `N` bytes from the operating system's random source.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    if getrandom::fill(&mut out).is_err() {
        // The kernel's source does not fail on Linux; if it ever did, a
        // predictable value must not pass for a random one.
        std::process::abort();
    }
    out
}

/// A random, non-zero 63-bit number (an id no one can predict; it fits
/// the signed integers of other languages).
pub fn random_id() -> u64 {
    loop {
        let n = u64::from_le_bytes(random_bytes::<8>()) >> 1;
        if n != 0 {
            return n;
        }
    }
}

/// A random key as 32 hexadecimal digits (128 bits).
pub fn random_key() -> String {
    random_bytes::<16>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The HMAC-SHA256 of `parts` under `key` (none: an empty key, for a
/// cluster without a secret).
fn mac(key: Option<&Secret>, parts: &[&[u8]]) -> [u8; 32] {
    let key = key.map_or(&[][..], Secret::as_bytes);
    // HMAC takes keys of any length.
    let Ok(mut m) = <Hmac<Sha256> as Mac>::new_from_slice(key) else {
        return [0; 32];
    };
    for p in parts {
        m.update(&(p.len() as u64).to_le_bytes());
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// The first bytes of a data connection.
const MAGIC: &[u8; 8] = b"PWDATA02";
const NONCE: usize = 16;

/// Why a data connection's handshake failed.
#[derive(Debug, thiserror::Error)]
pub enum HandshakeError {
    #[error("the connection failed during the handshake: {0}")]
    Io(#[from] std::io::Error),
    #[error("the peer does not speak pw's data plane (bad magic)")]
    Magic,
    #[error("the peer does not hold this worker's cluster secret (PW_CLUSTER_SECRET)")]
    Refused,
}

fn proof(secret: Option<&Secret>, role: &[u8], from: u32, ours: &[u8], theirs: &[u8]) -> [u8; 32] {
    mac(
        secret,
        &[b"pw data plane", role, &from.to_le_bytes(), ours, theirs],
    )
}

/// The connecting side: worker `from` introduces itself on `stream` and
/// checks that the listener holds the same secret.
pub fn introduce<S: Read + Write>(
    stream: &mut S,
    from: u32,
    secret: Option<&Secret>,
) -> Result<(), HandshakeError> {
    let ours = random_bytes::<NONCE>();
    let mut hello = MAGIC.to_vec();
    hello.extend_from_slice(&from.to_le_bytes());
    hello.extend_from_slice(&ours);
    stream.write_all(&hello)?;
    let mut answer = [0u8; NONCE + 32];
    stream.read_exact(&mut answer)?;
    let (theirs, their_proof) = answer.split_at(NONCE);
    if !same(
        their_proof,
        &proof(secret, b"listener", from, &ours, theirs),
    ) {
        return Err(HandshakeError::Refused);
    }
    stream.write_all(&proof(secret, b"sender", from, &ours, theirs))?;
    stream.flush()?;
    Ok(())
}

/// The listening side: reads a peer's introduction on `stream`, proves
/// it holds the secret, checks the peer's proof; returns the worker id
/// the peer speaks for.
pub fn admit<S: Read + Write>(
    stream: &mut S,
    secret: Option<&Secret>,
) -> Result<u32, HandshakeError> {
    let mut hello = [0u8; 8 + 4 + NONCE];
    stream.read_exact(&mut hello)?;
    if &hello[..8] != MAGIC {
        return Err(HandshakeError::Magic);
    }
    let from = u32::from_le_bytes([hello[8], hello[9], hello[10], hello[11]]);
    let theirs = &hello[12..];
    let ours = random_bytes::<NONCE>();
    let mut answer = ours.to_vec();
    answer.extend_from_slice(&proof(secret, b"listener", from, theirs, &ours));
    stream.write_all(&answer)?;
    stream.flush()?;
    let mut their_proof = [0u8; 32];
    stream.read_exact(&mut their_proof)?;
    if !same(&their_proof, &proof(secret, b"sender", from, theirs, &ours)) {
        return Err(HandshakeError::Refused);
    }
    Ok(from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    fn pair(
        sender: Option<Secret>,
        listener: Option<Secret>,
    ) -> (Result<(), HandshakeError>, Result<u32, HandshakeError>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            admit(&mut s, listener.as_ref())
        });
        let mut c = TcpStream::connect(addr).unwrap();
        let sent = introduce(&mut c, 7, sender.as_ref());
        drop(c);
        (sent, server.join().unwrap())
    }

    #[test]
    fn the_same_secret_admits_the_sender_by_its_id() {
        let s = Secret::new("0123456789abcdef0123", "t").unwrap();
        let (sent, admitted) = pair(Some(s.clone()), Some(s));
        assert!(sent.is_ok());
        assert_eq!(admitted.unwrap(), 7);
        let (sent, admitted) = pair(None, None);
        assert!(sent.is_ok() && admitted.is_ok());
    }

    #[test]
    fn another_secret_or_none_is_refused_both_ways() {
        let a = Secret::new("0123456789abcdef0123", "t").unwrap();
        let b = Secret::new("0123456789abcdef0124", "t").unwrap();
        for (x, y) in [
            (Some(a.clone()), Some(b)),
            (None, Some(a.clone())),
            (Some(a), None),
        ] {
            let (sent, admitted) = pair(x, y);
            assert!(matches!(sent, Err(HandshakeError::Refused)), "{sent:?}");
            assert!(admitted.is_err());
        }
    }

    #[test]
    fn short_secrets_are_refused_and_never_printed() {
        assert!(Secret::new("short", "--cluster-secret").is_err());
        let s = Secret::new("a-long-enough-secret", "t").unwrap();
        assert_eq!(format!("{s:?}"), "Secret(20 bytes)");
        assert_ne!(random_id(), random_id());
        assert_eq!(random_key().len(), 32);
    }
}
