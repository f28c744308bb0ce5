//! pw's benchmarks live in the bench targets of this crate.
