//! The hidden macros the derive's output invokes, exported at the crate
//! root and named through `$crate::__private` by the derive.

/// `u8`, whatever it is given: the probe instantiation of a generic struct
/// (`Pair<u8>`), spelled in a `macro_rules!` repetition over its parameters.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_u8 {
    ($param:ident) => {
        $crate::__private::core::primitive::u8
    };
}

/// Every impl `#[derive(GpuAligned)]` gives a struct, together with the checks that make them
/// sound; the derive's output is one invocation of this, and nothing else it emits is `unsafe`.
///
/// The checks and the impls expand together, here, so a crate that redirects the derive's path must
/// spell out `unsafe impl` itself. This macro trusts nothing it is given: the field list is proven
/// to be the struct's (`__fields` below), the facts come from `offset_of!`, `size_of` and
/// `align_of`, and [`reject`] fails the build whatever the blame calls chose. The impls exist only
/// if the compiler laid the struct out as C lays out its field list ([`GpuLayout::is_repr_c`]),
/// whatever `#[repr]` the derive saw.
///
/// The second arm, `checks_only`, is what the derive emits next to a rejected `#[repr]`: no impls
/// (there is no layout to trust), but the rule checked on the C layout of the field list, each
/// field checked as `GpuData`, and `Copy` checked, so that every fault of the struct is reported in
/// the same compile.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_derive {
    (
        rule: $rule:ident;
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        fields: [
            { $member0:tt: $fty0:ty, $fname0:literal, $padding0:literal }
            $({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*
        ];
        size: { $($size:tt)* };
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // The layout of `$ty` as the compiler computed it, in declaration
            // order: one constant for the check below and `FACTS`, since each
            // `offset_of!` is most of what a legal type costs to compile.
            const __GPU_ALIGNED_FIELDS: $crate::__private::Fields<$count> =
                $crate::__private::Fields::new([
                    $crate::__private::field_of::<$fty0>(
                        $fname0,
                        $crate::__private::offset_of!($ty, $member0),
                        $padding0,
                    ),
                    $($crate::__private::field_of::<$fty>(
                        $fname,
                        $crate::__private::offset_of!($ty, $member),
                        $padding,
                    )),*
                ]);

            // The fast path, all a legal type costs: the fields follow each other in declaration
            // order from offset 0, with no hole, and the rule holds. For a layout without holes
            // that is exactly C's: each field's offset is aligned (the compiler put it there) and
            // where the previous one ends.
            if !$crate::__gpu_aligned_rule!(holds $rule, __GPU_ALIGNED_FIELDS, $ty) {
                // The slow path says what is wrong, at the spans the derive chose: not C's layout,
                // or which rule. The blame functions read `FACTS`, which is evaluated only here. In
                // a block of their own, so that nothing in them reaches the rejection after it (an
                // attribute left dangling, a local item named like `$ty`): it runs whatever they
                // are.
                { $($blame)* }
                $crate::__gpu_aligned_rule!(reject $rule, $ty);
            }

            // The field list above is the struct's own: a struct expression without `..` names
            // every field exactly once (a missing or repeated field does not compile), and each
            // value has the field's exact type (a value of a GPU type never coerces to another). A
            // union expression names one field, whichever, so `$ty` must not be a union, whose
            // fields overlap (one of them may leave bytes uninitialised that another covers):
            // reading a union's field is `unsafe`, and this function is not (its body is not in any
            // `unsafe` block the macro is called from). Never called; the parameter is the cheapest
            // way to a value to read.
            #[allow(dead_code)]
            fn __fields(__gpu_aligned_value: $ty) -> $ty {
                let _ = __gpu_aligned_value.$member0;
                $ty {
                    $member0: $crate::__private::never::<$fty0>(),
                    $($member: $crate::__private::never::<$fty>()),*
                }
            }

            // Why the impls below are sound: the checks above hold, so `$ty` is laid out as C lays
            // out its fields, is 1, 2, 4, 8 or 16 bytes, aligned to its size, and its fields cover
            // every byte; each field is `GpuData` (required by `field_of`), hence `Pod`: any bit
            // pattern, all zeroes included, is a valid value of every field and so of `$ty`.

            // SAFETY: `FACTS` is built from `size_of`, `align_of` and `offset_of!` of `$ty` itself,
            // every field is `GpuData`, and the checks above (no padding, the rule) run for this
            // very type. `GpuData` and `GpuAligned` follow from the blanket impls.
            #[automatically_derived]
            unsafe impl $crate::__private::Derived for $ty {
                type Kind = $crate::__gpu_aligned_rule!(kind $rule, $ty);
                const FACTS: $crate::GpuLayout = $crate::__private::facts(
                    $name,
                    $crate::__private::size_of::<Self>(),
                    $crate::__private::align_of::<Self>(),
                    &__GPU_ALIGNED_FIELDS,
                );
            }

            // SAFETY: every field is `Pod`, so all zeroes is a valid `$ty`.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Zeroable for $ty {}

            // SAFETY: no padding, every field `Pod`, laid out as C lays out its fields; `Copy +
            // 'static` the compiler checks. The bound is under `for<'__a>` so that a struct without
            // `Copy` leaves the impl unusable rather than in error: the `Derived` impl
            // (`DerivesCopy` is its supertrait) says it once, with the fix.
            #[automatically_derived]
            unsafe impl $crate::__private::bytemuck::Pod for $ty
            where
                for<'__a> $ty: $crate::__private::core::marker::Copy,
            {
            }

            $crate::__private::cuda_traits!($ty);
        };

        // The size, from `size_of` alone, in a constant of its own: a field
        // that is not GPU data leaves `__GPU_ALIGNED_FIELDS` in error, and
        // with it the constant above, and this still reports.
        #[doc(hidden)]
        const _: () = { $($size)* };
    };
    (
        generic;
        rule: $rule:ident;
        type: $ty:ident;
        params: [$($param:ident),+];
        element: $elem:ident;
        name: $name:literal;
        count: $count:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        phantoms: [$($phantom:tt)*];
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            // Padding-free for every instantiation, by construction: every field is `$elem` or an
            // array of it (proven below, where `$elem` is opaque) or a `PhantomData`, and the
            // instantiation with `u8` everywhere has no hole, so the `#[repr]` adds none (see
            // `generic_has_no_padding`). That is all `Zeroable`, `Pod`, `GpuData` and cudarc's
            // traits need, for every `$elem: GpuData`.
            $crate::__private::generic_has_no_padding(
                <$ty<$($crate::__gpu_aligned_u8!($param)),+>
                    as $crate::__private::Derived>::CONTIGUOUS,
            );

            // The field list is the struct's own (as in the first arm, with each `PhantomData`
            // written as one), and each field not listed as a `PhantomData` is `$elem` or an array
            // of it. No bounds here: a `where` clause could make `Element` hold for other types.
            #[allow(dead_code)]
            fn __fields<$($param),+>() -> ($ty<$($param),+>, $ty<$($param),+>) {
                $($crate::__private::is_element::<$elem, $fty>();)*
                (
                    $ty {
                        $($member: $crate::__private::never::<$fty>(),)*
                        $($phantom: $crate::__private::core::marker::PhantomData,)*
                    },
                    $ty { ..$crate::__private::never::<$ty<$($param),+>>() },
                )
            }

            // SAFETY: `FACTS` is built from `size_of`, `align_of` and `offset_of!` of each
            // instantiation, every field is `$elem: GpuData` (or a `PhantomData`), no instantiation
            // has padding (see above), and `ELEMENT` checks the rule per instantiation.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::Derived for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
                Self: $crate::__private::DerivesCopy,
            {
                type Kind = $crate::__gpu_aligned_rule!(generic $rule);
                const ELEMENT: $crate::GpuLayout = $crate::__private::checked_layout(
                    <Self as $crate::__private::Derived>::FACTS,
                );
                const CONTIGUOUS: $crate::__private::core::primitive::bool = {
                    let mut end = 0;
                    let mut contiguous = true;
                    $(
                        contiguous &= $crate::__private::offset_of!(Self, $member) == end;
                        end += $crate::__private::size_of::<$fty>();
                    )*
                    contiguous & (end == $crate::__private::size_of::<Self>())
                };
                const FACTS: $crate::GpuLayout = $crate::__private::c_layout($crate::__private::facts(
                    $name,
                    $crate::__private::size_of::<Self>(),
                    $crate::__private::align_of::<Self>(),
                    &$crate::__private::Fields::new([$(
                        $crate::__private::field_of::<$fty>(
                            $fname,
                            $crate::__private::offset_of!(Self, $member),
                            $padding,
                        )
                    ),*]),
                ));
            }

            // SAFETY: every field is `Pod` (`$elem: GpuData`) or a
            // `PhantomData`, so all zeroes is a valid value.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::bytemuck::Zeroable
                for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
            {
            }

            // SAFETY: no instantiation has padding, every field is `Pod` or
            // a `PhantomData`; `Copy + 'static` the compiler checks.
            #[automatically_derived]
            unsafe impl<$($param: 'static),+> $crate::__private::bytemuck::Pod
                for $ty<$($param),+>
            where
                $elem: $crate::GpuData,
                Self: $crate::__private::core::marker::Copy,
            {
            }

            $crate::__private::cuda_traits!(generic [$($param),+] $elem $ty);
        };
    };
    (
        checks_only;
        rule: $rule:ident;
        type: $ty:ident;
        name: $name:literal;
        count: $count:literal;
        align: $align:literal;
        fields: [$({ $member:tt: $fty:ty, $fname:literal, $padding:literal })*];
        shape: $shape:ident;
        blame: { $($blame:tt)* };
    ) => {
        #[doc(hidden)]
        #[allow(unused_qualifications, clippy::all)]
        const _: () = {
            $crate::__private::derives_copy::<$ty>();

            // The rule, over the layout C gives the field list (with the
            // `align(N)` written, if any): what the struct will be once its
            // `#[repr]` is fixed. Only evaluated next to another error.
            let shapes = [$((
                $crate::__private::size_of::<$fty>(),
                $crate::__private::align_of::<$fty>(),
            )),*];
            let (size, align) = $crate::__private::repr_c_size(&shapes, $align);
            let fields = $crate::__private::c_fields(&shapes, [$(($fname, $padding)),*]);
            let $shape = $crate::__private::Shape { name: $name, size, align, fields: &fields };
            $($blame)*
            $crate::__gpu_aligned_rule!(reject_in $rule, $shape);

            #[allow(dead_code)]
            fn __field_types() {
                $(let _: $crate::GpuType = $crate::__private::type_of::<$fty>();)*
            }
        };
    };
}

/// The rule `__gpu_aligned_derive!` checks, `element` (1, 2, 4, 8 or 16 bytes, aligned to its size,
/// no holes: `#[derive(GpuAligned)]`) or `data` (no holes, any size: `#[derive(GpuData)]`), and the
/// kind of data it proves: each check and the kind it allows are chosen by the same word, here, so
/// no caller can pair a kind with a weaker check. Nothing here is `unsafe`; any other word does not
/// expand.
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_rule {
    (holds element, $fields:ident, $ty:ident) => {
        $fields.follow_rule(
            $crate::__private::size_of::<$ty>(),
            $crate::__private::align_of::<$ty>(),
        )
    };
    (holds data, $fields:ident, $ty:ident) => {
        $fields.no_holes($crate::__private::size_of::<$ty>())
    };
    (reject element, $ty:ident) => {
        $crate::__private::reject::<$ty>()
    };
    (reject data, $ty:ident) => {
        $crate::__private::reject_holes::<$ty>()
    };
    (reject_in element, $shape:ident) => {
        $crate::__private::reject_in(&$shape)
    };
    (reject_in data, $shape:ident) => {
        $crate::__private::reject_holes_in(&$shape)
    };
    (kind element, $ty:ident) => {
        $crate::__private::kind::Element
    };
    // Chosen by the compiler from the size and alignment it laid out.
    (kind data, $ty:ident) => {
        <$crate::__private::kind::Of<
            {
                $crate::__private::kind::of(
                    $crate::__private::size_of::<$ty>(),
                    $crate::__private::align_of::<$ty>(),
                )
            },
        > as $crate::__private::kind::Pick>::Kind
    };
    // A generic struct's kind cannot depend on its type arguments: an
    // element checked per instantiation (`ELEMENT`), or data.
    (generic element) => {
        $crate::__private::kind::Element
    };
    (generic data) => {
        $crate::__private::kind::Data
    };
}

/// cudarc's `DeviceRepr` and `ValidAsZeroBits` for a GPU type, when this crate is built with
/// `cuda`; nothing otherwise. The derive cannot see this crate's features, so it expands this
/// macro, which was defined knowing them.
#[cfg(feature = "cuda")]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ident) => {
        // SAFETY: the impl holds only where `$ty` is `GpuData` (the bound, which the caller cannot
        // forge: `GpuData` is an `unsafe trait`, implemented by this crate for its own types and by
        // the blanket impl for a checked `Derived`), so `Pod`: `Copy`, no padding, every bit
        // pattern (all zeroes included) valid, so its bytes can be copied to the device or passed
        // as a kernel argument as they are, and a zeroed allocation holds valid values. Its layout
        // is C's and matches CUDA's, by the layout rules. The bound is under `for<'__a>` so that a
        // type that is not `GpuData` leaves the impl unusable rather than in error: the derive
        // reports why, once.
        unsafe impl $crate::__private::cudarc::driver::DeviceRepr for $ty where
            for<'__a> $ty: $crate::GpuData
        {
        }
        // SAFETY: as above: all zeroes is a valid `$ty` (`Zeroable`).
        unsafe impl $crate::__private::cudarc::driver::ValidAsZeroBits for $ty where
            for<'__a> $ty: $crate::GpuData
        {
        }
    };
    (generic [$($param:ident),+] $elem:ident $ty:ident) => {
        // SAFETY: as above, for every instantiation that is `GpuData`
        // (the bound; see the generic arm of `__gpu_aligned_derive`).
        unsafe impl<$($param: 'static),+> $crate::__private::cudarc::driver::DeviceRepr
            for $ty<$($param),+>
        where
            $elem: $crate::GpuData,
            Self: $crate::GpuData,
        {
        }
        // SAFETY: as above: all zeroes is a valid value (`Zeroable`).
        unsafe impl<$($param: 'static),+> $crate::__private::cudarc::driver::ValidAsZeroBits
            for $ty<$($param),+>
        where
            $elem: $crate::GpuData,
            Self: $crate::GpuData,
        {
        }
    };
}

/// Without the `cuda` feature there is no cudarc to implement traits of.
#[cfg(not(feature = "cuda"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __gpu_aligned_cuda_traits {
    ($ty:ident) => {};
    (generic [$($param:ident),+] $elem:ident $ty:ident) => {};
}
