// The hidden macro behind `#[derive(GpuData)]` (its `data` rule), called by hand with blame calls
// forged to skip its rejection: a dangling `#[cfg(any())]` that would
// delete the call after it, and a local struct named like the type, which
// the rejection would check instead. The rejection runs whatever the blame
// tokens are, so the padded structs get no impls.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct Dangling {
    a: u8,
    b: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: data;
    type: Dangling;
    name: "Dangling";
    count: 2;
    fields: [
        { a: u8, "a", false }
        { b: u32, "b", false }
    ];
    size: {};
    blame: { #[cfg(any())] };
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Shadowed {
    a: u8,
    b: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: data;
    type: Shadowed;
    name: "Shadowed";
    count: 2;
    fields: [
        { a: u8, "a", false }
        { b: u32, "b", false }
    ];
    size: {};
    blame: {
        #[derive(Clone, Copy, gpu_aligned::GpuAligned)]
        #[repr(C)]
        struct Shadowed {
            a: u32,
        }
    };
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Dangling { a: 1, b: 2 });
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Shadowed { a: 1, b: 2 });
}
