//! A session link: a client's session spoken as framed messages
//! ([`pw_wire::link`]) on a plain TCP connection to pw-server's port, which
//! opens with [`pw_wire::net::SESSION_LINK_MAGIC`] (the port tells it from
//! gRPC by those bytes). The session is the same as on the gRPC `Session`
//! stream ([`Sessions::serve`]): `open` (with the server's token, which
//! gRPC would carry as a header), the line, the grant, then the session's
//! requests, in order. What a link saves is the HTTP/2 machinery on both
//! ends, so a call is one small write and its answer one small read. Its
//! last message says why the server ended it ([`proto::SessionEnded`]).

use crate::{service::Messages, Controller};
use pw_wire::{proto, MAX_MESSAGE_BYTES};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Status;

/// A link's messages from the client.
struct Reader(tokio::net::tcp::OwnedReadHalf);

impl Messages<proto::SessionRequest> for Reader {
    async fn next_message(&mut self) -> Result<Option<proto::SessionRequest>, Status> {
        let mut head = [0u8; 4];
        match self.0.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(Status::unavailable(format!("the session link failed: {e}"))),
        }
        let len = u32::from_le_bytes(head) as usize;
        if len > MAX_MESSAGE_BYTES {
            return Err(Status::invalid_argument(format!(
                "a message of {len} bytes, more than the {MAX_MESSAGE_BYTES} a session link takes"
            )));
        }
        // Memory as the bytes arrive, not on the length's word.
        let mut body = Vec::new();
        let got = (&mut self.0)
            .take(len as u64)
            .read_to_end(&mut body)
            .await
            .map_err(|e| Status::unavailable(format!("the session link failed: {e}")))?;
        if got != len {
            return Err(Status::unavailable(format!(
                "the session link ended inside a message ({got} of its {len} bytes)"
            )));
        }
        prost::Message::decode(body.as_slice())
            .map(Some)
            .map_err(|e| Status::invalid_argument(format!("a message that does not decode: {e}")))
    }
}

/// Serves one session link until it ends; `token`: the server's, which
/// its `open` must carry.
pub async fn serve(
    c: Controller,
    stream: tokio::net::TcpStream,
    token: Option<std::sync::Arc<str>>,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = Reader(read);
    let (out, mut events) = tokio::sync::mpsc::unbounded_channel();
    let writer = tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let (message, last) = match event {
                Ok(e) => (e, false),
                Err(status) => (ended(&status), true),
            };
            let mut frame = Vec::new();
            if pw_wire::link::write_message(&mut frame, &message).is_err()
                || write.write_all(&frame).await.is_err()
                || last
            {
                break;
            }
        }
        let _ = write.shutdown().await;
    });
    let open = match reader.next_message().await {
        Ok(Some(proto::SessionRequest {
            request: Some(proto::session_request::Request::Open(o)),
        })) => Some(o),
        _ => None,
    };
    let refusal = match &open {
        None => Some(Status::invalid_argument(
            "a session link must start with `open`",
        )),
        Some(o) if o.protocol != pw_wire::PROTOCOL as i32 => {
            Some(Status::failed_precondition(format!(
                "the client speaks wire protocol {}, this server {}",
                o.protocol,
                pw_wire::PROTOCOL as i32
            )))
        }
        Some(o) => match &token {
            Some(want) if !pw_wire::auth::same(o.token.as_bytes(), want.as_bytes()) => {
                Some(Status::unauthenticated(
                    "this pw-server needs its token (PW_TOKEN) in the session's `open`",
                ))
            }
            _ => None,
        },
    };
    match (open, refusal) {
        (Some(open), None) => c.sessions().serve(open, reader, out).await,
        (_, Some(status)) => {
            let _ = out.send(Err(status));
        }
        (None, None) => {}
    }
    let _ = writer.await;
}

/// The last message of a link the server ends with `status`.
fn ended(status: &Status) -> proto::SessionEvent {
    let kind = status
        .metadata()
        .get("pw-error")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    proto::SessionEvent {
        event: Some(proto::session_event::Event::Ended(proto::SessionEnded {
            code: status.code() as i32,
            error_kind: kind,
            error: status.message().to_owned(),
        })),
    }
}
