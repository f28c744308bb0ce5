//! The sidecar: user Python next to the devices.
//!
//! A computation can be a Python function ([`Program`]: what JAX's
//! `colocated_python` pickles, or a `pw.sidecar` step of a pw program;
//! [`pw_core::python::Function`]) instead of a StableHLO module. A worker runs
//! it in a *sidecar*: a Python process of its own (`python -m pw._sidecar`,
//! from the interpreter the worker was given), one per session, started at
//! the session's first such call and ended with the session. A session's
//! sidecar holds what its functions keep between calls (the objects of
//! `colocated_python_class`, JAX's result store) and nothing of any other
//! session's.
//!
//! A call ([`Call`]) is handed to the sidecar's thread, which runs the
//! session's calls one at a time, in the order they were enqueued. Its
//! output buffers exist from the start (filled later, like a piece that
//! arrives from another worker), so the steps after it are enqueued at
//! once. The thread waits for the input shards, writes each to a file in
//! the sidecar's private directory (on `/dev/shm` where there is one: host
//! memory, no network), asks the sidecar to run the function on them, and
//! moves the output shards it wrote into the output buffers. The sidecar
//! runs a colocated function on JAX arrays of its own CPU devices, laid out
//! as the step's shards, and a `pw.sidecar` step on whole numpy arrays
//! (see `frontend/python/pw/_sidecar.py`). When the client destroys a
//! function's executable, the sidecar drops it ([`Sidecar::drop_programs`],
//! in order after the calls queued before), and what only it held with it.
//!
//! The two talk over a Unix socket in that directory (mode 0700), and the
//! sidecar proves it is the process started for it with a token it was
//! given in its environment. Each message is a little-endian `u32` length
//! and that many bytes of JSON.
//!
//! Failures: an exception in the function fails the call with the
//! traceback's text; so does an output of another type, shape or layout
//! than the program declared. A sidecar that exits (or runs past the call
//! timeout, and is ended) fails the call it was running; the next call
//! starts a new one, without the state the old one held. A failed call's
//! outputs hold zeros (never an error buffer a multi-device execution
//! could wait on forever) and its step fails, which taints what is
//! computed from them, as a piece that never came does.

use crate::error::{Error, Result};
use crate::executor::Completion;
use pw_core::{
    geometry::Region,
    python::{Convention, Function},
    DType,
};
use pw_pjrt::{AsyncTransfer, Buffer};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The most bytes of a message from a sidecar (an error with its
/// traceback).
const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// How long one call may run unless its caller says otherwise (seconds).
pub const DEFAULT_CALL_TIMEOUT_S: u64 = 600;
/// How long a new sidecar may take to import JAX and connect.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// A Python function a worker has loaded (from a computation's
/// [`pw_core::plan::Module::Python`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub function: Function,
    /// What names it to a sidecar: a digest of its encoding (made once).
    id: String,
}

impl Program {
    /// Reads an encoding, checked against what is there.
    pub fn decode(bytes: &[u8]) -> Result<Program> {
        let function = Function::decode(bytes).map_err(|e| Error::Sidecar(e.to_string()))?;
        Ok(Program {
            function,
            id: Program::id_of(bytes),
        })
    }

    /// The id of the program an encoding holds (what the controller names
    /// it by, to drop it).
    pub fn id_of(encoding: &[u8]) -> String {
        digest(encoding)
    }

    pub fn name(&self) -> &str {
        &self.function.name
    }

    /// The CPU devices a sidecar's JAX needs for the ids in its pickle.
    fn devices_needed(&self) -> usize {
        self.function
            .devices
            .iter()
            .map(|&d| usize::try_from(d).map_or(0, |d| d + 1))
            .max()
            .unwrap_or(1)
    }
}

/// One array a call reads or writes: its type, and the shards this worker
/// holds, each with its device (the plan's id) and the box it holds.
pub struct Operand<T> {
    pub dtype: DType,
    pub shape: Vec<i64>,
    pub shards: Vec<(i64, Region, T)>,
}

/// One call of a program, handed to a sidecar.
pub struct Call {
    pub program: Arc<Program>,
    /// What to call it in messages (the step's label).
    pub label: String,
    /// The step's devices (plan ids), in the order of `program.devices`.
    pub devices: Vec<i64>,
    pub inputs: Vec<Operand<Arc<Buffer>>>,
    /// Buffers that exist already (the step's results), to fill.
    pub outputs: Vec<Operand<AsyncTransfer>>,
    /// Completes when the outputs are filled, or with why not.
    pub done: Completion,
}

/// What a sidecar's thread is given to do, in order.
enum Job {
    Call(Call),
    /// Programs to drop, by id.
    Drop(Vec<String>),
}

/// How a worker starts sidecars.
#[derive(Debug, Clone)]
pub struct Config {
    /// The Python interpreter: one with JAX, cloudpickle and pw's front
    /// end (the venv's).
    pub python: PathBuf,
    /// How long one call may run before its sidecar is ended.
    pub call_timeout: Duration,
}

/// One session's sidecar on this worker (see the module doc). Dropping it
/// ends its process.
pub struct Sidecar {
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
    /// The running process, shared with the thread: ending the sidecar
    /// kills it at once, whatever call it is running.
    child: Arc<Mutex<Option<Child>>>,
    /// Set once the sidecar is ended: calls still queued fail.
    ended: Arc<AtomicBool>,
}

impl Sidecar {
    /// A sidecar for session `owner`; its process starts with its first
    /// call.
    pub fn new(config: Config, owner: u64) -> Sidecar {
        let (jobs, queued) = mpsc::channel::<Job>();
        let child = Arc::new(Mutex::new(None));
        let ended = Arc::new(AtomicBool::new(false));
        let mut runner = Runner {
            config,
            owner,
            dir: None,
            process: None,
            child: child.clone(),
            files: 0,
        };
        let stop = ended.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("pw-sidecar-{owner}"))
            .spawn(move || {
                while let Ok(job) = queued.recv() {
                    match job {
                        Job::Call(call) if stop.load(Ordering::SeqCst) => {
                            fail(call, "the session ended".into());
                        }
                        Job::Call(call) => runner.run(call),
                        Job::Drop(ids) => runner.drop_programs(&ids),
                    }
                }
                runner.stop();
            });
        let jobs = match spawned {
            Ok(_) => Some(jobs),
            Err(e) => {
                tracing::error!(owner, error = %e, "cannot start a sidecar thread");
                None
            }
        };
        Sidecar {
            jobs: Mutex::new(jobs),
            child,
            ended,
        }
    }

    /// Queues `call`; it runs after the calls queued before it.
    pub fn submit(&self, call: Call) {
        if let Some(Job::Call(call)) = self.queue(Job::Call(call)) {
            fail(call, "the session's sidecar has ended".into());
        }
    }

    /// Drops the programs `ids` once the calls queued before ran: the
    /// sidecar forgets them, and what they held is destroyed (a later call
    /// of one loads it again).
    pub fn drop_programs(&self, ids: Vec<String>) {
        self.queue(Job::Drop(ids));
    }

    /// Queues `job`; gives it back if the sidecar has ended.
    fn queue(&self, job: Job) -> Option<Job> {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        match jobs.as_ref() {
            Some(jobs) => jobs.send(job).err().map(|e| e.0),
            None => Some(job),
        }
    }
}

impl Drop for Sidecar {
    /// Ends the sidecar without waiting: its process is killed (the call it
    /// ran fails), queued calls fail, and its thread reaps the process,
    /// removes its directory and exits.
    fn drop(&mut self) {
        self.ended.store(true, Ordering::SeqCst);
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(child) = self
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            let _ = child.kill();
        }
    }
}

/// A running sidecar process.
struct Process {
    stream: UnixStream,
    /// The programs it has loaded, by id.
    loaded: HashSet<String>,
    /// The CPU devices its JAX has.
    devices: usize,
}

/// The sidecar's thread: its directory and process.
struct Runner {
    config: Config,
    owner: u64,
    dir: Option<PathBuf>,
    process: Option<Process>,
    /// The process behind `process` (see [`Sidecar::child`]).
    child: Arc<Mutex<Option<Child>>>,
    /// Files made so far (for unique names).
    files: u64,
}

/// Fills `call`'s outputs with zeros and fails it with `why`.
fn fail(call: Call, why: String) {
    for output in call.outputs {
        for (_, _, mut transfer) in output.shards {
            let zeros = vec![0u8; transfer.size()];
            if transfer.write(zeros, true).is_err() {
                let _ = transfer.fail(&why);
            }
        }
    }
    call.done.complete(Err(why));
}

#[derive(Serialize)]
struct ShardMessage {
    device: i64,
    offsets: Vec<i64>,
    sizes: Vec<i64>,
    path: String,
}

#[derive(Serialize)]
struct OperandMessage {
    dtype: &'static str,
    shape: Vec<i64>,
    shards: Vec<ShardMessage>,
}

#[derive(Deserialize)]
struct Reply {
    ok: bool,
    #[serde(default)]
    error: String,
}

impl Runner {
    /// Tells the running sidecar to forget those of `ids` it loaded.
    fn drop_programs(&mut self, ids: &[String]) {
        let Some(process) = self.process.as_mut() else {
            return;
        };
        let loaded: Vec<String> = ids
            .iter()
            .filter(|id| process.loaded.remove(*id))
            .cloned()
            .collect();
        if loaded.is_empty() {
            return;
        }
        let message = serde_json::json!({"op": "drop", "programs": loaded});
        if let Err(why) = self.exchange(&message, "dropping programs") {
            tracing::warn!(
                owner = self.owner,
                "the sidecar did not drop programs: {why}"
            );
        }
    }

    fn run(&mut self, call: Call) {
        let mut files = Vec::new();
        let outcome = self.attempt(&call, &mut files);
        for f in &files {
            let _ = std::fs::remove_file(f);
        }
        match outcome {
            Ok(outputs) => {
                let Call {
                    outputs: operands,
                    done,
                    label,
                    ..
                } = call;
                let mut result = Ok(());
                for (operand, bytes) in operands.into_iter().zip(outputs) {
                    for ((_, _, mut transfer), bytes) in operand.shards.into_iter().zip(bytes) {
                        if let Err(e) = transfer.write(bytes, true) {
                            let why = format!("{label}: an output shard cannot be written: {e}");
                            let _ = transfer.fail(&why);
                            result = Err(why);
                        }
                    }
                }
                done.complete(result);
            }
            Err(why) => {
                let why = format!("{}: {why}", call.label);
                fail(call, why);
            }
        }
    }

    /// Runs `call` on the sidecar; the bytes of each output shard, in the
    /// call's order. `files` collects what it made, to remove.
    fn attempt(
        &mut self,
        call: &Call,
        files: &mut Vec<PathBuf>,
    ) -> Result<Vec<Vec<Vec<u8>>>, String> {
        let needed = call.program.devices_needed();
        if self.process.as_ref().is_some_and(|p| p.devices < needed) {
            tracing::warn!(
                owner = self.owner,
                needed,
                "restarting the sidecar with more CPU devices (its state is lost)"
            );
            self.end_child(true);
        }
        // One that exited since its last call is replaced at once.
        let exited = self
            .slot()
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        if let Some(status) = exited {
            tracing::warn!(owner = self.owner, %status, "the sidecar exited between calls; starting a new one (its state is lost)");
            self.end_child(false);
        }
        if self.process.is_none() {
            self.process = Some(self.start(needed)?);
        }
        let id = call.program.id.clone();
        if !self
            .process
            .as_ref()
            .is_some_and(|p| p.loaded.contains(&id))
        {
            let path = self.file(files)?;
            std::fs::write(&path, &call.program.function.pickle)
                .map_err(|e| format!("cannot write the function for the sidecar: {e}"))?;
            let message = serde_json::json!({
                "op": "load",
                "program": id,
                "name": call.program.name(),
                "convention": call.program.function.convention,
                "devices": call.program.function.devices,
                "path": path,
            });
            self.exchange(&message, call.program.name())?;
            if let Some(p) = self.process.as_mut() {
                p.loaded.insert(id.clone());
            }
        }
        // A function that takes whole arrays needs each box once: copies
        // of a box (a replicated array's) share one file.
        let whole = call.program.function.convention == Convention::Whole;
        let mut inputs = Vec::with_capacity(call.inputs.len());
        for operand in &call.inputs {
            let mut shards = Vec::with_capacity(operand.shards.len());
            let mut written = HashSet::new();
            for (device, region, buffer) in &operand.shards {
                if whole && !written.insert(region) {
                    continue;
                }
                let path = self.file(files)?;
                write_shard(buffer, &path)?;
                shards.push(shard_message(*device, region, &path));
            }
            inputs.push(OperandMessage {
                dtype: operand.dtype.name(),
                shape: operand.shape.clone(),
                shards,
            });
        }
        let mut outputs = Vec::with_capacity(call.outputs.len());
        let mut expected = Vec::with_capacity(call.outputs.len());
        for operand in &call.outputs {
            let mut shards = Vec::with_capacity(operand.shards.len());
            let mut named = HashMap::new();
            for (device, region, transfer) in &operand.shards {
                let path = match named.get(region) {
                    Some(path) if whole => PathBuf::clone(path),
                    _ => {
                        let path = self.file(files)?;
                        named.insert(region, path.clone());
                        shards.push(shard_message(*device, region, &path));
                        path
                    }
                };
                expected.push((path, transfer.size()));
            }
            outputs.push(OperandMessage {
                dtype: operand.dtype.name(),
                shape: operand.shape.clone(),
                shards,
            });
        }
        let message = serde_json::json!({
            "op": "call",
            "program": id,
            "devices": call.devices,
            "inputs": inputs,
            "outputs": outputs,
        });
        self.exchange(&message, call.program.name())?;
        let mut expected = expected.into_iter();
        let mut out = Vec::with_capacity(call.outputs.len());
        for operand in &call.outputs {
            let mut shards = Vec::with_capacity(operand.shards.len());
            for _ in &operand.shards {
                let Some((path, size)) = expected.next() else {
                    break;
                };
                let bytes = read_bounded(&path, size)?;
                shards.push(bytes);
            }
            out.push(shards);
        }
        Ok(out)
    }

    /// A fresh file name in the sidecar's directory.
    fn file(&mut self, files: &mut Vec<PathBuf>) -> Result<PathBuf, String> {
        let dir = self.dir()?;
        self.files += 1;
        let path = dir.join(format!("shard-{}", self.files));
        files.push(path.clone());
        Ok(path)
    }

    /// The sidecar's private directory (mode 0700), made once: on
    /// `/dev/shm` where there is one.
    fn dir(&mut self) -> Result<PathBuf, String> {
        if let Some(d) = &self.dir {
            return Ok(d.clone());
        }
        let base = Path::new("/dev/shm");
        let base = if base.is_dir() {
            base.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!(
            "pw-sidecar-{}-{}-{}",
            std::process::id(),
            self.owner,
            token()?
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot make the sidecar's directory {}: {e}", dir.display()))?;
        self.dir = Some(dir.clone());
        Ok(dir)
    }

    /// Starts a sidecar whose JAX has `devices` CPU devices, and waits
    /// until it connects with its token.
    fn start(&mut self, devices: usize) -> Result<Process, String> {
        let dir = self.dir()?;
        let socket = dir.join("socket");
        let _ = std::fs::remove_file(&socket);
        let listen = |e: std::io::Error| format!("cannot listen on {}: {e}", socket.display());
        let listener = UnixListener::bind(&socket).map_err(listen)?;
        listener.set_nonblocking(true).map_err(listen)?;
        let token = token()?;
        let python = self.config.python.clone();
        let child = Command::new(&python)
            .args(["-m", "pw._sidecar"])
            .env("PW_SIDECAR_SOCKET", &socket)
            .env("PW_SIDECAR_TOKEN", &token)
            .env("PW_SIDECAR_DEVICES", devices.to_string())
            .env("JAX_PLATFORMS", "cpu")
            .env_remove("JAX_BACKEND_TARGET")
            .env_remove("XLA_FLAGS")
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start the sidecar ({} -m pw._sidecar): {e}; give pw-worker \
                     --sidecar-python, an interpreter with JAX, cloudpickle and pw's front end",
                    python.display()
                )
            })?;
        let pid = child.id();
        *self.slot() = Some(child);
        let connected = self.accept(&listener, &python);
        let _ = std::fs::remove_file(&socket);
        let hello = connected.and_then(|mut stream| {
            let hello = stream
                .set_nonblocking(false)
                .and_then(|()| stream.set_read_timeout(Some(START_TIMEOUT)))
                .and_then(|()| read_message(&mut stream))
                .map_err(|e| format!("the sidecar did not introduce itself: {e}"))?;
            if hello != token.as_bytes() {
                return Err("the process on the sidecar's socket gave the wrong token".into());
            }
            Ok(stream)
        });
        match hello {
            Ok(stream) => {
                tracing::info!(owner = self.owner, pid, devices, "sidecar started");
                Ok(Process {
                    stream,
                    loaded: HashSet::new(),
                    devices,
                })
            }
            Err(why) => {
                self.end_child(true);
                Err(why)
            }
        }
    }

    /// The connection of the sidecar just started, within
    /// [`START_TIMEOUT`] (an error if it exits first).
    fn accept(&self, listener: &UnixListener, python: &Path) -> Result<UnixStream, String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match listener.accept() {
                Ok((stream, _)) => return Ok(stream),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("the sidecar did not connect: {e}")),
            }
            let exited = self
                .slot()
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                return Err(format!(
                    "the sidecar ({} -m pw._sidecar) exited before it connected ({status}); \
                     its interpreter needs JAX, cloudpickle and pw's front end",
                    python.display()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the sidecar did not connect within {START_TIMEOUT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Child>> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Ends the process (killed at once when `kill`, else given a second
    /// to exit) and reaps it: its exit status.
    fn end_child(&mut self, kill: bool) -> String {
        self.process = None;
        let child = self.slot().take();
        match child {
            Some(mut c) if kill => end(&mut c),
            Some(mut c) => wait_briefly(&mut c),
            None => "not running".into(),
        }
    }

    /// Sends `message` and reads the reply: Ok, or the error the sidecar
    /// reports (or why there is none: it exited, it timed out).
    fn exchange(&mut self, message: &serde_json::Value, name: &str) -> Result<(), String> {
        let timeout = self.config.call_timeout;
        let Some(process) = self.process.as_mut() else {
            return Err("the sidecar is not running".into());
        };
        let bytes = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        let reply = (|| -> std::io::Result<Vec<u8>> {
            process.stream.set_read_timeout(Some(timeout))?;
            write_message(&mut process.stream, &bytes)?;
            read_message(&mut process.stream)
        })();
        match reply {
            Ok(reply) => {
                let reply: Reply = serde_json::from_slice(&reply)
                    .map_err(|e| format!("the sidecar's reply cannot be read: {e}"))?;
                if reply.ok {
                    Ok(())
                } else {
                    Err(reply.error)
                }
            }
            Err(e) => {
                let timed_out = matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
                let status = self.end_child(timed_out);
                Err(if timed_out {
                    format!(
                        "{name} ran past the sidecar's call timeout ({timeout:?}); the sidecar \
                         was ended ({status}) and the next call starts a new one, without the \
                         state this one held"
                    )
                } else {
                    format!(
                        "the sidecar exited while running {name} ({status}); the next call \
                         starts a new one, without the state this one held"
                    )
                })
            }
        }
    }

    /// Ends the process and removes the directory.
    fn stop(&mut self) {
        self.end_child(true);
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn shard_message(device: i64, region: &Region, path: &Path) -> ShardMessage {
    ShardMessage {
        device,
        offsets: region.offsets.clone(),
        sizes: region.sizes.clone(),
        path: path.display().to_string(),
    }
}

/// Writes the bytes of `buffer` (once it is ready) to `path`.
fn write_shard(buffer: &Buffer, path: &Path) -> Result<(), String> {
    let failed = |e: String| format!("an input shard cannot be read: {e}");
    buffer.wait_ready().map_err(|e| failed(e.to_string()))?;
    let write = |bytes: &[u8]| std::fs::write(path, bytes);
    let written = match buffer
        .read_in_place(write)
        .map_err(|e| failed(e.to_string()))?
    {
        Some(written) => written,
        None => write(&buffer.to_host().map_err(|e| failed(e.to_string()))?),
    };
    written.map_err(|e| format!("cannot write an input shard for the sidecar: {e}"))
}

/// The `size` bytes the sidecar wrote to `path`.
fn read_bounded(path: &Path, size: usize) -> Result<Vec<u8>, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("the sidecar wrote no output shard {}: {e}", path.display()))?
        .len();
    if len != size as u64 {
        return Err(format!(
            "the sidecar wrote {len} bytes for an output shard of {size}"
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read an output shard: {e}"))
}

fn write_message(stream: &mut UnixStream, bytes: &[u8]) -> std::io::Result<()> {
    let len =
        u32::try_from(bytes.len()).map_err(|_| std::io::Error::other("a message over 4 GiB"))?;
    stream.write_all(&len.to_le_bytes())?;
    stream.write_all(bytes)
}

fn read_message(stream: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_MESSAGE_BYTES {
        return Err(std::io::Error::other(format!(
            "a message of {len} bytes (at most {MAX_MESSAGE_BYTES})"
        )));
    }
    let mut bytes = vec![0u8; len];
    stream.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The SHA-256 of `bytes`, in hex.
fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// 32 random hex digits.
fn token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Kills `child` (ours, by its handle) and reaps it; its exit status.
fn end(child: &mut Child) -> String {
    let _ = child.kill();
    child
        .wait()
        .map_or_else(|e| format!("not reaped: {e}"), |s| s.to_string())
}

/// The exit status of a child that is exiting (killed if it has not
/// within a second).
fn wait_briefly(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return status.to_string();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    end(child)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_named_by_its_encoding_and_sizes_its_sidecar() {
        let function = Function {
            name: "f".into(),
            convention: Convention::Colocated,
            devices: vec![2, 3],
            pickle: b"\x80\x05pickle".to_vec(),
        };
        let bytes = function.encode();
        let p = Program::decode(&bytes).unwrap();
        assert_eq!(p.function, function);
        assert_eq!(p.id, Program::id_of(&bytes));
        assert_eq!(p.devices_needed(), 4);
        assert!(Program::decode(&bytes[..10]).is_err());
    }
}
