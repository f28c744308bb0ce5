//! Pipeline structure, recognized from a program's dataflow: which stage
//! each call runs on, which microbatch it belongs to, and whether it is part
//! of the forward or the backward pass. The pipeline schedules
//! (`pw-schedule{policy=gpipe|1f1b}`) order calls by it.
//!
//! The rules (`docs/passes.md`), for a program written as a plain unrolled
//! Python loop over microbatches:
//!
//! 1. **Stage**: the mesh a call runs on (every call must be placed).
//! 2. **Repeated calls**: a computation called more than once on a stage is
//!    per-microbatch work; a computation called once there (an optimizer
//!    update, say) belongs to no microbatch and runs when its inputs are
//!    ready.
//! 3. **Microbatch**: two repeated calls belong to one microbatch when data
//!    flows from one to the other (through moves, never through a call of
//!    rule 2's second kind). A gradient sum is the exception: a call that
//!    reads an earlier call of its own computation on its stage and another
//!    repeated call (`acc = add(acc, grad)`), and the first call of such a
//!    chain, joins only the microbatch of the latest other call it reads.
//!    Microbatches are numbered in the order their first call appears in
//!    the program.
//! 4. **Stage position**: how many stage changes lead from the start of a
//!    microbatch's dataflow to the stage's first call, the least over all
//!    microbatches (0: a first stage). Replicas of one pipeline have their
//!    stages at the same positions; p is the number of positions.
//! 5. **Direction**: a call is *backward* when data of its own microbatch
//!    reaches it from a stage at a later position (the gradient coming
//!    back), or when it is on a last stage, reads its microbatch's data from
//!    its own stage, and its results reach an earlier stage (where the
//!    gradient turns around); otherwise it is *forward*. A last stage that
//!    computes its forward, loss and gradient in one call runs it as a
//!    forward; one whose forward is several calls has all but the first
//!    counted as backward (a valid order, not exactly GPipe's).

use pw_dialect::{ops, ops::OpKind};
use std::collections::HashMap;

/// What a repeated call is in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role {
    /// Its stage: an index into [`Structure::stages`].
    pub stage: usize,
    /// Its stage's position in the pipeline (0: a first stage).
    pub position: usize,
    pub microbatch: usize,
    pub backward: bool,
}

/// The recognized structure of a program.
#[derive(Debug)]
pub struct Structure {
    /// The stages' meshes, in order of first appearance.
    pub stages: Vec<String>,
    /// How many positions the pipeline has (p).
    pub positions: usize,
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
    let calls = Calls::of(ops, preds)?;
    let (microbatch, microbatches) = calls.microbatches()?;
    let (position, positions) = calls.positions(&microbatch);
    let roles = calls.roles(&microbatch, &position, positions);
    Ok(Structure {
        stages: calls.stages,
        positions,
        microbatches,
        roles,
    })
}

/// The calls of a body and how data flows between them (rules 1 and 2).
struct Calls {
    /// The stages' meshes, in order of first appearance.
    stages: Vec<String>,
    /// Per op: its (stage, computation), for calls.
    call: Vec<Option<(usize, String)>>,
    /// Per op: the calls it reads from, looking through moves.
    feeding: Vec<Vec<usize>>,
    /// Per op: whether it is a repeated call (rule 2).
    repeated: Vec<bool>,
}

impl Calls {
    fn of<'g>(
        ops: &[melior::ir::operation::OperationRef<'_, '_>],
        preds: impl Fn(usize) -> &'g [usize],
    ) -> Result<Calls, String> {
        let n = ops.len();
        // Rule 1: each call's (stage, computation), meshes interned.
        let mut stages: Vec<String> = Vec::new();
        let mut stage_of: HashMap<String, usize> = HashMap::new();
        let mut call: Vec<Option<(usize, String)>> = Vec::with_capacity(n);
        for op in ops {
            if OpKind::of(op) != Some(OpKind::Call) {
                call.push(None);
                continue;
            }
            let (Some(mesh), Some(callee)) = (
                ops::symbol_attr(op, ops::ATTR_MESH),
                ops::symbol_attr(op, ops::ATTR_CALLEE),
            ) else {
                return Err(
                    "some calls are not placed on a mesh yet (run pw-assign-devices first)".into(),
                );
            };
            let next = stages.len();
            let stage = *stage_of.entry(mesh.clone()).or_insert(next);
            if stage == next {
                stages.push(mesh);
            }
            call.push(Some((stage, callee)));
        }
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
        // Rule 2: how often each computation is called on each stage.
        let mut counts: HashMap<&(usize, String), usize> = HashMap::new();
        for key in call.iter().flatten() {
            *counts.entry(key).or_default() += 1;
        }
        let repeated: Vec<bool> = call
            .iter()
            .map(|c| c.as_ref().is_some_and(|key| counts[key] > 1))
            .collect();
        if !repeated.iter().any(|&r| r) {
            return Err(
                "no computation is called more than once on a mesh, so the program has no microbatches"
                    .into(),
            );
        }
        Ok(Calls {
            stages,
            call,
            feeding,
            repeated,
        })
    }

    fn stage(&self, i: usize) -> usize {
        self.call[i].as_ref().map_or(0, |c| c.0)
    }

    /// The repeated calls, in program order.
    fn repeated(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        (0..self.call.len()).filter(|&i| self.repeated[i])
    }

    /// Rule 3: each op's microbatch (`usize::MAX` for ops of none), and
    /// how many there are.
    fn microbatches(&self) -> Result<(Vec<usize>, usize), String> {
        let n = self.call.len();
        let (feeding, repeated) = (&self.feeding, &self.repeated);
        let same_key = |i: usize, p: usize| self.call[p] == self.call[i];
        // The gradient sums: the links of each chain, then its first calls.
        let mut accumulator: Vec<bool> = (0..n)
            .map(|i| {
                repeated[i]
                    && feeding[i].iter().any(|&p| same_key(i, p))
                    && feeding[i].iter().any(|&p| repeated[p] && !same_key(i, p))
            })
            .collect();
        for i in (0..n).rev() {
            if accumulator[i] {
                for &p in &feeding[i] {
                    if same_key(i, p) {
                        accumulator[p] = true;
                    }
                }
            }
        }
        // Microbatches are the connected groups of repeated calls.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for i in self.repeated() {
            let others = feeding[i]
                .iter()
                .copied()
                .filter(|&p| repeated[p] && !(accumulator[i] && same_key(i, p)));
            let joins: Vec<usize> = if accumulator[i] {
                others.max().into_iter().collect()
            } else {
                others.collect()
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
        for i in self.repeated() {
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
        Ok((microbatch, microbatches))
    }

    /// Whether `p` is a repeated call of `i`'s microbatch.
    fn same(&self, microbatch: &[usize], i: usize, p: usize) -> bool {
        self.repeated[p] && microbatch[p] == microbatch[i]
    }

    /// Rule 4: each stage's position (stage changes from the start of each
    /// microbatch's dataflow, the least), and how many positions there are.
    fn positions(&self, microbatch: &[usize]) -> (Vec<usize>, usize) {
        let mut changes = vec![0usize; self.call.len()];
        let mut position = vec![usize::MAX; self.stages.len()];
        for i in self.repeated() {
            changes[i] = self.feeding[i]
                .iter()
                .filter(|&&p| self.same(microbatch, i, p))
                .map(|&p| changes[p] + usize::from(self.stage(p) != self.stage(i)))
                .max()
                .unwrap_or(0);
            position[self.stage(i)] = position[self.stage(i)].min(changes[i]);
        }
        let positions = position
            .iter()
            .filter(|&&p| p != usize::MAX)
            .max()
            .map_or(1, |p| p + 1);
        (position, positions)
    }

    /// Rule 5: each repeated call's role, forward or backward from the
    /// latest position data of its microbatch came from and the earliest
    /// its results reach.
    fn roles(
        &self,
        microbatch: &[usize],
        position: &[usize],
        positions: usize,
    ) -> Vec<Option<Role>> {
        let n = self.call.len();
        let last = positions - 1;
        let at = |i: usize| position[self.stage(i)];
        let same = |i: usize, p: usize| self.same(microbatch, i, p);
        let mut reached = vec![0usize; n];
        for i in self.repeated() {
            reached[i] = self.feeding[i]
                .iter()
                .filter(|&&p| same(i, p))
                .map(|&p| at(p).max(reached[p]))
                .max()
                .unwrap_or(0);
        }
        let mut earliest: Vec<usize> = (0..n)
            .map(|i| if self.repeated[i] { at(i) } else { 0 })
            .collect();
        for i in self.repeated().rev() {
            for &p in self.feeding[i].iter().filter(|&&p| same(i, p)) {
                earliest[p] = earliest[p].min(earliest[i]);
            }
        }
        let mut roles = vec![None; n];
        for i in self.repeated() {
            let turns = at(i) == last
                && earliest[i] < at(i)
                && self.feeding[i]
                    .iter()
                    .any(|&p| same(i, p) && self.stage(p) == self.stage(i));
            roles[i] = Some(Role {
                stage: self.stage(i),
                position: at(i),
                microbatch: microbatch[i],
                backward: reached[i] > at(i) || turns,
            });
        }
        roles
    }
}

/// A call's place in its stage's order under `policy`: GPipe runs every
/// forward, microbatch by microbatch, then every backward; 1F1B on the
/// stage at position `s` of `p` first runs `p - 1 - s` forwards (the
/// warm-up), then alternates one forward and one backward, then runs the
/// remaining backwards.
pub fn slot(role: Role, one_f_one_b: bool, positions: usize, microbatches: usize) -> usize {
    let k = role.microbatch;
    if !one_f_one_b {
        return if role.backward { microbatches + k } else { k };
    }
    let warmup = positions
        .saturating_sub(1 + role.position)
        .min(microbatches);
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
                        stage: 0,
                        position: stage,
                        microbatch: k,
                        backward,
                    };
                    (
                        slot(role, true, p, m),
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
