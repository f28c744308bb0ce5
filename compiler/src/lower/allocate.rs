//! Maps virtual meshes onto device ids.
//!
//! Each mesh asks for `size` devices, optionally of one kind, optionally on
//! the same island as other meshes (`same_island_as`, transitively). The
//! allocation is deterministic:
//! 1. meshes linked by `same_island_as` form a group that must fit on one
//!    island: for each member, the island has at least `size` devices of
//!    its kind;
//! 2. groups are placed in declaration order, each on the fitting island
//!    with the most unused devices of the kinds it needs (ties: the first
//!    island);
//! 3. within the island, a mesh takes unused devices first (lowest ids),
//!    then the least used ones: meshes share devices only when the island
//!    has too few. Sharing is safe because every device runs its work in
//!    one schedule order.
//!
//! Meshes that already have devices keep them (they are checked against the
//! topology).

use pw_core::topology::{Island, Topology};
use std::collections::HashMap;

/// What one mesh asks for.
#[derive(Clone, Debug)]
pub struct Request {
    pub name: String,
    pub size: i64,
    pub kind: Option<String>,
    pub same_island_as: Option<String>,
    /// Devices already bound (a lowered program).
    pub fixed: Option<Vec<i64>>,
}

/// A request that cannot be met, naming the mesh and the unmet constraint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmet {
    pub mesh: String,
    pub message: String,
}

/// Binds every request to devices (see the module documentation).
pub fn allocate(
    requests: &[Request],
    topology: &Topology,
) -> Result<HashMap<String, Vec<i64>>, Unmet> {
    let index: HashMap<&str, usize> = requests
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut group: Vec<usize> = (0..requests.len()).collect();
    for (i, r) in requests.iter().enumerate() {
        if let Some(&j) = r.same_island_as.as_deref().and_then(|o| index.get(o)) {
            let (a, b) = (root(&mut group, i), root(&mut group, j));
            group[a.max(b)] = a.min(b);
        }
    }
    let mut uses: HashMap<i64, usize> = HashMap::new();
    let mut result = HashMap::new();
    let mut group_island: HashMap<usize, usize> = HashMap::new();

    // Fixed meshes first: they pin their group's island.
    for (i, r) in requests.iter().enumerate() {
        let Some(devices) = &r.fixed else {
            continue;
        };
        let island = check_fixed(r, devices, topology)?;
        let g = root(&mut group, i);
        match group_island.get(&g) {
            Some(&other) if other != island => {
                return Err(Unmet {
                    mesh: r.name.clone(),
                    message: format!(
                        "mesh @{} is bound to island \"{}\" but must share an island with meshes bound to \"{}\"",
                        r.name, topology.islands[island].name, topology.islands[other].name
                    ),
                });
            }
            _ => {
                group_island.insert(g, island);
            }
        }
        for d in devices {
            *uses.entry(*d).or_default() += 1;
        }
        result.insert(r.name.clone(), devices.clone());
    }

    for (i, r) in requests.iter().enumerate() {
        if r.fixed.is_some() {
            continue;
        }
        let g = root(&mut group, i);
        let island = match group_island.get(&g) {
            Some(&island) => island,
            None => {
                let members: Vec<&Request> = (0..requests.len())
                    .filter(|&j| root(&mut group, j) == g)
                    .map(|j| &requests[j])
                    .collect();
                let island = choose_island(&members, topology, &uses)?;
                group_island.insert(g, island);
                island
            }
        };
        let island = &topology.islands[island];
        let devices = take(r, island, &mut uses).ok_or_else(|| Unmet {
            mesh: r.name.clone(),
            message: shortfall(r, island),
        })?;
        result.insert(r.name.clone(), devices);
    }
    Ok(result)
}

fn root(group: &mut [usize], mut i: usize) -> usize {
    while group[i] != i {
        group[i] = group[group[i]];
        i = group[i];
    }
    i
}

fn kind_matches(request: &Request, island: &Island) -> bool {
    request.kind.as_deref().is_none_or(|k| k == island.kind)
}

fn fits(request: &Request, island: &Island) -> bool {
    kind_matches(request, island) && island.largest_host() as i64 >= request.size
}

fn shortfall(request: &Request, island: &Island) -> String {
    if !kind_matches(request, island) {
        format!(
            "mesh @{} needs devices of kind \"{}\" but island \"{}\" has \"{}\" devices",
            request.name,
            request.kind.as_deref().unwrap_or(""),
            island.name,
            island.kind
        )
    } else if island.hosts().len() > 1 && island.devices.len() as i64 >= request.size {
        format!(
            "mesh @{} needs {} devices in one process, but the largest host of island \"{}\" has {} \
             (one SPMD computation cannot span processes)",
            request.name,
            request.size,
            island.name,
            island.largest_host()
        )
    } else {
        format!(
            "mesh @{} needs {} devices but island \"{}\" has {}",
            request.name,
            request.size,
            island.name,
            island.devices.len()
        )
    }
}

/// The island for a group (step 2), or why there is none.
fn choose_island(
    members: &[&Request],
    topology: &Topology,
    uses: &HashMap<i64, usize>,
) -> Result<usize, Unmet> {
    let free = |island: &Island| {
        island
            .devices
            .iter()
            .filter(|d| !uses.contains_key(d))
            .count()
    };
    let best = topology
        .islands
        .iter()
        .enumerate()
        .filter(|(_, island)| members.iter().all(|m| fits(m, island)))
        .max_by(|(a, x), (b, y)| free(x).cmp(&free(y)).then_with(|| b.cmp(a)))
        .map(|(i, _)| i);
    if let Some(island) = best {
        return Ok(island);
    }
    // Say why: one member alone, or the combination.
    for m in members {
        if !topology.islands.iter().any(|island| fits(m, island)) {
            let kind = m
                .kind
                .as_deref()
                .map(|k| format!(" of kind \"{k}\""))
                .unwrap_or_default();
            let islands = || topology.islands.iter().filter(|i| kind_matches(m, i));
            let largest = islands().map(|i| i.devices.len()).max();
            let largest_host = islands().map(Island::largest_host).max().unwrap_or(0);
            let message = match largest {
                Some(n) if n as i64 >= m.size => format!(
                    "mesh @{} needs {} devices{kind} in one process; the largest host has {largest_host} \
                     (one SPMD computation cannot span processes)",
                    m.name, m.size
                ),
                Some(n) => format!("mesh @{} needs {} devices{kind} on one island; the largest such island has {n}", m.name, m.size),
                None => format!("mesh @{} needs devices{kind}; the topology has none", m.name),
            };
            return Err(Unmet {
                mesh: m.name.clone(),
                message,
            });
        }
    }
    let names: Vec<String> = members.iter().map(|m| format!("@{}", m.name)).collect();
    let needs: Vec<String> = members
        .iter()
        .map(|m| match &m.kind {
            Some(k) => format!("{} \"{k}\" devices for @{}", m.size, m.name),
            None => format!("{} devices for @{}", m.size, m.name),
        })
        .collect();
    // Report at the mesh that asked to share an island.
    let culprit = members
        .iter()
        .find(|m| m.same_island_as.is_some())
        .or(members.first());
    Err(Unmet {
        mesh: culprit.map(|m| m.name.clone()).unwrap_or_default(),
        message: format!(
            "conflicting constraints: meshes {} must share an island, but no island has {}",
            names.join(", "),
            needs.join(" and ")
        ),
    })
}

/// Step 3: the host with the most unused devices that can hold the mesh
/// (ties: the first), then its unused devices first, then the least used.
fn take(request: &Request, island: &Island, uses: &mut HashMap<i64, usize>) -> Option<Vec<i64>> {
    if !fits(request, island) {
        return None;
    }
    let free = |host: &[i64]| host.iter().filter(|d| !uses.contains_key(d)).count();
    let host = island
        .hosts()
        .into_iter()
        .enumerate()
        .filter(|(_, h)| h.len() as i64 >= request.size)
        .max_by(|(a, x), (b, y)| free(x).cmp(&free(y)).then_with(|| b.cmp(a)))
        .map(|(_, h)| h)?;
    let mut candidates: Vec<i64> = host.to_vec();
    candidates.sort_by_key(|d| (uses.get(d).copied().unwrap_or(0), *d));
    let mut chosen: Vec<i64> = candidates.into_iter().take(request.size as usize).collect();
    chosen.sort_unstable();
    for d in &chosen {
        *uses.entry(*d).or_default() += 1;
    }
    Some(chosen)
}

/// Checks already-bound devices; returns their island.
fn check_fixed(request: &Request, devices: &[i64], topology: &Topology) -> Result<usize, Unmet> {
    let unmet = |message: String| Unmet {
        mesh: request.name.clone(),
        message,
    };
    let mut island = None;
    for d in devices {
        let Some(i) = topology.islands.iter().position(|i| i.devices.contains(d)) else {
            return Err(unmet(format!(
                "mesh @{} is bound to device {d}, which the topology lacks",
                request.name
            )));
        };
        if *island.get_or_insert(i) != i {
            return Err(unmet(format!(
                "mesh @{} spans more than one island",
                request.name
            )));
        }
        if !kind_matches(request, &topology.islands[i]) {
            return Err(unmet(shortfall(request, &topology.islands[i])));
        }
    }
    let island =
        island.ok_or_else(|| unmet(format!("mesh @{} is bound to no devices", request.name)))?;
    if !topology.islands[island]
        .hosts()
        .iter()
        .any(|h| devices.iter().all(|d| h.contains(d)))
    {
        return Err(unmet(format!(
            "mesh @{} is bound to devices of more than one process",
            request.name
        )));
    }
    Ok(island)
}
