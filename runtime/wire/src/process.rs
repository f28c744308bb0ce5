//! What pw's binaries share at start and stop: XLA's logging quieted, pw's
//! own log from `PW_LOG`, and graceful stops on SIGINT and SIGTERM.

/// How pw's log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// For people: time, level, target, message and fields.
    #[default]
    Text,
    /// One JSON object per line (time, level, target, fields, spans), for
    /// log shippers.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("the log format is text or json, not {other:?}")),
        }
    }
}

/// Keeps XLA's errors only (unless `TF_CPP_MIN_LOG_LEVEL` says otherwise)
/// and logs pw's events to standard error at `PW_LOG`'s level, else at
/// `default_level`, as `format` says. Call first thing in `main`, before
/// any thread exists.
pub fn init(default_level: &str, format: LogFormat) {
    if std::env::var_os("TF_CPP_MIN_LOG_LEVEL").is_none() {
        std::env::set_var("TF_CPP_MIN_LOG_LEVEL", "2");
    }
    let filter = tracing_subscriber::EnvFilter::try_from_env("PW_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    let log = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => log.init(),
        LogFormat::Json => log.json().flatten_event(true).init(),
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// Resolves when process `pid` is gone (checked every 200 ms), or never
/// when `pid` is None: a server started for one client process ends with
/// it, even when that process is killed.
pub async fn parent_gone(pid: Option<u32>) {
    let Some(pid) = pid else {
        return std::future::pending().await;
    };
    let alive = std::path::PathBuf::from(format!("/proc/{pid}"));
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(200));
    while alive.exists() {
        tick.tick().await;
    }
    tracing::info!("process {pid} is gone: stopping");
}
