//! Arrays of no elements on a device, and plans under compute-sanitizer.
//! Zero-length device arrays are made, uploaded, downloaded, handed to a
//! kernel (address = the arena's base, length 0), captured and freed; an
//! arena `device_for` made carves its plan with red zones on. Meant to be
//! run under the sanitizer too:
//!
//! ```text
//! compute-sanitizer --tool memcheck target/debug/deps/cuda-<hash> --include-ignored empty::
//! ```

use gpu_aligned::arena::{Arena, ArenaOptions, Plan};
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, DeviceSlice, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::Buffer;
use gpu_aligned::vector::float4;

use crate::support::address_of;
use crate::types::{module, stream};

const KERNELS: &str = r#"
template <typename T> struct array_arg { T* ptr; unsigned long long len; };
// Records the length it was handed, and touches every element it holds.
extern "C" __global__ void touch(array_arg<float> a, unsigned long long* seen) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *seen = a.len;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < a.len;
         i += (unsigned long long)gridDim.x * blockDim.x)
        a.ptr[i] += 1.0f;
}
extern "C" __global__ void fill(float* a, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        a[i] = (float)i;
}
"#;

const ONE_BLOCK: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (128, 1, 1),
    shared_mem_bytes: 0,
};

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zero_length_device_arrays_upload_download_launch_and_free() {
    let stream = stream();
    let kernels = module(&stream, KERNELS);
    let touch = kernels.load_function("touch").unwrap();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let kept = arena.alloc_from(&[1.0f32, 2.0, 3.0]).unwrap();
    let before = arena.allocator().stats();
    let mut a = arena.alloc::<f32>(0).unwrap();
    let b = arena.alloc_zeros::<float4>(0).unwrap();
    let mut c = arena.alloc_from::<f32>(&[]).unwrap();
    assert!(a.is_empty() && b.is_empty() && c.is_empty());
    assert_eq!(arena.allocator().stats(), before);
    // Upload and download nothing.
    arena.write(&mut a, .., &[]).unwrap();
    assert!(arena.to_vec(&b).unwrap().is_empty());
    arena.copy(&a, &mut c).unwrap();
    arena.zero(&mut c).unwrap();
    // Views of no elements, at the buffer's base.
    let base = arena.backend().base_address();
    assert_eq!(arena.view(&a, .., &stream).unwrap().len(), 0);
    assert_eq!(arena.view_mut(&mut c, .., &stream).unwrap().len(), 0);
    assert_eq!(address_of(&arena, &a).unwrap(), base);
    // A kernel handed one sees length 0 and touches nothing.
    let mut seen = arena.alloc_from(&[u64::MAX]).unwrap();
    {
        let arg = arena.view_mut(&mut a, .., &stream).unwrap().checked();
        assert_eq!((arg.address(), arg.len()), (base, 0));
        let mut out = arena.view_mut(&mut seen, .., &stream).unwrap();
        let mut launch = stream.launch_builder(&touch);
        launch.arg(&arg).arg(&mut out);
        // SAFETY: `touch` reads `a.len` elements of `a` (none) and writes
        // one `unsigned long long` of `seen`, which holds one.
        unsafe { launch.launch(ONE_BLOCK) }.unwrap();
    }
    assert_eq!(arena.to_vec(&seen).unwrap(), [0]);
    assert_eq!(arena.to_vec(&kept).unwrap(), [1.0, 2.0, 3.0]);
    // An empty pitched array and a read-only view of an empty array.
    let image = arena.alloc_pitched::<f32>(0, 4).unwrap();
    assert_eq!(arena.view(&image, .., &stream).unwrap().len(), 0);
    assert_eq!(arena.view(&b, .., &stream).unwrap().read_only().len(), 0);
    // Freed, dropped: nothing changes.
    arena.free(a).unwrap();
    drop((b, c, image));
    arena.backend().synchronize().unwrap();
    assert_eq!(arena.live(), 2);
    assert_eq!(arena.to_vec(&kept).unwrap(), [1.0, 2.0, 3.0]);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn zero_length_arrays_inside_a_capture() {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    // Two streams: events are tracked, as they are where captures matter.
    let stream = context.new_stream().unwrap();
    let _other = context.new_stream().unwrap();
    let kernels = module(&stream, KERNELS);
    let touch = kernels.load_function("touch").unwrap();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut outside = arena.alloc::<f32>(0).unwrap();
    // Used before the capture: its own events were recorded outside it.
    drop(arena.view_mut(&mut outside, .., &stream).unwrap().checked());
    let mut seen = arena.alloc_zeros::<u64>(1).unwrap();
    let (graph, ()) = arena
        .capture(|arena| {
            let mut inside = arena.alloc::<f32>(0)?;
            for empty in [&mut outside, &mut inside] {
                let arg = arena.view_mut(empty, .., &stream)?.checked();
                let mut out = arena.view_mut(&mut seen, .., &stream)?;
                let mut launch = stream.launch_builder(&touch);
                launch.arg(&arg).arg(&mut out);
                // SAFETY: as in the test above.
                unsafe { launch.launch(ONE_BLOCK) }.unwrap();
            }
            Ok(())
        })
        .unwrap();
    arena.write(&mut seen, .., &[7]).unwrap();
    graph.launch().unwrap();
    assert_eq!(arena.to_vec(&seen).unwrap(), [0]);
    // The empty array used inside the capture is still usable outside.
    assert_eq!(arena.view(&outside, .., &stream).unwrap().len(), 0);
    drop(graph);
    drop(outside);
    arena.backend().synchronize().unwrap();
}

/// An arena sized by `device_for` holds its plan's red zones when they are
/// on: under compute-sanitizer (where they turn on by themselves) the plan
/// fits and a kernel filling every array reports no error.
#[test]
#[ignore = "needs an NVIDIA GPU; meant to be run under compute-sanitizer too"]
fn an_arena_sized_for_a_plan_carves_it_under_the_sanitizer() {
    let stream = stream();
    let kernels = module(&stream, KERNELS);
    let fill = kernels.load_function("fill").unwrap();
    let mut plan = Plan::new();
    let lens = [1000usize, 1, 4093, 0, 256];
    let keys: Vec<_> = lens.iter().map(|&len| plan.array::<f32>(len)).collect();
    let image = plan.pitched::<float4>(33, 5);
    let mut arena = ArenaOptions::new().device_for(&stream, &plan).unwrap();
    println!("red zones: {}", arena.red_zones());
    let mut carving = arena.carve(&plan).unwrap();
    let mut arrays: Vec<_> = keys
        .into_iter()
        .map(|key| carving.take(key).unwrap())
        .collect();
    let image = carving.take_pitched(image).unwrap();
    for array in &mut arrays {
        let n = array.len() as u64;
        let mut view = arena.view_mut(array, .., &stream).unwrap();
        let mut launch = stream.launch_builder(&fill);
        launch.arg(&mut view).arg(&n);
        // SAFETY: `fill` writes elements [0, n) of an array of n.
        unsafe { launch.launch(ONE_BLOCK) }.unwrap();
    }
    for (array, &len) in arrays.iter().zip(&lens) {
        let expected: Vec<f32> = (0..len).map(|i| i as f32).collect();
        assert_eq!(arena.to_vec(array).unwrap(), expected);
    }
    if arena.red_zones() {
        let map = arena.regions();
        assert_eq!(
            map.regions().len(),
            lens.iter().filter(|&&n| n > 0).count() + 1
        );
        assert!(map.regions().iter().all(|region| region.red_zone > 0));
    }
    drop((arrays, image));
    arena.backend().synchronize().unwrap();
}
