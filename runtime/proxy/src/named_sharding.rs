//! Named shardings (XLA's `NamedShardingProto`, "HloShardingV3", the form
//! jaxlib 0.10.2 writes for `NamedSharding`s) as the tiled `OpSharding` they
//! stand for, so that one path lays out every sharding.
//!
//! A named sharding is a mesh (named axes with sizes, and its devices in
//! row-major order over the axes: listed, an iota, or a transposed iota),
//! the mesh axes each array dimension is split over (major to minor), and
//! axes over which it is replicated, unreduced or manual. An axis may be
//! referred to in parts: the sub-axis `(pre_size, size)` of an axis of size
//! `s` is its index's digit of weight `pre_size` and radix `size`. Each axis
//! is cut at every boundary its parts use, into factors; the devices,
//! arranged as an array over all the factors, are transposed so that the
//! factors of dimension 0 come first, then those of dimension 1, ..., then
//! the factors no dimension uses, which replicate (the last tile dimension).

use crate::protocol::xla::{
    axis_ref_proto::SubAxis, op_sharding, AxisRefProto, MeshProto, NamedShardingProto, OpSharding,
};
use pw_core::geometry::MAX_MESH_DEVICES;

/// The tiled sharding `named` stands for, over an array of rank `rank`:
/// the factors no dimension uses make a replicated subgroup, and those of
/// unreduced axes an unreduced one (`last_tile_dims`). Manual axes are
/// refused, as their V2 form is.
pub fn to_tiles(named: &NamedShardingProto, rank: usize) -> Result<OpSharding, String> {
    let mesh = named
        .mesh
        .as_ref()
        .ok_or("a named sharding without a mesh")?;
    if !named.manual_axes.is_empty() {
        return Err("manual axes are not supported by pw".into());
    }
    if !named.dim_shardings.is_empty() && named.dim_shardings.len() != rank {
        return Err(format!(
            "it shards {} dimensions of an array of rank {rank}",
            named.dim_shardings.len()
        ));
    }
    let sizes: Vec<i64> = mesh.axes.iter().map(|a| a.size).collect();
    let total = checked_product(&sizes)?;
    let devices = mesh_devices(mesh, &sizes, total)?;

    // Cut each axis at the boundaries its parts use.
    let every_ref = named
        .dim_shardings
        .iter()
        .flat_map(|d| &d.axes)
        .chain(&named.replicated_axes)
        .chain(&named.unreduced_axes);
    let mut cuts: Vec<Vec<i64>> = sizes.iter().map(|&s| vec![1, s]).collect();
    for r in every_ref {
        let axis = axis_of(r, &sizes)?;
        if let Some(SubAxis { pre_size, size }) = r.sub_axis_info {
            let end = pre_size
                .checked_mul(size)
                .filter(|&e| pre_size >= 1 && size >= 1 && sizes[axis] % e == 0)
                .ok_or_else(|| {
                    format!(
                        "sub-axis ({pre_size}, {size}) of an axis of size {}",
                        sizes[axis]
                    )
                })?;
            cuts[axis].extend([pre_size, end]);
        }
    }
    // Factors, major to minor over the axes in order: (axis, from, to),
    // the minor sizes the factor spans.
    let mut factors: Vec<(usize, i64, i64)> = Vec::new();
    for (axis, c) in cuts.iter_mut().enumerate() {
        c.sort_unstable();
        c.dedup();
        if c.windows(2).any(|w| w[1] % w[0] != 0) {
            return Err(format!(
                "the parts of mesh axis {} overlap",
                mesh.axes[axis].name
            ));
        }
        factors.extend(c.windows(2).rev().map(|w| (axis, w[0], w[1])));
    }
    let factor_sizes: Vec<i64> = factors.iter().map(|&(_, a, b)| b / a).collect();

    // The factors of each dimension, in order, each used once.
    let mut used = vec![false; factors.len()];
    let mut order = Vec::with_capacity(factors.len());
    let mut tiles = Vec::with_capacity(rank);
    for dim in &named.dim_shardings {
        let mut n = 1;
        for r in &dim.axes {
            for f in factors_of(r, &sizes, &factors)? {
                if std::mem::replace(&mut used[f], true) {
                    return Err(format!(
                        "mesh axis {} shards two dimensions",
                        mesh.axes[factors[f].0].name
                    ));
                }
                order.push(f);
                n *= factor_sizes[f];
            }
        }
        tiles.push(n);
    }
    tiles.resize(rank, 1);
    let mut unreduced = vec![false; factors.len()];
    for r in &named.unreduced_axes {
        for f in factors_of(r, &sizes, &factors)? {
            if used[f] {
                return Err(format!(
                    "mesh axis {} both shards a dimension and is unreduced",
                    mesh.axes[factors[f].0].name
                ));
            }
            unreduced[f] = true;
        }
    }
    let rest = |partial: bool| -> Vec<usize> {
        (0..factors.len())
            .filter(|&f| !used[f] && unreduced[f] == partial)
            .collect()
    };
    let (replicated, partial) = (rest(false), rest(true));
    let size = |fs: &[usize]| -> i64 { fs.iter().map(|&f| factor_sizes[f]).product() };
    let (replicas, partials) = (size(&replicated), size(&partial));
    order.extend(replicated);
    order.extend(partial);

    if tiles.iter().all(|&t| t == 1) && partials == 1 {
        return Ok(OpSharding {
            r#type: op_sharding::Type::Replicated as i32,
            ..Default::default()
        });
    }
    let mut dims = tiles;
    let mut subgroups = Vec::new();
    if replicas > 1 {
        dims.push(replicas);
        subgroups.push(op_sharding::Type::Replicated as i32);
    }
    if partials > 1 {
        dims.push(partials);
        subgroups.push(op_sharding::Type::Unreduced as i32);
    }
    let only_replicated = partials == 1 && replicas > 1;
    Ok(OpSharding {
        r#type: op_sharding::Type::Other as i32,
        tile_assignment_dimensions: dims,
        tile_assignment_devices: transpose(&devices, &factor_sizes, &order),
        replicate_on_last_tile_dim: only_replicated,
        last_tile_dims: if only_replicated {
            Vec::new()
        } else {
            subgroups
        },
        ..Default::default()
    })
}

/// The mesh's devices in row-major order over its axes.
fn mesh_devices(mesh: &MeshProto, sizes: &[i64], total: i64) -> Result<Vec<i64>, String> {
    if !mesh.device_ids.is_empty() {
        if mesh.device_ids.len() as i64 != total {
            return Err(format!(
                "the mesh lists {} devices for {total} positions",
                mesh.device_ids.len()
            ));
        }
        return Ok(mesh.device_ids.clone());
    }
    let iota: Vec<i64> = (0..total).collect();
    let Some(t) = &mesh.iota_transform else {
        return Ok(iota);
    };
    if checked_product(&t.reshape_dims)? != total || t.transpose_perm.len() != t.reshape_dims.len()
    {
        return Err(format!(
            "the mesh's iota {:?} transposed by {:?} does not fill its {total} positions ({sizes:?})",
            t.reshape_dims, t.transpose_perm
        ));
    }
    let perm: Vec<usize> = t
        .transpose_perm
        .iter()
        .map(|&p| {
            usize::try_from(p)
                .ok()
                .filter(|&p| p < t.reshape_dims.len())
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            format!(
                "the mesh's transpose {:?} is not a permutation",
                t.transpose_perm
            )
        })?;
    let mut seen = vec![false; perm.len()];
    if perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
        return Err(format!(
            "the mesh's transpose {:?} is not a permutation",
            t.transpose_perm
        ));
    }
    Ok(transpose(&iota, &t.reshape_dims, &perm))
}

fn axis_of(r: &AxisRefProto, sizes: &[i64]) -> Result<usize, String> {
    usize::try_from(r.mesh_axis_index)
        .ok()
        .filter(|&a| a < sizes.len())
        .ok_or_else(|| format!("mesh axis {} of {}", r.mesh_axis_index, sizes.len()))
}

/// The factors (indices into `factors`) an axis reference covers, major to
/// minor.
fn factors_of(
    r: &AxisRefProto,
    sizes: &[i64],
    factors: &[(usize, i64, i64)],
) -> Result<Vec<usize>, String> {
    let axis = axis_of(r, sizes)?;
    let (from, to) = match r.sub_axis_info {
        Some(SubAxis { pre_size, size }) => (pre_size, pre_size * size),
        None => (1, sizes[axis]),
    };
    Ok((0..factors.len())
        .filter(|&f| factors[f].0 == axis && factors[f].1 >= from && factors[f].2 <= to)
        .collect())
}

fn checked_product(dims: &[i64]) -> Result<i64, String> {
    dims.iter().try_fold(1i64, |acc, &d| {
        acc.checked_mul(d)
            .filter(|&p| d >= 1 && p <= MAX_MESH_DEVICES)
            .ok_or_else(|| {
                format!(
                    "a mesh of {dims:?} (at most {MAX_MESH_DEVICES} devices, each axis at least 1)"
                )
            })
    })
}

/// `data`, a row-major array of `shape`, with its dimensions permuted:
/// dimension `i` of the result is dimension `perm[i]` of `data`.
fn transpose(data: &[i64], shape: &[i64], perm: &[usize]) -> Vec<i64> {
    let rank = shape.len();
    let mut strides = vec![1i64; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<i64> = perm.iter().map(|&p| shape[p]).collect();
    let mut index = vec![0i64; rank];
    let mut out = Vec::with_capacity(data.len());
    for _ in 0..data.len() {
        let at: i64 = index.iter().zip(perm).map(|(&i, &p)| i * strides[p]).sum();
        out.push(data[at as usize]);
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < out_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xla::{mesh_proto, named_sharding_proto::DimensionSharding};

    fn mesh(axes: &[(&str, i64)]) -> MeshProto {
        MeshProto {
            axes: axes
                .iter()
                .map(|&(name, size)| mesh_proto::MeshAxis {
                    name: name.into(),
                    size,
                })
                .collect(),
            ..Default::default()
        }
    }

    fn axis(i: i64) -> AxisRefProto {
        AxisRefProto {
            mesh_axis_index: i,
            sub_axis_info: None,
        }
    }

    fn sub(i: i64, pre_size: i64, size: i64) -> AxisRefProto {
        AxisRefProto {
            mesh_axis_index: i,
            sub_axis_info: Some(SubAxis { pre_size, size }),
        }
    }

    fn named(mesh: MeshProto, dims: Vec<Vec<AxisRefProto>>) -> NamedShardingProto {
        NamedShardingProto {
            mesh: Some(mesh),
            dim_shardings: dims
                .into_iter()
                .map(|axes| DimensionSharding {
                    axes,
                    is_closed: true,
                })
                .collect(),
            ..Default::default()
        }
    }

    fn tiles(n: &NamedShardingProto, rank: usize) -> (Vec<i64>, Vec<i64>, bool) {
        let op = to_tiles(n, rank).unwrap();
        (
            op.tile_assignment_dimensions,
            op.tile_assignment_devices,
            op.replicate_on_last_tile_dim,
        )
    }

    #[test]
    fn whole_axes() {
        let m = mesh(&[("x", 2), ("y", 4)]);
        assert_eq!(
            tiles(&named(m.clone(), vec![vec![axis(0)], vec![axis(1)]]), 2),
            (vec![2, 4], (0..8).collect(), false)
        );
        // y splits dimension 0; x replicates.
        assert_eq!(
            tiles(&named(m.clone(), vec![vec![axis(1)], vec![]]), 2),
            (vec![4, 1, 2], vec![0, 4, 1, 5, 2, 6, 3, 7], true)
        );
        // Two axes on one dimension, y major.
        assert_eq!(
            tiles(&named(m.clone(), vec![vec![axis(1), axis(0)]]), 1),
            (vec![8], vec![0, 4, 1, 5, 2, 6, 3, 7], false)
        );
        // Nothing split: replicated.
        let op = to_tiles(&named(m, vec![vec![], vec![]]), 2).unwrap();
        assert_eq!(op.r#type, op_sharding::Type::Replicated as i32);
    }

    #[test]
    fn sub_axes_and_listed_devices() {
        // The minor half of x (pre_size 1, size 2) splits the dimension;
        // its major half replicates.
        let mut m = mesh(&[("x", 4)]);
        assert_eq!(
            tiles(&named(m.clone(), vec![vec![sub(0, 1, 2)]]), 1),
            (vec![2, 2], vec![0, 2, 1, 3], true)
        );
        assert_eq!(
            tiles(&named(m.clone(), vec![vec![sub(0, 2, 2)]]), 1),
            (vec![2, 2], vec![0, 1, 2, 3], true)
        );
        m.device_ids = vec![3, 2, 1, 0];
        assert_eq!(
            tiles(&named(m, vec![vec![axis(0)]]), 1),
            (vec![4], vec![3, 2, 1, 0], false)
        );
        // An iota transposed: the mesh (2, 2) holds devices [0, 2, 1, 3].
        let mut t = mesh(&[("a", 2), ("b", 2)]);
        t.iota_transform = Some(mesh_proto::IotaTransform {
            reshape_dims: vec![2, 2],
            transpose_perm: vec![1, 0],
        });
        assert_eq!(
            tiles(&named(t, vec![vec![axis(0)], vec![axis(1)]]), 2),
            (vec![2, 2], vec![0, 2, 1, 3], false)
        );
    }

    #[test]
    fn unreduced_axes_make_an_unreduced_subgroup() {
        use op_sharding::Type::{Replicated, Unreduced};
        let m = mesh(&[("x", 2), ("y", 4)]);
        // x splits the dimension, y is unreduced: the last tile dimension
        // (y's four devices) holds partial values.
        let mut n = named(m.clone(), vec![vec![axis(0)]]);
        n.unreduced_axes = vec![axis(1)];
        let op = to_tiles(&n, 1).unwrap();
        assert_eq!(op.tile_assignment_dimensions, vec![2, 4]);
        assert_eq!(op.tile_assignment_devices, (0..8).collect::<Vec<_>>());
        assert_eq!(op.last_tile_dims, vec![Unreduced as i32]);
        assert!(!op.replicate_on_last_tile_dim);
        // Nothing split, x unreduced, y replicated: a replicated subgroup
        // then an unreduced one, the unreduced factor minor.
        let mut n = named(m.clone(), vec![vec![]]);
        n.unreduced_axes = vec![axis(0)];
        let op = to_tiles(&n, 1).unwrap();
        assert_eq!(op.tile_assignment_dimensions, vec![1, 4, 2]);
        assert_eq!(op.tile_assignment_devices, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(op.last_tile_dims, vec![Replicated as i32, Unreduced as i32]);
        // Placed: every position holds the whole array, as partial values.
        let devices: Vec<i32> = (0..8).collect();
        let placed = crate::convert::hlo_placement(&devices, &op, &[6]).unwrap();
        assert!(placed.unreduced);
        assert!(placed.layout.offsets.iter().all(|o| o == &vec![0]));
        assert_eq!(placed.layout.shard_shape, vec![6]);
    }

    #[test]
    fn what_is_refused() {
        let m = mesh(&[("x", 2), ("y", 4)]);
        let mut both = named(m.clone(), vec![vec![axis(0)]]);
        both.unreduced_axes = vec![axis(0)];
        assert!(to_tiles(&both, 1).unwrap_err().contains("unreduced"));
        let twice = named(m.clone(), vec![vec![axis(0)], vec![axis(0)]]);
        assert!(to_tiles(&twice, 2).unwrap_err().contains("two dimensions"));
        let shared = named(
            mesh(&[("x", 8)]),
            vec![vec![sub(0, 1, 4)], vec![sub(0, 2, 4)]],
        );
        assert!(to_tiles(&shared, 2).unwrap_err().contains("two dimensions"));
        let overlap = named(
            mesh(&[("x", 12)]),
            vec![vec![sub(0, 1, 4)], vec![sub(0, 3, 4)]],
        );
        assert!(to_tiles(&overlap, 2).unwrap_err().contains("overlap"));
        let rank = named(m.clone(), vec![vec![axis(0)]]);
        assert!(to_tiles(&rank, 3).unwrap_err().contains("rank 3"));
        assert!(to_tiles(&named(m, vec![vec![axis(5)]]), 1).is_err());
        let huge = named(mesh(&[("x", 1 << 40)]), vec![vec![axis(0)]]);
        assert!(to_tiles(&huge, 1).is_err());
    }
}
