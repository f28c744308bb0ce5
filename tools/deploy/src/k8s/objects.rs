//! The subset of the Kubernetes API (core/v1, batch/v1, networking.k8s.io/v1),
//! of JobSet (jobset.x-k8s.io/v1alpha2) and of the Prometheus operator's
//! ServiceMonitor (monitoring.coreos.com/v1) that pw-deploy writes, as plain
//! serde data: field names and nesting are the API's (camelCase), optional
//! fields are left out when unset, and fields are printed in declaration
//! order so the YAML reads like a hand-written manifest.

use serde::Serialize;
use std::collections::BTreeMap;

/// Labels, annotations, node selectors, resource lists: string maps.
pub type Map = BTreeMap<String, String>;

/// One object of any kind: `apiVersion`, `kind`, `metadata`, `spec`.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Object<S> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: Metadata,
    pub spec: S,
}

#[derive(Serialize, Debug, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub labels: Map,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub annotations: Map,
}

// -- JobSet ------------------------------------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct JobSetSpec {
    pub network: Network,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_policy: Option<StartupPolicy>,
    pub success_policy: SuccessPolicy,
    pub failure_policy: FailurePolicy,
    pub replicated_jobs: Vec<ReplicatedJob>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Network {
    #[serde(rename = "enableDNSHostnames")]
    pub enable_dns_hostnames: bool,
    pub subdomain: String,
    pub publish_not_ready_addresses: bool,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct StartupPolicy {
    pub startup_policy_order: &'static str,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SuccessPolicy {
    pub operator: &'static str,
    pub target_replicated_jobs: Vec<String>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct FailurePolicy {
    pub max_restarts: u32,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ReplicatedJob {
    pub name: String,
    pub replicas: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<DependsOn>,
    pub template: JobTemplate,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct DependsOn {
    pub name: String,
    pub status: &'static str,
}

// -- batch/v1 Job --------------------------------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct JobTemplate {
    pub spec: JobSpec,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    pub completion_mode: &'static str,
    pub completions: u32,
    pub parallelism: u32,
    pub backoff_limit: u32,
    pub template: PodTemplate,
}

// -- core/v1 Pod -----------------------------------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    pub metadata: Metadata,
    pub spec: PodSpec,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    pub restart_policy: &'static str,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub node_selector: Map,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    pub containers: Vec<Container>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security_context: Option<PodSecurityContext>,
}

/// The group the pod's volumes belong to (so the image's user reads a
/// mounted Secret).
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PodSecurityContext {
    pub fs_group: u32,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    pub name: String,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    pub ports: Vec<ContainerPort>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<Probe>,
    #[serde(skip_serializing_if = "Resources::is_empty")]
    pub resources: Resources,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvSource>,
}

/// Where an environment variable's value comes from: one of the two.
#[derive(Serialize, Debug, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct EnvSource {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<FieldRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<SecretKeyRef>,
}

/// A field of the pod (the downward API), e.g. `status.podIP`.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct FieldRef {
    pub field_path: String,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyRef {
    pub name: String,
    pub key: String,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    pub name: String,
    pub container_port: u16,
    pub protocol: &'static str,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    pub tcp_socket: TcpSocket,
    pub period_seconds: u32,
    pub failure_threshold: u32,
}

/// A probe's port: a container port's name.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct TcpSocket {
    pub port: String,
}

#[derive(Serialize, Debug, Clone, Default)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub requests: Map,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub limits: Map,
}

impl Resources {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.limits.is_empty()
    }
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDir>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretVolume>,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct EmptyDir {}

/// A Secret's keys as files.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SecretVolume {
    pub secret_name: String,
    /// The files' mode (octal 0440: read by their owner and the pod's
    /// `fsGroup`).
    pub default_mode: u32,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    pub name: String,
    pub mount_path: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    pub pod_anti_affinity: PodAntiAffinity,
}

#[derive(Serialize, Debug, Clone)]
pub struct PodAntiAffinity {
    #[serde(
        rename = "requiredDuringSchedulingIgnoredDuringExecution",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub required: Vec<PodAffinityTerm>,
    #[serde(
        rename = "preferredDuringSchedulingIgnoredDuringExecution",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub preferred: Vec<WeightedPodAffinityTerm>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    pub label_selector: LabelSelector,
    pub topology_key: String,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct WeightedPodAffinityTerm {
    pub weight: u32,
    pub pod_affinity_term: PodAffinityTerm,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    pub match_labels: Map,
}

// -- core/v1 Service ---------------------------------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `None` for a headless Service (no virtual IP: one address per pod).
    #[serde(rename = "clusterIP", skip_serializing_if = "Option::is_none")]
    pub cluster_ip: Option<&'static str>,
    pub selector: Map,
    pub ports: Vec<ServicePort>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    pub name: String,
    pub port: u16,
    /// A container port's name.
    pub target_port: String,
    pub protocol: &'static str,
}

// -- networking.k8s.io/v1 NetworkPolicy -------------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct NetworkPolicySpec {
    pub pod_selector: LabelSelector,
    pub policy_types: Vec<&'static str>,
    pub ingress: Vec<IngressRule>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct IngressRule {
    /// Empty: from anywhere.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub from: Vec<Peer>,
    pub ports: Vec<PolicyPort>,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Peer {
    pub pod_selector: LabelSelector,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct PolicyPort {
    pub protocol: &'static str,
    pub port: u16,
}

// -- monitoring.coreos.com/v1 ServiceMonitor ---------------------------------------

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct ServiceMonitorSpec {
    pub selector: LabelSelector,
    pub endpoints: Vec<MonitorEndpoint>,
}

/// One port of the selected Services that Prometheus scrapes.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct MonitorEndpoint {
    /// A Service port's name.
    pub port: String,
    pub path: &'static str,
    pub scheme: &'static str,
    pub authorization: MonitorAuthorization,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<MonitorTls>,
}

/// `Authorization: TYPE CREDENTIALS`, the credentials read from a Secret
/// of the ServiceMonitor's namespace.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct MonitorAuthorization {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub credentials: SecretKeyRef,
}

/// How Prometheus checks the target's certificate.
#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct MonitorTls {
    pub ca: SecretOrConfigMap,
    /// The name to check the certificate for (targets are pod addresses,
    /// which a certificate seldom names).
    pub server_name: String,
}

#[derive(Serialize, Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct SecretOrConfigMap {
    pub secret: SecretKeyRef,
}
