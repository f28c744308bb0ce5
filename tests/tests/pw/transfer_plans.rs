//! Property test of transfer plans: random shapes, random (mesh, sharding)
//! pairs on random topologies. Simulating each plan on index arrays must
//! rebuild every destination shard exactly (each element received once,
//! from the right place), and every element must cross the cheapest link
//! any of its holders offers: no plan moves more bytes than the minimum,
//! per link class. Arrays with no elements are among the cases: every
//! destination shard still gets a piece. `count` predicts every plan's
//! size.

use proptest::prelude::*;
use pw_core::relayout::{count, group, is_even, plan, CopyOp, Placed};
use pw_core::topology::{Island, Topology};
use pw_core::{
    geometry::{Layout, MeshShape, Sharding, Tiling},
    Link,
};

/// A small deterministic generator, driven by proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Case {
    shape: Vec<i64>,
    src: (Tiling, Vec<i64>),
    dst: (Tiling, Vec<i64>),
    topology: Topology,
}

fn random_mesh(rng: &mut Rng, rank: usize, max_devices: i64) -> (MeshShape, Sharding) {
    loop {
        let axes: Vec<(String, i64)> = (0..1 + rng.below(3))
            .map(|i| (format!("a{i}"), 1 + rng.below(4) as i64))
            .collect();
        let mesh = MeshShape::new(axes);
        if mesh.size().is_none_or(|n| n > max_devices) {
            continue;
        }
        let mut dims = vec![Vec::new(); rank];
        for (name, _) in &mesh.axes {
            let choice = rng.below(rank as u64 + 1) as usize;
            if choice < rank {
                dims[choice].push(name.clone());
            }
        }
        return (mesh, Sharding { dims });
    }
}

fn parts(mesh: &MeshShape, sharding: &Sharding, dim: usize) -> i64 {
    sharding.dims[dim]
        .iter()
        .filter_map(|a| mesh.axis_size(a))
        .product()
}

fn random_case(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let devices = 1 + rng.below(16) as i64;
    let rank = 1 + rng.below(3) as usize;
    let (src_mesh, src_sharding) = random_mesh(&mut rng, rank, devices);
    let (dst_mesh, dst_sharding) = random_mesh(&mut rng, rank, devices);
    let shape: Vec<i64> = (0..rank)
        .map(|d| {
            let (a, b) = (
                parts(&src_mesh, &src_sharding, d),
                parts(&dst_mesh, &dst_sharding, d),
            );
            let lcm = a / gcd(a, b) * b;
            // One dimension in twelve or so is empty.
            lcm * (rng.below(4) as i64).max(i64::from(rng.below(3) != 0))
        })
        .collect();
    let islands = 1 + rng.below(3) as i64;
    let topology = Topology {
        islands: (0..islands)
            .map(|i| Island {
                hosts: Vec::new(),
                name: format!("i{i}"),
                kind: "cpu".into(),
                devices: (0..devices).filter(|d| d % islands == i).collect(),
            })
            .filter(|i| !i.devices.is_empty())
            .collect(),
    };
    let mut pick = |n: i64| -> Vec<i64> {
        let mut all: Vec<i64> = (0..devices).collect();
        for i in (1..all.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            all.swap(i, j);
        }
        all.truncate(n as usize);
        all
    };
    let src_devices = pick(src_mesh.size().unwrap_or(0));
    let dst_devices = pick(dst_mesh.size().unwrap_or(0));
    Case {
        src: (
            Tiling::new(&shape, &src_sharding, &src_mesh).expect("divisible by construction"),
            src_devices,
        ),
        dst: (
            Tiling::new(&shape, &dst_sharding, &dst_mesh).expect("divisible by construction"),
            dst_devices,
        ),
        shape,
        topology,
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Row-major index of `index` in an array of `shape`.
fn linear(index: &[i64], shape: &[i64]) -> i64 {
    index.iter().zip(shape).fold(0, |acc, (i, s)| acc * s + i)
}

/// Every index of a box, row-major.
fn indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for &s in sizes {
        out = out
            .into_iter()
            .flat_map(|prefix| (0..s).map(move |i| [prefix.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

fn add(a: &[i64], b: &[i64]) -> Vec<i64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

fn check(case: &Case) {
    let (src_tiling, src_devices) = &case.src;
    let (dst_tiling, dst_devices) = &case.dst;
    let (src, dst): (Layout, Layout) = (src_tiling.layout(), dst_tiling.layout());
    let links = case.topology.links();
    let shards = plan(
        Placed {
            tiles: src_tiling,
            devices: src_devices,
        },
        Placed {
            tiles: dst_tiling,
            devices: dst_devices,
        },
        |a, b| links.link(a, b),
    );
    assert_eq!(shards.len(), dst_devices.len());
    assert_eq!(
        count(src_tiling, dst_tiling),
        shards.iter().map(|s| s.len() as u64).sum::<u64>()
    );
    // The runtime plans from listed offsets (a `Layout`): the same pieces.
    assert!(is_even(&src, &case.shape) && is_even(&dst, &case.shape));
    let from_layouts = plan(
        Placed {
            tiles: &src,
            devices: src_devices,
        },
        Placed {
            tiles: &dst,
            devices: dst_devices,
        },
        |a, b| links.link(a, b),
    );
    assert_eq!(from_layouts, shards);
    let shard_len = indices(&dst.shard_shape).len();
    for (q, pieces) in shards.iter().enumerate() {
        let target = dst_devices[q];
        assert!(!pieces.is_empty(), "shard {q} gets no piece");
        // Simulate: each destination element records the global index it got.
        let mut received: Vec<Vec<(i64, Link)>> = vec![Vec::new(); shard_len];
        for piece in pieces {
            assert_eq!(piece.dst_device, target);
            assert_eq!(piece.link, links.link(piece.src_device, piece.dst_device));
            let p = src_devices
                .iter()
                .position(|&d| d == piece.src_device)
                .expect("source device holds a shard");
            for i in indices(&piece.sizes) {
                let local_src = add(&piece.src_offsets, &i);
                assert!(
                    local_src.iter().zip(&src.shard_shape).all(|(a, s)| a < s),
                    "read outside the shard"
                );
                let global = linear(&add(&src.offsets[p], &local_src), &case.shape);
                let local_dst = add(&piece.dst_offsets, &i);
                received[linear(&local_dst, &dst.shard_shape) as usize].push((global, piece.link));
            }
        }
        for (k, index) in indices(&dst.shard_shape).iter().enumerate() {
            let global_index = add(&dst.offsets[q], index);
            let expected = linear(&global_index, &case.shape);
            assert_eq!(
                received[k].len(),
                1,
                "element {global_index:?} of shard {q} received {} times",
                received[k].len()
            );
            assert_eq!(
                received[k][0].0, expected,
                "element {global_index:?} of shard {q} is wrong"
            );
            // The cheapest link of any device holding this element.
            let best = src
                .offsets
                .iter()
                .enumerate()
                .filter(|(_, o)| {
                    global_index
                        .iter()
                        .zip(o.iter())
                        .zip(&src.shard_shape)
                        .all(|((g, o), s)| g >= o && *g < o + s)
                })
                .map(|(p, _)| links.link(src_devices[p], target))
                .min()
                .expect("some device holds every element");
            assert_eq!(
                received[k][0].1, best,
                "element {global_index:?} crossed a dearer link than needed"
            );
        }
    }
    // Grouping keeps every piece exactly once and gives ops their shape.
    let total: usize = shards.iter().map(Vec::len).sum();
    let grouped = group(shards);
    let mut seen = 0;
    for op in &grouped {
        match op {
            CopyOp::Copy(_) => seen += 1,
            CopyOp::Scatter(p) => {
                assert!(p.len() > 1 && p.iter().all(|x| x.src_device == p[0].src_device));
                seen += p.len();
            }
            CopyOp::Gather(p) => {
                assert!(p.len() > 1 && p.iter().all(|x| x.dst_device == p[0].dst_device));
                seen += p.len();
            }
        }
    }
    assert_eq!(seen, total);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plans_rebuild_every_shard_with_minimal_bytes(seed in any::<u64>()) {
        check(&random_case(seed));
    }
}
