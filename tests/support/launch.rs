//! The launch grids of the device tests and benches (the benches include
//! this file by path): one block per `block` threads over a length, and
//! the fixed grid of the kernels that loop over their array.
// Each test binary and bench uses part of it.
#![allow(dead_code)]

use gpu_aligned::backend::cuda::cudarc::driver::LaunchConfig;

/// One thread per item of `threads`, in blocks of `block` threads: enough
/// blocks to cover them all, the last one partly idle.
///
/// # Panics
///
/// If the grid needs more than `u32::MAX` blocks.
pub fn grid(threads: usize, block: u32) -> LaunchConfig {
    let blocks = threads.div_ceil(block as usize);
    LaunchConfig {
        grid_dim: (u32::try_from(blocks).expect("grid fits u32"), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// 64 blocks of 256 threads, for kernels that stride over an array of any
/// length (the tests' spinning kernels): a fixed grid, so that a kernel's
/// duration depends on its spin count, not on the array it touches.
pub const GRID_STRIDE: LaunchConfig = LaunchConfig {
    grid_dim: (64, 1, 1),
    block_dim: (256, 1, 1),
    shared_mem_bytes: 0,
};
