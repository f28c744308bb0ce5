//! Structural tests of `pw-deploy k8s`: Kubernetes cannot run here, so the
//! manifests are read back and checked for what makes the cluster work —
//! the JobSet's shape, restart and start-up policies, names that resolve to
//! the head, ports that are served, the token, the devices per platform —
//! and the container recipe (`deploy/Dockerfile`) for the binaries and
//! plugins they run. `processes.rs` runs the very command lines.

mod common;

use common::*;
use pw_deploy::k8s::{Platform, PLUGIN_DIR, SERVER_BIN, WORKER_BIN};
use serde_yaml_ng::Value;
use std::collections::BTreeSet;

/// Tests that the objects are a JobSet, a Service and a NetworkPolicy of
/// the right API groups, all in the namespace asked for.
#[test]
fn kinds_api_versions_and_namespace() {
    let docs = manifests(&["--namespace", "ml-team"]);
    let kinds: Vec<(&str, &str)> = docs
        .iter()
        .map(|d| (str_at(d, "apiVersion"), str_at(d, "kind")))
        .collect();
    assert_eq!(
        kinds,
        [
            ("jobset.x-k8s.io/v1alpha2", "JobSet"),
            ("v1", "Service"),
            ("networking.k8s.io/v1", "NetworkPolicy"),
        ]
    );
    for d in &docs {
        assert_eq!(str_at(d, "metadata.namespace"), "ml-team");
        assert_eq!(
            str_at(d, "metadata.labels.[app.kubernetes.io/instance]"),
            "pwtest"
        );
    }
    assert!(manifests(&[])
        .iter()
        .all(|d| try_at(d, "metadata.namespace").is_none()));
    let without = manifests(&["--no-network-policy"]);
    assert_eq!(without.len(), 2);
    assert!(without.iter().all(|d| str_at(d, "kind") != "NetworkPolicy"));
    let monitored = manifests(&["--service-monitor", "--namespace", "ml-team"]);
    let kinds: Vec<(&str, &str, &str)> = monitored
        .iter()
        .map(|d| {
            (
                str_at(d, "apiVersion"),
                str_at(d, "kind"),
                str_at(d, "metadata.name"),
            )
        })
        .collect();
    assert_eq!(
        kinds[2..],
        [
            ("networking.k8s.io/v1", "NetworkPolicy", "pwtest-workers"),
            ("v1", "Service", "pwtest-metrics"),
            ("monitoring.coreos.com/v1", "ServiceMonitor", "pwtest"),
        ]
    );
    assert!(monitored
        .iter()
        .all(|d| str_at(d, "metadata.namespace") == "ml-team"));
}

/// Tests the JobSet's shape: DNS hostnames, the head (one pod) listed and
/// started first, the workers one indexed Job with a pod per worker, every
/// pod restarted on failure with a large backoffLimit, the set done when
/// the head is.
#[test]
fn jobset_shape_restarts_and_start_up_order() {
    let docs = manifests(&["--max-restarts", "7"]);
    let js = object(&docs, "JobSet");
    assert_eq!(str_at(js, "metadata.name"), "pwtest");
    assert_eq!(
        at(js, "spec.network.enableDNSHostnames"),
        &Value::Bool(true)
    );
    assert_eq!(str_at(js, "spec.network.subdomain"), "pwtest");
    assert_eq!(
        str_at(js, "spec.startupPolicy.startupPolicyOrder"),
        "InOrder"
    );
    assert_eq!(u64_at(js, "spec.failurePolicy.maxRestarts"), 7);
    assert_eq!(str_at(js, "spec.successPolicy.operator"), "Any");
    assert_eq!(
        strings(js, "spec.successPolicy.targetReplicatedJobs"),
        ["head"]
    );
    let names: Vec<&str> = seq(js, "spec.replicatedJobs")
        .iter()
        .map(|j| str_at(j, "name"))
        .collect();
    assert_eq!(names, ["head", "worker"], "InOrder starts them as listed");
    for (name, pods) in [("head", 1), ("worker", 3)] {
        let rjob = replicated_job(js, name);
        assert_eq!(u64_at(rjob, "replicas"), 1, "{name}: one Job");
        let job = at(rjob, "template.spec");
        assert_eq!(str_at(job, "completionMode"), "Indexed", "{name}");
        assert_eq!(u64_at(job, "completions"), pods, "{name}");
        assert_eq!(u64_at(job, "parallelism"), pods, "{name}");
        assert!(
            u64_at(job, "backoffLimit") >= 100_000,
            "{name}: a large backoffLimit"
        );
        assert_eq!(
            str_at(pod(rjob), "spec.restartPolicy"),
            "OnFailure",
            "{name}"
        );
    }
    let head = container(pod(replicated_job(js, "head")));
    assert_eq!(
        str_at(head, "readinessProbe.tcpSocket.port"),
        "grpc",
        "InOrder waits for the head to be ready: its gRPC port answering"
    );

    let docs = manifests(&["--startup", "depends-on", "--backoff-limit", "500000"]);
    let js = object(&docs, "JobSet");
    assert!(
        try_at(js, "spec.startupPolicy").is_none(),
        "dependsOn and startupPolicy exclude each other"
    );
    let deps = seq(replicated_job(js, "worker"), "dependsOn");
    assert_eq!(deps.len(), 1);
    assert_eq!(str_at(&deps[0], "name"), "head");
    assert_eq!(str_at(&deps[0], "status"), "Ready");
    assert!(try_at(replicated_job(js, "head"), "dependsOn").is_none());
    assert_eq!(
        u64_at(replicated_job(js, "worker"), "template.spec.backoffLimit"),
        500_000
    );
}

/// Tests that each worker points at the head's stable DNS name and the
/// server's port, as the JobSet names it
/// (`<jobset>-<replicated job>-<job index>-<pod index>.<subdomain>`), and
/// advertises its own pod address.
#[test]
fn workers_find_the_head_by_its_stable_name() {
    for extra in [
        &[][..],
        &[
            "--server-port",
            "31000",
            "--worker-port",
            "31100",
            "--data-port",
            "31200",
        ],
    ] {
        let docs = manifests(extra);
        let js = object(&docs, "JobSet");
        let jobset = str_at(js, "metadata.name");
        let subdomain = str_at(js, "spec.network.subdomain");
        let head_rjob = replicated_job(js, "head");
        assert_eq!(u64_at(head_rjob, "template.spec.completions"), 1);
        let server = command_line(container(pod(head_rjob)));
        let (_, server_port) = host_port(&flag(&server, "--listen").expect("--listen"));
        let worker = command_line(container(pod(replicated_job(js, "worker"))));
        let controller = flag(&worker, "--controller").expect("--controller");
        assert_eq!(
            controller,
            format!(
                "{jobset}-{}-0-0.{subdomain}:{server_port}",
                str_at(head_rjob, "name")
            )
        );
        let listen = flag(&worker, "--listen").expect("--listen");
        let (listen_host, listen_port) = host_port(&listen);
        assert_eq!(listen_host, "0.0.0.0");
        let advertise = flag(&worker, "--advertise").expect("--advertise");
        assert_eq!(advertise, format!("$(POD_IP):{listen_port}"));
        let c = container(pod(replicated_job(js, "worker")));
        assert_eq!(
            str_at(env(c, "POD_IP"), "valueFrom.fieldRef.fieldPath"),
            "status.podIP"
        );
    }
}

/// Tests that every containerPort is a port its command listens on (not on
/// loopback), every such port is declared, probes and the Service name
/// declared ports, and the Service and NetworkPolicy select the right pods
/// and ports.
#[test]
fn every_declared_port_is_served_and_every_served_port_declared() {
    for extra in [
        &[][..],
        &["--status-port", "0", "--metrics-port", "0"],
        &[
            "--server-port",
            "443",
            "--status-port",
            "8080",
            "--worker-port",
            "7000",
            "--data-port",
            "7001",
            "--metrics-port",
            "9400",
        ],
    ] {
        let docs = manifests(extra);
        let js = object(&docs, "JobSet");
        let mut pods = Vec::new();
        for name in ["head", "worker"] {
            let p = pod(replicated_job(js, name));
            let c = container(p);
            let served: BTreeSet<u16> = listening(&command_line(c))
                .into_iter()
                .filter(|(host, _)| !loopback(host))
                .map(|(_, port)| port)
                .collect();
            let declared = container_ports(c);
            let declared_ports: BTreeSet<u16> = declared.iter().map(|(_, p)| *p).collect();
            assert_eq!(
                declared_ports, served,
                "{name} {extra:?}: containerPorts vs listening ports"
            );
            let names: BTreeSet<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names.len(), declared.len(), "{name}: port names are unique");
            let probe = str_at(c, "readinessProbe.tcpSocket.port");
            assert!(
                names.contains(probe),
                "{name}: the probe's port {probe} is declared"
            );
            pods.push((p, declared));
        }
        let (head, head_ports) = &pods[0];
        let (worker, worker_ports) = &pods[1];

        let service = object(&docs, "Service");
        assert_eq!(str_at(service, "spec.type"), "ClusterIP");
        assert!(selects(
            at(service, "spec.selector"),
            at(head, "metadata.labels")
        ));
        assert!(!selects(
            at(service, "spec.selector"),
            at(worker, "metadata.labels")
        ));
        for p in seq(service, "spec.ports") {
            let target = str_at(p, "targetPort");
            let (_, port) = head_ports
                .iter()
                .find(|(n, _)| n == target)
                .unwrap_or_else(|| {
                    panic!("the Service's targetPort {target} is not a port of the head")
                });
            assert_eq!(u64_at(p, "port") as u16, *port);
        }

        let policy = object(&docs, "NetworkPolicy");
        assert!(selects(
            at(policy, "spec.podSelector.matchLabels"),
            at(worker, "metadata.labels")
        ));
        assert!(!selects(
            at(policy, "spec.podSelector.matchLabels"),
            at(head, "metadata.labels")
        ));
        assert_eq!(strings(policy, "spec.policyTypes"), ["Ingress"]);
        let rules = seq(policy, "spec.ingress");
        let metrics = worker_ports.iter().find(|(n, _)| n == "metrics");
        assert_eq!(rules.len(), 1 + metrics.is_some() as usize);
        let from = at(&rules[0], "from.0.podSelector.matchLabels");
        assert!(
            selects(from, at(head, "metadata.labels")),
            "the server reaches the workers"
        );
        assert!(
            selects(from, at(worker, "metadata.labels")),
            "workers reach each other"
        );
        let admitted = |rule: &Value| -> BTreeSet<u16> {
            seq(rule, "ports")
                .iter()
                .map(|p| u64_at(p, "port") as u16)
                .collect()
        };
        let inside: BTreeSet<u16> = worker_ports
            .iter()
            .filter(|(n, _)| n != "metrics")
            .map(|(_, p)| *p)
            .collect();
        assert_eq!(
            admitted(&rules[0]),
            inside,
            "the cluster's pods reach exactly the workers' service and data ports"
        );
        if let Some((_, port)) = metrics {
            assert!(
                try_at(&rules[1], "from").is_none(),
                "the metrics port is open to any scraper (it asks for a bearer credential)"
            );
            assert_eq!(admitted(&rules[1]), BTreeSet::from([*port]));
        }
    }
}

/// Tests how Prometheus finds the metrics: the pods' `prometheus.io/*`
/// annotations by default (the port each serves `/metrics` on, https with
/// TLS); with `--service-monitor`, none of them but a headless Service of
/// both metrics ports and a ServiceMonitor selecting it that scrapes with
/// the scrape token's Secret key (and, with TLS, checks the certificate
/// against the cluster's CA for the names it holds); and that the scrape
/// token reaches both containers only when something serves `/metrics`.
#[test]
fn prometheus_scrapes_with_the_scrape_token() {
    let annotation = |p: &Value, key: &str| {
        try_at(p, &format!("metadata.annotations.[prometheus.io/{key}]"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    for (extra, scheme) in [
        (&[][..], "http"),
        (&["--tls-secret", "pwtest-tls"][..], "https"),
    ] {
        let docs = manifests(extra);
        let js = object(&docs, "JobSet");
        for (name, port) in [("head", "http"), ("worker", "metrics")] {
            let p = pod(replicated_job(js, name));
            let c = container(p);
            let (_, number) = container_ports(c)
                .into_iter()
                .find(|(n, _)| n == port)
                .unwrap_or_else(|| panic!("{name} declares no {port} port"));
            assert_eq!(annotation(p, "scrape").as_deref(), Some("true"), "{name}");
            assert_eq!(annotation(p, "port"), Some(number.to_string()), "{name}");
            assert_eq!(annotation(p, "path").as_deref(), Some("/metrics"), "{name}");
            assert_eq!(annotation(p, "scheme").as_deref(), Some(scheme), "{name}");
            let e = env(c, "PW_METRICS_TOKEN");
            assert_eq!(str_at(e, "valueFrom.secretKeyRef.name"), "pwtest-token");
            assert_eq!(str_at(e, "valueFrom.secretKeyRef.key"), "metrics-token");
        }
    }
    let quiet = manifests(&["--status-port", "0", "--metrics-port", "0"]);
    for name in ["head", "worker"] {
        let p = pod(replicated_job(object(&quiet, "JobSet"), name));
        assert_eq!(annotation(p, "scrape"), None, "{name}: nothing to scrape");
        assert!(
            seq(container(p), "env")
                .iter()
                .all(|e| str_at(e, "name") != "PW_METRICS_TOKEN"),
            "{name}: no scrape token when nothing is scraped"
        );
    }

    let docs = manifests(&[
        "--service-monitor",
        "--service-monitor-label",
        "release=prometheus",
        "--tls-secret",
        "pwtest-tls",
        "--metrics-token-key",
        "scrape",
    ]);
    let js = object(&docs, "JobSet");
    let head = pod(replicated_job(js, "head"));
    let worker = pod(replicated_job(js, "worker"));
    for p in [head, worker] {
        assert_eq!(annotation(p, "scrape"), None, "the ServiceMonitor scrapes");
    }
    let services: Vec<&Value> = docs
        .iter()
        .filter(|d| str_at(d, "kind") == "Service")
        .collect();
    assert_eq!(services.len(), 2);
    let metrics = services
        .iter()
        .find(|s| str_at(s, "metadata.name") == "pwtest-metrics")
        .expect("the metrics Service");
    assert_eq!(
        str_at(metrics, "spec.clusterIP"),
        "None",
        "headless: one target per pod"
    );
    for p in [head, worker] {
        assert!(selects(
            at(metrics, "spec.selector"),
            at(p, "metadata.labels")
        ));
    }
    let monitor = object(&docs, "ServiceMonitor");
    assert_eq!(
        str_at(monitor, "metadata.labels.release"),
        "prometheus",
        "Prometheus' serviceMonitorSelector"
    );
    for s in &services {
        assert_eq!(
            selects(
                at(monitor, "spec.selector.matchLabels"),
                at(s, "metadata.labels")
            ),
            str_at(s, "metadata.name") == "pwtest-metrics",
            "the ServiceMonitor selects the metrics Service alone"
        );
    }
    let endpoints = seq(monitor, "spec.endpoints");
    let service_ports = seq(metrics, "spec.ports");
    assert_eq!(endpoints.len(), 2);
    assert_eq!(service_ports.len(), 2);
    for (e, (p, host)) in endpoints.iter().zip([
        (head, "pwtest-head-0-0.pwtest"),
        (worker, "pwtest-worker-0-0.pwtest"),
    ]) {
        let port = str_at(e, "port");
        let sp = service_ports
            .iter()
            .find(|sp| str_at(sp, "name") == port)
            .unwrap_or_else(|| panic!("the endpoint's port {port} is not the Service's"));
        let target = str_at(sp, "targetPort");
        let (_, number) = container_ports(container(p))
            .into_iter()
            .find(|(n, _)| n == target)
            .unwrap_or_else(|| panic!("{port}: no container port {target}"));
        assert_eq!(u64_at(sp, "port") as u16, number);
        assert_eq!(str_at(e, "path"), "/metrics");
        assert_eq!(str_at(e, "scheme"), "https");
        assert_eq!(str_at(e, "authorization.type"), "Bearer");
        assert_eq!(str_at(e, "authorization.credentials.name"), "pwtest-token");
        assert_eq!(str_at(e, "authorization.credentials.key"), "scrape");
        assert_eq!(str_at(e, "tlsConfig.ca.secret.name"), "pwtest-tls");
        assert_eq!(str_at(e, "tlsConfig.ca.secret.key"), "ca.crt");
        assert_eq!(str_at(e, "tlsConfig.serverName"), host);
        assert_eq!(
            str_at(
                env(container(p), "PW_METRICS_TOKEN"),
                "valueFrom.secretKeyRef.key"
            ),
            "scrape"
        );
    }
}

/// Tests the devices per platform: CPU devices made by the plugin
/// (`--devices`), GPUs and TPU chips asked of Kubernetes as extended
/// resources; the plugin path is where the images put it; the head
/// compiles only where it has the workers' plugin.
#[test]
fn devices_and_plugin_per_platform() {
    for platform in Platform::ALL {
        let docs = manifests(&["--platform", platform.name(), "--devices-per-worker", "4"]);
        let js = object(&docs, "JobSet");
        let worker = container(pod(replicated_job(js, "worker")));
        let server = command_line(container(pod(replicated_job(js, "head"))));
        let args = command_line(worker);
        let plugin = format!("{PLUGIN_DIR}/{}", platform.plugin_file());
        assert_eq!(flag(&args, "--plugin").as_deref(), Some(plugin.as_str()));
        let limits = try_at(worker, "resources.limits");
        match platform {
            Platform::Cpu => {
                assert_eq!(flag(&args, "--devices").as_deref(), Some("4"));
                assert!(limits.is_none(), "CPU devices are no resource");
                assert_eq!(flag(&server, "--plugin").as_deref(), Some(plugin.as_str()));
                assert!(!has_switch(&server, "--no-compile"));
            }
            Platform::Cuda | Platform::Tpu => {
                let resource = platform.resource().expect("an extended resource");
                assert_eq!(
                    resource,
                    if platform == Platform::Cuda {
                        "nvidia.com/gpu"
                    } else {
                        "google.com/tpu"
                    }
                );
                let limits = limits.and_then(Value::as_mapping).expect("limits");
                assert_eq!(limits.len(), 1);
                assert_eq!(limits.get(resource).and_then(Value::as_str), Some("4"));
                assert_eq!(
                    flag(&args, "--devices"),
                    None,
                    "the plugin sees the pod's devices"
                );
                assert!(
                    has_switch(&server, "--no-compile"),
                    "the head has no {platform:?}"
                );
                assert_eq!(flag(&server, "--plugin"), None);
            }
        }
    }
    let docs = manifests(&["--plugin", "/opt/custom/my_plugin.so"]);
    let worker = command_line(container(pod(replicated_job(
        object(&docs, "JobSet"),
        "worker",
    ))));
    assert_eq!(
        flag(&worker, "--plugin").as_deref(),
        Some("/opt/custom/my_plugin.so")
    );
}

/// Tests that pw-server reads PW_TOKEN and both containers read
/// PW_CLUSTER_SECRET from the one Secret, that workers never get the
/// clients' token, and that no secret is written in the manifests.
#[test]
fn the_secrets_come_from_one_secret() {
    for (extra, secret, key, cluster_key) in [
        (&[][..], "pwtest-token", "token", "cluster-secret"),
        (
            &[
                "--token-secret",
                "shared.tokens",
                "--token-key",
                "pw_token",
                "--cluster-secret-key",
                "pw_cluster",
            ][..],
            "shared.tokens",
            "pw_token",
            "pw_cluster",
        ),
    ] {
        let docs = manifests(extra);
        let js = object(&docs, "JobSet");
        for (name, vars) in [
            (
                "head",
                &[("PW_TOKEN", key), ("PW_CLUSTER_SECRET", cluster_key)][..],
            ),
            ("worker", &[("PW_CLUSTER_SECRET", cluster_key)][..]),
        ] {
            let c = container(pod(replicated_job(js, name)));
            for &(var, key) in vars {
                let e = env(c, var);
                assert!(
                    try_at(e, "value").is_none(),
                    "{name}: {var} in the manifest"
                );
                assert_eq!(str_at(e, "valueFrom.secretKeyRef.name"), secret, "{name}");
                assert_eq!(str_at(e, "valueFrom.secretKeyRef.key"), key, "{name}");
            }
            for f in ["--token", "--cluster-secret"] {
                assert_eq!(
                    flag(&command_line(c), f),
                    None,
                    "{name}: {f} in the arguments"
                );
            }
        }
        let worker = container(pod(replicated_job(js, "worker")));
        assert!(
            seq(worker, "env")
                .iter()
                .all(|e| str_at(e, "name") != "PW_TOKEN"),
            "a worker does not hold the clients' token"
        );
    }
}

/// Tests that `--tls-secret` mounts the Secret (cert-manager's keys) in
/// both pods where `PW_TLS_*` point, readable by the images' user through
/// the pod's fsGroup; that workers then advertise names one wildcard
/// certificate of `*.NAME` covers, as the head's name is; and that without
/// it none of this is there.
#[test]
fn tls_comes_from_a_mounted_secret() {
    let docs = manifests(&["--tls-secret", "pwtest-tls"]);
    let js = object(&docs, "JobSet");
    let user_group: u64 = dockerfile()
        .iter()
        .filter(|i| i.keyword == "USER")
        .map(|i| {
            i.rest
                .rsplit(':')
                .next()
                .unwrap_or_default()
                .trim()
                .parse()
                .expect("a numeric USER")
        })
        .next_back()
        .expect("the images run as a user");
    for name in ["head", "worker"] {
        let pod = pod(replicated_job(js, name));
        let c = container(pod);
        let volume = seq(pod, "spec.volumes")
            .iter()
            .find(|v| try_at(v, "secret").is_some())
            .unwrap_or_else(|| panic!("{name}: no Secret volume"));
        assert_eq!(str_at(volume, "secret.secretName"), "pwtest-tls", "{name}");
        let mount = seq(c, "volumeMounts")
            .iter()
            .find(|m| str_at(m, "name") == str_at(volume, "name"))
            .unwrap_or_else(|| panic!("{name}: the Secret is not mounted"));
        assert_eq!(at(mount, "readOnly"), &Value::Bool(true), "{name}");
        let dir = str_at(mount, "mountPath");
        for (var, file) in [
            ("PW_TLS_CERT", "tls.crt"),
            ("PW_TLS_KEY", "tls.key"),
            ("PW_TLS_CA", "ca.crt"),
        ] {
            assert_eq!(
                str_at(env(c, var), "value"),
                format!("{dir}/{file}"),
                "{name}: {var}"
            );
        }
        assert_eq!(
            u64_at(pod, "spec.securityContext.fsGroup"),
            user_group,
            "{name}"
        );
        let mode = u64_at(volume, "secret.defaultMode");
        assert!(
            mode & 0o040 != 0 && mode & 0o007 == 0,
            "{name}: mode {mode:o}"
        );
    }
    // Every name a process calls is one label under NAME: `*.NAME` holds.
    let covered = |host: &str| {
        host.strip_suffix(".pwtest")
            .is_some_and(|label| !label.is_empty() && !label.contains('.'))
    };
    let worker = container(pod(replicated_job(js, "worker")));
    let args = command_line(worker);
    let controller = flag(&args, "--controller").expect("--controller");
    assert!(covered(host_port(&controller).0), "{controller}");
    let advertised = flag(&args, "--advertise").expect("--advertise");
    let host = host_port(&advertised).0;
    assert!(covered(host), "{advertised}");
    assert_eq!(host, "pwtest-worker-0-$(POD_INDEX).pwtest");
    assert_eq!(
        str_at(env(worker, "POD_INDEX"), "valueFrom.fieldRef.fieldPath"),
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    );
    assert!(
        String::from_utf8(pw_deploy(&with(&["--tls-secret", "pwtest-tls"])).stdout)
            .expect("UTF-8")
            .contains("the TLS Secret pwtest-tls")
    );

    let plain = manifests(&[]);
    let js = object(&plain, "JobSet");
    for name in ["head", "worker"] {
        let pod = pod(replicated_job(js, name));
        assert!(try_at(pod, "spec.securityContext").is_none(), "{name}");
        assert!(
            seq(container(pod), "env")
                .iter()
                .all(|e| !str_at(e, "name").starts_with("PW_TLS_")),
            "{name}"
        );
    }
    let args = command_line(container(pod(replicated_job(js, "worker"))));
    assert_eq!(
        flag(&args, "--advertise").as_deref(),
        Some("$(POD_IP):29100")
    );
}

/// Tests that the pass-through flags reach pw-server and pw-worker, and the
/// scheduling flags the worker pods.
#[test]
fn pass_through_and_scheduling_flags() {
    let docs = manifests(&[
        "--heartbeat-ms",
        "100",
        "--lease-ms",
        "2000",
        "--run-timeout",
        "60",
        "--client-lease-ms",
        "5000",
        "--connect-timeout",
        "300",
        "--data-plane",
        "grpc",
        "--island",
        "pod0",
        "--node-selector",
        "pool=accel",
        "--node-selector",
        "cloud.example/zone=z1",
        "--worker-cpu",
        "4",
        "--worker-memory",
        "16Gi",
        "--one-per-node",
        "--worker-image",
        "pw-worker:test",
    ]);
    let js = object(&docs, "JobSet");
    let head = container(pod(replicated_job(js, "head")));
    assert_eq!(str_at(head, "image"), "pw-server:test");
    let server = command_line(head);
    for (f, v) in [
        ("--heartbeat-ms", "100"),
        ("--lease-ms", "2000"),
        ("--run-timeout", "60"),
        ("--client-lease-ms", "5000"),
    ] {
        assert_eq!(flag(&server, f).as_deref(), Some(v), "{f}");
    }
    let worker_pod = pod(replicated_job(js, "worker"));
    let worker = container(worker_pod);
    assert_eq!(str_at(worker, "image"), "pw-worker:test");
    let args = command_line(worker);
    for (f, v) in [
        ("--connect-timeout", "300"),
        ("--data-plane", "grpc"),
        ("--island", "pod0"),
    ] {
        assert_eq!(flag(&args, f).as_deref(), Some(v), "{f}");
    }
    assert_eq!(str_at(worker_pod, "spec.nodeSelector.pool"), "accel");
    assert_eq!(
        str_at(worker_pod, "spec.nodeSelector.[cloud.example/zone]"),
        "z1"
    );
    assert_eq!(str_at(worker, "resources.requests.cpu"), "4");
    assert_eq!(str_at(worker, "resources.requests.memory"), "16Gi");
    let term = at(
        worker_pod,
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.0",
    );
    assert_eq!(str_at(term, "topologyKey"), "kubernetes.io/hostname");
    assert!(selects(
        at(term, "labelSelector.matchLabels"),
        at(worker_pod, "metadata.labels")
    ));
    // By default two workers may share a node, but are spread when they can.
    let docs = manifests(&[]);
    let worker_pod = pod(replicated_job(object(&docs, "JobSet"), "worker"));
    assert_eq!(
        str_at(container(worker_pod), "image"),
        "pw-server:test",
        "--image for both"
    );
    assert!(try_at(
        worker_pod,
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    )
    .is_none());
    assert!(try_at(
        worker_pod,
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.0"
    )
    .is_some());
    let server = command_line(container(pod(replicated_job(
        object(&docs, "JobSet"),
        "head",
    ))));
    assert_eq!(
        flag(&server, "--heartbeat-ms"),
        None,
        "pw-server's defaults unless asked"
    );
}

/// Tests that bad input is refused with an error naming the flag and the
/// rule, a non-zero exit and nothing on stdout — never a panic.
#[test]
fn bad_input_is_refused_clearly() {
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--workers", "0"], 2, "0 is not in 1..=65536"),
        (&["--workers", "18446744073709551617"], 2, "--workers"),
        (&["--workers", "-3"], 2, "--workers"),
        (&["--devices-per-worker", "0"], 2, "--devices-per-worker"),
        (&["--devices-per-worker", "5000"], 2, "--devices-per-worker"),
        (
            &["--workers", "20000", "--devices-per-worker", "4"],
            1,
            "more than pw's 65536 devices",
        ),
        (&["--name", "Pw"], 1, "DNS-1035"),
        (&["--name", "1pw"], 1, "DNS-1035"),
        (&["--name", "pw_x"], 1, "DNS-1035"),
        (&["--name", "pw-"], 1, "DNS-1035"),
        (&["--name", ""], 1, "is empty"),
        (
            &[
                "--name",
                "a-very-long-cluster-name-that-does-not-fit-in-pod-names",
            ],
            1,
            "shorten --name",
        ),
        (&["--namespace", "ML"], 1, "--namespace"),
        (&["--tls-secret", "TLS_secret"], 1, "--tls-secret"),
        (&["--image", ""], 1, "--image"),
        (&["--image", "a b"], 1, "white space"),
        (&["--worker-image", "x$(y)"], 1, "$(VAR)"),
        (&["--plugin", "relative.so"], 1, "absolute path"),
        (&["--platform", "rocm"], 2, "--platform"),
        (&["--server-port", "0"], 2, "--server-port"),
        (&["--server-port", "70000"], 2, "--server-port"),
        (&["--status-port", "29000"], 1, "two ports"),
        (&["--data-port", "29100"], 1, "two ports"),
        (&["--metrics-port", "29101"], 1, "--metrics-port"),
        (&["--metrics-port", "70000"], 2, "--metrics-port"),
        (&["--metrics-token-key", "token"], 1, "--metrics-token-key"),
        (&["--metrics-token-key", "a b"], 1, "--metrics-token-key"),
        (
            &[
                "--service-monitor",
                "--status-port",
                "0",
                "--metrics-port",
                "0",
            ],
            1,
            "nothing to scrape",
        ),
        (
            &["--service-monitor-label", "release=prometheus"],
            1,
            "only --service-monitor",
        ),
        (
            &["--service-monitor", "--service-monitor-label", "release"],
            1,
            "KEY=VALUE",
        ),
        (&["--token-secret", "Bad_Secret"], 1, "--token-secret"),
        (&["--token-key", "a/b"], 1, "--token-key"),
        (
            &["--cluster-secret-key", "token"],
            1,
            "--cluster-secret-key",
        ),
        (&["--heartbeat-ms", "2000"], 1, "longer than the heartbeat"),
        (
            &["--lease-ms", "100", "--heartbeat-ms", "100"],
            1,
            "longer than the heartbeat",
        ),
        (&["--node-selector", "pool"], 1, "KEY=VALUE"),
        (&["--node-selector", "pool=a b"], 1, "label value"),
        (&["--node-selector", "a b=c"], 1, "label key"),
        (&["--worker-memory", "16GB"], 1, "quantity"),
        (&["--island", "two words"], 1, "--island"),
        (&["--backoff-limit", "3000000000"], 2, "--backoff-limit"),
        (&["--no-such-flag"], 2, "--no-such-flag"),
    ];
    for (extra, code, message) in cases {
        let out = pw_deploy(&with(extra));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{extra:?}: {stderr}");
        assert!(
            stderr.contains(message),
            "{extra:?}: expected {message:?} in:\n{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{extra:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{extra:?}: printed manifests anyway");
    }
    for missing in ["--name", "--workers", "--devices-per-worker", "--image"] {
        let mut args = vec![BASE[0]];
        for pair in BASE[1..].chunks(2) {
            if pair[0] != missing {
                args.extend_from_slice(pair);
            }
        }
        let out = pw_deploy(&args);
        assert_eq!(out.status.code(), Some(2), "without {missing}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(missing),
            "without {missing}"
        );
    }
}

/// Tests that `--out` writes what stdout would show, and that a refused
/// option or an unwritable path leaves the file as it was.
#[test]
fn out_writes_all_or_nothing() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("pw.yaml");
    let mut args: Vec<&str> = BASE.to_vec();
    let path_str = path.to_str().expect("a UTF-8 path");
    args.extend(["--out", path_str]);
    let out = pw_deploy(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let stdout = pw_deploy(&BASE).stdout;
    assert_eq!(std::fs::read(&path).expect("written"), stdout);

    std::fs::write(&path, "old").expect("write");
    let mut bad = args.clone();
    bad[2] = "BAD";
    assert_eq!(pw_deploy(&bad).status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "old");

    let missing = dir.path().join("no/such/dir/pw.yaml");
    let mut args: Vec<&str> = BASE.to_vec();
    args.extend(["--out", missing.to_str().expect("UTF-8")]);
    let out = pw_deploy(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write"));
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(left, ["pw.yaml"], "no temporary file left behind");
}

/// Tests that the help says what the command does, with examples, and
/// that every pw-deploy flag docs/deploy.md shows is one it has.
#[test]
fn help_has_examples_and_docs_use_real_flags() {
    let help = String::from_utf8(pw_deploy(&["k8s", "--help"]).stdout).expect("UTF-8");
    assert!(help.contains("Examples:"), "{help}");
    assert!(help.contains("pw-deploy k8s --name"), "{help}");
    let top = String::from_utf8(pw_deploy(&["--help"]).stdout).expect("UTF-8");
    assert!(top.contains("Examples:") && top.contains("k8s"), "{top}");
    let known = flags_in_help(&help);
    let docs = std::fs::read_to_string(repo_root().join("docs/deploy.md")).expect("docs/deploy.md");
    let lines = shell_lines(&docs);
    let used = flags_used(&lines, "pw-deploy");
    assert!(
        used.len() >= 8,
        "docs/deploy.md shows pw-deploy k8s with its flags: {used:?}"
    );
    let unknown: Vec<_> = used.difference(&known).collect();
    assert!(
        unknown.is_empty(),
        "docs/deploy.md uses pw-deploy flags it lacks: {unknown:?}"
    );
    // Every pw-deploy command line of the docs is accepted as it is
    // (shell substitutions aside).
    for line in lines.iter().filter(|l| l.starts_with("pw-deploy k8s")) {
        let args: Vec<&str> = line
            .split('|')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .collect();
        if args.iter().any(|a| a.contains('$') || a.contains('<')) {
            continue;
        }
        // In a directory of its own: a line may write --out FILE.
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = std::process::Command::new(BIN)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("running pw-deploy");
        assert!(
            out.status.success(),
            "docs/deploy.md: {line}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// One instruction of a Dockerfile: its stage, keyword and the rest.
struct Instruction {
    stage: String,
    keyword: String,
    rest: String,
}

/// The instructions of `deploy/Dockerfile`, continuation lines joined.
fn dockerfile() -> Vec<Instruction> {
    let text =
        std::fs::read_to_string(repo_root().join("deploy/Dockerfile")).expect("deploy/Dockerfile");
    let mut out = Vec::new();
    let mut stage = String::from("<args>");
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim();
        if pending.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(cont) = t.strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        let full = std::mem::take(&mut pending);
        let (keyword, rest) = full.split_once(' ').unwrap_or((&full, ""));
        let keyword = keyword.to_ascii_uppercase();
        if keyword == "FROM" {
            let words: Vec<&str> = rest.split_whitespace().collect();
            assert!(
                words.len() == 3 && words[1].eq_ignore_ascii_case("AS"),
                "FROM without a stage name: {rest}"
            );
            stage = words[2].to_owned();
        }
        out.push(Instruction {
            stage: stage.clone(),
            keyword,
            rest: rest.to_owned(),
        });
    }
    out
}

/// Where deploy/Dockerfile's build stage installs pw's wheel.
const WHEEL_DIR: &str = "/opt/pw/wheel";

/// Tests that the container recipe builds the binaries the manifests run
/// (in pw's wheel), puts them and the plugins where the manifests look for
/// them, and that the worker image carries nothing of MLIR.
#[test]
fn the_dockerfile_builds_what_the_manifests_run() {
    let all = dockerfile();
    let stage =
        |name: &str| -> Vec<&Instruction> { all.iter().filter(|i| i.stage == name).collect() };
    let stages: BTreeSet<&str> = all.iter().map(|i| i.stage.as_str()).collect();
    for s in ["build", "plugin", "server", "worker"] {
        assert!(stages.contains(s), "stage {s} in {stages:?}");
    }
    // Base images are named by short name, never with a registry's host.
    for from in all
        .iter()
        .filter(|i| i.keyword == "FROM" || i.keyword == "ARG")
    {
        let image = from.rest.split_whitespace().next().unwrap_or_default();
        let image = image.split('=').next_back().unwrap_or_default();
        if image.contains(':') {
            assert!(
                !image.split('/').next().unwrap_or_default().contains('.'),
                "a registry host in {image}"
            );
        }
    }
    // The build stage builds pw's wheel with the MLIR packages and installs
    // it under WHEEL_DIR; scripts/build-wheel.sh builds pw-server and
    // pw-worker (release, locked) and puts them in the wheel.
    let build = stage("build");
    let wheel: Vec<_> = build
        .iter()
        .filter(|i| i.keyword == "RUN" && i.rest.contains("scripts/build-wheel.sh"))
        .collect();
    assert_eq!(wheel.len(), 1, "one RUN builds the wheel");
    assert!(wheel[0].rest.contains("scripts/build-wheel.sh --build "));
    assert!(wheel[0]
        .rest
        .contains(&format!("--no-deps --target {WHEEL_DIR} ")));
    assert!(build
        .iter()
        .any(|i| i.keyword == "RUN" && i.rest.contains("libmlir-22-dev")));
    let script = std::fs::read_to_string(repo_root().join("scripts/build-wheel.sh"))
        .expect("scripts/build-wheel.sh");
    let code: Vec<&str> = script
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let cargo: Vec<&&str> = code.iter().filter(|l| l.contains("cargo build")).collect();
    assert_eq!(cargo.len(), 1, "build-wheel.sh runs one cargo build");
    for arg in ["--locked", "--bins", "-p pw-tools", "-p pw-worker"] {
        assert!(cargo[0].contains(arg), "build-wheel.sh: cargo build {arg}");
    }
    // Release binaries unless asked otherwise (the Dockerfile does not).
    assert!(
        code.iter()
            .any(|l| l.trim() == "build=0 out=\"\" profile=release")
            && code.iter().any(|l| l.contains("flags=(--release)")),
        "build-wheel.sh builds release binaries by default"
    );
    assert!(
        !wheel[0].rest.contains("--profile"),
        "the images take release binaries"
    );
    let bins: Vec<&str> = code
        .iter()
        .find_map(|l| l.strip_prefix("bins=("))
        .expect("build-wheel.sh lists the binaries it puts in the wheel")
        .trim_end_matches(')')
        .split_whitespace()
        .collect();
    for bin in ["pw-server", "pw-status", "pw-worker"] {
        assert!(bins.contains(&bin), "the wheel holds {bin}: {bins:?}");
    }

    // The server and worker stages copy the binaries to the paths the
    // manifests run, and the plugin directory.
    for (name, bin) in [("server", SERVER_BIN), ("worker", WORKER_BIN)] {
        let copies: Vec<&Instruction> = stage(name)
            .into_iter()
            .filter(|i| i.keyword == "COPY")
            .collect();
        let file = bin.rsplit('/').next().unwrap_or_default();
        let dir = bin.trim_end_matches(file);
        assert!(
            copies.iter().any(|c| c.rest.starts_with("--from=build ")
                && c.rest.contains(&format!("{WHEEL_DIR}/pw/_bin/{file} "))
                && c.rest.trim_end().ends_with(dir)),
            "{name} copies {file} to {dir}"
        );
        assert!(
            copies
                .iter()
                .any(|c| c.rest == format!("--from=plugin {PLUGIN_DIR} {PLUGIN_DIR}")),
            "{name} copies the plugin directory"
        );
        let entry = stage(name)
            .iter()
            .find(|i| i.keyword == "ENTRYPOINT")
            .map(|i| i.rest.clone());
        assert_eq!(entry, Some(format!("[\"{bin}\"]")), "{name}'s entry point");
    }
    // Nothing of LLVM or MLIR reaches the worker image: it copies only
    // pw-worker from the build stage, and the plugin stage installs none.
    for name in ["worker", "plugin"] {
        for i in stage(name) {
            let lower = i.rest.to_ascii_lowercase();
            assert!(
                !lower.contains("mlir") && !lower.contains("llvm"),
                "{name}: {} {}",
                i.keyword,
                i.rest
            );
            if i.keyword == "COPY" && i.rest.starts_with("--from=build") {
                assert_eq!(name, "worker");
                let sources: Vec<&str> = i.rest.split_whitespace().skip(1).collect();
                assert_eq!(
                    sources,
                    [
                        format!("{WHEEL_DIR}/pw/_bin/pw-worker").as_str(),
                        "/usr/local/bin/"
                    ],
                    "worker copies only pw-worker"
                );
            }
        }
    }
    // The worker stage installs one package: LAPACK, for the linear-algebra
    // custom calls of CPU programs.
    for i in stage("worker").iter().filter(|i| i.keyword == "RUN") {
        let packages: Vec<&str> = i
            .rest
            .split("--no-install-recommends")
            .nth(1)
            .and_then(|rest| rest.split("&&").next())
            .map(|list| list.split_whitespace().filter(|w| *w != "\\").collect())
            .unwrap_or_default();
        assert_eq!(
            packages,
            ["liblapack3"],
            "the worker stage installs only LAPACK: {}",
            i.rest
        );
    }
    // The plugin stage knows every platform, and checks each plugin is at
    // the path pw-deploy gives pw-worker --plugin.
    let plugin_run = stage("plugin")
        .into_iter()
        .find(|i| i.keyword == "RUN" && i.rest.contains("case \"$PLATFORM\""))
        .expect("the plugin stage chooses by PLATFORM");
    for platform in Platform::ALL {
        let arm = plugin_run
            .rest
            .split(";;")
            .find(|arm| {
                arm.trim_start()
                    .split(')')
                    .next()
                    .map(str::trim)
                    .is_some_and(|p| p.ends_with(platform.name()))
            })
            .unwrap_or_else(|| panic!("no case for {}", platform.name()));
        assert!(
            arm.contains(&format!("plugin={} ", platform.plugin_file())),
            "{}: the Dockerfile's plugin path differs from pw-deploy's {}",
            platform.name(),
            platform.plugin_file()
        );
    }
    assert!(plugin_run.rest.contains(&format!("--target {PLUGIN_DIR}")));
    assert!(plugin_run
        .rest
        .contains(&format!("test -f \"{PLUGIN_DIR}/$plugin\"")));
    let ignore = std::fs::read_to_string(repo_root().join(".dockerignore")).expect(".dockerignore");
    assert!(
        ignore.lines().any(|l| l.trim() == "target/"),
        "the build context leaves target/ out"
    );
}
