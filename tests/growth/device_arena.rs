//! Growing device arenas on a real GPU: the first array's device pointer
//! kept from one chunk to 8 GiB, kernels over arrays from before and after
//! growth, `trim` giving device memory back, and the maximum refused with a
//! typed error.

use crate::support::GrowingArena;
use gpu_aligned::arena::ArenaOptions;
use std::sync::Arc;

use crate::support::address_of;
use gpu_aligned::arena::{Arena, ArenaError, ArenaSlice, GrowthError, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
use gpu_aligned::backend::cuda::CudaBackend;
use gpu_aligned::backend::MoveBytes;

const ADD: &str = r#"
extern "C" __global__ void add(unsigned* p, unsigned long long n, unsigned v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}
"#;

fn stream() -> Arc<CudaStream> {
    CudaContext::new(0).expect("a CUDA GPU").default_stream()
}

fn kernel(stream: &Arc<CudaStream>) -> CudaFunction {
    let ptx = compile_ptx(ADD).expect("NVRTC");
    let module = stream.context().load_module(ptx).unwrap();
    module.load_function("add").unwrap()
}

fn add(
    arena: &Arena<CudaBackend>,
    kernel: &CudaFunction,
    array: &mut ArenaSlice<u32, CudaBackend>,
    v: u32,
) {
    let stream = Arc::clone(arena.backend().stream());
    let n = array.len() as u64;
    let mut view = arena.view_mut(array, .., &stream).unwrap();
    let mut launch = stream.launch_builder(kernel);
    launch.arg(&mut view).arg(&n).arg(&v);
    let cfg = LaunchConfig::for_num_elems(u32::try_from(n).unwrap());
    // SAFETY: `add` touches the view's `n` elements.
    unsafe { launch.launch(cfg) }.unwrap();
}

fn free_device_memory(stream: &CudaStream) -> u64 {
    stream.context().mem_get_info().unwrap().0 as u64
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn grows_from_one_chunk_to_8_gib_without_moving() {
    let stream = stream();
    let add_kernel = kernel(&stream);
    let mut arena = ArenaOptions::new()
        .growing_device(&stream, GrowthPolicy::up_to(10 << 30))
        .unwrap();
    assert!(arena.growth().grows());
    assert_eq!(arena.capacity(), 2 << 20);
    let mut first = arena.alloc::<u32>(1 << 16).unwrap();
    let values: Vec<u32> = (0..1 << 16).collect();
    arena.write(&mut first, .., &values).unwrap();
    let at = address_of(&arena, &first).unwrap();
    let free_before = free_device_memory(&stream);

    let mut arrays = Vec::new();
    while arena.capacity() < 8 << 30 {
        // 48 MiB plus an odd tail: growth rarely ends on a chunk boundary.
        let array = arena
            .alloc::<u32>((12 << 20) + 3 * arrays.len() + 1)
            .unwrap();
        assert_eq!(address_of(&arena, &first).unwrap(), at);
        arrays.push(array);
    }
    assert!(arrays.len() >= 150, "{} allocations", arrays.len());
    // Under an NVTX tool (compute-sanitizer) the arena is one allocation of
    // its whole maximum, which the tool can watch: growing takes no more
    // device memory, and trimming gives none back.
    let watched = gpu_aligned::sanitizer::tool_attached();
    let taken = free_before.saturating_sub(free_device_memory(&stream));
    match watched {
        true => assert!(taken < 64 << 20, "took {taken} bytes under a tool"),
        false => assert!(taken >= (8 << 30) - (64 << 20), "took {taken} bytes"),
    }

    // Kernels over the first array and over the last one.
    let mut last = arrays.pop().unwrap();
    let last_len = last.len();
    arena.write(&mut last, .., &vec![7; last_len]).unwrap();
    add(&arena, &add_kernel, &mut first, 10);
    add(&arena, &add_kernel, &mut last, 20);
    let expected: Vec<u32> = (10..(1 << 16) + 10).collect();
    assert_eq!(arena.to_vec(&first).unwrap(), expected);
    assert!(arena.to_vec(&last).unwrap().iter().all(|&v| v == 27));

    // Free everything after `first` and trim: the memory goes back.
    let before_trim = free_device_memory(&stream);
    arena.free(last).unwrap();
    for array in arrays {
        arena.free(array).unwrap();
    }
    let given_back = arena.trim().unwrap();
    assert!(
        given_back >= (8 << 30) - (4 << 20),
        "gave back {given_back}"
    );
    let after_trim = free_device_memory(&stream);
    let expected_back = if watched { 0 } else { given_back as u64 };
    assert!(
        after_trim + (64 << 20) >= before_trim + expected_back,
        "{before_trim} -> {after_trim}"
    );
    assert_eq!(address_of(&arena, &first).unwrap(), at);
    assert_eq!(arena.to_vec(&first).unwrap(), expected);
    arena.free(first).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn growth_past_the_maximum_is_refused_and_the_arena_stays_usable() {
    let stream = stream();
    let add_kernel = kernel(&stream);
    let max = 64 << 20;
    let mut arena = ArenaOptions::new()
        .growing_device(&stream, GrowthPolicy::up_to(max))
        .unwrap();
    // Sized for exact fits: no red zones even under compute-sanitizer.
    arena.set_red_zones(false);
    let mut a = arena.alloc::<u32>(10 << 20).unwrap(); // 40 MiB
    match arena.alloc::<u32>(10 << 20) {
        Err(ArenaError::Growth(GrowthError::AtMaximum { max: at, .. })) => assert_eq!(at, max),
        other => panic!("expected the maximum to refuse, got {other:?}"),
    }
    assert_eq!(arena.capacity(), 40 << 20);
    arena.write(&mut a, .., &vec![1; 10 << 20]).unwrap();
    add(&arena, &add_kernel, &mut a, 1);
    assert!(arena.to_vec(&a).unwrap().iter().all(|&v| v == 2));
    let b = arena.alloc::<u32>(6 << 20).unwrap(); // 24 MiB: up to the maximum
    assert_eq!(arena.capacity(), max);
    arena.free(b).unwrap();
    arena.free(a).unwrap();
}
