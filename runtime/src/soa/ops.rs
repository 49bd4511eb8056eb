//! The structure-of-arrays verbs, written once over [`GpuSoa`]'s
//! primitives: allocation (alone or in a [`Plan`]), the kernel's view, and
//! moving whole elements in and out of the columns. Giving the columns back
//! is [`Soa`]'s drop (or [`Arena::free`]), as for any array.

use super::{derive, FromAddresses, GpuSoa, Soa};
use crate::arena::{Arena, ArenaError, ArenaResult, Carving, Plan};
use crate::backend::Backend;
use alloc_crate::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

/// The key of a structure of arrays in a [`Plan`]: redeem it with
/// [`Carving::take_soa`].
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
    /// Adds a structure of arrays of `len` elements of `T`: one flat array
    /// per column, in column order, carved with the plan's other arrays. A
    /// zero `len` is refused when the plan is carved.
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
        SoaKey {
            plan: self.id(),
            first,
            len,
            _element: PhantomData,
        }
    }
}

impl<B: Backend> Carving<B> {
    /// The structure of arrays planned under `key`, once (the example is
    /// [`Plan::soa`]'s). Its columns' keys all come from one plan and are
    /// taken by value, so every column is taken or none is.
    ///
    /// # Errors
    ///
    /// As [`Carving::take`]: [`ArenaError::ForeignKey`] for a key of another
    /// plan.
    pub fn take_soa<T: GpuSoa>(&mut self, key: SoaKey<T>) -> ArenaResult<Soa<T, B>, B> {
        let places = (key.first..key.first + T::COLUMNS.len())
            .map(|index| self.take_place(key.plan, index))
            .collect::<ArenaResult<Vec<_>, B>>()?;
        let mut places = derive::ColumnPlaces {
            places: places.into_iter(),
            len: key.len,
        };
        // `Plan::soa` planned one array per column, in column order.
        let columns = T::from_places(&mut places).ok_or(ArenaError::ForeignKey)?;
        Ok(Soa {
            columns,
            len: key.len,
        })
    }
}

impl<B: Backend> Arena<B> {
    /// Allocates `len` elements of `T` as one column per field, in one
    /// all-or-nothing reservation, in column order; each column starts on
    /// the arena's minimum alignment. On host and device arenas alike.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32, flags: u8 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let soa = arena.alloc_soa::<Hit>(100)?;
    /// let columns = soa.columns();
    /// for offset in [arena.offset(&columns.x)?, arena.offset(&columns.id)?, arena.offset(&columns.flags)?] {
    ///     assert_eq!(offset % arena.min_align() as u64, 0);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Arena::carve`]: a zero `len`, a size that overflows, or no room
    /// for every column; nothing is reserved then.
    pub fn alloc_soa<T: GpuSoa>(&mut self, len: usize) -> ArenaResult<Soa<T, B>, B> {
        let mut plan = Plan::new();
        let key = plan.soa::<T>(len);
        self.carve(&plan)?.take_soa(key)
    }

    /// The kernel's view of `soa` (the example is [`SoaView`](super::SoaView)'s):
    /// each column's address, in column order, and the length. It records
    /// no stream use: on a device arena, launch it on the arena's stream, or
    /// use `launch_soa`.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if the columns are not this arena's;
    /// [`ArenaError::LengthMismatch`] if a column was swapped (through
    /// [`columns_mut`](Soa::columns_mut)) for one of another length.
    pub fn soa_view<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<T::View, B> {
        let addresses = self.column_addresses(soa)?;
        T::View::from_addresses(&addresses, soa.len as u64).ok_or(ArenaError::LengthMismatch {
            expected: T::COLUMNS.len(),
            found: addresses.len(),
        })
    }

    /// Every column's address, once each is checked to be this arena's and
    /// to hold `soa.len()` elements: no view or copy reaches a column that
    /// was swapped for one of another length.
    fn column_addresses<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<Vec<u64>, B> {
        T::columns(&soa.columns)
            .into_iter()
            .map(|column| {
                let address = column.address(self)?;
                if column.len() != soa.len {
                    return Err(ArenaError::LengthMismatch {
                        expected: soa.len,
                        found: column.len(),
                    });
                }
                Ok(address)
            })
            .collect()
    }

    /// Copies `items` into the columns of `soa`, field by field, on host
    /// and device arenas alike.
    ///
    /// ```
    /// use gpu_aligned::arena::Arena;
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq, gpu_aligned::GpuSoa)]
    /// struct Hit { x: f32, id: u32 }
    ///
    /// let mut arena = Arena::host(1 << 14)?;
    /// let mut soa = arena.alloc_soa::<Hit>(2)?;
    /// let hits = [Hit { x: 1.0, id: 7 }, Hit { x: 2.0, id: 9 }];
    /// arena.write_soa(&mut soa, &hits)?;
    /// assert_eq!(arena.get(&soa.columns().id)?, &[7, 9]);
    /// assert_eq!(arena.read_soa(&soa)?, hits);
    /// assert!(arena.write_soa(&mut soa, &hits[..1]).is_err()); // one short
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ArenaError::LengthMismatch`] if `items.len()` is not `soa.len()` or
    /// a column was swapped (through [`columns_mut`](Soa::columns_mut)) for
    /// one of another length, [`ArenaError::Handle`] if a column is not this
    /// arena's (nothing is written in any of these cases);
    /// [`ArenaError::Backend`] if a copy fails.
    pub fn write_soa<T: GpuSoa>(&self, soa: &mut Soa<T, B>, items: &[T]) -> ArenaResult<(), B> {
        if items.len() != soa.len {
            return Err(ArenaError::LengthMismatch {
                expected: soa.len,
                found: items.len(),
            });
        }
        // Every column is checked before any is written: one refused
        // halfway would leave the others written.
        self.column_addresses(soa)?;
        let mut bytes: Vec<Vec<u8>> = T::COLUMNS
            .iter()
            .map(|column| Vec::with_capacity(column.size * items.len()))
            .collect();
        for item in items {
            item.push_fields(&mut bytes);
        }
        for (column, bytes) in T::columns_mut(&mut soa.columns).into_iter().zip(&bytes) {
            column.write_bytes(self, bytes)?;
        }
        Ok(())
    }

    /// The elements of `soa`, rebuilt from its columns (on a device, after
    /// the copies finish); the example is [`write_soa`](Arena::write_soa)'s.
    ///
    /// # Errors
    ///
    /// [`ArenaError::Handle`] if a column is not this arena's,
    /// [`ArenaError::LengthMismatch`] if one was swapped for one of another
    /// length; [`ArenaError::Backend`] if a copy fails.
    pub fn read_soa<T: GpuSoa>(&self, soa: &Soa<T, B>) -> ArenaResult<Vec<T>, B> {
        self.column_addresses(soa)?;
        let columns = T::columns(&soa.columns)
            .into_iter()
            .map(|column| column.read_bytes(self))
            .collect::<ArenaResult<Vec<Vec<u8>>, B>>()?;
        (0..soa.len)
            .map(|index| {
                let mut fields = columns.iter().zip(T::COLUMNS).map(|(bytes, column)| {
                    let start = index.saturating_mul(column.size);
                    bytes
                        .get(start..start.saturating_add(column.size))
                        .unwrap_or_default()
                });
                // Every column holds `len` elements of its field (checked
                // above), so each field's bytes are there.
                T::from_field_bytes(&mut fields).ok_or(ArenaError::LengthMismatch {
                    expected: soa.len,
                    found: index,
                })
            })
            .collect()
    }
}
