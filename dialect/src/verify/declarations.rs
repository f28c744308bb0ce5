//! Phase 2 of the verifier: the meshes a program declares.

use crate::{analysis::Analysis, diag::Errors, error::Error, ops};
use melior::ir::operation::OperationLike;
use std::collections::HashSet;

pub(super) fn check<'c>(analysis: &Analysis<'c, '_>, errors: &mut Errors<'c>) {
    let program = &analysis.program;
    for mesh in &program.meshes {
        let location = mesh.op.location();
        let name = || mesh.name.clone();
        let names = mesh
            .op
            .attribute(ops::ATTR_AXIS_NAMES)
            .ok()
            .and_then(ops::array_elements)
            .map_or(0, |a| a.len());
        let sizes = ops::i64_array_attr(&mesh.op, ops::ATTR_AXIS_SIZES).map_or(0, |s| s.len());
        if names != sizes {
            errors.push(
                location,
                Error::MeshAxisCount {
                    mesh: name(),
                    names,
                    sizes,
                },
            );
            continue;
        }
        let mut seen = HashSet::new();
        let mut axes_ok = true;
        for (axis, size) in &mesh.shape.axes {
            if axis.is_empty() || !seen.insert(axis) {
                axes_ok = false;
                errors.push(
                    location,
                    Error::MeshAxisName {
                        mesh: name(),
                        axis: axis.clone(),
                    },
                );
            }
            if *size < 1 {
                axes_ok = false;
                errors.push(
                    location,
                    Error::MeshAxisSize {
                        mesh: name(),
                        axis: axis.clone(),
                        size: *size,
                    },
                );
            }
        }
        if axes_ok && mesh.shape.checked_size().is_err() {
            axes_ok = false;
            errors.push(
                location,
                Error::MeshTooLarge {
                    mesh: name(),
                    shape: mesh.shape.clone(),
                },
            );
        }
        if mesh.kind.as_deref() == Some("") {
            errors.push(location, Error::MeshEmptyKind { mesh: name() });
        }
        if let Some(other) = &mesh.same_island_as {
            if other == &mesh.name {
                errors.push(location, Error::MeshSelfIsland { mesh: name() });
            } else if program.mesh(other).is_none() {
                errors.push(
                    location,
                    Error::MeshUnknownIsland {
                        mesh: name(),
                        other: other.clone(),
                    },
                );
            }
        }
        if let (Some(devices), true) = (&mesh.devices, axes_ok) {
            if devices.len() as i64 != mesh.size {
                errors.push(
                    location,
                    Error::MeshDeviceCount {
                        mesh: name(),
                        devices: devices.len(),
                        needed: mesh.size,
                    },
                );
            } else {
                let unique: HashSet<_> = devices.iter().collect();
                if unique.len() != devices.len() || devices.iter().any(|&d| d < 0) {
                    errors.push(location, Error::MeshDeviceIds { mesh: name() });
                }
            }
        }
        if errors.full() {
            return;
        }
    }
}
