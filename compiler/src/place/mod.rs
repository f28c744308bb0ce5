//! The place phase: from a location-agnostic program to a placed one, every
//! call and value on a virtual mesh, every mismatch between producer and
//! consumer an explicit move.

pub mod assign_devices;
pub mod dce;
pub mod fold_transfers;
pub mod insert_transfers;
pub mod propagate_shardings;

use crate::{
    pipeline::{Phase, Step},
    registry::{plain, Make, PassInfo},
};
use assign_devices::AssignDevices;
use dce::Dce;
use fold_transfers::FoldTransfers;
use insert_transfers::InsertTransfers;
use propagate_shardings::PropagateShardings;
use pw_dialect::legality::Stage;

/// The phase, its passes in order.
pub fn phase() -> Phase {
    Phase {
        name: "place",
        steps: vec![
            // Placement first: shardings and transfers depend on where
            // calls run.
            Step::pw(AssignDevices),
            // Shardings come from the computations, known once placed.
            Step::pw(PropagateShardings),
            // Every mismatch between producer and consumer is now known.
            Step::pw(InsertTransfers),
            // Share and simplify moves before paying for them in
            // lowering.
            Step::pw(FoldTransfers),
            // Drop what no output needs before binding devices and
            // planning copies.
            Step::pw(Dce),
        ],
        reaches: Some(Stage::Placed),
    }
}

/// The passes of the phase, by name, in pipeline order.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        argument: "pw-assign-devices",
        summary: "place every call and value on a virtual mesh",
        options: &[],
        make: Make::Pw(|o| plain(o, "pw-assign-devices", AssignDevices)),
    },
    PassInfo {
        argument: "pw-propagate-shardings",
        summary: "give every array its producer's sharding; record what each call expects",
        options: &[],
        make: Make::Pw(|o| plain(o, "pw-propagate-shardings", PropagateShardings)),
    },
    PassInfo {
        argument: "pw-insert-transfers",
        summary: "make every edge between placements a pw.transfer or pw.reshard",
        options: &[],
        make: Make::Pw(|o| plain(o, "pw-insert-transfers", InsertTransfers)),
    },
    PassInfo {
        argument: "pw-fold-transfers",
        summary: "drop identity moves, collapse chains, share duplicate moves",
        options: &[],
        make: Make::Pw(|o| plain(o, "pw-fold-transfers", FoldTransfers)),
    },
    PassInfo {
        argument: "pw-dce",
        summary: "remove ops and computations that no output needs",
        options: &[],
        make: Make::Pw(|o| plain(o, "pw-dce", Dce)),
    },
];
