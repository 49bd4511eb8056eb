//! Device memory that grows without moving, [`CudaVm`]: the memory of a
//! growing device arena.

use std::sync::Arc;
use std::vec::Vec;

use core::fmt;

use crate::align::{offset_of, round_up};

use cudarc::driver::{sys, CudaContext};

use super::CudaError;

fn check(op: &'static str, r: sys::CUresult) -> Result<(), CudaError> {
    r.result().map_err(|error| CudaError::Driver { op, error })
}

fn bind(ctx: &CudaContext) -> Result<(), CudaError> {
    ctx.bind_to_thread().map_err(|error| CudaError::Driver {
        op: "cuCtxSetCurrent",
        error,
    })
}

// `CUmemLocation` is `{ type, id }` in every CUDA version, but the bindings
// name `id` differently (a field up to CUDA 13.1, a union member from 13.2),
// and the CUDA version is the user's choice: so `id` is written by offset.
const _: () = assert!(core::mem::size_of::<sys::CUmemLocation>() == 8);

fn device_location(ctx: &CudaContext) -> sys::CUmemLocation {
    // SAFETY: `CUmemLocation` is plain C data (an enum whose 0 is
    // `CU_MEM_LOCATION_TYPE_INVALID`, then an `int` or a union led by one),
    // so all zeros is a valid value.
    let mut location: sys::CUmemLocation = unsafe { core::mem::zeroed() };
    location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let id: *mut core::ffi::c_int = core::ptr::addr_of_mut!(location)
        .cast::<u8>()
        .wrapping_add(4)
        .cast();
    // SAFETY: `id` (or the union that starts with it) is the 4-byte-aligned
    // `int` after the 4-byte `type` in the 8-byte struct (asserted above).
    unsafe { id.write(ctx.cu_device()) };
    location
}

/// Pinned device memory on the context's device, with no shareable handle.
fn allocation_props(ctx: &CudaContext) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        location: device_location(ctx),
        win32HandleMetaData: core::ptr::null_mut(),
        allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

/// Device memory that grows without moving: a range of device addresses
/// reserved up front, onto whose end physical chunks are mapped as needed
/// and unmapped again ([`CudaVm::shrink_to`]), as PyTorch's expandable
/// segments do.
///
/// # Pitfalls
///
/// - **`cuMemUnmap` does not synchronise**, so [`CudaVm::shrink_to`] and
///   `drop` wait for all work of the context first.
/// - **No legacy IPC**, and only the buffer's own device has access.
/// - **New chunks are not zeroed.**
/// - **Not every device has it** ([`CudaVm::supported`]).
pub(crate) struct CudaVm {
    ctx: Arc<CudaContext>,
    base: sys::CUdeviceptr,
    reserved: usize,
    chunk: usize,
    /// One physical allocation per mapped chunk; chunk `i` is mapped at
    /// `base + i * chunk`.
    chunks: Vec<sys::CUmemGenericAllocationHandle>,
}

impl CudaVm {
    /// Whether the context's device supports virtual memory management.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] if the attribute cannot be read.
    pub(crate) fn supported(ctx: &CudaContext) -> Result<bool, CudaError> {
        let attribute =
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED;
        let value = ctx
            .attribute(attribute)
            .map_err(|error| CudaError::Driver {
                op: "cuDeviceGetAttribute",
                error,
            })?;
        Ok(value != 0)
    }

    /// The device's minimum allocation granularity for pinned device memory:
    /// every chunk size must be a multiple of it (2 MiB on an H100).
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] if the driver cannot say.
    pub(crate) fn granularity(ctx: &CudaContext) -> Result<usize, CudaError> {
        bind(ctx)?;
        let props = allocation_props(ctx);
        let mut granularity = 0usize;
        // SAFETY: both pointers are to live locals of the right types.
        let r = unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut granularity,
                &props,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        };
        check("cuMemGetAllocationGranularity", r)?;
        Ok(granularity)
    }

    /// Reserves `reserve` bytes of device addresses (rounded up to whole
    /// chunks; `None`: the device's total memory), mapping nothing yet;
    /// `chunk` must be a multiple of [`granularity`](CudaVm::granularity).
    ///
    /// # Errors
    ///
    /// [`CudaError::VmUnsupported`] where the device lacks virtual memory
    /// management, [`CudaError::ZeroLength`],
    /// [`CudaError::ChunkNotMultiple`], [`CudaError::TooLarge`], or
    /// [`CudaError::Driver`] when the driver refuses.
    pub(crate) fn reserve(
        ctx: &Arc<CudaContext>,
        reserve: Option<usize>,
        chunk: usize,
    ) -> Result<CudaVm, CudaError> {
        if !CudaVm::supported(ctx)? {
            return Err(CudaError::VmUnsupported);
        }
        let granularity = CudaVm::granularity(ctx)?;
        if chunk == 0 {
            return Err(CudaError::ZeroLength);
        }
        if granularity == 0 || chunk % granularity != 0 {
            return Err(CudaError::ChunkNotMultiple { chunk, granularity });
        }
        let len = match reserve {
            Some(len) => len,
            None => ctx.total_mem().map_err(|error| CudaError::Driver {
                op: "cuDeviceTotalMem",
                error,
            })?,
        };
        if len == 0 {
            return Err(CudaError::ZeroLength);
        }
        let reserved = round_up(len, chunk).ok_or(CudaError::TooLarge { len })?;
        let size = reserved;
        let mut base: sys::CUdeviceptr = 0;
        // SAFETY: `base` is a live local; a fresh reservation at an address
        // the driver picks (hint 0) touches nothing that exists. Alignment 0
        // asks for the default (the allocation granularity).
        let r = unsafe { sys::cuMemAddressReserve(&mut base, size, 0, 0, 0) };
        check("cuMemAddressReserve", r)?;
        Ok(CudaVm {
            ctx: Arc::clone(ctx),
            base,
            reserved,
            chunk,
            chunks: Vec::new(),
        })
    }

    /// Maps chunks onto the end of the mapped range until at least `len`
    /// bytes are mapped, and grants the context's device read and write
    /// access to them. Mapped bytes keep their contents and addresses; the
    /// new ones hold unspecified values. Asking for less than is mapped does
    /// nothing.
    ///
    /// # Errors
    ///
    /// [`CudaError::BeyondReservation`] past the end of the reservation;
    /// [`CudaError::Driver`] when the driver refuses (out of device
    /// memory, say). Either way nothing changes: chunks mapped by a failed
    /// call are unmapped and freed again.
    pub(crate) fn grow_to(&mut self, len: usize) -> Result<(), CudaError> {
        let beyond = CudaError::BeyondReservation {
            len,
            reserved: self.reserved,
        };
        let target = round_up(len, self.chunk)
            .filter(|&t| t <= self.reserved)
            .ok_or(beyond)?;
        let have = self.mapped();
        if target <= have {
            return Ok(());
        }
        bind(&self.ctx)?;
        let first_new = self.chunks.len();
        let result = self.map_chunks((target - have) / self.chunk);
        let result = result.and_then(|()| self.grant_access(have, target - have));
        if result.is_err() {
            // Undo exactly what this call added; the rollback's own errors
            // would only hide the one that matters.
            let _ = self.unmap_chunks_from(first_new);
        }
        result
    }

    /// Creates and maps `count` chunks after the last mapped one, pushing
    /// each handle as soon as it is mapped (so a rollback finds it).
    fn map_chunks(&mut self, count: usize) -> Result<(), CudaError> {
        let props = allocation_props(&self.ctx);
        let size = self.chunk;
        for _ in 0..count {
            let at = self.base + offset_of(self.mapped());
            let mut handle: sys::CUmemGenericAllocationHandle = 0;
            // SAFETY: `handle` and `props` are live locals of the right types.
            let r = unsafe { sys::cuMemCreate(&mut handle, size, &props, 0) };
            check("cuMemCreate", r)?;
            // SAFETY: `at .. at + size` lies inside our reservation (the
            // caller checked the target against it) and is not mapped yet;
            // `handle` is a fresh allocation of exactly `size` bytes.
            let r = unsafe { sys::cuMemMap(at, size, 0, handle, 0) };
            if let Err(e) = check("cuMemMap", r) {
                // SAFETY: `handle` is ours, mapped nowhere, released once.
                unsafe { sys::cuMemRelease(handle) };
                return Err(e);
            }
            self.chunks.push(handle);
        }
        Ok(())
    }

    fn grant_access(&self, offset: usize, len: usize) -> Result<(), CudaError> {
        let desc = sys::CUmemAccessDesc {
            location: device_location(&self.ctx),
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the range is fully mapped by chunks of this buffer (the
        // caller just mapped it); `desc` is a live local, one element.
        let r = unsafe { sys::cuMemSetAccess(self.base + offset_of(offset), len, &desc, 1) };
        check("cuMemSetAccess", r)
    }

    /// Unmaps and frees every chunk from index `first` on. The caller makes
    /// sure no queued device work uses them.
    fn unmap_chunks_from(&mut self, first: usize) -> Result<(), CudaError> {
        let mut result = Ok(());
        while self.chunks.len() > first {
            let index = self.chunks.len() - 1;
            let at = self.base + offset_of(index * self.chunk);
            // SAFETY: chunk `index` is mapped at `at` with exactly
            // `self.chunk` bytes; the caller promises no work uses it.
            let r = unsafe { sys::cuMemUnmap(at, self.chunk) };
            if let Err(e) = check("cuMemUnmap", r) {
                // Still mapped: keep the handle so drop can retry.
                result = result.and(Err(e));
                break;
            }
            let handle = self.chunks.pop().unwrap_or_default();
            // SAFETY: `handle` is ours and now mapped nowhere; released once.
            let r = unsafe { sys::cuMemRelease(handle) };
            result = result.and(check("cuMemRelease", r));
        }
        result
    }

    /// Waits for all work queued in the context, then unmaps and frees the
    /// chunks lying wholly past the first `len` bytes (rounded up to whole
    /// chunks), giving their memory back to the device. Asking for more than
    /// is mapped does nothing.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] if waiting or unmapping fails; chunks it
    /// could not unmap stay mapped.
    pub(crate) fn shrink_to(&mut self, len: usize) -> Result<(), CudaError> {
        let keep = round_up(len, self.chunk).unwrap_or(usize::MAX) / self.chunk;
        if keep >= self.chunks.len() {
            return Ok(());
        }
        // `cuMemUnmap` does not wait for work using the memory.
        self.ctx.synchronize().map_err(|error| CudaError::Driver {
            op: "cuCtxSynchronize",
            error,
        })?;
        self.unmap_chunks_from(keep)
    }

    /// Bytes mapped, from the base (a multiple of the chunk size).
    pub(crate) fn mapped(&self) -> usize {
        self.chunks.len() * self.chunk
    }

    /// Bytes of device addresses reserved (a multiple of the chunk size):
    /// the most the buffer can grow to.
    pub(crate) fn reserved(&self) -> usize {
        self.reserved
    }

    /// The device address of the first byte, fixed for the buffer's life
    /// (a multiple of the allocation granularity).
    pub(crate) fn base_address(&self) -> u64 {
        self.base
    }
}

impl Drop for CudaVm {
    fn drop(&mut self) {
        // Errors cannot be reported from `drop`; a context already lost to a
        // fault fails every call here, and its memory goes with it.
        if bind(&self.ctx).is_err() {
            return;
        }
        // `cuMemUnmap` does not wait for work using the memory.
        let _ = self.ctx.synchronize();
        let _ = self.unmap_chunks_from(0);
        if self.chunks.is_empty() {
            // SAFETY: `base .. base + reserved` is our reservation, now with
            // nothing mapped in it, freed once.
            unsafe { sys::cuMemAddressFree(self.base, self.reserved) };
        }
    }
}

impl fmt::Debug for CudaVm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CudaVm")
            .field("device", &self.ctx.ordinal())
            .field("base", &format_args!("{:#x}", self.base))
            .field("reserved", &self.reserved)
            .field("mapped", &self.mapped())
            .field("chunk", &self.chunk)
            .finish()
    }
}

/// On a GPU (`cargo test -p gpu-aligned --features cuda --lib --
/// --include-ignored`): chunks mapped onto a fixed range of device
/// addresses, kernels over memory mapped before and after growth, memory
/// given back by shrinking, and the driver's refusals as typed errors.
#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::driver::{result, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
    use cudarc::nvrtc::compile_ptx;
    use std::vec;

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
    fn a_reservation_maps_whole_chunks_at_an_aligned_base() {
        let (ctx, _, _) = setup();
        let granularity = CudaVm::granularity(&ctx).unwrap();
        assert!(granularity.is_power_of_two());
        let whole = CudaVm::reserve(&ctx, None, granularity).unwrap();
        assert!(whole.reserved >= ctx.total_mem().unwrap());
        assert_eq!(whole.base_address() % granularity as u64, 0);
        drop(whole);
        let chunk = 2 * granularity;
        let mut vm = CudaVm::reserve(&ctx, Some(16 * chunk - 1), chunk).unwrap();
        assert_eq!(
            (vm.reserved(), vm.mapped(), vm.chunk),
            (16 * chunk, 0, chunk)
        );
        vm.grow_to(1).unwrap();
        assert_eq!(vm.mapped(), chunk);
        vm.grow_to(chunk + 1).unwrap();
        assert_eq!(vm.mapped(), 2 * chunk);
        vm.grow_to(16 * chunk).unwrap();
        vm.shrink_to(1).unwrap();
        assert_eq!(vm.mapped(), chunk);
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU"]
    fn grows_to_8_gib_without_moving_and_shrinks_back() {
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

        // A kernel over the first array (mapped before growth) and one over
        // the last chunk (mapped by the last step).
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

        // A kernel still running when shrinking starts: it waits for it.
        launch_add(&stream, &add, last, 1024, 1);
        vm.shrink_to(chunk).unwrap();
        assert_eq!(vm.mapped(), chunk);
        assert_eq!(vm.base_address(), base);
        let free_shrunk = free_device_memory(&ctx);
        assert!(
            free_shrunk >= free_grown + target - 2 * chunk,
            "shrinking gave back {} bytes",
            free_shrunk.saturating_sub(free_grown)
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
}
