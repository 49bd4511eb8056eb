//! Per-array stream safety on a real GPU: a download on one stream (cudarc's
//! own copy through the arena's view) waits for a kernel writing the array
//! on another; a freed or dropped array's bytes are not handed out while a
//! kernel on another stream still reads them, 10,000 times over in an arena
//! of 16 arrays; views of one array live while another is written; a write on
//! a new stream waits for reads on the only stream before (which are not
//! counted); and the backend-generic function of the arena tests runs on the
//! device.

use std::sync::Arc;

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaStream, DeviceSlice, PushKernelArg,
};
use gpu_aligned::backend::cuda::CudaBackend;

use crate::generic::every_verb;
use crate::support::GRID_STRIDE;
use crate::types::module;

/// Each thread spins on `clock64` for `cycles` before touching memory, so
/// the kernel is still running when the host issues the next call.
const SLOW: &str = r#"
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
extern "C" __global__ void slow_fill(unsigned* a, unsigned long long n, unsigned value, long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        a[i] = value + (unsigned)i;
}
extern "C" __global__ void slow_double(const unsigned* a, unsigned* out, unsigned long long n, long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = a[i] * 2u + 1u;
}
"#;

/// About 50 ms at the H100's clock: far longer than issuing a copy takes.
const SPIN_CYCLES: i64 = 100_000_000;
const N: usize = 1 << 16;

/// A context with two streams of its own (so cudarc and the arena track
/// events), and the arena on the first.
fn two_streams(bytes: u64) -> (Arc<CudaStream>, Arc<CudaStream>, Arena<CudaBackend>) {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let s1 = context.new_stream().unwrap();
    let s2 = context.new_stream().unwrap();
    let arena = Arena::device(&s1, bytes as usize).unwrap();
    (s1, s2, arena)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_generic_function_runs_on_the_device() {
    let stream = crate::types::stream();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    every_verb(&mut arena);
    assert_eq!(arena.allocator().stats().allocations, 0);
    // And again with several streams in the context.
    let (_s1, _s2, mut arena) = two_streams(1 << 20);
    every_verb(&mut arena);
    arena.backend().synchronize().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_download_on_one_stream_waits_for_a_kernel_writing_on_another() {
    let (s1, s2, mut arena) = two_streams(1 << 20);
    let module = module(&s1, SLOW);
    let fill = module.load_function("slow_fill").unwrap();
    let mut a = arena.alloc::<u32>(N).unwrap();
    let mut other = arena.alloc::<u32>(N).unwrap();
    arena.zero(&mut a).unwrap();
    {
        let mut view = arena.view_mut(&mut a, .., &s2).unwrap();
        let (n, value) = (N as u64, 1000u32);
        let mut launch = s2.launch_builder(&fill);
        launch.arg(&mut view).arg(&n).arg(&value).arg(&SPIN_CYCLES);
        // SAFETY: `slow_fill` writes elements [0, n) of the view.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    // Another array is not held up by the kernel: a copy to it on S1 is
    // issued and finishes while S2 still spins.
    let mut other_view = arena.view_mut(&mut other, .., &s1).unwrap();
    s1.memcpy_htod(&vec![5; N], &mut other_view).unwrap();
    drop(other_view);
    // The download of A on S1, issued at once, waits for S2's write.
    let back = s1.clone_dtoh(&arena.view(&a, .., &s1).unwrap()).unwrap();
    for (i, v) in back.iter().enumerate() {
        assert_eq!(*v, 1000 + i as u32, "element {i}");
    }
    let other_back = s1
        .clone_dtoh(&arena.view(&other, .., &s1).unwrap())
        .unwrap();
    assert_eq!(other_back, vec![5; N]);
    arena.free(a).unwrap();
    arena.free(other).unwrap();
}

/// Frees A while a kernel on S2 still reads it, allocates B of the same
/// size and uploads to it on S1: the kernel reads A's values. Run with an
/// arena so tight that B can only get A's bytes (S1 must wait for the
/// kernel before the upload) and with a roomy one.
fn free_while_read(tight: bool, by_drop: bool) {
    let bytes = (N * 4) as u64;
    let capacity = if tight { 3 * bytes } else { 8 * bytes };
    let (s1, s2, mut arena) = two_streams(capacity);
    // Sized for exact fits: no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let module = module(&s1, SLOW);
    let double = module.load_function("slow_double").unwrap();
    let mut a = arena.alloc::<u32>(N).unwrap();
    let mut out = arena.alloc::<u32>(N).unwrap();
    let mut other = arena.alloc::<u32>(N).unwrap();
    let data: Vec<u32> = (0..N as u32).map(|i| i * 3).collect();
    arena.write(&mut a, .., &data).unwrap();
    arena.write(&mut other, .., &vec![9; N]).unwrap();
    let a_offset = arena.offset(&a).unwrap();
    {
        let view = arena.view(&a, .., &s2).unwrap();
        let mut result = arena.view_mut(&mut out, .., &s2).unwrap();
        let n = N as u64;
        let mut launch = s2.launch_builder(&double);
        launch.arg(&view).arg(&mut result).arg(&n).arg(&SPIN_CYCLES);
        // SAFETY: `slow_double` reads [0, n) of `view`, writes [0, n) of
        // `result`.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    // A download of another array on S1 meanwhile: with one pair of events
    // for the whole buffer, this re-recorded the read event on S1, and the
    // upload below no longer waited for S2's kernel.
    let other_back = s1
        .clone_dtoh(&arena.view(&other, .., &s1).unwrap())
        .unwrap();
    assert_eq!(other_back, vec![9; N]);
    if by_drop {
        drop(a);
    } else {
        arena.free(a).unwrap();
    }
    // A's bytes are free at once in S1's order: S1 waits (on the device)
    // for S2's kernel, and nothing waits on the host (a dropped array
    // waits on the list until the arena next allocates).
    assert_eq!(arena.pending_frees(), usize::from(by_drop));
    assert_eq!(arena.live(), 2);
    let mut b = arena.alloc::<u32>(N).unwrap();
    if tight {
        // Nothing else fits: B has A's bytes, which the kernel still reads.
        assert_eq!(arena.offset(&b).unwrap(), a_offset);
    }
    let mut b_view = arena.view_mut(&mut b, .., &s1).unwrap();
    s1.memcpy_htod(&vec![u32::MAX; N], &mut b_view).unwrap();
    drop(b_view);
    let result = s2.clone_dtoh(&arena.view(&out, .., &s2).unwrap()).unwrap();
    for (i, v) in result.iter().enumerate() {
        assert_eq!(*v, data[i] * 2 + 1, "element {i}");
    }
    assert_eq!(arena.to_vec(&b).unwrap(), vec![u32::MAX; N]);
    arena.free(b).unwrap();
    arena.free(out).unwrap();
    arena.free(other).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_freed_array_is_reused_at_once_after_its_kernel_in_stream_order() {
    free_while_read(true, false);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_dropped_array_is_reused_at_once_after_its_kernel_in_stream_order() {
    free_while_read(true, true);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_dropped_array_keeps_its_kernels_values_in_a_roomy_arena() {
    free_while_read(false, true);
}

/// 10,000 calls that each upload a temporary array on S1, have a kernel on
/// S2 read it, and drop it, in an arena that holds 16 arrays. Every 1,000th
/// kernel is slow and the arena is then filled up at once, so one new array
/// can only get the dropped one's bytes: it must wait for the kernel, whose
/// result must show the dropped array's contents, not the new ones.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn ten_thousand_dropped_arrays_on_two_streams_are_reused_only_after_their_kernels() {
    const LEN: usize = 4096;
    let (s1, s2, mut arena) = two_streams((16 * LEN * 4) as u64);
    // Pins an exact capacity (16 arrays): no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let module = module(&s1, SLOW);
    let double = module.load_function("slow_double").unwrap();
    let mut out = arena.alloc::<u32>(LEN).unwrap();
    let mut last = Vec::new();
    for call in 0..10_000u32 {
        let slow = call % 1000 == 0;
        let data: Vec<u32> = (0..LEN as u32).map(|i| i ^ call).collect();
        let scratch = arena.alloc_from(&data).unwrap();
        {
            let view = arena.view(&scratch, .., &s2).unwrap();
            let mut result = arena.view_mut(&mut out, .., &s2).unwrap();
            let (n, cycles) = (LEN as u64, if slow { SPIN_CYCLES } else { 0i64 });
            let mut launch = s2.launch_builder(&double);
            launch.arg(&view).arg(&mut result).arg(&n).arg(&cycles);
            // SAFETY: `slow_double` reads [0, n) of `view`, writes [0, n)
            // of `result`.
            unsafe { launch.launch(GRID_STRIDE) }.unwrap();
        }
        let scratch_offset = arena.offset(&scratch).unwrap();
        drop(scratch);
        if slow {
            // The 14 free slots, then the dropped array's.
            let fillers: Vec<_> = (0..15)
                .map(|_| {
                    let mut filler = arena.alloc::<u32>(LEN).unwrap();
                    arena.write(&mut filler, .., &[u32::MAX; LEN]).unwrap();
                    filler
                })
                .collect();
            assert!(
                fillers
                    .iter()
                    .any(|f| arena.offset(f).unwrap() == scratch_offset),
                "call {call}: the dropped array's bytes were reused"
            );
            let result = s2.clone_dtoh(&arena.view(&out, .., &s2).unwrap()).unwrap();
            for (i, v) in result.iter().enumerate() {
                assert_eq!(*v, data[i] * 2 + 1, "call {call}, element {i}");
            }
        }
        last = data;
    }
    let result = s2.clone_dtoh(&arena.view(&out, .., &s2).unwrap()).unwrap();
    for (i, v) in result.iter().enumerate() {
        assert_eq!(*v, last[i] * 2 + 1, "last call, element {i}");
    }
    drop(out);
    assert_eq!(arena.live(), 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_freed_array_keeps_its_kernels_values_in_a_roomy_arena() {
    free_while_read(false, false);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_view_of_one_array_lives_while_another_is_uploaded() {
    let stream = crate::types::stream();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut a = arena.alloc::<u32>(16).unwrap();
    let mut b = arena.alloc::<u32>(16).unwrap();
    arena.write(&mut a, .., &[3; 16]).unwrap();
    let view_a = arena.view(&a, .., &stream).unwrap();
    {
        let write_b = arena.view_mut(&mut b, .., &stream).unwrap();
        assert_eq!((view_a.len(), write_b.len()), (16, 16));
    }
    arena.write(&mut b, .., &[4; 16]).unwrap();
    let mut back = vec![0u32; 16];
    stream.memcpy_dtoh(&view_a, &mut back).unwrap();
    drop(view_a);
    stream.synchronize().unwrap();
    assert_eq!(back, [3; 16]);
    assert_eq!(arena.to_vec(&b).unwrap(), [4; 16]);
    arena.free(a).unwrap();
    arena.free(b).unwrap();
}

/// Reads of one array by slow kernels on `streams` (each view made before
/// any is dropped), then an upload of new values to it on the arena's
/// stream: every kernel must have read the old values. Each stream's
/// kernel writes its own output array, read back at the end.
fn reads_then_write(
    streams: &[Arc<CudaStream>],
    own: &Arc<CudaStream>,
    arena: &mut Arena<CudaBackend>,
) {
    let module = module(own, SLOW);
    let double = module.load_function("slow_double").unwrap();
    let data: Vec<u32> = (0..N as u32).map(|i| i * 7).collect();
    let mut a = arena.alloc_from(&data).unwrap();
    let mut outs: Vec<_> = streams
        .iter()
        .map(|_| arena.alloc_zeros::<u32>(N).unwrap())
        .collect();
    {
        let views: Vec<_> = streams
            .iter()
            .map(|s| arena.view(&a, .., s).unwrap())
            .collect();
        let mut results: Vec<_> = outs
            .iter_mut()
            .zip(streams)
            .map(|(out, s)| arena.view_mut(out, .., s).unwrap())
            .collect();
        // The first reader runs longest: a write that waited only for the
        // later ones would overwrite the array under it.
        let readers = views.iter().zip(&mut results).zip(streams);
        for (k, ((view, result), s)) in readers.enumerate() {
            let (n, cycles) = (N as u64, SPIN_CYCLES * (streams.len() - k) as i64);
            let mut launch = s.launch_builder(&double);
            launch.arg(view).arg(result).arg(&n).arg(&cycles);
            // SAFETY: `slow_double` reads [0, n) of `view`, writes [0, n)
            // of `result`.
            unsafe { launch.launch(GRID_STRIDE) }.unwrap();
        }
    }
    // On the arena's stream, at once: it must wait for every kernel.
    arena.write(&mut a, .., &vec![u32::MAX; N]).unwrap();
    for (out, s) in outs.iter().zip(streams) {
        let result = s.clone_dtoh(&arena.view(out, .., s).unwrap()).unwrap();
        for (i, v) in result.iter().enumerate() {
            assert_eq!(*v, data[i] * 2 + 1, "element {i}");
        }
    }
    assert_eq!(arena.to_vec(&a).unwrap(), vec![u32::MAX; N]);
}

/// Reads by slow kernels on the arena's stream while the arena knows no other (reads it does not
/// count), one through a view passed to `mem::forget`, then a write on a second stream: the write
/// waits for both kernels, which read the old values.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_write_on_a_new_stream_waits_for_reads_on_the_only_stream_before() {
    let (s1, s2, mut arena) = two_streams(16 << 20);
    let double = module(&s1, SLOW).load_function("slow_double").unwrap();
    let data: Vec<u32> = (0..N as u32).map(|i| i * 7).collect();
    let mut a = arena.alloc_from(&data).unwrap();
    let mut outs = [(); 2].map(|()| arena.alloc_zeros::<u32>(N).unwrap());
    for (k, out) in outs.iter_mut().enumerate() {
        let view = arena.view(&a, .., &s1).unwrap();
        let mut result = arena.view_mut(out, .., &s1).unwrap();
        let (n, cycles) = (N as u64, SPIN_CYCLES);
        let mut launch = s1.launch_builder(&double);
        launch.arg(&view).arg(&mut result).arg(&n).arg(&cycles);
        // SAFETY: `slow_double` reads [0, n) of `view`, writes [0, n) of `result`.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
        if k == 1 {
            std::mem::forget(view);
        }
    }
    {
        let mut view = arena.view_mut(&mut a, .., &s2).unwrap();
        s2.memset_zeros(&mut view).unwrap();
    }
    for out in &outs {
        let result = arena.to_vec(out).unwrap();
        for (i, v) in result.iter().enumerate() {
            assert_eq!(*v, data[i] * 2 + 1, "element {i}");
        }
    }
    assert_eq!(arena.to_vec(&a).unwrap(), vec![0; N]);
}

/// Three streams reading one array at once, more than an array remembers
/// by stream: the write that follows still waits for all three (a third
/// reader once took the first one's place before its kernel was queued,
/// and the write then waited for two).
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_write_waits_for_reads_on_three_streams_at_once() {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let own = context.new_stream().unwrap();
    let readers: Vec<_> = (0..3).map(|_| context.new_stream().unwrap()).collect();
    let mut arena = Arena::device(&own, 16 << 20).unwrap();
    reads_then_write(&readers, &own, &mut arena);
}

/// More streams than an arena tells apart (32): reads on the last of 40
/// streams and a write there are ordered like any other.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn uses_on_more_streams_than_the_table_holds_are_ordered() {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let own = context.new_stream().unwrap();
    let streams: Vec<_> = (0..40).map(|_| context.new_stream().unwrap()).collect();
    let mut arena = Arena::device(&own, 16 << 20).unwrap();
    // Fill the table with one short use on each stream.
    let mut touched = arena.alloc_zeros::<u32>(1).unwrap();
    for s in &streams {
        let mut view = arena.view_mut(&mut touched, .., s).unwrap();
        s.memset_zeros(&mut view).unwrap();
    }
    reads_then_write(&streams[36..], &own, &mut arena);
    // A slow write on a stream past the table, then a download on the
    // arena's stream: it waits for the write.
    let module = module(&own, SLOW);
    let fill = module.load_function("slow_fill").unwrap();
    let mut a = arena.alloc_zeros::<u32>(N).unwrap();
    let last = &streams[39];
    {
        let mut view = arena.view_mut(&mut a, .., last).unwrap();
        let (n, value) = (N as u64, 77u32);
        let mut launch = last.launch_builder(&fill);
        launch.arg(&mut view).arg(&n).arg(&value).arg(&SPIN_CYCLES);
        // SAFETY: `slow_fill` writes elements [0, n) of the view.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    let back = arena.to_vec(&a).unwrap();
    for (i, v) in back.iter().enumerate() {
        assert_eq!(*v, 77 + i as u32, "element {i}");
    }
}
