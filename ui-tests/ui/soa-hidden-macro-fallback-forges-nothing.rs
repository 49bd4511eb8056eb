// Called by hand with identifiers, as it must be, the fallback arm gives a
// struct of no columns and nothing else: no `bytemuck::Pod`, no `Send` or
// `Sync`, no GPU element.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

gpu_aligned::__gpu_soa_derive! {
    fallback: type: Padded, params: []
}

fn pod<T: gpu_aligned::bytemuck::Pod>() {}
fn element<T: gpu_aligned::GpuAligned>() {}

fn main() {
    assert_eq!(<Padded as gpu_aligned::soa::GpuSoa>::COLUMNS.len(), 0);
    pod::<Padded>();
    element::<Padded>();
}
