//! What the arena holds is counted where it sits, and counting allocates
//! nothing: `live`, `pending_frees` and `ThreadArena::live` are the sum of
//! the places a given-back block can be (the list dropped arrays wait on,
//! the kept blocks, those held for graphs).
//! Counted through a global allocator that counts this thread's
//! allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gpu_aligned::arena::{Arena, ThreadArena};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is `System`'s, with the caller's own arguments; the
// count is a thread-local `Cell` with a constant initializer, which takes no
// allocation and no lock.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: as the caller promised `alloc`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller promised `dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        // SAFETY: as the caller promised `realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// This thread's allocations while `f` runs, and its result.
fn allocations<R>(f: impl FnOnce() -> R) -> (usize, R) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    (ALLOCATIONS.with(Cell::get) - before, result)
}

#[test]
fn counting_what_the_arena_holds_allocates_nothing() {
    let mut arena = Arena::host(1 << 20).unwrap();
    let live: Vec<_> = (0..5).map(|_| arena.alloc::<u32>(64).unwrap()).collect();
    // Three dropped arrays waiting on the list, then one kept block.
    for _ in 0..3 {
        drop(arena.alloc::<u8>(1000).unwrap());
    }
    let (allocated, counts) = allocations(|| (arena.live(), arena.pending_frees()));
    assert_eq!(counts, (5, 3));
    assert_eq!(allocated, 0);
    drop(live);
    let (allocated, counts) = allocations(|| (arena.live(), arena.pending_frees()));
    assert_eq!(counts, (0, 8));
    assert_eq!(allocated, 0);
}

#[test]
fn counting_what_a_thread_arena_holds_allocates_nothing() {
    let arena = ThreadArena::new(Arena::host(1 << 20).unwrap());
    let kept = arena.alloc::<u32>(64).unwrap();
    for _ in 0..3 {
        drop(arena.alloc::<u8>(1000).unwrap());
    }
    let (allocated, live) = allocations(|| arena.live());
    assert_eq!(live, 1);
    assert_eq!(allocated, 0);
    drop(kept);
}
