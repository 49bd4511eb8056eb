//! Checked kernel arrays (`checked` on a view, a writable view or a
//! read-only view) are ordered like cudarc's views: a launch on another
//! stream waits for the array's earlier writes (and, for a writing
//! argument, reads), and its own use is recorded, so later work on the
//! arena's stream waits for it. Each case runs a kernel that spins
//! for about 50 ms, so a missing wait or record shows as wrong values.

use std::sync::Arc;

use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, CudaStream, PushKernelArg};
use gpu_aligned::backend::cuda::{CudaBackend, CudaError};

use crate::support::GRID_STRIDE;
use crate::types::module;

const KERNELS: &str = r#"
template <typename T> struct array_arg { T* ptr; unsigned long long len; };
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
extern "C" __global__ void slow_fill(array_arg<unsigned> a, unsigned value, long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.len;
         i += (unsigned long long)gridDim.x * blockDim.x)
        a.ptr[i] = value + (unsigned)i;
}
extern "C" __global__ void slow_double(array_arg<const unsigned> a, array_arg<unsigned> out,
                                       long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.len;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out.ptr[i] = a.ptr[i] * 2u + 1u;
}
"#;

/// About 50 ms at the H100's clock.
const SPIN_CYCLES: i64 = 100_000_000;
const N: usize = 1 << 16;

/// Two streams of one context (so events are tracked), the arena on the
/// first.
fn two_streams() -> (Arc<CudaStream>, Arc<CudaStream>, Arena<CudaBackend>) {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let s1 = context.new_stream().unwrap();
    let s2 = context.new_stream().unwrap();
    let arena = Arena::device(&s1, 1 << 22).unwrap();
    (s1, s2, arena)
}

fn expected(value: u32) -> Vec<u32> {
    (0..N as u32).map(|i| (value + i) * 2 + 1).collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_array_on_another_stream_waits_for_the_arrays_last_write() {
    let (s1, s2, mut arena) = two_streams();
    let module = module(&s1, KERNELS);
    let (fill, double) = (
        module.load_function("slow_fill").unwrap(),
        module.load_function("slow_double").unwrap(),
    );
    let mut a = arena.alloc::<u32>(N).unwrap();
    let mut out = arena.alloc::<u32>(N).unwrap();
    {
        // S1 spins, then fills A.
        let a_arg = arena.view_mut(&mut a, .., &s1).unwrap().checked();
        let mut launch = s1.launch_builder(&fill);
        launch.arg(&a_arg).arg(&7u32).arg(&SPIN_CYCLES);
        // SAFETY: `slow_fill` writes the `len` elements of its argument.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    {
        // S2 doubles A into OUT at once: it must wait for S1's fill.
        let a_arg = arena.view(&a, .., &s2).unwrap().checked();
        let out_arg = arena.view_mut(&mut out, .., &s2).unwrap().checked();
        let mut launch = s2.launch_builder(&double);
        launch.arg(&a_arg).arg(&out_arg).arg(&0i64);
        // SAFETY: `slow_double` reads `a.len` elements of A and writes as
        // many of OUT, which is as long.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    // The download on S1 waits for S2's write of OUT.
    assert_eq!(arena.to_vec(&out).unwrap(), expected(7));
    arena.free(a).unwrap();
    arena.free(out).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_array_read_on_another_stream_is_waited_for_before_a_write() {
    let (s1, s2, mut arena) = two_streams();
    let module = module(&s1, KERNELS);
    let double = module.load_function("slow_double").unwrap();
    let mut a = arena.alloc::<u32>(N).unwrap();
    let mut out = arena.alloc::<u32>(N).unwrap();
    let first: Vec<u32> = (0..N as u32).map(|i| 3 + i).collect();
    arena.write(&mut a, .., &first).unwrap();
    arena.backend().synchronize().unwrap();
    for read_only in [false, true] {
        {
            // S2 spins, then reads A (through a plain view's checked
            // array, or through a read-only view's).
            let view = arena.view(&a, .., &s2).unwrap();
            let a_arg = match read_only {
                true => view.read_only().checked(),
                false => view.checked(),
            };
            let out_arg = arena.view_mut(&mut out, .., &s2).unwrap().checked();
            let mut launch = s2.launch_builder(&double);
            launch.arg(&a_arg).arg(&out_arg).arg(&SPIN_CYCLES);
            // SAFETY: as above.
            unsafe { launch.launch(GRID_STRIDE) }.unwrap();
        }
        // Overwriting A on S1 at once must wait for S2's read.
        arena.write(&mut a, .., &vec![1_000_000; N]).unwrap();
        assert_eq!(
            arena.to_vec(&out).unwrap(),
            expected(3),
            "read-only view: {read_only}"
        );
        arena.write(&mut a, .., &first).unwrap();
    }
    arena.free(a).unwrap();
    arena.free(out).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_kernel_array_for_a_stream_of_another_context_is_refused() {
    let (_s1, _s2, mut arena) = two_streams();
    let mut a = arena.alloc::<u32>(N).unwrap();
    let other = CudaContext::new_non_primary(0, 0).expect("a second context");
    let foreign = other.new_stream().unwrap();
    let refused =
        |e: Result<(), _>| matches!(e, Err(ArenaError::Backend(CudaError::ForeignStream)));
    assert!(refused(arena.view(&a, .., &foreign).map(drop)));
    assert!(refused(
        arena
            .view(&a, .., &foreign)
            .map(|v| drop(v.read_only().checked()))
    ));
    assert!(refused(arena.view_mut(&mut a, .., &foreign).map(drop)));
    // compute-sanitizer refuses to unregister regions while a second
    // context exists: it goes first.
    drop(foreign);
    drop(other);
    arena.free(a).unwrap();
}
