// The runtime macro behind `#[derive(GpuData)]`, called by hand with a
// forged field list: `value` named twice to cover the hole after `tag`,
// then `tag` given a wider type than it has. Neither compiles.
#[derive(Clone, Copy)]
#[repr(C)]
struct Holey {
    tag: u8,
    value: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: data;
    type: Holey;
    name: "Holey";
    count: 2;
    fields: [{ value: u32, "value", false } { value: u32, "value", false }];
    size: {};
    blame: {};
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Widened {
    tag: u8,
    value: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: data;
    type: Widened;
    name: "Widened";
    count: 2;
    fields: [{ tag: u32, "tag", false } { value: u32, "value", false }];
    size: {};
    blame: {};
}

fn main() {}
