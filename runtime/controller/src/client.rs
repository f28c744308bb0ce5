//! A client of pw-server: runs a program on its workers
//! (`Controller.Run`), and reads its status.

use crate::{
    api,
    error::{Error, Result},
    summary::RunSummary,
};
use pw_exec::HostArray;
use pw_wire::{self as wire, net, proto, Arrays};
use std::time::Duration;

/// A client of the controller on `channel`, presenting `$PW_TOKEN`.
pub type ControllerClient = api::controller_client::ControllerClient<
    tonic::service::interceptor::InterceptedService<
        tonic::transport::Channel,
        pw_wire::net::Present,
    >,
>;

pub fn controller_client(channel: tonic::transport::Channel) -> ControllerClient {
    api::controller_client::ControllerClient::with_interceptor(channel, net::present_token())
        .max_decoding_message_size(wire::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(wire::MAX_MESSAGE_BYTES)
}

/// What to run.
pub struct RemoteRun<'a> {
    pub name: &'a str,
    /// The program: MLIR text or bytecode.
    pub source: &'a [u8],
    pub inputs: &'a [HostArray],
    pub record: bool,
    /// None: the server's default.
    pub timeout: Option<Duration>,
    /// The schedule policy to lower with (None: the default, or the order
    /// a lowered program has).
    pub schedule: Option<&'a str>,
}

/// The largest output accepted from a server.
const MAX_OUTPUT_BYTES: u64 = 64 << 30;

/// Runs `run` on the server at `address`; `progress` hears the server's
/// progress lines. Returns the outputs and the server's summary.
pub async fn run(
    address: &str,
    run: RemoteRun<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<HostArray>, RunSummary)> {
    let mut client = connect(address).await?;
    let mut requests = vec![proto::RunRequest {
        request: Some(proto::run_request::Request::Begin(proto::RunBegin {
            protocol: pw_wire::PROTOCOL as i32,
            name: run.name.to_owned(),
            inputs: run.inputs.len() as u32,
            record: run.record,
            timeout_ms: run.timeout.map_or(0, |t| t.as_millis() as u64),
            schedule: run.schedule.unwrap_or_default().to_owned(),
        })),
    }];
    for chunk in wire::chunks(bytes::Bytes::copy_from_slice(run.source)) {
        requests.push(proto::RunRequest {
            request: Some(proto::run_request::Request::Program(chunk)),
        });
    }
    for (index, input) in run.inputs.iter().enumerate() {
        let t = proto::ArrayType::of(input.dtype(), input.shape());
        for chunk in wire::chunks(bytes::Bytes::copy_from_slice(input.bytes())) {
            requests.push(proto::RunRequest {
                request: Some(proto::run_request::Request::Input(proto::RunInput {
                    index: index as u32,
                    r#type: Some(t.clone()),
                    chunk: Some(chunk),
                })),
            });
        }
    }
    let mut replies = client
        .run(tokio_stream::iter(requests))
        .await
        .map_err(server)?
        .into_inner();
    let mut summary = None;
    let mut outputs: Vec<HostArray> = Vec::new();
    let mut arrays = Arrays::new("output", MAX_OUTPUT_BYTES);
    loop {
        let reply = match replies.message().await {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(status) => return Err(server(status)),
        };
        match reply.reply {
            Some(proto::run_reply::Reply::Progress(line)) => progress(&line),
            Some(proto::run_reply::Reply::ReportJson(json)) => {
                summary = Some(serde_json::from_str(&json).map_err(|e| Error::Reply {
                    what: format!("its report does not parse: {e}"),
                })?);
            }
            Some(proto::run_reply::Reply::Output(o)) => {
                if let Some((dtype, dims, data)) =
                    arrays.push(o.index, o.r#type.as_ref(), o.chunk.as_ref())?
                {
                    outputs.push(HostArray::new(dtype, &dims, data)?);
                }
            }
            None => {}
        }
    }
    arrays.finish()?;
    let summary = summary.ok_or_else(|| Error::Reply {
        what: "the run ended without a report".into(),
    })?;
    Ok((outputs, summary))
}

/// A client of the server at `address`.
async fn connect(address: &str) -> Result<ControllerClient> {
    let channel = net::channel(address, Duration::from_secs(5))
        .await
        .map_err(|source| Error::Unreachable {
            address: address.to_owned(),
            source,
        })?;
    Ok(controller_client(channel))
}

/// The server's answer, as an error.
fn server(status: tonic::Status) -> Error {
    Error::Server {
        message: status.message().to_owned(),
    }
}

/// The server's registered workers and counters.
pub async fn status(address: &str) -> Result<proto::StatusReply> {
    connect(address)
        .await?
        .status(proto::StatusRequest {})
        .await
        .map(|r| r.into_inner())
        .map_err(server)
}

/// The status page's JSON from the server at `address`
/// (`Controller.Overview`; the server asks each worker for at most 500 ms).
pub async fn overview(address: &str) -> Result<String> {
    // It presents $PW_TOKEN like every client of the controller.
    let mut client = connect(address).await?;
    let call = client.overview(proto::OverviewRequest {});
    let waited = Duration::from_secs(10);
    match tokio::time::timeout(waited, call).await {
        Ok(Ok(reply)) => Ok(reply.into_inner().json),
        Ok(Err(s)) => Err(server(s)),
        Err(_) => Err(Error::Silent {
            address: address.to_owned(),
            waited,
        }),
    }
}
