//! Helpers of pw-deploy's tests: run the binary, read its YAML back, walk
//! the objects by their API field names.

#![allow(dead_code)]

use serde::Deserialize;
use serde_yaml_ng::Value;
use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
    process::{Command, Output},
};

pub const BIN: &str = env!("CARGO_BIN_EXE_pw-deploy");

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs pw-deploy with `args`.
pub fn pw_deploy(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("running pw-deploy")
}

/// The base command line of the tests: 3 workers of 2 CPU devices.
pub const BASE: [&str; 9] = [
    "k8s",
    "--name",
    "pwtest",
    "--workers",
    "3",
    "--devices-per-worker",
    "2",
    "--image",
    "pw-server:test",
];

/// `BASE` with `extra`: a flag of `BASE` in `extra` replaces its value,
/// others are appended.
pub fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args: Vec<&str> = BASE.to_vec();
    let mut i = 0;
    while i < extra.len() {
        match args[..BASE.len()].iter().position(|a| *a == extra[i]) {
            Some(at) if i + 1 < extra.len() && extra[i].starts_with("--") => {
                args[at + 1] = extra[i + 1];
                i += 2;
            }
            _ => {
                args.push(extra[i]);
                i += 1;
            }
        }
    }
    args
}

/// The documents pw-deploy prints for `BASE` with `extra`, parsed back.
pub fn manifests(extra: &[&str]) -> Vec<Value> {
    let args = with(extra);
    let out = pw_deploy(&args);
    assert!(
        out.status.success(),
        "pw-deploy {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse(&String::from_utf8(out.stdout).expect("UTF-8 YAML"))
}

/// Every document of a YAML stream.
pub fn parse(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| Value::deserialize(doc).expect("valid YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

/// The value at a dotted path (`spec.replicatedJobs`); list items by index
/// (`containers.0`), keys with dots in brackets (`labels.[a.b/c]`). Fails
/// the test when a step is missing.
pub fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    try_at(v, path).unwrap_or_else(|| panic!("no {path} in:\n{}", dump(v)))
}

pub fn try_at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(bracketed) = rest.strip_prefix('[') {
            let (key, after) = bracketed.split_once(']').expect("a closing ]");
            steps.push(key);
            rest = after.strip_prefix('.').unwrap_or(after);
        } else {
            let (step, after) = rest.split_once('.').unwrap_or((rest, ""));
            steps.push(step);
            rest = after;
        }
    }
    let mut cur = v;
    for step in steps {
        cur = match step.parse::<usize>() {
            Ok(i) => cur.as_sequence()?.get(i)?,
            Err(_) => cur.get(step)?,
        };
    }
    Some(cur)
}

pub fn str_at<'a>(v: &'a Value, path: &str) -> &'a str {
    at(v, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path} is not a string: {:?}", at(v, path)))
}

pub fn u64_at(v: &Value, path: &str) -> u64 {
    at(v, path)
        .as_u64()
        .unwrap_or_else(|| panic!("{path} is not a number: {:?}", at(v, path)))
}

pub fn seq<'a>(v: &'a Value, path: &str) -> &'a Vec<Value> {
    at(v, path)
        .as_sequence()
        .unwrap_or_else(|| panic!("{path} is not a list"))
}

pub fn dump(v: &Value) -> String {
    serde_yaml_ng::to_string(v).unwrap_or_default()
}

/// The document of `kind`.
pub fn object<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<_> = docs
        .iter()
        .filter(|d| try_at(d, "kind").and_then(Value::as_str) == Some(kind))
        .collect();
    assert_eq!(found.len(), 1, "one {kind} expected");
    found[0]
}

/// The replicated job `name` of the JobSet.
pub fn replicated_job<'a>(jobset: &'a Value, name: &str) -> &'a Value {
    seq(jobset, "spec.replicatedJobs")
        .iter()
        .find(|j| str_at(j, "name") == name)
        .unwrap_or_else(|| panic!("no replicated job {name}"))
}

/// The pod template of a replicated job.
pub fn pod(rjob: &Value) -> &Value {
    at(rjob, "template.spec.template")
}

/// The one container of a pod template.
pub fn container(pod: &Value) -> &Value {
    let containers = seq(pod, "spec.containers");
    assert_eq!(containers.len(), 1, "one container per pod");
    &containers[0]
}

pub fn strings(v: &Value, path: &str) -> Vec<String> {
    seq(v, path)
        .iter()
        .map(|s| s.as_str().expect("a string").to_owned())
        .collect()
}

/// The value after `flag` in an argument list (`--flag VALUE` or
/// `--flag=VALUE`), if the flag is there (once at most).
pub fn flag(args: &[String], flag: &str) -> Option<String> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        let value = if a == flag {
            args.get(i + 1).cloned()
        } else {
            a.strip_prefix(&format!("{flag}=")).map(str::to_owned)
        };
        if let Some(v) = value {
            assert!(found.is_none(), "{flag} given twice in {args:?}");
            found = Some(v);
        }
    }
    found
}

pub fn has_switch(args: &[String], switch: &str) -> bool {
    args.iter().any(|a| a == switch)
}

/// `HOST:PORT` split at the last ':'.
pub fn host_port(address: &str) -> (&str, u16) {
    let (host, port) = address
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("{address:?} is not HOST:PORT"));
    (
        host,
        port.parse()
            .unwrap_or_else(|_| panic!("bad port in {address:?}")),
    )
}

/// What a pw-server or pw-worker command line listens on: (host, port) per
/// listening socket, read from the flags that open one (pw-server
/// `--listen`, `--http`; pw-worker `--listen`, `--data-port` on the
/// `--listen` host, `--metrics`). A flag these tests do not know of that names an
/// address fails the test, so a new listening flag cannot go unchecked.
pub fn listening(command: &[String]) -> BTreeSet<(String, u16)> {
    let program = Path::new(&command[0])
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let args = &command[1..];
    let mut out = BTreeSet::new();
    let listen = flag(args, "--listen").unwrap_or_else(|| panic!("{program} without --listen"));
    let (host, port) = host_port(&listen);
    out.insert((host.to_owned(), port));
    match program.as_str() {
        "pw-server" => {
            if let Some(http) = flag(args, "--http") {
                let (h, p) = host_port(&http);
                out.insert((h.to_owned(), p));
            }
        }
        "pw-worker" => {
            if let Some(data) = flag(args, "--data-port") {
                out.insert((host.to_owned(), data.parse().expect("a port")));
            }
            if let Some(metrics) = flag(args, "--metrics") {
                let (h, p) = host_port(&metrics);
                out.insert((h.to_owned(), p));
            }
        }
        other => panic!("unknown program {other}"),
    }
    out
}

/// Whether `host` is a loopback address (reachable only inside the pod).
pub fn loopback(host: &str) -> bool {
    host == "localhost" || host.starts_with("127.") || host == "[::1]"
}

/// The containerPorts of a container: name -> port.
pub fn container_ports(c: &Value) -> Vec<(String, u16)> {
    try_at(c, "ports")
        .and_then(Value::as_sequence)
        .map(|ports| {
            ports
                .iter()
                .map(|p| {
                    assert_eq!(str_at(p, "protocol"), "TCP");
                    (
                        str_at(p, "name").to_owned(),
                        u64_at(p, "containerPort") as u16,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The full command of a container: command then args.
pub fn command_line(c: &Value) -> Vec<String> {
    let mut cmd = strings(c, "command");
    cmd.extend(strings(c, "args"));
    cmd
}

/// The env entry `name` of a container.
pub fn env<'a>(c: &'a Value, name: &str) -> &'a Value {
    seq(c, "env")
        .iter()
        .find(|e| str_at(e, "name") == name)
        .unwrap_or_else(|| panic!("no env {name} in {}", dump(c)))
}

/// Whether the labels at `labels` include every pair of `selector`.
pub fn selects(selector: &Value, labels: &Value) -> bool {
    let (Some(sel), Some(labels)) = (selector.as_mapping(), labels.as_mapping()) else {
        return false;
    };
    !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// The code blocks (```sh ... ```) of a Markdown file, joined lines
/// (a trailing backslash continues a line).
pub fn shell_lines(markdown: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            in_block = !in_block && (t == "```sh" || t == "```bash" || t == "```shell");
            continue;
        }
        if !in_block {
            continue;
        }
        let code = line.split(" #").next().unwrap_or_default();
        if let Some(cont) = code.trim_end().strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
        } else {
            pending.push_str(code);
            lines.push(std::mem::take(&mut pending).trim().to_owned());
        }
    }
    lines
}

/// Every `--flag` of the invocations of `tool` in `lines` (an invocation
/// ends at a pipe, `;`, `&` or `&&`).
pub fn flags_used(lines: &[String], tool: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in lines {
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            if w != tool && !w.ends_with(&format!("/{tool}")) {
                continue;
            }
            for arg in words.by_ref() {
                if matches!(arg, "|" | ";" | "&" | "&&" | "||") {
                    break;
                }
                if let Some(f) = arg.strip_prefix("--") {
                    let name = f.split('=').next().unwrap_or_default();
                    if !name.is_empty() {
                        out.insert(format!("--{name}"));
                    }
                }
            }
        }
    }
    out
}

/// The long flags a `--help` text lists.
pub fn flags_in_help(help: &str) -> BTreeSet<String> {
    help.split_whitespace()
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .split('=')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}
