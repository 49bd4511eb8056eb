// The hidden macro behind the derive, called by hand under
// `#![forbid(unsafe_code)]` on a `repr(Rust)` struct whose fields the
// compiler reordered: a field list that covers every byte, at offsets that
// are not C's. The macro checks the layout the compiler computed and
// refuses it.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(align(8))]
struct Reordered {
    a: u8,
    b: u8,
    c: u16,
    d: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: element;
    type: Reordered;
    name: "Reordered";
    count: 4;
    fields: [
        { a: u8, "a", false }
        { b: u8, "b", false }
        { c: u16, "c", false }
        { d: u32, "d", false }
    ];
    size: {};
    blame: {};
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Reordered { a: 1, b: 2, c: 3, d: 4 });
}
