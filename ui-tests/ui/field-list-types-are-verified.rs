// The runtime macro behind the derive proves each type in the field list it
// is given is the field's own, and that no field is left out: calling it by
// hand with `u32` for an `f32` field (same size, alignment and offset, but
// the header would name the wrong type), or without a zero-sized field,
// does not compile.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Sample {
    value: f32,
    count: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: element;
    type: Sample;
    name: "Sample";
    count: 2;
    fields: [{ value: u32, "value", false } { count: u32, "count", false }];
    size: {};
    blame: {};
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Marked {
    value: u32,
    marker: core::marker::PhantomData<u8>,
}

gpu_aligned::__private::derive_impls! {
    rule: element;
    type: Marked;
    name: "Marked";
    count: 1;
    fields: [{ value: u32, "value", false }];
    size: {};
    blame: {};
}

fn main() {}
