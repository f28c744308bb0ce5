//! The fuzz targets of pw, as functions the target binaries call (see
//! `scripts/fuzz.sh`). Each takes any bytes and must neither crash, hang
//! nor panic; where pw makes a promise about valid input, the target
//! checks it and panics (a finding) when it is broken:
//! - [`ir`]: text through the parser, the verifier, the printer and the
//!   full `pw-lower` pipeline; no pass may produce an invalid program (an
//!   "internal error"), and the lowered program must print, parse and
//!   verify again and read into a plan;
//! - [`plan`]: a physical program read into a plan, which must pass its own
//!   check, survive a JSON round trip (plans cross the network) and split
//!   into a valid local part;
//! - [`npy`]: `.npy` bytes, from a stream and from a file, which, when
//!   read, must write back to what reads the same;
//! - [`topology`]: a TOML or JSON topology that, when valid, allocates a
//!   few meshes without breaking its own rules;
//! - [`requests`]: what arrives on pw-server's and pw-worker's gRPC ports
//!   (the controller's, the registry's, the workers' and the IFRT proxy's
//!   requests), decoded and read as the services read them: array types,
//!   numbered input chunks, IFRT dtypes, shapes, shardings and compile
//!   options; nothing may allocate past the limit it is read with;
//! - [`frames`]: a data connection's bytes after its handshake, read into
//!   a worker's receiver frame by frame.

#![allow(clippy::panic)]

use pw_compiler::{LowerOptions, Pipeline, RunOptions, Timings};
use pw_core::{plan::Plan, Topology};
use pw_dialect::{
    legality::{self, Stage},
    print::{self, PrintOptions},
};
use std::{cell::RefCell, ffi::CString, os::raw::c_char, os::unix::ffi::OsStrExt, rc::Rc};

extern "C" {
    /// libFuzzer's driver (FuzzerDriver.cpp), given the test function.
    fn LLVMFuzzerRunDriver(
        argc: *mut i32,
        argv: *mut *mut *mut c_char,
        test: extern "C" fn(*const u8, usize) -> i32,
    ) -> i32;
    /// Defined by `libfuzzer_sys::fuzz_target!`, which calls the target.
    fn LLVMFuzzerTestOneInput(data: *const u8, size: usize) -> i32;
}

extern "C" fn test_one(data: *const u8, size: usize) -> i32 {
    // SAFETY: libFuzzer passes `size` readable bytes at `data`.
    unsafe { LLVMFuzzerTestOneInput(data, size) }
}

/// The targets' `main`: runs libFuzzer on the command line.
///
/// The targets have their own `main` (not libFuzzer's) because the static
/// MLIR libraries they link also define one, which the linker could pick.
pub fn driver() -> ! {
    let args: Vec<CString> = std::env::args_os()
        .filter_map(|a| CString::new(a.as_bytes()).ok())
        .collect();
    let mut pointers: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
    pointers.push(std::ptr::null_mut());
    let mut argc = args.len() as i32;
    let mut argv = pointers.as_mut_ptr();
    // SAFETY: argv holds argc NUL-terminated strings and a final null, all
    // alive until the driver returns; libFuzzer reads them (and may only
    // permute the array).
    let code = unsafe { LLVMFuzzerRunDriver(&mut argc, &mut argv, test_one) };
    std::process::exit(code)
}

/// A context whose diagnostics are kept (not printed), for the oracle.
struct Quiet {
    context: melior::Context,
    messages: Rc<RefCell<Vec<String>>>,
}

impl Quiet {
    fn new() -> Self {
        let context = pw_dialect::new_context();
        let messages = Rc::new(RefCell::new(Vec::new()));
        let sink = messages.clone();
        pw_dialect::diag::attach_handler(&context, move |d| {
            sink.borrow_mut().push(d.message);
            true
        });
        Self { context, messages }
    }

    /// Panics if pw reported a bug of its own.
    fn no_internal_error(&self, input: &str) {
        if let Some(m) = self
            .messages
            .borrow()
            .iter()
            .find(|m| m.contains("internal error"))
        {
            panic!("{m}\n--- input ---\n{input}");
        }
    }
}

/// The local island the targets lower onto.
fn topology() -> Topology {
    Topology::local(8, "cpu").unwrap_or_else(|e| panic!("{e}"))
}

/// Parses, verifies and prints `text`, lowers it, and checks the lowered
/// program (see the crate doc).
pub fn ir(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let quiet = Quiet::new();
    let context = &quiet.context;
    let Some(module) = pw_dialect::parse_source(context, text, "fuzz") else {
        return;
    };
    let Ok(analysis) = pw_dialect::verify::verify(&module) else {
        return;
    };
    drop(analysis);
    let _ = print::print(
        &module.as_operation(),
        PrintOptions {
            generic: false,
            verified: true,
        },
    );
    let pipeline = Pipeline::lower(&LowerOptions {
        topology: topology(),
        ..Default::default()
    });
    let lowered = pw_compiler::run(
        context,
        &module,
        &pipeline,
        &mut RunOptions::default(),
        &mut Timings::default(),
    );
    quiet.no_internal_error(text);
    let Ok(analysis) = lowered else {
        return;
    };
    if let Err(e) = pw_compiler::export::to_plan(&analysis) {
        let message = format!("{e:?}");
        if !message.contains("PlanTooLarge") {
            panic!("a lowered program does not read into a plan: {message}\n--- input ---\n{text}");
        }
    }
    drop(analysis);
    let printed = print::print(
        &module.as_operation(),
        PrintOptions {
            generic: false,
            verified: true,
        },
    );
    let again = Quiet::new();
    let reparsed = pw_dialect::parse_source(&again.context, &printed, "lowered")
        .unwrap_or_else(|| panic!("the lowered program does not parse:\n{printed}"));
    if let Err(e) = pw_dialect::verify::verify(&reparsed) {
        panic!("the lowered program does not verify: {e:?}\n{printed}");
    }
}

/// Reads a physical program into a plan and checks it (see the crate doc).
pub fn plan(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let quiet = Quiet::new();
    let Some(module) = pw_dialect::parse_source(&quiet.context, text, "fuzz") else {
        return;
    };
    let Ok(analysis) = pw_dialect::verify::verify(&module) else {
        return;
    };
    let physical = legality::check(&analysis, Stage::Physical).is_empty();
    let plan = match pw_compiler::export::to_plan(&analysis) {
        Ok(plan) => plan,
        Err(errors) if physical => {
            // Only a plan too large may refuse a physical program.
            let message = format!("{errors:?}");
            if !message.contains("PlanTooLarge") {
                panic!("a physical program does not read into a plan: {message}\n{text}");
            }
            return;
        }
        Err(_) => return,
    };
    assert!(
        physical,
        "a plan was read from a program that is not physical:\n{text}"
    );
    let json = serde_json::to_string(&plan).unwrap_or_else(|e| panic!("{e}"));
    let back: Plan = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, plan, "the plan changed through JSON");
    back.check()
        .unwrap_or_else(|e| panic!("a read plan fails its check: {e}"));
    if let Ok(part) = back.local_part() {
        part.check()
            .unwrap_or_else(|e| panic!("the local part of a valid plan fails its check: {e}"));
    }
}

/// Reads `.npy` bytes both ways, and round-trips what reads.
pub fn npy(data: &[u8]) {
    let streamed = pw_exec::npy::read_from(data, "fuzz");
    let path = std::env::temp_dir().join(format!("pw-fuzz-{}.npy", std::process::id()));
    if std::fs::write(&path, data).is_ok() {
        let from_file = pw_exec::npy::read(&path);
        assert_eq!(
            from_file.as_ref().ok(),
            streamed.as_ref().ok(),
            "a file and a stream of the same bytes read differently"
        );
    }
    let Ok(host) = streamed else {
        return;
    };
    let mut written = Vec::new();
    pw_exec::npy::write_to(&mut written, &host, "fuzz")
        .unwrap_or_else(|e| panic!("a read array does not write: {e}"));
    let back = pw_exec::npy::read_from(&written[..], "fuzz")
        .unwrap_or_else(|e| panic!("a written array does not read back: {e}"));
    assert_eq!(back, host, "the array changed through a write and a read");
}

/// Parses a topology (JSON when the input starts with `{`, else TOML) and
/// allocates a few meshes on it when it is valid.
pub fn topology_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let json = text.trim_start().starts_with('{');
    let Ok(topology) = Topology::parse(text, json, "fuzz") else {
        return;
    };
    let links = topology.links();
    let devices: Vec<i64> = topology
        .islands
        .iter()
        .flat_map(|i| i.devices.clone())
        .collect();
    for pair in devices.windows(2).take(64) {
        let _ = links.link(pair[0], pair[1]);
    }
    let request = |name: &str, size: i64, kind: Option<&str>, with: Option<&str>| {
        pw_compiler::lower::allocate::Request {
            name: name.into(),
            size,
            kind: kind.map(Into::into),
            same_island_as: with.map(Into::into),
            fixed: None,
        }
    };
    let requests = [
        request("a", 1, None, None),
        request("b", 2, Some("cpu"), Some("a")),
        request("c", 4, None, None),
        request("d", 3, Some("gpu"), Some("c")),
    ];
    if let Ok(bound) = pw_compiler::lower::allocate::allocate(&requests, &topology) {
        for r in &requests {
            let got = &bound[&r.name];
            assert_eq!(got.len() as i64, r.size, "@{} got {got:?}", r.name);
            assert!(
                got.iter().all(|d| devices.contains(d)),
                "@{} got devices the topology lacks: {got:?}",
                r.name
            );
        }
    }
}

/// The limit the [`requests`] target reads arrays with.
const REQUEST_LIMIT: u64 = 1 << 20;

/// Network bytes as one of the requests pw's services take: the first byte
/// picks which; the rest is the protobuf message.
pub fn requests(data: &[u8]) {
    use prost::Message;
    use pw_wire::proto;
    let Some((&which, bytes)) = data.split_first() else {
        return;
    };
    match which % 6 {
        0 => {
            if let Ok(m) = proto::SessionRequest::decode(bytes) {
                session_request(m);
            }
        }
        1 => {
            if let Ok(m) = proto::RunRequest::decode(bytes) {
                if let Some(proto::run_request::Request::Input(i)) = m.request {
                    inputs(&[i]);
                }
            }
        }
        2 => {
            if let Ok(m) = proto::PutRequest::decode(bytes) {
                if let Some(t) = m.r#type {
                    let _ = t.read(REQUEST_LIMIT);
                }
                if let Some(c) = m.chunk {
                    let _ = pw_wire::Collect::new(&c, REQUEST_LIMIT, None, "put")
                        .and_then(|mut collect| collect.push(&c));
                }
            }
        }
        3 => {
            let _ = proto::WorkerEvent::decode(bytes);
            let _ = proto::SessionRequest::decode(bytes);
            if let Ok(proto::ControllerEvent {
                event: Some(proto::controller_event::Event::Execute(r)),
            }) = proto::ControllerEvent::decode(bytes)
            {
                if let Ok(part) = pw_wire::part::decode(&r.part) {
                    let _ = pw_exec::Work::of(&part);
                }
            }
            // A part's bytes as they are.
            if let Ok(part) = pw_wire::part::decode(bytes) {
                let _ = pw_exec::Work::of(&part);
            }
        }
        4 => {
            if let Ok(m) = pw_proxy::protocol::IfrtRequest::decode(bytes) {
                ifrt_request(m);
            }
        }
        _ => {
            let _ = pw_proxy::protocol::GrpcIfrtSessionMetadata::decode(bytes);
            let _ = pw_proxy::protocol::GrpcHostBufferStoreMetadata::decode(bytes);
        }
    }
}

/// A session stream's call and inputs, as the controller reads them.
fn session_request(m: pw_wire::proto::SessionRequest) {
    use pw_wire::proto::{call_argument::Argument, session_request::Request};
    match m.request {
        Some(Request::Call(c)) => {
            for (a, data) in c
                .arguments
                .iter()
                .zip(c.inline.iter().map(Some).chain(std::iter::repeat(None)))
            {
                if let Some(Argument::Host(t)) = &a.argument {
                    if let (Ok((dtype, dims, bytes)), Some(data)) = (t.read(REQUEST_LIMIT), data) {
                        if data.len() as u64 == bytes {
                            let _ = pw_exec::HostArray::new(dtype, &dims, data.to_vec());
                        }
                    }
                }
            }
        }
        Some(Request::Input(i)) => inputs(&[i]),
        _ => {}
    }
}

/// Numbered input chunks, as `Arrays` checks them.
fn inputs(inputs: &[pw_wire::proto::RunInput]) {
    let mut arrays = pw_wire::Arrays::new("input", REQUEST_LIMIT);
    for i in inputs {
        if let Ok(Some((_, _, data))) = arrays.push(i.index, i.r#type.as_ref(), i.chunk.as_ref()) {
            assert!(
                data.len() as u64 <= REQUEST_LIMIT,
                "an array past the limit"
            );
        }
    }
    let _ = arrays.finish();
}

/// An IFRT request's dtypes, shapes, shardings and compile options, as the
/// proxy converts them.
fn ifrt_request(m: pw_proxy::protocol::IfrtRequest) {
    use pw_proxy::{convert, protocol::ifrt_request::Request as Rq};
    match m.request {
        Some(Rq::MakeArrayFromHostBufferRequest(r)) => {
            if let Some(d) = &r.dtype {
                let _ = convert::dtype_of(d);
            }
            let shape = r.shape.map(|s| s.dims).unwrap_or_default();
            if let Some(s) = &r.sharding {
                if let Ok(p) = convert::placement(s, &shape) {
                    assert_eq!(p.layout.offsets.len(), p.devices.len(), "a box per device");
                }
            }
        }
        Some(Rq::MakeArraysFromHostBufferShardsRequest(r)) => {
            for spec in r.specs {
                let Some(a) = spec.array_spec else { continue };
                let shape = a.shape.map(|s| s.dims).unwrap_or_default();
                if let Some(s) = &a.sharding {
                    let _ = convert::placement(s, &shape);
                }
            }
        }
        Some(Rq::CompileRequest(r)) => {
            if let Some(o) = &r.compile_options {
                let _ = convert::compile_options(o);
            }
            if let Some(p) = &r.program {
                let _ = convert::program_module(&p.data);
            }
        }
        _ => {}
    }
}

/// A data connection's bytes after the handshake, read into a receiver
/// that holds at most 1 MiB of early pieces.
pub fn frames(data: &[u8]) {
    let receiver = pw_dataplane::Receiver::new(REQUEST_LIMIT);
    let _ = pw_dataplane::read_frames(data, 1, &receiver);
    receiver.stream_ended(1, "the fuzz input ended");
}
