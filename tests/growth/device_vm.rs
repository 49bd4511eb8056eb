//! `CudaVm` on a real GPU: chunks mapped onto a fixed range of device
//! addresses, kernels over memory mapped before and after growth, memory
//! given back by trimming, and the driver's refusals as typed errors.

use std::sync::Arc;

use gpu_aligned::backend::cuda::cudarc::driver::{
    result, sys, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
use gpu_aligned::backend::cuda::{CudaError, CudaVm};

const ADD: &str = r#"
extern "C" __global__ void add(unsigned* p, unsigned long long n, unsigned v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += v;
}
"#;

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, CudaFunction) {
    let ctx = CudaContext::new(0).expect("a CUDA GPU");
    let stream = ctx.default_stream();
    let ptx = compile_ptx(ADD).expect("NVRTC");
    let add = ctx.load_module(ptx).unwrap().load_function("add").unwrap();
    (ctx, stream, add)
}

fn free_device_memory(ctx: &CudaContext) -> usize {
    ctx.mem_get_info().unwrap().0
}

fn write(address: u64, values: &[u32]) {
    // SAFETY: the tests only pass ranges mapped by a live `CudaVm`.
    unsafe { result::memcpy_htod_sync(address, values) }.unwrap();
}

fn read(address: u64, len: usize) -> Vec<u32> {
    let mut out = vec![0u32; len];
    // SAFETY: as in `write`.
    unsafe { result::memcpy_dtoh_sync(&mut out, address) }.unwrap();
    out
}

fn launch_add(stream: &CudaStream, add: &CudaFunction, address: u64, n: u64, v: u32) {
    let mut launch = stream.launch_builder(add);
    launch.arg(&address).arg(&n).arg(&v);
    let cfg = LaunchConfig::for_num_elems(u32::try_from(n).unwrap());
    // SAFETY: `add` touches `n` u32s from `address`, all mapped.
    unsafe { launch.launch(cfg) }.unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn grows_to_8_gib_without_moving_and_trims_back() {
    let (ctx, stream, add) = setup();
    assert!(CudaVm::supported(&ctx).unwrap());
    let chunk = CudaVm::granularity(&ctx).unwrap();
    let mut vm = CudaVm::reserve(&ctx, None, chunk).unwrap();
    vm.grow_to(1).unwrap();
    let base = vm.base_address();
    let first: Vec<u32> = (0..1024).collect();
    write(base, &first);

    let free_before = free_device_memory(&ctx);
    let target = 8usize << 30;
    let mut steps = 0;
    while vm.mapped() < target {
        vm.grow_to(vm.mapped() + 64 * chunk).unwrap();
        assert_eq!(vm.base_address(), base);
        steps += 1;
    }
    assert!(steps >= 64);
    let free_grown = free_device_memory(&ctx);
    assert!(
        free_before - free_grown >= target - 2 * chunk,
        "free memory went from {free_before} to {free_grown}"
    );

    // A kernel over the first array (mapped before growth) and one over the
    // last chunk (mapped by the last step).
    let last = base + (vm.mapped() - chunk) as u64;
    let fresh: Vec<u32> = (0..1024).map(|i| i * 3).collect();
    write(last, &fresh);
    launch_add(&stream, &add, base, 1024, 10);
    launch_add(&stream, &add, last, 1024, 20);
    stream.synchronize().unwrap();
    assert_eq!(read(base, 1024), (10..1034).collect::<Vec<u32>>());
    assert_eq!(
        read(last, 1024),
        (0..1024).map(|i| i * 3 + 20).collect::<Vec<u32>>()
    );

    // A kernel still running when trimming starts: trim waits for it.
    launch_add(&stream, &add, last, 1024, 1);
    vm.shrink_to(chunk).unwrap();
    assert_eq!(vm.mapped(), chunk);
    assert_eq!(vm.base_address(), base);
    let free_trimmed = free_device_memory(&ctx);
    assert!(
        free_trimmed >= free_grown + target - 2 * chunk,
        "trimming gave back {} bytes",
        free_trimmed.saturating_sub(free_grown)
    );
    assert_eq!(read(base, 1024), (10..1034).collect::<Vec<u32>>());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn growth_past_the_reservation_is_refused_and_the_buffer_stays_usable() {
    let (ctx, stream, add) = setup();
    let chunk = CudaVm::granularity(&ctx).unwrap();
    let mut vm = CudaVm::reserve(&ctx, Some(4 * chunk), chunk).unwrap();
    vm.grow_to(2 * chunk).unwrap();
    write(vm.base_address(), &[7; 256]);
    assert_eq!(
        vm.grow_to(4 * chunk + 1),
        Err(CudaError::BeyondReservation {
            len: 4 * chunk + 1,
            reserved: 4 * chunk
        })
    );
    assert_eq!(vm.mapped(), 2 * chunk);
    vm.grow_to(4 * chunk).unwrap();
    launch_add(&stream, &add, vm.base_address(), 256, 1);
    stream.synchronize().unwrap();
    assert_eq!(read(vm.base_address(), 256), vec![8; 256]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn running_out_of_device_memory_is_a_typed_error_and_rolls_back() {
    let (ctx, stream, add) = setup();
    let granularity = CudaVm::granularity(&ctx).unwrap();
    let total = ctx.total_mem().unwrap();
    // 1 GiB chunks keep the number of driver calls small.
    let chunk = (1usize << 30).div_ceil(granularity) * granularity;
    let mut vm = CudaVm::reserve(&ctx, Some(2 * total), chunk).unwrap();
    vm.grow_to(chunk).unwrap();
    write(vm.base_address(), &[1; 64]);
    let free_before = free_device_memory(&ctx);
    match vm.grow_to(total + chunk) {
        Err(CudaError::Driver { op, error }) => {
            assert_eq!(op, "cuMemCreate");
            assert_eq!(error.0, sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        }
        other => panic!("expected the driver to run out of memory, got {other:?}"),
    }
    assert_eq!(vm.mapped(), chunk);
    let free_after = free_device_memory(&ctx);
    assert!(
        free_after + chunk >= free_before,
        "{free_before} -> {free_after}"
    );
    launch_add(&stream, &add, vm.base_address(), 64, 1);
    stream.synchronize().unwrap();
    assert_eq!(read(vm.base_address(), 64), vec![2; 64]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_chunk_off_the_granularity_is_refused() {
    let (ctx, _, _) = setup();
    let granularity = CudaVm::granularity(&ctx).unwrap();
    assert_eq!(
        CudaVm::reserve(&ctx, Some(1 << 30), granularity + 4096).unwrap_err(),
        CudaError::ChunkNotMultiple {
            chunk: granularity + 4096,
            granularity
        }
    );
    assert_eq!(
        CudaVm::reserve(&ctx, Some(1 << 30), 0).unwrap_err(),
        CudaError::ZeroLength
    );
}
