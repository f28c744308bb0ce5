//! How a session's arrays are computed again after a loss: each call
//! records, for its outputs, a `Lineage` node (the executable, and each
//! argument's origin: another array with its own lineage, or a kept host
//! copy of an upload). A lost array's next use runs the calls of its
//! lineage again, oldest first, each once, from the arrays that survived.
//!
//! With a journal, each node is also in its log of calls
//! ([`crate::journal::calls`]) while it lives, and a session taken back
//! after a restart gets its arrays' lineage back from there
//! ([`Lineage::read_back`]).

use super::Sessions;
use crate::error::{Error, Result};
use crate::journal::calls::{Argument, Call, CallLog, Logged};
use pw_exec::HostArray;
use pw_wire::proto;
use std::{
    collections::HashMap,
    future::Future,
    pin::Pin,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

/// The most calls a lineage chain keeps: the outputs of a deeper call
/// have none (recomputing them would replay that many calls).
pub const MAX_LINEAGE: usize = 1000;

/// A call that made arrays, as it can run again (see the module doc).
pub(crate) struct Lineage {
    /// The session's executable (lowered again when its devices are gone).
    pub executable: u64,
    pub arguments: Vec<Origin>,
    /// The arrays it made, by output.
    pub outputs: Vec<u64>,
    /// How many calls deep it is (1: from uploads and surviving arrays).
    pub depth: usize,
    /// Its entry in the journal's log of calls, while it lives.
    logged: Option<Logged>,
}

/// Where a call's lineage is logged: the log, and the session.
pub(crate) type LogAs<'a> = Option<(&'a CallLog, u64)>;

impl Lineage {
    /// The lineage of a call of `executable` from `arguments` making
    /// `outputs` (logged as `log` says); None when it would be too deep to
    /// keep.
    pub fn of(
        executable: u64,
        arguments: Vec<Origin>,
        outputs: Vec<u64>,
        log: LogAs,
    ) -> Option<Arc<Lineage>> {
        let depth = depth(&arguments);
        if depth > MAX_LINEAGE {
            return None;
        }
        let logged = log.and_then(|(log, session)| {
            log.made(Call {
                session,
                executable,
                arguments: arguments.iter().map(Origin::logged).collect(),
                outputs: outputs.clone(),
            })
        });
        Some(Arc::new(Lineage {
            executable,
            arguments,
            outputs,
            depth,
            logged,
        }))
    }

    /// The lineage of session `session`'s arrays, from its logged `calls`
    /// (oldest first) as a restarted server reads them back: each array
    /// named an output by a call, with that call (the latest) and which
    /// output. Uploads count against `kept` (up to `limit` bytes); a call
    /// whose upload does not fit or does not decode is left out, and the
    /// calls no array needs leave the log.
    pub fn read_back(
        session: u64,
        calls: &[(u64, proto::JournalCall)],
        log: &CallLog,
        (kept, limit): (&Arc<AtomicU64>, u64),
    ) -> HashMap<u64, (Arc<Lineage>, usize)> {
        use proto::journal_argument::Origin as Logged;
        let mut nodes: HashMap<u64, Arc<Lineage>> = HashMap::new();
        let mut arrays = HashMap::new();
        for (entry, call) in calls {
            let logged = log.adopt(session, *entry);
            let mut arguments = Vec::with_capacity(call.arguments.len());
            for a in &call.arguments {
                let origin = match &a.origin {
                    Some(Logged::Host(h)) => {
                        let host = h.r#type.as_ref().and_then(|t| {
                            let (dtype, dims, _) = t.read(limit).ok()?;
                            HostArray::new(dtype, &dims, h.bytes.clone()).ok()
                        });
                        match host.and_then(|h| KeptHost::keep(&Arc::new(h), kept, limit)) {
                            Some(k) => Origin::Host(k),
                            None => break,
                        }
                    }
                    Some(Logged::Array(r)) => Origin::Array {
                        array: r.array,
                        made_by: r
                            .made_by
                            .and_then(|e| nodes.get(&e))
                            .map(|l| (l.clone(), r.output as usize)),
                    },
                    None => break,
                };
                arguments.push(origin);
            }
            if arguments.len() != call.arguments.len() {
                continue;
            }
            let node = Arc::new(Lineage {
                executable: call.executable,
                depth: depth(&arguments),
                arguments,
                outputs: call.outputs.clone(),
                logged: Some(logged),
            });
            for (k, &a) in call.outputs.iter().enumerate() {
                arrays.insert(a, (node.clone(), k));
            }
            nodes.insert(*entry, node);
        }
        arrays
    }
}

/// How many calls deep the lineage of a call from `arguments` is.
fn depth(arguments: &[Origin]) -> usize {
    1 + arguments
        .iter()
        .filter_map(|o| match o {
            Origin::Array {
                made_by: Some((l, _)),
                ..
            } => Some(l.depth),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

impl Drop for Lineage {
    /// Drops a long chain without recursing once per call.
    fn drop(&mut self) {
        fn parents(arguments: &mut Vec<Origin>) -> impl Iterator<Item = Arc<Lineage>> + '_ {
            arguments.drain(..).filter_map(|o| match o {
                Origin::Array {
                    made_by: Some((l, _)),
                    ..
                } => Some(l),
                _ => None,
            })
        }
        let mut stack: Vec<Arc<Lineage>> = parents(&mut self.arguments).collect();
        while let Some(l) = stack.pop() {
            if let Ok(mut l) = Arc::try_unwrap(l) {
                stack.extend(parents(&mut l.arguments));
            }
        }
    }
}

/// Where an argument of a call came from.
pub(crate) enum Origin {
    Host(KeptHost),
    /// Array `array` of the session, as made by its lineage when it has one.
    Array {
        array: u64,
        made_by: Option<(Arc<Lineage>, usize)>,
    },
}

impl Origin {
    /// How the journal's log of calls keeps it.
    fn logged(&self) -> Argument {
        match self {
            Origin::Host(k) => Argument::Host(k.host.clone()),
            Origin::Array { array, made_by } => Argument::Array {
                array: *array,
                made_by: made_by
                    .as_ref()
                    .and_then(|(l, k)| l.logged.as_ref().map(|logged| (logged.entry, *k as u32))),
            },
        }
    }
}

/// A host array a call uploaded, kept for lineage: its bytes count
/// against the budget until it is dropped.
pub(crate) struct KeptHost {
    host: Arc<HostArray>,
    budget: Arc<AtomicU64>,
}

impl KeptHost {
    /// Keeps `host` if `budget` (bytes kept, shared) stays within `limit`.
    pub fn keep(host: &Arc<HostArray>, budget: &Arc<AtomicU64>, limit: u64) -> Option<KeptHost> {
        let n = host.bytes().len() as u64;
        budget
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |kept| {
                kept.checked_add(n).filter(|&k| k <= limit)
            })
            .ok()?;
        Some(KeptHost {
            host: host.clone(),
            budget: budget.clone(),
        })
    }
}

impl Drop for KeptHost {
    fn drop(&mut self) {
        self.budget
            .fetch_sub(self.host.bytes().len() as u64, Ordering::Relaxed);
    }
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

impl Sessions<'_> {
    /// Computes array `array` of session `id` again from its lineage if it
    /// was lost (see the module doc); an error names what cannot be.
    pub(crate) async fn restore(&self, id: u64, array: u64) -> Result<()> {
        let a = self.lock().array(id, array)?;
        if !a.lost() {
            return Ok(());
        }
        let Some((lineage, _)) = a.lineage.clone() else {
            return Err(Error::NoLineage {
                array,
                why: a.failure().unwrap_or_default(),
                limit: MAX_LINEAGE,
            });
        };
        tracing::info!("session {id}: array {array} was lost; computing it again");
        let made =
            self.recompute(id, lineage.clone())
                .await
                .map_err(|e| Error::CannotRecompute {
                    array,
                    source: Box::new(e),
                })?;
        self.delete_temporaries(id, &lineage, &made).await;
        self.update(id, |s| s.counters.arrays_recomputed += 1);
        Ok(())
    }

    /// Whether array `array` of session `id` is there and not lost.
    fn live(&self, id: u64, array: u64) -> bool {
        self.lock().array(id, array).is_ok_and(|a| !a.lost())
    }

    /// Runs the call of `lineage` again, after the calls that made the
    /// lost arrays it takes (oldest first, each once); returns the arrays
    /// holding its outputs.
    fn recompute(&self, id: u64, lineage: Arc<Lineage>) -> Boxed<'_, Vec<u64>> {
        Box::pin(async move {
            let order = self.replay_order(id, &lineage);
            let mut made: Vec<(Arc<Lineage>, Vec<u64>)> = Vec::with_capacity(order.len());
            let mut outcome = Ok(());
            for l in order {
                match self.run_again(id, &l, &made).await {
                    Ok(outputs) => made.push((l, outputs)),
                    Err(e) => {
                        outcome = Err(e);
                        break;
                    }
                }
            }
            // What the last call made is the caller's.
            let last = made
                .pop()
                .filter(|(l, _)| Arc::ptr_eq(l, &lineage) && outcome.is_ok());
            for (l, outputs) in &made {
                self.delete_temporaries(id, l, outputs).await;
            }
            outcome?;
            last.map(|(_, outputs)| outputs).ok_or(Error::NotReplayed)
        })
    }

    /// The calls to run again for `lineage`, in an order that runs each
    /// after the calls it takes from (depth-first, without recursion).
    fn replay_order(&self, id: u64, lineage: &Arc<Lineage>) -> Vec<Arc<Lineage>> {
        let mut order: Vec<Arc<Lineage>> = Vec::new();
        let mut stack = vec![(lineage.clone(), false)];
        while let Some((l, expanded)) = stack.pop() {
            if order.iter().any(|o| Arc::ptr_eq(o, &l)) {
                continue;
            }
            if expanded {
                order.push(l);
                continue;
            }
            stack.push((l.clone(), true));
            for origin in &l.arguments {
                if let Origin::Array {
                    array,
                    made_by: Some((parent, _)),
                } = origin
                {
                    if !self.live(id, *array) {
                        stack.push((parent.clone(), false));
                    }
                }
            }
        }
        order
    }

    /// Runs the call of `lineage` again, taking lost arguments from the
    /// outputs of calls `made` again before it.
    async fn run_again(
        &self,
        id: u64,
        lineage: &Arc<Lineage>,
        made: &[(Arc<Lineage>, Vec<u64>)],
    ) -> Result<Vec<u64>> {
        let mut arguments = Vec::with_capacity(lineage.arguments.len());
        let mut hosts = Vec::new();
        for (i, origin) in lineage.arguments.iter().enumerate() {
            let argument = match origin {
                Origin::Host(k) => {
                    hosts.push(k.host.clone());
                    proto::call_argument::Argument::Host(proto::ArrayType::of(
                        k.host.dtype(),
                        k.host.shape(),
                    ))
                }
                Origin::Array { array, made_by } => {
                    let again = made_by.as_ref().and_then(|(parent, k)| {
                        made.iter()
                            .find(|(l, _)| Arc::ptr_eq(l, parent))
                            .and_then(|(_, outputs)| outputs.get(*k).copied())
                    });
                    let array = match again {
                        _ if self.live(id, *array) => *array,
                        Some(a) => a,
                        None => {
                            return Err(Error::LineageBroken {
                                array: *array,
                                index: i,
                            })
                        }
                    };
                    proto::call_argument::Argument::Array(proto::ArrayRef { session: id, array })
                }
            };
            arguments.push(proto::CallArgument {
                argument: Some(argument),
            });
        }
        let begin = proto::CallBegin {
            session: id,
            executable: lineage.executable,
            arguments,
            ..Default::default()
        };
        let outputs = self.call_as(begin, hosts, Some(lineage)).await?.outputs;
        self.update(id, |s| s.counters.calls_replayed += 1);
        Ok(outputs)
    }

    /// Deletes the arrays a call run again made that took no lost array's
    /// place.
    async fn delete_temporaries(&self, id: u64, lineage: &Lineage, made: &[u64]) {
        let arrays = made
            .iter()
            .copied()
            .filter(|a| !lineage.outputs.contains(a))
            .collect();
        let _ = self.delete(&proto::ArrayRefs {
            session: id,
            arrays,
        });
    }
}
