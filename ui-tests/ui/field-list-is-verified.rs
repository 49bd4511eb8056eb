// The runtime macro behind the derive proves the field list it is given is
// the struct's own: naming `value` twice to cover the hole after `tag`
// does not compile.
#[derive(Clone, Copy)]
#[repr(C)]
struct Holey {
    tag: u8,
    value: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: element;
    type: Holey;
    name: "Holey";
    count: 2;
    fields: [{ value: u32, "value", false } { value: u32, "value", false }];
    size: {};
    blame: {};
}

fn main() {}
