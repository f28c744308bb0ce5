//! Pipeline structure, recognized from a program's dataflow: which stage
//! each call runs on, which microbatch it belongs to, and whether it is part
//! of the forward or the backward pass. The pipeline schedules
//! (`pw-schedule{policy=gpipe|1f1b}`) order calls by it.
//!
//! The rules (`docs/passes.md`), for a program written as a plain unrolled
//! Python loop over microbatches:
//!
//! 1. **Stage**: the mesh a call runs on.
//! 2. **Repeated calls**: a computation called more than once on a stage is
//!    per-microbatch work; a computation called once there (an optimizer
//!    update, say) belongs to no microbatch and runs when its inputs are
//!    ready.
//! 3. **Microbatch**: two repeated calls belong to one microbatch when data
//!    flows from one to the other (through moves, never through a call of
//!    rule 2's second kind). An *accumulator* is the exception: a
//!    computation whose calls on a stage form one chain, each reading the
//!    previous one's result (gradients summed across microbatches); each of
//!    its calls joins only the microbatch of the latest other call it reads.
//!    Microbatches are numbered in the order their first call appears in the
//!    program.
//! 4. **Stage order**: stages are ranked by how deep in microbatch 0's
//!    dataflow their first call sits (the first stage reads only inputs).
//! 5. **Direction**: a call is *backward* when data of its own microbatch
//!    reaches it from a stage of higher rank (the gradient coming back), or
//!    when it is on the last stage, reads data of its microbatch from its
//!    own stage, and its results go back to a lower stage (where the
//!    gradient turns around); otherwise it is *forward*. A last stage that
//!    computes its forward, loss and gradient in one call runs it as a
//!    forward.

use pw_dialect::{ops, ops::OpKind};

/// What a repeated call is in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role {
    /// Its stage's rank (0: the first stage of the forward pass).
    pub stage: usize,
    pub microbatch: usize,
    pub backward: bool,
}

/// The recognized structure of a program.
#[derive(Debug)]
pub struct Structure {
    /// The stages' meshes, by rank.
    pub stages: Vec<String>,
    pub microbatches: usize,
    /// Per op (in the order given): its role, for repeated calls.
    pub roles: Vec<Option<Role>>,
}

impl Structure {
    pub fn has_backward(&self) -> bool {
        self.roles.iter().flatten().any(|r| r.backward)
    }
}

/// Recognizes the structure of `ops` (the body, in program order, without
/// the terminator), whose dataflow is `preds(i)`: the ops whose results op
/// `i` reads, each once. Errors say why there is no pipeline.
pub fn recognize<'g>(
    ops: &[melior::ir::operation::OperationRef<'_, '_>],
    preds: impl Fn(usize) -> &'g [usize],
) -> Result<Structure, String> {
    let n = ops.len();
    let call: Vec<Option<(String, String)>> = ops
        .iter()
        .map(|op| {
            (OpKind::of(op) == Some(OpKind::Call))
                .then(|| {
                    Some((
                        ops::symbol_attr(op, ops::ATTR_MESH)?,
                        ops::symbol_attr(op, ops::ATTR_CALLEE)?,
                    ))
                })
                .flatten()
        })
        .collect();
    // The calls each op reads from, looking through moves.
    let mut feeding: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        let mut f: Vec<usize> = Vec::new();
        for &p in preds(i) {
            if call[p].is_some() {
                f.push(p);
            } else {
                f.extend_from_slice(&feeding[p]);
            }
        }
        f.sort_unstable();
        f.dedup();
        feeding[i] = f;
    }
    // Rule 2: calls of one computation on one stage, in program order.
    let mut groups: std::collections::BTreeMap<&(String, String), Vec<usize>> = Default::default();
    for (i, c) in call.iter().enumerate() {
        if let Some(key) = c {
            groups.entry(key).or_default().push(i);
        }
    }
    let mut repeated = vec![false; n];
    let mut accumulator = vec![false; n];
    for calls in groups.values().filter(|c| c.len() > 1) {
        let chain = calls
            .windows(2)
            .all(|w| feeding[w[1]].binary_search(&w[0]).is_ok());
        for &i in calls {
            repeated[i] = true;
            accumulator[i] = chain;
        }
    }
    if !repeated.iter().any(|&r| r) {
        return Err(
            "no computation is called more than once on a mesh, so the program has no microbatches"
                .into(),
        );
    }
    // Rule 3: microbatches are the connected groups of repeated calls.
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in (0..n).filter(|&i| repeated[i]) {
        let joins: Vec<usize> = if accumulator[i] {
            // The latest other repeated call it reads (the first sum of a
            // chain may read two microbatches' gradients).
            feeding[i]
                .iter()
                .copied()
                .filter(|&p| repeated[p] && call[p] != call[i])
                .max()
                .into_iter()
                .collect()
        } else {
            feeding[i]
                .iter()
                .copied()
                .filter(|&p| repeated[p])
                .collect()
        };
        for p in joins {
            let (a, b) = (root(&mut parent, i), root(&mut parent, p));
            parent[a.max(b)] = a.min(b);
        }
    }
    // Roots are each group's first op: number them in program order.
    let mut number = vec![usize::MAX; n];
    let mut microbatches = 0;
    let mut microbatch = vec![usize::MAX; n];
    for i in (0..n).filter(|&i| repeated[i]) {
        let r = root(&mut parent, i);
        if number[r] == usize::MAX {
            number[r] = microbatches;
            microbatches += 1;
        }
        microbatch[i] = number[r];
    }
    if microbatches < 2 {
        return Err(
            "every repeated call is connected to every other by its data, so the program has one microbatch \
             (are the weights updated after each microbatch?)"
                .into(),
        );
    }
    // Rule 4: depth in microbatch 0's dataflow, and each stage's rank.
    let mut depth = vec![0usize; n];
    let mut first_depth: std::collections::HashMap<&str, (usize, usize)> = Default::default();
    for i in (0..n).filter(|&i| microbatch[i] == 0) {
        depth[i] = feeding[i]
            .iter()
            .filter(|&&p| microbatch[p] == 0)
            .map(|&p| depth[p] + 1)
            .max()
            .unwrap_or(0);
        let mesh = call[i].as_ref().map_or("", |(m, _)| m.as_str());
        let e = first_depth.entry(mesh).or_insert((depth[i], i));
        *e = (*e).min((depth[i], i));
    }
    let mut stages: Vec<(usize, usize, String)> = first_depth
        .into_iter()
        .map(|(m, (d, i))| (d, i, m.to_owned()))
        .collect();
    // Stages microbatch 0 never visits come last, in program order.
    for i in (0..n).filter(|&i| repeated[i]) {
        let mesh = &call[i].as_ref().map_or(String::new(), |(m, _)| m.clone());
        if !stages.iter().any(|(_, _, m)| m == mesh) {
            stages.push((usize::MAX, i, mesh.clone()));
        }
    }
    stages.sort();
    let rank_of = |mesh: &str| stages.iter().position(|(_, _, m)| m == mesh);
    // Rule 5: the highest stage rank data of the same microbatch came from,
    // and the lowest it goes to.
    let same = |i: usize, p: usize| repeated[p] && microbatch[p] == microbatch[i];
    let mut rank = vec![0usize; n];
    let mut reached = vec![0usize; n];
    for i in (0..n).filter(|&i| repeated[i]) {
        rank[i] = call[i].as_ref().and_then(|(m, _)| rank_of(m)).unwrap_or(0);
        reached[i] = feeding[i]
            .iter()
            .filter(|&&p| same(i, p))
            .map(|&p| rank[p].max(reached[p]))
            .max()
            .unwrap_or(0);
    }
    let mut lowest = rank.clone();
    for i in (0..n).rev().filter(|&i| repeated[i]) {
        for &p in feeding[i].iter().filter(|&&p| same(i, p)) {
            lowest[p] = lowest[p].min(lowest[i]);
        }
    }
    let last = stages.len().saturating_sub(1);
    let mut roles = vec![None; n];
    for i in (0..n).filter(|&i| repeated[i]) {
        // On the last stage the gradient turns around: a call there reading
        // its microbatch's data from its own stage, whose results go back
        // down, is backward too.
        let turns = rank[i] == last
            && lowest[i] < rank[i]
            && feeding[i].iter().any(|&p| same(i, p) && rank[p] == rank[i]);
        roles[i] = Some(Role {
            stage: rank[i],
            microbatch: microbatch[i],
            backward: reached[i] > rank[i] || turns,
        });
    }
    Ok(Structure {
        stages: stages.into_iter().map(|(_, _, m)| m).collect(),
        microbatches,
        roles,
    })
}

/// The position of a call in its stage's order under GPipe: every forward,
/// microbatch by microbatch, then every backward.
pub fn gpipe_slot(role: Role, _stages: usize, microbatches: usize) -> usize {
    match role.backward {
        false => role.microbatch,
        true => microbatches + role.microbatch,
    }
}

/// The position of a call in its stage's order under 1F1B: stage `s` of
/// `p` first runs `p - 1 - s` forwards (the warm-up), then alternates one
/// forward and one backward, then runs the remaining backwards.
pub fn one_f_one_b_slot(role: Role, stages: usize, microbatches: usize) -> usize {
    let warmup = stages.saturating_sub(1 + role.stage).min(microbatches);
    let k = role.microbatch;
    match role.backward {
        false if k < warmup => k,
        false => warmup + 2 * (k - warmup),
        true if k < microbatches - warmup => warmup + 2 * k + 1,
        true => warmup + 2 * (microbatches - warmup) + (k - (microbatches - warmup)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(stage: usize, p: usize, m: usize) -> Vec<String> {
        let mut calls: Vec<(usize, String)> = (0..m)
            .flat_map(|k| {
                [false, true].map(|backward| {
                    let role = Role {
                        stage,
                        microbatch: k,
                        backward,
                    };
                    (
                        one_f_one_b_slot(role, p, m),
                        format!("{}{k}", if backward { 'B' } else { 'F' }),
                    )
                })
            })
            .collect();
        calls.sort();
        calls.into_iter().map(|(_, c)| c).collect()
    }

    /// The textbook 1F1B orders: warm-up, steady state, cool-down.
    #[test]
    fn one_f_one_b_orders() {
        assert_eq!(order(0, 3, 4).join(" "), "F0 F1 F2 B0 F3 B1 B2 B3");
        assert_eq!(order(1, 3, 4).join(" "), "F0 F1 B0 F2 B1 F3 B2 B3");
        assert_eq!(order(2, 3, 4).join(" "), "F0 B0 F1 B1 F2 B2 F3 B3");
        // More stages than microbatches: the warm-up is every forward.
        assert_eq!(order(0, 4, 2).join(" "), "F0 F1 B0 B1");
    }
}
