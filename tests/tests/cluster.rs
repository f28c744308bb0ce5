//! pw-server and pw-workers as real processes on 127.0.0.1 (and across two
//! network namespaces): every example runs across workers and matches JAX;
//! executables are compiled once and shipped; pieces go worker to worker;
//! incompatible workers and programs too big are refused; a run that
//! loses a worker recovers and still matches JAX; with recovery off, a
//! worker that dies, hangs or sends bad bytes fails the run with a clear
//! error, the server carries on, and no worker keeps a buffer; a session's
//! calls sent without waiting keep their order, are held back past the
//! limit, and end with their client.
//!
//! This binary links no MLIR: the server, workers and pw-run are the
//! workspace's binaries, started by PID and ended by PID.

#[path = "cluster/harness.rs"]
mod harness;

#[path = "cluster/faults.rs"]
mod faults;
#[path = "cluster/netns.rs"]
mod netns;
#[path = "cluster/recovery.rs"]
mod recovery;
#[path = "cluster/runs.rs"]
mod runs;
#[path = "cluster/security.rs"]
mod security;
#[path = "cluster/sessions.rs"]
mod sessions;
#[path = "cluster/status.rs"]
mod status;
