//! An array's address, for the tests and benches that hand raw pointers to
//! kernels on purpose (layouts the arena cannot type, planted faults): the
//! buffer's base plus the array's offset.

use gpu_aligned::arena::{Arena, ArenaArray, ArenaError, ArenaResult};
use gpu_aligned::backend::Backend;

/// The array's address in the buffer's address space (a device pointer on
/// a device).
pub fn address_of<B: Backend>(arena: &Arena<B>, array: &impl ArenaArray<B>) -> ArenaResult<u64, B> {
    let offset = arena.offset(array)?;
    arena
        .backend()
        .base_address()
        .checked_add(offset)
        .ok_or(ArenaError::AddressOverflow)
}
