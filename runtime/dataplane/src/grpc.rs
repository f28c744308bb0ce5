//! Pieces on a gRPC client stream (`Worker.Push`) per peer, with the
//! tuned HTTP/2 windows of [`pw_wire`]: the alternative transport.

use crate::{Error, Link, Result};
use bytes::Bytes;
use pw_exec::PieceKey;
use pw_wire::{self as wire, proto};
use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

/// Pieces on a gRPC client stream (`Worker.Push`) to one peer.
pub struct GrpcLink {
    from: u32,
    address: String,
    tx: tokio::sync::mpsc::Sender<proto::PushRequest>,
    /// Why the stream ended, once it has.
    ended: Arc<Mutex<Option<String>>>,
}

/// Messages queued per gRPC link: with 1 MiB chunks, 16 MiB in flight.
const LINK_QUEUE: usize = 16;

impl GrpcLink {
    /// Opens the stream to `address` (host:port) on `handle`'s runtime.
    pub fn connect(
        from: u32,
        address: &str,
        timeout: Duration,
        handle: &tokio::runtime::Handle,
    ) -> Result<GrpcLink> {
        let channel = handle
            .block_on(pw_wire::net::channel(address, timeout))
            .map_err(|source| Error::Channel {
                address: address.to_owned(),
                source,
            })?;
        let mut client = pw_wire::net::worker_client(channel);
        let (tx, rx) = tokio::sync::mpsc::channel(LINK_QUEUE);
        let ended = Arc::new(Mutex::new(None));
        let done = ended.clone();
        let peer = address.to_owned();
        handle.spawn(async move {
            let outcome = client
                .push(tokio_stream::wrappers::ReceiverStream::new(rx))
                .await;
            let why = match outcome {
                Ok(_) => "the stream was closed".to_owned(),
                Err(status) => format!("the stream to {peer} failed: {}", status.message()),
            };
            *done.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        });
        Ok(GrpcLink {
            from,
            address: address.to_owned(),
            tx,
            ended,
        })
    }
}

impl Link for GrpcLink {
    fn write(&mut self, key: PieceKey, payload: &[u8], total: u64, crc: u32) -> Result<()> {
        for r in wire::chunk_ranges(payload.len()) {
            let last = r.end as u64 == total;
            let message = proto::PushRequest {
                from: self.from,
                run: key.run,
                step: key.step,
                piece: key.piece,
                chunk: Some(proto::Chunk {
                    offset: r.start as u64,
                    total,
                    crc32: last.then_some(crc),
                    data: Bytes::copy_from_slice(&payload[r]),
                }),
                failed: String::new(),
            };
            self.push(message)?;
        }
        Ok(())
    }

    fn fail(&mut self, key: PieceKey, why: &str) -> Result<()> {
        self.push(proto::PushRequest {
            from: self.from,
            run: key.run,
            step: key.step,
            piece: key.piece,
            chunk: None,
            failed: why.to_owned(),
        })
    }
}

impl GrpcLink {
    /// Queues one message on the stream, or says why the stream ended.
    fn push(&self, message: proto::PushRequest) -> Result<()> {
        if self.tx.blocking_send(message).is_ok() {
            return Ok(());
        }
        let why = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "the stream ended".into());
        Err(Error::Send {
            address: self.address.clone(),
            reason: why,
        })
    }
}
