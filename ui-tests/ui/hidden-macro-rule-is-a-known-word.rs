// The runtime macro's rule is one of its own words: a kind it does not
// check (`whole`, which would claim 16-byte words without a check) does not
// expand, on either arm that writes impls.
#[derive(Clone, Copy)]
#[repr(C)]
struct Small {
    value: u32,
}

gpu_aligned::__private::derive_impls! {
    rule: whole;
    type: Small;
    name: "Small";
    count: 1;
    fields: [{ value: u32, "value", false }];
    size: {};
    blame: {};
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Wrap<T>(T);

gpu_aligned::__private::derive_impls! {
    generic;
    rule: whole;
    type: Wrap;
    params: [T];
    element: T;
    name: "Wrap";
    count: 1;
    fields: [{ 0: T, "0", false }];
    phantoms: [];
}

fn main() {}
