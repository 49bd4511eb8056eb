//! What `#[derive(GpuSoa)]` expands to: one invocation of
//! [`__gpu_soa_derive!`](crate::__gpu_soa_derive), which emits the
//! `<Name>Columns` struct and the [`GpuSoa`](super::GpuSoa) primitives from
//! one list of the struct's fields. Not public API.
//!
//! The macro takes nothing it could be lied to about: each column's name is
//! its field's (`stringify!`), the number of columns is the list's length,
//! and the list must be exactly the struct's fields or the expansion does
//! not compile (the element is rebuilt from the list with a struct literal,
//! which names every field once, with its type). A const assertion also
//! refuses two columns named alike, so the kernel view and the header's
//! `P_soa` always have one distinct member per field.

pub use alloc_crate::vec::Vec;

/// A type that can be a column: one GPU word, moved in one instruction. The
/// lifetime makes the impl's bound `for<'a> F: Column<'a>` generic, so a
/// bad field type fails once, at the field's own check, and not again as a
/// trivially false bound of the impl.
pub trait Column<'a>: crate::GpuAligned {}

impl<T: crate::GpuAligned> Column<'_> for T {}

/// The places a carving holds for a structure of arrays' columns, in column
/// order, each taken out once as its column's typed array.
pub struct ColumnPlaces<B: crate::backend::Backend> {
    pub(super) places: alloc_crate::vec::IntoIter<crate::arena::Place<B>>,
    pub(super) len: usize,
}

impl<B: crate::backend::Backend> ColumnPlaces<B> {
    /// The next column, as an array of `F`: the derive takes the columns in
    /// the order it planned them, with the same field types.
    #[allow(clippy::should_implement_trait)] // generic over the column's type
    pub fn next<F: crate::GpuAligned>(&mut self) -> Option<crate::arena::ArenaSlice<F, B>> {
        Some(crate::arena::ArenaSlice::new(self.places.next()?, self.len))
    }
}

/// The bytes of one field.
pub fn bytes_of<F: crate::GpuAligned>(field: &F) -> &[u8] {
    bytemuck::bytes_of(field)
}

/// One field from its bytes; `None` for a wrong length.
pub fn read<F: crate::GpuAligned>(bytes: &[u8]) -> Option<F> {
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

/// Whether no two of `names` are equal.
pub const fn distinct(names: &[&str]) -> bool {
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() {
            if crate::__private::str_eq(names[i], names[j]) {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

/// The first `N` of `fields`, sorted by offset (stable): the struct's
/// layout, whatever order rustc gave the fields.
pub const fn by_offset<const N: usize>(fields: &[crate::GpuField]) -> [crate::GpuField; N] {
    let blank = crate::GpuField::new(
        "",
        0,
        0,
        0,
        false,
        crate::GpuType::Scalar(crate::Scalar::U8),
    );
    let mut sorted = [blank; N];
    let mut i = 0;
    while i < N && i < fields.len() {
        sorted[i] = fields[i];
        let mut j = i;
        while j > 0 && sorted[j - 1].offset > sorted[j].offset {
            let swapped = sorted[j - 1];
            sorted[j - 1] = sorted[j];
            sorted[j] = swapped;
            j -= 1;
        }
        i += 1;
    }
    sorted
}

/// The body of `#[derive(GpuSoa)]`. It lives here, not in the derive, so
/// the `unsafe impl` is this crate's: a caller that redirects the derive's
/// crate path reaches this macro or writes its own `unsafe`.
///
/// Why the impl is sound: `LAYOUT` and `COLUMNS` come from `size_of`,
/// `align_of` and `offset_of!` of the struct and of each listed field type;
/// `from_field_bytes` builds the struct from one value of each listed type
/// per listed field, so the list is the struct's own (every field once, with
/// its exact type) or the expansion does not compile; each field type is
/// `GpuAligned` (the impl's bound); every primitive walks the same list in
/// the same order.
///
/// Its generic parameters, items and function parameters have names like
/// `__Backend` and `__columns`: types are not hygienic, and a parameter is a
/// pattern, which a user's constant of the same name would turn into a
/// constant pattern, so a plain name would capture the user's item.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_soa_derive {
    (
        vis: $vis:vis,
        type: $ty:ident,
        columns: $columns:ident,
        where: [$($where:tt)*],
        fields: [$($member:ident: $fty:ty),* $(,)?],
    ) => {
        #[doc = ::core::concat!(
            "The columns of a structure of arrays of [`", ::core::stringify!($ty), "`]: one ",
            "typed array per field, named like the field, each usable with every arena verb ",
            "and given back when dropped."
        )]
        $vis struct $columns<__Backend: $crate::backend::Backend = $crate::backend::HostBuffer> {
            $(
                #[doc = ::core::concat!("The column of `", ::core::stringify!($member), "`.")]
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
            use $crate::soa::derive::Vec;

            // One check per field, spanned at its type: the only error a
            // field that cannot be a column gets.
            $( let _ = $crate::__private::layout_of::<$fty>(); )*

            const __GPU_SOA_NAMES: &[&str] =
                &[$( $crate::soa::derive::unraw(::core::stringify!($member)) ),*];
            const __GPU_SOA_COUNT: usize = __GPU_SOA_NAMES.len();
            ::core::assert!(
                $crate::soa::derive::distinct(__GPU_SOA_NAMES),
                "gpu-aligned: two columns share a name"
            );

            // SAFETY: see the macro's documentation.
            #[automatically_derived]
            unsafe impl $crate::soa::GpuSoa for $ty
            where
                $($where)*
                $( for<'__column> $fty: $crate::soa::derive::Column<'__column>, )*
            {
                const LAYOUT: $crate::GpuLayout = $crate::__private::layout(
                    $crate::soa::derive::unraw(::core::stringify!($ty)),
                    ::core::mem::size_of::<$ty>(),
                    ::core::mem::align_of::<$ty>(),
                    0,
                    &const {
                        $crate::soa::derive::by_offset::<__GPU_SOA_COUNT>(
                            <$ty as $crate::soa::GpuSoa>::COLUMNS,
                        )
                    },
                );
                const COLUMNS: &'static [$crate::GpuField] = &[$(
                    $crate::__private::field(
                        $crate::soa::derive::unraw(::core::stringify!($member)),
                        ::core::mem::offset_of!($ty, $member),
                        ::core::mem::size_of::<$fty>(),
                        ::core::mem::align_of::<$fty>(),
                        false,
                        $crate::__private::type_of::<$fty>(),
                    )
                ),*];
                type Columns<__Backend: $crate::backend::Backend> = $columns<__Backend>;
                type View = $crate::soa::SoaView<__GPU_SOA_COUNT>;

                fn push_fields(&self, __columns: &mut [Vec<u8>]) {
                    let mut __columns = __columns.iter_mut();
                    $(
                        if let ::core::option::Option::Some(__column) = __columns.next() {
                            // A copy of the field, so a packed struct's
                            // unaligned field is never referenced.
                            let __field: $fty = self.$member;
                            __column.extend_from_slice($crate::soa::derive::bytes_of(&__field));
                        }
                    )*
                }

                fn from_field_bytes<'__bytes>(
                    __fields: &mut dyn ::core::iter::Iterator<Item = &'__bytes [u8]>,
                ) -> ::core::option::Option<Self> {
                    ::core::option::Option::Some($ty {
                        $( $member: $crate::soa::derive::read::<$fty>(__fields.next()?)?, )*
                    })
                }

                fn columns<__Backend: $crate::backend::Backend>(
                    __columns: &$columns<__Backend>,
                ) -> Vec<&dyn $crate::soa::Column<__Backend>> {
                    Vec::from([$( &__columns.$member as &dyn $crate::soa::Column<__Backend> ),*])
                }

                fn columns_mut<__Backend: $crate::backend::Backend>(
                    __columns: &mut $columns<__Backend>,
                ) -> Vec<&mut dyn $crate::soa::Column<__Backend>> {
                    Vec::from([$( &mut __columns.$member as &mut dyn $crate::soa::Column<__Backend> ),*])
                }

                fn plan_columns(__plan: &mut $crate::arena::Plan, __len: usize) {
                    $( let _ = __plan.array::<$fty>(__len); )*
                }

                fn from_places<__Backend: $crate::backend::Backend>(
                    __places: &mut $crate::soa::derive::ColumnPlaces<__Backend>,
                ) -> ::core::option::Option<$columns<__Backend>> {
                    ::core::option::Option::Some($columns { $( $member: __places.next()?, )* })
                }
            }
        };
    };
    // Next to the derive's errors: an impl of no columns, so that code using
    // the type adds no errors of its own.
    (fallback: impl [$($impl:tt)*] [$($ty:tt)*] where [$($where:tt)*]) => {
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            use $crate::soa::derive::Vec;

            // SAFETY: never compiled into a program: the derive's
            // `compile_error!` stands next to it.
            #[automatically_derived]
            unsafe impl $($impl)* $crate::soa::GpuSoa for $($ty)* where $($where)* {
                const LAYOUT: $crate::GpuLayout = $crate::__private::layout("", 0, 1, 0, &[]);
                const COLUMNS: &'static [$crate::GpuField] = &[];
                type Columns<__Backend: $crate::backend::Backend> = ();
                type View = $crate::soa::SoaView<0>;

                fn push_fields(&self, _: &mut [Vec<u8>]) {}

                fn from_field_bytes<'__bytes>(
                    _: &mut dyn ::core::iter::Iterator<Item = &'__bytes [u8]>,
                ) -> ::core::option::Option<Self> {
                    ::core::option::Option::None
                }

                fn columns<__Backend: $crate::backend::Backend>(
                    _: &(),
                ) -> Vec<&dyn $crate::soa::Column<__Backend>> {
                    Vec::new()
                }

                fn columns_mut<__Backend: $crate::backend::Backend>(
                    _: &mut (),
                ) -> Vec<&mut dyn $crate::soa::Column<__Backend>> {
                    Vec::new()
                }

                fn plan_columns(_: &mut $crate::arena::Plan, _: usize) {}

                fn from_places<__Backend: $crate::backend::Backend>(
                    _: &mut $crate::soa::derive::ColumnPlaces<__Backend>,
                ) -> ::core::option::Option<()> {
                    ::core::option::Option::Some(())
                }
            }
        };
    };
}
