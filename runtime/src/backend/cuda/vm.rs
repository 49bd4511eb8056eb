//! Device memory that grows without moving, [`CudaVm`]: the memory of a growing device arena.

#[cfg(unix)]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
#[cfg(feature = "nccl-bindings")]
use std::sync::{Mutex, PoisonError, Weak};
use std::vec::Vec;

use core::fmt;

use crate::align::{offset_of, round_up};

use cudarc::driver::{sys, CudaContext};

use super::CudaError;

fn check(op: &'static str, r: sys::CUresult) -> Result<(), CudaError> {
    r.result().map_err(CudaError::driver(op))
}

fn bind(ctx: &CudaContext) -> Result<(), CudaError> {
    let bound = ctx.bind_to_thread();
    bound.map_err(CudaError::driver("cuCtxSetCurrent"))
}

// `CUmemLocation` is `{ type, id }` in every CUDA version, but the bindings
// name `id` differently (a field up to CUDA 13.1, a union member from 13.2),
// and the CUDA version is the user's choice: so `id` is written by offset.
const _: () = assert!(core::mem::size_of::<sys::CUmemLocation>() == 8);

fn device_location(device: sys::CUdevice) -> sys::CUmemLocation {
    // SAFETY: `CUmemLocation` is plain C data (an enum whose 0 is `CU_MEM_LOCATION_TYPE_INVALID`,
    // then an `int` or a union led by one), so all zeros is a valid value.
    let mut location: sys::CUmemLocation = unsafe { core::mem::zeroed() };
    location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    let id: *mut core::ffi::c_int = core::ptr::addr_of_mut!(location)
        .cast::<u8>()
        .wrapping_add(4)
        .cast();
    // SAFETY: `id` (or the union that starts with it) is the 4-byte-aligned
    // `int` after the 4-byte `type` in the 8-byte struct (asserted above).
    unsafe { id.write(device) };
    location
}

const POSIX_FD: sys::CUmemAllocationHandleType =
    sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

/// Who else may use a [`CudaVm`]'s memory: other processes (by POSIX file-descriptor handles;
/// `cuMemCreate` refused fabric ones where tested), devices by ordinal bit (`readers`, `writers`);
/// `read_only`: the own device only reads (an import).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sharing {
    pub(crate) processes: bool,
    pub(crate) readers: u64,
    pub(crate) writers: u64,
    pub(crate) read_only: bool,
}

impl Sharing {
    pub(crate) const NONE: Sharing = Sharing {
        processes: false,
        readers: 0,
        writers: 0,
        read_only: false,
    };

    /// Whether a stream on device `ordinal` may use the memory as `write` says.
    pub(crate) fn grants(&self, ordinal: usize, write: bool) -> bool {
        let bit = 1u64.checked_shl(ordinal as u32).unwrap_or(0);
        bit & (self.writers | if write { 0 } else { self.readers }) != 0
    }
}

/// Pinned device memory on the context's device, exportable as `sharing` says.
fn allocation_props(ctx: &CudaContext, sharing: Sharing) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: match sharing.processes {
            true => POSIX_FD,
            false => sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        },
        location: device_location(ctx.cu_device()),
        win32HandleMetaData: core::ptr::null_mut(),
        allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

/// Device memory that grows without moving: a range of device addresses reserved up front, onto
/// whose end physical allocations are mapped as needed and unmapped again ([`CudaVm::shrink_to`]),
/// as PyTorch's expandable segments do.
///
/// # Pitfalls
///
/// - **`cuMemUnmap` does not synchronise**, so [`CudaVm::shrink_to`] and
///   `drop` wait for all work of the context first.
/// - **No legacy IPC**; other processes and devices get what [`Sharing`]
///   grants, on every chunk mapped later too.
/// - **New chunks are not zeroed.**
/// - **Not every device has it** ([`CudaVm::supported`]).
pub(crate) struct CudaVm {
    ctx: Arc<CudaContext>,
    base: sys::CUdeviceptr,
    reserved: usize,
    chunk: usize,
    /// The mapped allocations, in address order.
    chunks: Vec<Chunk>,
    sharing: Sharing,
    serials: u64,
    /// How many of the first chunks NCCL windows use, and who keeps them mapped until the windows
    /// are gone (`crate::nccl`): neither trimming nor dropping unmaps them while the keeper lives.
    #[cfg(feature = "nccl-bindings")]
    pub(crate) pin: Mutex<(Weak<Kept>, usize)>,
}

/// Buffers dropped while pinned, mapped until their keeper drops them.
#[cfg(feature = "nccl-bindings")]
pub(crate) type Kept = Mutex<Vec<CudaVm>>;

/// One allocation, mapped at `base + offset`; `serial` names it to an
/// importer (a range trimmed and grown again holds a new one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) handle: sys::CUmemGenericAllocationHandle,
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) serial: u64,
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
        let value = ctx.attribute(attribute);
        Ok(value.map_err(CudaError::driver("cuDeviceGetAttribute"))? != 0)
    }

    /// The device's allocation granularity for pinned device memory shared
    /// as `sharing` says (the recommended one for other processes, else the
    /// minimum): every chunk size must be a multiple of it (2 MiB on an H100).
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] if the driver cannot say.
    pub(crate) fn granularity(ctx: &CudaContext, sharing: Sharing) -> Result<usize, CudaError> {
        use sys::CUmemAllocationGranularity_flags::*;
        bind(ctx)?;
        let props = allocation_props(ctx, sharing);
        let mut granularity = 0usize;
        let flag = match sharing.processes {
            true => CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
            false => CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        };
        // SAFETY: both pointers are to live locals of the right types.
        let r = unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, &props, flag) };
        check("cuMemGetAllocationGranularity", r)?;
        Ok(granularity)
    }

    /// Reserves `reserve` bytes of device addresses (rounded up to whole
    /// chunks; `None`: the device's total memory), mapping nothing yet;
    /// `chunk` must be a multiple of [`granularity`](CudaVm::granularity).
    ///
    /// # Errors
    ///
    /// [`CudaError::VmUnsupported`] where the device lacks virtual memory management,
    /// [`CudaError::ZeroLength`], [`CudaError::ChunkNotMultiple`], [`CudaError::TooLarge`], or
    /// [`CudaError::Driver`] when the driver refuses.
    pub(crate) fn reserve(
        ctx: &Arc<CudaContext>,
        reserve: Option<usize>,
        chunk: usize,
        sharing: Sharing,
    ) -> Result<CudaVm, CudaError> {
        if !CudaVm::supported(ctx)? {
            return Err(CudaError::VmUnsupported);
        }
        let granularity = CudaVm::granularity(ctx, sharing)?;
        if granularity == 0 || chunk % granularity != 0 {
            return Err(CudaError::ChunkNotMultiple { chunk, granularity });
        }
        let total = || {
            ctx.total_mem()
                .map_err(CudaError::driver("cuDeviceTotalMem"))
        };
        let len = reserve.map_or_else(total, Ok)?;
        if chunk == 0 || len == 0 {
            return Err(CudaError::ZeroLength);
        }
        let reserved = round_up(len, chunk).ok_or(CudaError::TooLarge { len })?;
        let mut base: sys::CUdeviceptr = 0;
        // SAFETY: `base` is a live local; a fresh reservation at an address
        // the driver picks (hint 0) touches nothing that exists. Alignment 0
        // asks for the default (the allocation granularity).
        let r = unsafe { sys::cuMemAddressReserve(&mut base, reserved, 0, 0, 0) };
        check("cuMemAddressReserve", r)?;
        Ok(CudaVm {
            ctx: Arc::clone(ctx),
            base,
            reserved,
            chunk,
            chunks: Vec::new(),
            sharing,
            serials: 0,
            #[cfg(feature = "nccl-bindings")]
            pin: Default::default(),
        })
    }

    /// Maps one new allocation (one handle: mapping costs per handle) onto the end so that at least
    /// `len` bytes are mapped, with the access [`Sharing`] grants. Mapped bytes keep their contents
    /// and addresses; new ones hold unspecified values. Less than is mapped does nothing.
    ///
    /// # Errors
    ///
    /// [`CudaError::BeyondReservation`] past the reservation; [`CudaError::Driver`] when the driver
    /// refuses (out of memory, say). Either way nothing changes.
    pub(crate) fn grow_to(&mut self, len: usize) -> Result<(), CudaError> {
        let reserved = self.reserved;
        let target = round_up(len, self.chunk).filter(|&t| t <= reserved);
        let target = target.ok_or(CudaError::BeyondReservation { len, reserved })?;
        let have = self.mapped();
        if target <= have {
            return Ok(());
        }
        bind(&self.ctx)?;
        let props = allocation_props(&self.ctx, self.sharing);
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: `handle` and `props` are live locals of the right types.
        let r = unsafe { sys::cuMemCreate(&mut handle, target - have, &props, 0) };
        check("cuMemCreate", r)?;
        self.serials += 1;
        let chunk = Chunk {
            handle,
            offset: have,
            size: target - have,
            serial: self.serials,
        };
        self.map(chunk)
    }

    /// Maps `chunk.handle` (ours: released if this fails) at its offset,
    /// checked by the caller to be reserved and unmapped; grants access.
    fn map(&mut self, chunk: Chunk) -> Result<(), CudaError> {
        let at = self.base + offset_of(chunk.offset);
        // SAFETY: `at .. at + size` is ours and unmapped (the caller
        // checked); the driver refuses a handle of another size.
        let r = unsafe { sys::cuMemMap(at, chunk.size, 0, chunk.handle, 0) };
        if let Err(e) = check("cuMemMap", r) {
            // SAFETY: `handle` is ours, mapped nowhere, released once.
            unsafe { sys::cuMemRelease(chunk.handle) };
            return Err(e);
        }
        let index = self.chunks.partition_point(|c| c.offset < chunk.offset);
        self.chunks.insert(index, chunk);
        let granted = self.grant_access(at, chunk.size);
        if granted.is_err() {
            // The rollback's own errors would only hide the one that matters.
            let _ = self.unmap_where(|c| c.serial == chunk.serial);
        }
        granted
    }

    /// The one place access is granted: the own device (read-only for a
    /// read-only import), then every peer [`Sharing`] names.
    fn grant_access(&self, at: u64, size: usize) -> Result<(), CudaError> {
        use sys::CUmemAccess_flags::*;
        let own = self.ctx.cu_device();
        let desc = |location, write| sys::CUmemAccessDesc {
            location,
            flags: match write {
                true => CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
                false => CU_MEM_ACCESS_FLAGS_PROT_READ,
            },
        };
        let mut descs = std::vec![desc(device_location(own), !self.sharing.read_only)];
        let peers = self.sharing.readers | self.sharing.writers;
        for ordinal in (0..64).filter(|i| peers >> i & 1 == 1) {
            let device = cudarc::driver::result::device::get(ordinal as i32)?;
            if device != own {
                let write = self.sharing.grants(ordinal, true);
                descs.push(desc(device_location(device), write));
            }
        }
        // SAFETY: the range is one chunk this buffer just mapped; `descs`
        // is a live vector of `descs.len()` descriptors.
        let r = unsafe { sys::cuMemSetAccess(at, size, descs.as_ptr(), descs.len()) };
        check("cuMemSetAccess", r)
    }

    /// Unmaps and frees the chunks `unmap` picks, last first. The caller
    /// makes sure no queued device work uses them.
    fn unmap_where(&mut self, unmap: impl Fn(&Chunk) -> bool) -> Result<(), CudaError> {
        let mut result = Ok(());
        for index in (0..self.chunks.len()).rev() {
            let chunk = self.chunks[index];
            if !unmap(&chunk) {
                continue;
            }
            let at = self.base + offset_of(chunk.offset);
            // SAFETY: `chunk` is mapped at `at` with exactly its size; the
            // caller promises no work uses it.
            let r = unsafe { sys::cuMemUnmap(at, chunk.size) };
            if let Err(e) = check("cuMemUnmap", r) {
                // Still mapped: kept so drop can retry.
                result = result.and(Err(e));
                continue;
            }
            self.chunks.remove(index);
            // SAFETY: the handle is ours and now mapped nowhere; released once.
            let r = unsafe { sys::cuMemRelease(chunk.handle) };
            result = result.and(check("cuMemRelease", r));
        }
        result
    }

    /// Waits for all work queued in the context, then unmaps and frees the
    /// allocations lying wholly past the first `len` bytes (rounded up to
    /// whole chunks), giving their memory back to the device.
    ///
    /// # Errors
    ///
    /// [`CudaError::Driver`] if waiting or unmapping fails; chunks it could not unmap stay mapped.
    pub(crate) fn shrink_to(&mut self, len: usize) -> Result<(), CudaError> {
        let keep = round_up(len, self.chunk).unwrap_or(usize::MAX);
        #[cfg(feature = "nccl-bindings")]
        #[cfg(feature = "nccl-bindings")]
        let pinned = self.chunks[..self.pinned().1].last();
        #[cfg(feature = "nccl-bindings")]
        let keep = keep.max(pinned.map_or(0, |c| c.offset + c.size));
        if self.chunks.iter().all(|c| c.offset < keep) {
            return Ok(());
        }
        self.synchronize()?;
        self.unmap_where(|c| c.offset >= keep)
    }

    /// `cuMemUnmap` does not wait for work using the memory: this does.
    fn synchronize(&self) -> Result<(), CudaError> {
        let done = self.ctx.synchronize();
        done.map_err(CudaError::driver("cuCtxSynchronize"))
    }

    /// Who else may use the memory.
    pub(crate) fn sharing(&self) -> Sharing {
        self.sharing
    }

    /// The mapped allocations, in address order.
    #[cfg(feature = "nccl-bindings")]
    pub(crate) fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// The keeper of the first chunks, which NCCL windows use, if it lives, and how many they are.
    #[cfg(feature = "nccl-bindings")]
    pub(crate) fn pinned(&self) -> (Option<Arc<Kept>>, usize) {
        let pin = self.pin.lock().unwrap_or_else(PoisonError::into_inner);
        match pin.0.upgrade() {
            Some(keeper) => (Some(keeper), pin.1.min(self.chunks.len())),
            None => (None, 0),
        }
    }

    /// Bytes mapped from the base.
    pub(crate) fn mapped(&self) -> usize {
        self.chunks.last().map_or(0, |c| c.offset + c.size)
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

/// Other processes' side (see `crate::share`).
#[cfg(unix)]
impl CudaVm {
    /// Each chunk with a new POSIX file descriptor of its allocation.
    pub(crate) fn export(&self) -> Result<Vec<(Chunk, OwnedFd)>, CudaError> {
        if !self.sharing.processes {
            return Err(CudaError::Sharing("not made to share with processes"));
        }
        bind(&self.ctx)?;
        let export = |chunk: &Chunk| {
            let mut fd: core::ffi::c_int = -1;
            // SAFETY: for a POSIX handle the driver writes an `int` where
            // the pointer points: a live local.
            let r = unsafe {
                let to = core::ptr::addr_of_mut!(fd).cast();
                sys::cuMemExportToShareableHandle(to, chunk.handle, POSIX_FD, 0)
            };
            check("cuMemExportToShareableHandle", r)?;
            // SAFETY: a descriptor the driver just opened, ours alone.
            Ok((*chunk, unsafe { OwnedFd::from_raw_fd(fd) }))
        };
        self.chunks.iter().map(export).collect()
    }

    /// Makes the mapped chunks an exporter's (each with a descriptor of its
    /// allocation, which the caller closes): unmaps those no longer listed,
    /// after waiting for the context, then imports and maps the new ones.
    pub(crate) fn import(&mut self, chunks: &[(Chunk, OwnedFd)]) -> Result<(), CudaError> {
        bind(&self.ctx)?;
        let listed = |c: &Chunk| {
            chunks
                .iter()
                .any(|(n, _)| (n.serial, n.offset) == (c.serial, c.offset))
        };
        if !self.chunks.iter().all(listed) {
            self.synchronize()?;
            self.unmap_where(|c| !listed(c))?;
        }
        for (new, fd) in chunks {
            if self.chunks.iter().any(|c| c.serial == new.serial) {
                continue;
            }
            let end = new.offset.saturating_add(new.size);
            let apart = |c: &Chunk| end <= c.offset || c.offset + c.size <= new.offset;
            if new.size == 0 || end > self.reserved || !self.chunks.iter().all(apart) {
                return Err(CudaError::Sharing("a chunk off the reservation"));
            }
            let mut handle: sys::CUmemGenericAllocationHandle = 0;
            // SAFETY: for a POSIX handle the driver reads the descriptor's
            // value from the pointer argument; `fd` is open through the call.
            let r = unsafe {
                let os = fd.as_raw_fd() as usize as *mut core::ffi::c_void;
                sys::cuMemImportFromShareableHandle(&mut handle, os, POSIX_FD)
            };
            check("cuMemImportFromShareableHandle", r)?;
            self.map(Chunk { handle, ..*new })?;
        }
        Ok(())
    }
}

impl Drop for CudaVm {
    fn drop(&mut self) {
        #[cfg(feature = "nccl-bindings")]
        if let (Some(keeper), _) = self.pinned() {
            // Windows use the chunks: the keeper unmaps them after those go.
            let kept = CudaVm {
                ctx: Arc::clone(&self.ctx),
                chunks: core::mem::take(&mut self.chunks),
                pin: Default::default(),
                ..*self
            };
            keeper
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(kept);
            return;
        }
        // Errors cannot be reported from `drop`; a context already lost to a
        // fault fails every call here, and its memory goes with it.
        if bind(&self.ctx).is_err() {
            return;
        }
        let _ = self.synchronize();
        let _ = self.unmap_where(|_| true);
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

/// On a GPU (`cargo test -p gpu-aligned --features cuda --lib -- --include-ignored`): chunks mapped
/// onto a fixed range of device addresses, kernels over memory mapped before and after growth,
/// memory given back by shrinking, and the driver's refusals as typed errors.
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
        let granularity = CudaVm::granularity(&ctx, Sharing::NONE).unwrap();
        assert!(granularity.is_power_of_two());
        let whole = CudaVm::reserve(&ctx, None, granularity, Sharing::NONE).unwrap();
        assert!(whole.reserved >= ctx.total_mem().unwrap());
        assert_eq!(whole.base_address() % granularity as u64, 0);
        drop(whole);
        let chunk = 2 * granularity;
        let mut vm = CudaVm::reserve(&ctx, Some(16 * chunk - 1), chunk, Sharing::NONE).unwrap();
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
        let chunk = CudaVm::granularity(&ctx, Sharing::NONE).unwrap();
        let mut vm = CudaVm::reserve(&ctx, None, chunk, Sharing::NONE).unwrap();
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
        let chunk = CudaVm::granularity(&ctx, Sharing::NONE).unwrap();
        let mut vm = CudaVm::reserve(&ctx, Some(4 * chunk), chunk, Sharing::NONE).unwrap();
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
        let granularity = CudaVm::granularity(&ctx, Sharing::NONE).unwrap();
        let total = ctx.total_mem().unwrap();
        // 1 GiB chunks keep the number of driver calls small.
        let chunk = (1usize << 30).div_ceil(granularity) * granularity;
        let mut vm = CudaVm::reserve(&ctx, Some(2 * total), chunk, Sharing::NONE).unwrap();
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
        let granularity = CudaVm::granularity(&ctx, Sharing::NONE).unwrap();
        assert_eq!(
            CudaVm::reserve(&ctx, Some(1 << 30), granularity + 4096, Sharing::NONE).unwrap_err(),
            CudaError::ChunkNotMultiple {
                chunk: granularity + 4096,
                granularity
            }
        );
        assert_eq!(
            CudaVm::reserve(&ctx, Some(1 << 30), 0, Sharing::NONE).unwrap_err(),
            CudaError::ZeroLength
        );
    }
}
