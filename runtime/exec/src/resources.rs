//! The resource manager: which devices the plugin offers, how they group
//! into islands for lowering, and whether a lowered program's meshes can
//! have the devices they were bound to.

use pw_core::{plan::Plan, topology::Island, Topology};
use pw_pjrt::Client;

/// The devices of one client, as lowering and the executor see them.
#[derive(Debug, Clone)]
pub struct Resources {
    /// Device ids, ascending.
    pub devices: Vec<i64>,
    /// Their kind: the platform's name (`cpu`, `gpu`, `tpu`).
    pub kind: String,
}

impl Resources {
    /// What `client` offers. All its devices form one island: one process
    /// reaches all of them over the same interconnect.
    pub fn of(client: &Client) -> Self {
        let mut devices: Vec<i64> = client
            .addressable_devices()
            .iter()
            .map(|d| i64::from(d.id()))
            .collect();
        devices.sort_unstable();
        Self {
            devices,
            kind: device_kind(client.platform_name()),
        }
    }

    /// The topology to lower onto: one island, `local`, of every device.
    pub fn topology(&self) -> Topology {
        Topology {
            islands: vec![Island {
                name: "local".into(),
                kind: self.kind.clone(),
                devices: self.devices.clone(),
                hosts: Vec::new(),
            }],
        }
    }

    /// Refuses a plan whose meshes were bound to devices this client lacks.
    pub fn admit(&self, plan: &Plan) -> Result<(), String> {
        for mesh in &plan.meshes {
            if let Some(missing) = mesh.devices.iter().find(|d| !self.devices.contains(d)) {
                return Err(format!(
                    "mesh @{} is bound to device {missing}, but the PJRT client offers devices {:?}; \
                     lower the program for this machine (or run it with --devices)",
                    mesh.name, self.devices
                ));
            }
        }
        Ok(())
    }
}

/// The device kind meshes are matched against (`cpu`, `gpu`, `tpu`), from a
/// PJRT platform name.
pub fn device_kind(platform: &str) -> String {
    match platform.to_ascii_lowercase().as_str() {
        "cuda" | "rocm" | "gpu" => "gpu".to_owned(),
        other => other.to_owned(),
    }
}
