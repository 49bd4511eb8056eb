// The runtime macro behind `#[derive(GpuData)]`, called by hand on a
// struct with a hole and its true field list: the check is the macro's own,
// so the hole is refused and no `Pod` comes out.
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
    fields: [{ tag: u8, "tag", false } { value: u32, "value", false }];
    size: {};
    blame: {};
}

fn main() {
    let _ = gpu_aligned::__private::bytemuck::bytes_of(&Holey { tag: 1, value: 2 });
}
