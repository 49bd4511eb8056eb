//! Every way to make an arena: [`ArenaOptions`], whose defaults [`Arena::host`] uses.

use super::growth::GrowthPolicy;
use super::plan::check_alignments;
use super::pool::{Offsets, Stack};
use super::returns::ReturnsOwner;
use super::{Arena, ArenaError, ArenaResult, Plan};
use crate::align::{offset_of, ARRAY_ALIGN, PITCH_ALIGN};
use crate::alloc::Allocator;
use crate::backend::{Backend, HostBuffer, HostVm};
#[cfg(feature = "cuda")]
use {
    crate::backend::cuda::{CudaBackend, CudaError, CudaVm, Sharing},
    alloc_crate::sync::Arc,
    cudarc::driver::CudaStream,
};

/// How to make an [`Arena`]: the alignments ([`ARRAY_ALIGN`], [`PITCH_ALIGN`]), whether it
/// grows (not by default), then where its bytes live.
///
/// ```
/// use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};
///
/// let arena = ArenaOptions::new()
///     .min_align(4096)
///     .growth(GrowthPolicy::up_to(64 << 20))
///     .host(2 << 20)?;
/// assert_eq!((arena.min_align(), arena.capacity()), (4096, 2 << 20));
/// assert!(arena.growth().grows());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaOptions {
    min_align: usize,
    pitch_align: usize,
    growth: GrowthPolicy,
    #[cfg(feature = "cuda")]
    sharing: Sharing,
}

impl Default for ArenaOptions {
    fn default() -> Self {
        ArenaOptions::new()
    }
}

impl ArenaOptions {
    /// The defaults: arrays on 256-byte boundaries, rows on 512, no growth.
    pub const fn new() -> Self {
        ArenaOptions {
            min_align: ARRAY_ALIGN,
            pitch_align: PITCH_ALIGN,
            growth: GrowthPolicy::fixed(),
            #[cfg(feature = "cuda")]
            sharing: Sharing::NONE,
        }
    }

    /// Every array starts on a multiple of `align` (a power of two) bytes.
    pub const fn min_align(mut self, align: usize) -> Self {
        self.min_align = align;
        self
    }

    /// Every pitched row is a multiple of `align` (a power of two) bytes.
    pub const fn pitch_align(mut self, align: usize) -> Self {
        self.pitch_align = align;
        self
    }

    /// The arena grows in place as `policy` says.
    pub const fn growth(mut self, policy: GrowthPolicy) -> Self {
        self.growth = policy;
        self
    }

    /// A growing device arena shares every chunk it maps as `share` says (once for each; feature
    /// `cuda`, Unix): see [`crate::share`].
    #[cfg(all(feature = "cuda", unix))]
    pub const fn share(mut self, share: crate::share::Share) -> Self {
        self.sharing = share.grant(self.sharing);
        self
    }

    /// An arena over `backend`, growing to its [`max_len`](crate::backend::Grow::max_len) if asked.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] for a bad alignment,
    /// [`ArenaError::MisalignedBase`] for a misaligned buffer.
    pub fn over<B: Backend>(self, backend: B) -> ArenaResult<Arena<B>, B> {
        let (len, max_len) = (backend.len(), backend.max_len());
        let growth = match self.growth.grows() {
            true => self.growth.settled(len, self.growth.max().min(max_len)),
            false => GrowthPolicy::fixed().with_initial(len),
        };
        self.build(backend, growth)
    }

    fn build<B: Backend>(self, backend: B, growth: GrowthPolicy) -> ArenaResult<Arena<B>, B> {
        check_alignments(self.min_align, self.pitch_align)?;
        let (base, align) = (backend.base_address(), self.min_align);
        if base % offset_of(align) != 0 {
            return Err(ArenaError::MisalignedBase { base, align });
        }
        // Slivers below `min_align` could never start an array.
        let allocator = Allocator::with_granularity(backend.len(), self.min_align)?;
        let base_align = match base {
            0 => 1 << 63,
            _ => 1 << base.trailing_zeros(),
        };
        let regions = crate::sanitizer::Regions::new(backend.watched_by_tools());
        let offsets = Offsets::new(allocator, growth, self.min_align, backend.can_release());
        let mut arena = Arena {
            returns: ReturnsOwner::new(),
            pool: Stack::stack(offsets, regions, self.min_align),
            backend,
            min_align: self.min_align,
            pitch_align: self.pitch_align,
            base_align,
            returned: Default::default(),
        };
        arena.rewatch();
        Ok(arena)
    }

    /// An arena over a fresh, zeroed host buffer of `bytes` bytes, in a reserved range if it grows.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Alloc`] for a bad alignment, [`ArenaError::Growth`] for
    /// a bad policy, [`ArenaError::Backend`] if the buffer cannot be made.
    pub fn host(self, bytes: usize) -> Result<Arena<HostBuffer>, ArenaError> {
        check_alignments(self.min_align, self.pitch_align)?;
        let align = self.min_align.max(self.pitch_align);
        if !self.growth.grows() {
            let buffer = HostBuffer::new(bytes, align).map_err(ArenaError::Backend)?;
            return self.over(buffer);
        }
        let policy = self.growth.with_initial(bytes);
        let resolved = policy.resolve(HostVm::page_size());
        let (initial, max) = resolved.map_err(ArenaError::Growth)?;
        let buffer = HostBuffer::growable(initial, max, align).map_err(ArenaError::Backend)?;
        self.build(buffer, self.growth.settled(initial, max))
    }

    /// A fixed host arena of the bytes `plan` needs ([`Plan::bytes_needed`]), with red zones if on.
    ///
    /// # Errors
    ///
    /// As [`host`](ArenaOptions::host).
    pub fn host_for(self, plan: &Plan) -> Result<Arena<HostBuffer>, ArenaError> {
        let bytes = self.plan_bytes(plan, false)?;
        self.growth(GrowthPolicy::fixed()).host(bytes)
    }

    fn plan_bytes<E>(&self, plan: &Plan, device_memory: bool) -> Result<usize, ArenaError<E>> {
        let red_zones = crate::sanitizer::red_zones_by_default(device_memory);
        let bytes = plan.bytes_with(self.min_align, self.pitch_align, red_zones)?;
        Ok(bytes.max(1))
    }

    /// An arena over a fresh, zeroed device buffer of `bytes` bytes on `stream`'s device (feature
    /// `cuda`); a growing one maps chunks onto reserved addresses, or is fixed where it cannot.
    ///
    /// ```no_run
    /// use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};
    /// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    ///
    /// let stream = CudaContext::new(0)?.default_stream();
    /// let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(16 << 30));
    /// let mut arena = growing.device(&stream, 2 << 20)?;
    /// let first = arena.alloc::<f32>(1000)?;
    /// let at = arena.offset(&first)?;
    /// let big = arena.alloc::<f32>(1 << 30)?; // 4 GiB: chunks are mapped
    /// assert_eq!(arena.offset(&first)?, at); // nothing moved (nor does the base)
    /// drop(big);
    /// arena.trim()?; // the 4 GiB go back to the device
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`host`](ArenaOptions::host), the backend's from [`CudaBackend::new`] and
    /// [`CudaBackend::growable`]; [`CudaError::Sharing`] for a [shared](ArenaOptions::share) arena
    /// that cannot grow on virtual memory, or under compute-sanitizer.
    #[cfg(feature = "cuda")]
    pub fn device(
        self,
        stream: &Arc<CudaStream>,
        bytes: usize,
    ) -> ArenaResult<Arena<CudaBackend>, CudaBackend> {
        check_alignments(self.min_align, self.pitch_align)?;
        let context = stream.context();
        let vm = self.growth.grows() && CudaVm::supported(context)?;
        if self.sharing != Sharing::NONE && !vm {
            let why = "a shared arena grows on virtual memory: give it a growth policy";
            return Err(CudaError::Sharing(why).into());
        }
        if !vm {
            let backend = CudaBackend::new(stream, bytes)?;
            return self.growth(GrowthPolicy::fixed()).over(backend);
        }
        let granularity = CudaVm::granularity(context, self.sharing)?;
        let total = context.total_mem();
        let total = total.map_err(CudaError::driver("cuDeviceTotalMem"))?;
        let policy = self.growth.settled(bytes, self.growth.max().min(total));
        let (initial, max) = policy.resolve(granularity).map_err(ArenaError::Growth)?;
        let backend = CudaBackend::shared(stream, initial, max, policy.chunk(), self.sharing)?;
        self.build(backend, policy.settled(initial, max))
    }

    /// As [`host_for`](ArenaOptions::host_for), on a device (feature `cuda`).
    ///
    /// # Errors
    ///
    /// As [`host_for`](ArenaOptions::host_for) and [`device`](ArenaOptions::device).
    #[cfg(feature = "cuda")]
    pub fn device_for(
        self,
        stream: &Arc<CudaStream>,
        plan: &Plan,
    ) -> ArenaResult<Arena<CudaBackend>, CudaBackend> {
        let bytes = self.plan_bytes(plan, true)?;
        self.growth(GrowthPolicy::fixed()).device(stream, bytes)
    }
}

impl Arena<HostBuffer> {
    /// [`ArenaOptions::host`] with the default options.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Backend`] if the buffer cannot be made.
    pub fn host(bytes: usize) -> Result<Self, ArenaError> {
        ArenaOptions::new().host(bytes)
    }
}

#[cfg(feature = "cuda")]
impl Arena<CudaBackend> {
    /// [`ArenaOptions::device`] with the default options.
    ///
    /// ```no_run
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
    /// use gpu_aligned::vector::float4;
    ///
    /// let stream = CudaContext::new(0)?.default_stream();
    /// let mut arena = Arena::device(&stream, 64 << 20)?;
    /// let points = arena.alloc_zeros::<float4>(1000)?;
    /// let weights = arena.alloc_from(&vec![1.0f32; 1000])?;
    /// assert_eq!(arena.offset(&weights)? % 256, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`CudaBackend::new`], inside [`ArenaError::Backend`].
    pub fn device(stream: &Arc<CudaStream>, bytes: usize) -> ArenaResult<Self, CudaBackend> {
        ArenaOptions::new().device(stream, bytes)
    }
}
