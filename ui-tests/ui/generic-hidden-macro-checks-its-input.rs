// The runtime macro the derive expands to, called by hand with a shape the
// derive refuses: a field that is not the parameter, declared a
// `PhantomData`, and an `align(8)` that pads `Padded<u8>`. Neither gets
// `Pod` for any instantiation.
#[derive(Clone, Copy)]
#[repr(C)]
struct Mixed<T> {
    a: T,
    b: u8,
}

gpu_aligned::__private::derive_impls! {
    generic;
    rule: element;
    type: Mixed;
    params: [T];
    element: T;
    name: "Mixed";
    count: 1usize;
    fields: [{ a: T, "a", false }];
    phantoms: [b];
}

#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Padded<T> {
    a: T,
}

gpu_aligned::__private::derive_impls! {
    generic;
    rule: element;
    type: Padded;
    params: [T];
    element: T;
    name: "Padded";
    count: 1usize;
    fields: [{ a: T, "a", false }];
    phantoms: [];
}

fn main() {}
