//! Whole-program facts the passes and the tools reuse, computed from the
//! verified program: what each computation and move costs ([`cost`]), the
//! bytes each device holds along a schedule ([`live_bytes`]), and the
//! stages and microbatches of a pipeline recognized from the dataflow
//! ([`pipeline_stages`]).

pub mod cost;
pub mod live_bytes;
pub mod pipeline_stages;
