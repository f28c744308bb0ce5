//! `pw-dce`: removes what computes nothing the program returns.
//!
//! pw's ops are `Pure`, so upstream `canonicalize` would also drop unused
//! ones; this pass does it in one backward sweep and knows computations.
//! After it runs:
//! - every op of `@main`'s body contributes to a returned value;
//! - every computation is called by some `pw.call`.
//!
//! Meshes stay: they are the program's requests for devices.

use crate::{Pass, PassFailure};
use melior::{
    ir::{operation::OperationLike, Module, ValueLike},
    Context,
};
use pw_dialect::{
    edit,
    ops::{self, OpKind},
    Analysis,
};
use std::collections::HashSet;

/// See the module documentation.
pub struct Dce;

impl Pass for Dce {
    fn argument(&self) -> &'static str {
        "pw-dce"
    }

    fn run<'c>(
        &self,
        _context: &'c Context,
        _module: &Module<'c>,
        analysis: &Analysis<'c, '_>,
    ) -> Result<(), PassFailure<'c>> {
        let program = &analysis.program;
        let mut live = HashSet::new();
        let mut called = HashSet::new();
        for &op in analysis.ops().iter().rev() {
            let kind = OpKind::of(&op);
            let needed = kind == Some(OpKind::Return)
                || op.results().any(|r| live.contains(&r.to_raw().ptr));
            if !needed {
                edit::erase(op);
                continue;
            }
            live.extend(op.operands().map(|v| v.to_raw().ptr));
            if kind == Some(OpKind::Call) {
                called.extend(ops::symbol_attr(&op, ops::ATTR_CALLEE));
            }
        }
        for computation in &program.computations {
            if !called.contains(&computation.name) {
                edit::erase(computation.op);
            }
        }
        Ok(())
    }
}
