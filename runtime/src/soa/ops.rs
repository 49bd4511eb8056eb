//! The structure-of-arrays verbs, written once over [`GpuSoa`]'s primitives: allocation (alone or
//! in a [`Plan`]), elements in and out, and the kernel's view.

#[cfg(feature = "cuda")]
use super::FromAddresses;
use super::{derive::ColumnPlaces, GpuSoa, Soa};
#[cfg(feature = "cuda")]
use crate::arena::KernelArg;
use crate::arena::{Arena, ArenaError, ArenaResult, Carving, Plan, SEALED};
#[cfg(feature = "cuda")]
use crate::backend::cuda::CudaBackend;
use crate::backend::Backend;
use alloc_crate::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

/// The key of a structure of arrays in a [`Plan`]: redeem it with [`Carving::take_soa`].
#[must_use = "a key is the only way to take its columns out of a carving"]
pub struct SoaKey<T: GpuSoa> {
    plan: u64,
    first: usize,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T: GpuSoa> fmt::Debug for SoaKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SoaKey")
            .field("type", &core::any::type_name::<T>())
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// Adds a structure of arrays of `len` elements of `T`: one array per
    /// column (a zero `len` plans empty columns, which take no bytes).
    ///
    /// ```
    /// use gpu_aligned::arena::{Arena, Plan};
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut plan = Plan::new();
    /// let weights = plan.array::<f32>(64);
    /// let hits = plan.soa::<Hit>(64);
    /// assert_eq!(plan.len(), 3); // one array per column
    /// let mut arena = Arena::host(1 << 14)?;
    /// let mut carving = arena.carve(&plan)?;
    /// let hits = carving.take_soa(hits)?;
    /// let weights = carving.take(weights)?;
    /// assert_eq!((hits.len(), weights.len()), (64, 64));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn soa<T: GpuSoa>(&mut self, len: usize) -> SoaKey<T> {
        let first = self.len();
        T::plan_columns(self, len);
        let plan = self.id();
        SoaKey {
            plan,
            first,
            len,
            _element: PhantomData,
        }
    }
}

impl<B: Backend> Carving<B> {
    /// The structure of arrays planned under `key`, every column or none
    /// (the example is [`Plan::soa`]'s).
    ///
    /// # Errors
    ///
    /// As [`Carving::take`]: [`ArenaError::ForeignKey`] for a key of another plan.
    pub fn take_soa<T: GpuSoa>(&mut self, key: SoaKey<T>) -> ArenaResult<Soa<T, B>, B> {
        let places = (key.first..key.first + T::COLUMNS.len())
            .map(|index| self.take_place(key.plan, index))
            .collect::<ArenaResult<Vec<_>, B>>()?;
        let (places, len) = (places.into_iter(), key.len);
        let mut places = ColumnPlaces { places, len };
        let columns = T::from_places(&mut places).ok_or(ArenaError::ForeignKey)?;
        Ok(Soa { columns, len })
    }
}

impl<B: Backend> Arena<B> {
    /// Allocates `len` elements of `T`, one column per field, all or
    /// nothing (the [module's](super) example).
    ///
    /// # Errors
    ///
    /// As [`Arena::carve`]: a size that overflows, or no room for every
    /// column; nothing is reserved then.
    pub fn alloc_soa<T: GpuSoa>(&mut self, len: usize) -> ArenaResult<Soa<T, B>, B> {
        let mut plan = Plan::new();
        let key = plan.soa::<T>(len);
        self.carve(&plan)?.take_soa(key)
    }

    /// Every column's address, each checked to be this arena's and to hold
    /// `soa.len()` elements of its field.
    fn column_addresses<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<Vec<u64>, B> {
        let columns = T::columns(&soa.columns).into_iter().zip(T::COLUMNS);
        columns
            .map(|(column, field)| self.column_address(column, soa.len, field))
            .collect()
    }

    /// Copies `items` into the columns of `soa`, field by field.
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`] for `items` of another length, and
    /// [`read_soa`](Arena::read_soa)'s column checks, before anything is
    /// written; [`ArenaError::Backend`] if a copy fails.
    pub fn write_soa<T: GpuSoa>(&self, soa: &mut Soa<T, B>, items: &[T]) -> ArenaResult<(), B> {
        if items.len() != soa.len {
            let (expected, found) = (soa.len, items.len());
            return Err(ArenaError::LengthMismatch { expected, found });
        }
        // Every column is checked before any is written.
        self.column_addresses(soa)?;
        let mut bytes: Vec<Vec<u8>> = T::COLUMNS
            .iter()
            .map(|field| Vec::with_capacity(field.size * items.len()))
            .collect();
        for item in items {
            item.push_fields(&mut bytes);
        }
        let columns = T::columns_mut(&mut soa.columns).into_iter().zip(T::COLUMNS);
        for ((column, field), bytes) in columns.zip(&bytes) {
            self.write_column(column.place_mut(SEALED), soa.len, field, bytes)?;
        }
        Ok(())
    }

    /// The elements of `soa`, rebuilt from its columns.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if a column is not this arena's; [`ArenaError::LengthMismatch`] if
    /// one was swapped (through [`columns_mut`](Soa::columns_mut)) for one of another length;
    /// [`ArenaError::Backend`] if a copy fails.
    pub fn read_soa<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<Vec<T>, B> {
        self.column_addresses(soa)?;
        let columns = T::columns(&soa.columns).into_iter().zip(T::COLUMNS);
        let bytes = columns
            .map(|(column, field)| {
                // `column_addresses` checked that the column holds these bytes.
                let mut bytes = alloc_crate::vec![0; soa.len * field.size];
                self.read_column(column.place(SEALED), soa.len, field, &mut bytes)?;
                Ok(bytes)
            })
            .collect::<ArenaResult<Vec<Vec<u8>>, B>>()?;
        let mut fields: Vec<_> = (bytes.iter().zip(T::COLUMNS))
            .map(|(bytes, field)| bytes.chunks(field.size.max(1)))
            .collect();
        // Every column holds `len` elements of its field (checked by
        // `read_column`), so no element is missing a field.
        (0..soa.len)
            .map(|found| {
                let element = T::from_field_bytes(&mut fields.iter_mut().map_while(Iterator::next));
                let expected = soa.len;
                element.ok_or(ArenaError::LengthMismatch { expected, found })
            })
            .collect()
    }
}

#[cfg(feature = "cuda")]
impl Arena<CudaBackend> {
    /// The kernel's view of `soa` ([`SoaView`](super::SoaView)), lent to one
    /// launch on `stream` and ordered as a writable view orders an array.
    ///
    /// ```no_run
    /// use gpu_aligned::arena::Arena;
    /// use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
    /// use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
    /// use gpu_aligned::header::CudaHeader;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let context = CudaContext::new(0)?;
    /// let (s1, s2) = (context.new_stream()?, context.new_stream()?);
    /// let mut header = CudaHeader::new();
    /// header.add_soa::<Hit>()?;
    /// let source = format!(
    ///     "{}\nextern \"C\" __global__ void bump(Hit_soa v) {{ \
    ///      unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; \
    ///      if (i < v.len) v.x[i] += 1.0f; }}",
    ///     header.render()
    /// );
    /// let module = context.load_module(compile_ptx(source)?)?;
    /// let bump = module.load_function("bump")?;
    ///
    /// let mut arena = Arena::device(&s1, 1 << 20)?;
    /// let mut hits = arena.alloc_soa::<Hit>(1000)?;
    /// let view = arena.soa_view(&mut hits, &s2)?; // not the arena's stream
    /// let mut launch = s2.launch_builder(&bump);
    /// launch.arg(&view);
    /// // SAFETY: `bump` takes one `Hit_soa`, laid out as the view.
    /// unsafe { launch.launch(LaunchConfig::for_num_elems(1000)) }?;
    /// drop(view); // records the kernel's write of every column
    /// let after = arena.read_soa(&hits)?; // on s1: waits for the kernel on s2
    /// assert!(after.iter().all(|hit| hit.x == 1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`CudaError::ForeignStream`](crate::backend::cuda::CudaError::ForeignStream) for a stream of
    /// another context; [`read_soa`](Arena::read_soa)'s column checks; a backend error after a
    /// sticky fault.
    pub fn soa_view<'a, T: GpuSoa>(
        &'a self,
        soa: &'a mut Soa<T, CudaBackend>,
        stream: &'a std::sync::Arc<cudarc::driver::CudaStream>,
    ) -> ArenaResult<KernelArg<'a, T::View>, CudaBackend> {
        let addresses = self.column_addresses(soa)?;
        let (expected, found) = (T::COLUMNS.len(), addresses.len());
        let view = T::View::from_addresses(&addresses, soa.len as u64)
            .ok_or(ArenaError::LengthMismatch { expected, found })?;
        let len = soa.len;
        let columns = T::columns_mut(&mut soa.columns).into_iter().zip(T::COLUMNS);
        let writes = columns
            .map(|(column, field)| self.lend_column(column, len, field, stream))
            .collect::<ArenaResult<Vec<_>, CudaBackend>>()?;
        Ok(KernelArg::lent(view, writes))
    }
}
