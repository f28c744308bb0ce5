//! HTTP ports of pw's processes (pw-server's status page and `/metrics`,
//! a worker's `/metrics`): one listener for axum that takes plain TCP or,
//! when the process has a certificate ([`crate::tls::http_server`]), TLS.

pub use rustls::ServerConfig as TlsConfig;
use std::sync::Arc;

/// An HTTP listener (pw-server's status page, a worker's metrics): the connections that speak
/// ([`crate::net::incoming`]: silent ones are closed and bounded), over
/// TLS when the server has a certificate. Each TLS handshake runs in a
/// task of its own, within [`HANDSHAKE_TIMEOUT`] and at most
/// [`MAX_HANDSHAKES`] at once, so a slow client holds up no one else.
pub struct Speaking {
    addr: std::net::SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(Box<dyn Connection>, std::net::SocketAddr)>,
}

/// A connection the page is served on: plain TCP or TLS over it.
pub trait Connection: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Connection for T {}

/// How long a client may take to finish its TLS handshake.
pub const HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// TLS handshakes under way at once; more connections are closed.
pub const MAX_HANDSHAKES: usize = 256;

impl Speaking {
    /// Accepts on `listener`, over TLS with `tls`.
    pub fn new(listener: tokio::net::TcpListener, tls: Option<Arc<TlsConfig>>) -> Speaking {
        use tokio_stream::StreamExt;
        let addr = listener
            .local_addr()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([127, 0, 0, 1], 0)));
        let (tx, ready) = tokio::sync::mpsc::channel(64);
        let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
        let handshakes = Arc::new(tokio::sync::Semaphore::new(MAX_HANDSHAKES));
        tokio::spawn(async move {
            let mut incoming = Box::pin(crate::net::incoming(listener));
            while let Some(stream) = incoming.next().await {
                let Ok(stream) = stream else { continue };
                let peer = stream.peer_addr().unwrap_or(addr);
                let Some(acceptor) = &acceptor else {
                    let plain: Box<dyn Connection> = Box::new(stream);
                    if tx.send((plain, peer)).await.is_err() {
                        return;
                    }
                    continue;
                };
                let Ok(slot) = handshakes.clone().try_acquire_owned() else {
                    continue;
                };
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    let accepted =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
                    drop(slot);
                    if let Ok(Ok(tls)) = accepted {
                        let tls: Box<dyn Connection> = Box::new(tls);
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Speaking { addr, ready }
    }
}

impl axum::serve::Listener for Speaking {
    type Io = Box<dyn Connection>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task is gone: nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}
