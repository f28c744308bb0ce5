//! Two "hosts": Linux network namespaces joined by a veth pair, made by the
//! test (as root) and removed when it ends. The server and one worker run
//! in one, another worker in the other; an example runs across them. Then
//! the link to the other host goes down mid-run: the run recovers onto a
//! worker that registers on the first host.

use crate::harness::{bin, example_args, run_bounded, serial, text, Cluster, Place};
use std::{
    process::Command,
    time::{Duration, Instant},
};

/// The namespaces and the veth pair; removed on drop.
struct Hosts {
    names: [String; 2],
    /// The ends of the veth pair, in host a and host b.
    links: [String; 2],
}

fn ip(args: &[&str]) {
    let out = run_bounded(
        {
            let mut c = Command::new("ip");
            c.args(args);
            c
        },
        Duration::from_secs(10),
    );
    assert!(out.status.success(), "ip {args:?}: {}", text(&out).1);
}

impl Hosts {
    fn new() -> Hosts {
        let id = std::process::id() % 100_000;
        let names = [format!("pwa{id}"), format!("pwb{id}")];
        let (va, vb) = (format!("va{id}"), format!("vb{id}"));
        let hosts = Hosts {
            names: names.clone(),
            links: [va.clone(), vb.clone()],
        };
        let (a, b) = (&names[0], &names[1]);
        ip(&["netns", "add", a]);
        ip(&["netns", "add", b]);
        ip(&["link", "add", &va, "type", "veth", "peer", "name", &vb]);
        ip(&["link", "set", &va, "netns", a]);
        ip(&["link", "set", &vb, "netns", b]);
        ip(&["-n", a, "addr", "add", "10.77.0.1/24", "dev", &va]);
        ip(&["-n", b, "addr", "add", "10.77.0.2/24", "dev", &vb]);
        for (ns, dev) in [(a, &va), (b, &vb)] {
            ip(&["-n", ns, "link", "set", dev, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        hosts
    }

    fn place(&self, host: usize, address: &str) -> Place {
        Place {
            netns: Some(self.names[host].clone()),
            listen: Some(format!("{address}:0")),
            // Anything but loopback needs the server's token, and the
            // secret server and workers share.
            token: Some("netns-test-token".into()),
            cluster_secret: Some("netns-test-cluster-secret".into()),
            env: Vec::new(),
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = Command::new("ip").args(["netns", "del", name]).status();
        }
    }
}

#[test]
fn a_run_across_two_network_namespaces() {
    let _serial = serial();
    let hosts = Hosts::new();
    let a = hosts.place(0, "10.77.0.1");
    let b = hosts.place(1, "10.77.0.2");
    // A server reachable from another host refuses to start without a
    // token.
    let open = Place {
        token: None,
        cluster_secret: None,
        ..a.clone()
    };
    let mut command = open.command(&bin("pw-server"));
    command.args(["--listen", "10.77.0.1:0"]);
    let out = run_bounded(command, Duration::from_secs(20));
    let stderr = text(&out).1;
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    {
        let mut c = Cluster::server(&[], &a);
        assert!(c.address.starts_with("10.77.0.1:"), "{}", c.address);
        c.add_worker(2, &[], &[], &a);
        c.add_worker(2, &[], &[], &b);
        // The status call comes from the test's own namespace, which cannot
        // reach 10.77.0.1: ask from inside host a.
        let args = example_args("rl_step");
        // Without the token the server refuses.
        let stranger = Place {
            token: None,
            ..a.clone()
        };
        let out = c.pw_run(&args, &stranger);
        let stderr = text(&out).1;
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("needs its token"), "{stderr}");
        let out = c.pw_run(&args, &a);
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(
            stdout.contains("matches") && !stdout.contains("MISMATCH"),
            "{stdout}"
        );
        assert!(
            stdout.contains("10.77.0.2:"),
            "no worker on host b took part: {stdout}"
        );
        let traffic = stdout
            .lines()
            .find(|l| l.starts_with("traffic"))
            .unwrap_or_default();
        assert!(!traffic.contains("worker to worker: 0 bytes"), "{traffic}");
        // pw-status presents the token too.
        let mut status = a.command(&bin("pw-status"));
        status.args(["--server", &c.address]);
        let out = run_bounded(status, Duration::from_secs(20));
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        assert!(stdout.contains("WORKERS (2)"), "{stdout}");
    }
    drop(hosts);
}

#[test]
fn a_link_taken_down_mid_run_is_detected_and_recovered_from() {
    let _serial = serial();
    let hosts = Hosts::new();
    let a = hosts.place(0, "10.77.0.1");
    let b = hosts.place(1, "10.77.0.2");
    {
        let mut c = Cluster::server(&[], &a);
        c.add_worker(2, &[], &[], &a);
        c.add_worker(2, &[], &[], &a);
        // The trainer's worker, on host b, pauses before its second step.
        c.add_worker(2, &[], &[("PW_WORKER_FAULTS", "delay-step=@1:5000")], &b);
        let mut run = c.spawn_pw_run_in(&example_args("rl_step"), &a);
        // The status cannot be read from the test's namespace: give the run
        // time to start (it compiles first), then cut host b off.
        std::thread::sleep(Duration::from_millis(2500));
        let cut = Instant::now();
        ip(&[
            "-n",
            &hosts.names[1],
            "link",
            "set",
            &hosts.links[1],
            "down",
        ]);
        c.add_worker(2, &[], &[], &a);
        let (stdout, stderr) = crate::recovery::recovered(&c, &mut run, 2);
        eprintln!(
            "link down to the end of the recovered run: {:?}",
            cut.elapsed()
        );
        assert!(stdout.contains("lost worker 2 (10.77.0.2:"), "{stdout}");
        assert!(
            stderr.contains("no heartbeat") || stderr.contains("silent for"),
            "{stderr}"
        );
    }
    drop(hosts);
}
