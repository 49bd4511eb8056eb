//! What `#[derive(GpuSoa)]` expands to: one invocation of
//! [`__gpu_soa_derive!`](crate::__gpu_soa_derive), which emits the `<Name>Columns` struct and the
//! [`GpuSoa`](super::GpuSoa) primitives from one list of the struct's fields. Not public API. The
//! macro follows the rule for macros that write an `unsafe impl` ([`crate::__private`]):
//! identifiers and types only, every claim proven.

pub use alloc_crate::vec::Vec;

use crate::arena::{ArenaSlice, Place};
use crate::backend::Backend;
use crate::{GpuAligned, GpuField, GpuType, Scalar};

/// A type that can be a column. The lifetime makes the impl's bound
/// `for<'a> F: Column<'a>` generic, so a bad field type fails once, at the
/// field's own check, and not again as a trivially false bound of the impl.
pub trait Column<'a>: GpuAligned {}

impl<T: GpuAligned> Column<'_> for T {}

/// The places a carving holds for a structure of arrays' columns, in order.
pub struct ColumnPlaces<B: Backend> {
    pub(super) places: alloc_crate::vec::IntoIter<Place<B>>,
    pub(super) len: usize,
}

impl<B: Backend> ColumnPlaces<B> {
    /// The next column, as an array of `F`.
    #[allow(clippy::should_implement_trait)] // generic over the column's type
    pub fn next<F: GpuAligned>(&mut self) -> Option<ArenaSlice<F, B>> {
        Some(ArenaSlice::new(self.places.next()?, self.len))
    }
}

/// The bytes of one field. Bounded by `GpuAligned`, which the impl's
/// bound proves, so a bad field type gets no second error here.
pub fn bytes_of<F: GpuAligned>(field: &F) -> &[u8] {
    bytemuck::bytes_of(field)
}

/// One field from its bytes; `None` for a wrong length.
pub fn read<F: GpuAligned>(bytes: &[u8]) -> Option<F> {
    bytemuck::try_pod_read_unaligned(bytes).ok()
}

/// `name` without a leading `r#` (a raw identifier's name).
pub const fn unraw(name: &'static str) -> &'static str {
    match name.as_bytes() {
        [b'r', b'#', rest @ ..] => match core::str::from_utf8(rest) {
            Ok(unraw) => unraw,
            Err(_) => name,
        },
        _ => name,
    }
}

/// `fields` (`N` of them) sorted by offset: the struct's layout, whatever
/// order rustc gave the fields.
pub const fn by_offset<const N: usize>(fields: &[GpuField]) -> [GpuField; N] {
    let mut sorted = [GpuField::new("", 0, 0, 0, false, GpuType::Scalar(Scalar::U8)); N];
    let mut i = 0;
    while i < N {
        let mut j = i;
        while j > 0 && sorted[j - 1].offset > fields[i].offset {
            sorted[j] = sorted[j - 1];
            j -= 1;
        }
        sorted[j] = fields[i];
        i += 1;
    }
    sorted
}

/// The body of `#[derive(GpuSoa)]`, here so that the `unsafe impl` is this
/// crate's: a redirected crate path reaches it or writes its own `unsafe`.
///
/// Why the impl is sound: it takes nothing it could be lied to about. Each column's name is its
/// field's (`stringify!`), distinct because `<Name>Columns` has a field of each name; the count is
/// the list's length; `LAYOUT` and `COLUMNS` come from `size_of`, `align_of` and `offset_of!`;
/// `from_field_bytes` rebuilds the struct with a literal naming every listed field with its listed
/// type, so the list is exactly the struct's or nothing compiles; each field type is `GpuAligned`
/// (the impl's bound); every primitive walks the list in one order. Generated names start with
/// `__`: types are not hygienic, and a user's constant would turn a parameter of the same name into
/// a constant pattern.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_soa_derive {
    (
        vis: $vis:vis,
        type: $ty:ident,
        columns: $columns:ident,
        fields: [$($member:ident: $fty:ty),* $(,)?],
    ) => {
        /// The columns of a structure of arrays (`#[derive(GpuSoa)]`): one typed array per field,
        /// named like the field, each usable with every arena verb and given back when dropped.
        $vis struct $columns<__Backend: $crate::backend::Backend = $crate::backend::HostBuffer> {
            $(
                /// The column of the field of this name.
                pub $member: $crate::arena::ArenaSlice<$fty, __Backend>,
            )*
        }

        #[automatically_derived]
        impl<__Backend: $crate::backend::Backend> ::core::fmt::Debug for $columns<__Backend> {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                __f.debug_struct(::core::stringify!($columns))
                    $( .field($crate::soa::derive::unraw(::core::stringify!($member)), &self.$member) )*
                    .finish()
            }
        }

        #[allow(unused_qualifications, non_camel_case_types, clippy::all)]
        const _: () = {
            use $crate::arena::ArenaArray as __Array;
            use $crate::backend::Backend as __Backend;
            use $crate::soa::derive::Vec;

            // One check per field, spanned at its type: the only error a
            // field that cannot be a column gets.
            $( let _ = $crate::__private::layout_of::<$fty>(); )*
            const __COUNT: usize = [$( ::core::stringify!($member) ),*].len();

            // SAFETY: see the macro's documentation.
            #[automatically_derived]
            unsafe impl $crate::soa::GpuSoa for $ty
            where
                $( for<'__column> $fty: $crate::soa::derive::Column<'__column>, )*
            {
                const LAYOUT: $crate::GpuLayout = $crate::GpuLayout::new(
                    $crate::soa::derive::unraw(::core::stringify!($ty)),
                    ::core::mem::size_of::<$ty>(),
                    ::core::mem::align_of::<$ty>(),
                    0,
                    &const { $crate::soa::derive::by_offset::<__COUNT>(<$ty as $crate::soa::GpuSoa>::COLUMNS) },
                );
                const COLUMNS: &'static [$crate::GpuField] = &[$(
                    $crate::GpuField::new(
                        $crate::soa::derive::unraw(::core::stringify!($member)),
                        ::core::mem::offset_of!($ty, $member),
                        ::core::mem::size_of::<$fty>(),
                        ::core::mem::align_of::<$fty>(),
                        false,
                        $crate::__private::type_of::<$fty>(),
                    )
                ),*];
                type Columns<__B: __Backend> = $columns<__B>;
                type View = $crate::soa::SoaView<__COUNT>;

                fn push_fields(&self, __columns: &mut [Vec<u8>]) {
                    let mut __columns = __columns.iter_mut();
                    $(
                        if let ::core::option::Option::Some(__column) = __columns.next() {
                            // A copy, so a packed struct's field is never referenced.
                            let __field: $fty = self.$member;
                            __column.extend_from_slice($crate::soa::derive::bytes_of(&__field));
                        }
                    )*
                }

                fn from_field_bytes<'__bytes>(
                    __fields: &mut dyn ::core::iter::Iterator<Item = &'__bytes [u8]>,
                ) -> ::core::option::Option<Self> {
                    ::core::option::Option::Some($ty { $(
                        $member: $crate::soa::derive::read::<$fty>(__fields.next()?)?,
                    )* })
                }

                fn columns<__B: __Backend>(__columns: &$columns<__B>) -> Vec<&dyn __Array<__B>> {
                    Vec::from([$( &__columns.$member as &dyn __Array<__B> ),*])
                }

                fn columns_mut<__B: __Backend>(__columns: &mut $columns<__B>) -> Vec<&mut dyn __Array<__B>> {
                    Vec::from([$( &mut __columns.$member as &mut dyn __Array<__B> ),*])
                }

                fn plan_columns(__plan: &mut $crate::arena::Plan, __len: usize) {
                    $( let _ = __plan.array::<$fty>(__len); )*
                }

                fn from_places<__B: __Backend>(
                    __places: &mut $crate::soa::derive::ColumnPlaces<__B>,
                ) -> ::core::option::Option<$columns<__B>> {
                    ::core::option::Option::Some($columns { $( $member: __places.next()?, )* })
                }
            }
        };
    };
    // Next to the derive's errors: an impl of no columns (the primitives' defaults), so that code
    // using the type adds no errors of its own. It takes identifiers only (the type and its type
    // parameters), so no caller token stands between its `unsafe impl` and the trait.
    (fallback: type: $ty:ident, params: [$($param:ident),*]) => {
        // SAFETY: an impl of no columns claims nothing about `$ty`: no primitive reads or writes a
        // byte of it (`from_field_bytes` is `None`, every column list empty), and `LAYOUT` is that
        // of no fields, which nothing takes as `$ty`'s size. Written next to the derive's
        // `compile_error!`, and harmless where called by hand.
        #[automatically_derived]
        #[allow(unused_qualifications, clippy::all)]
        unsafe impl<$($param: 'static),*> $crate::soa::GpuSoa for $ty<$($param),*>
        where
            $ty<$($param),*>: ::core::marker::Copy + 'static,
        {
            const LAYOUT: $crate::GpuLayout = $crate::GpuLayout::new("", 0, 1, 0, &[]);
            const COLUMNS: &'static [$crate::GpuField] = &[];
            type Columns<__Backend: $crate::backend::Backend> = ();
            type View = $crate::soa::SoaView<0>;
        }
    };
}
