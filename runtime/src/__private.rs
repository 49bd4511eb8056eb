//! Items that exist only for the code `#[derive(GpuAligned)]` and
//! `#[gpu_aligned::padded]` emit. Not public API: no semver guarantees.

pub use bytemuck;
pub use core;
