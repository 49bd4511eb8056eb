// The runtime macro behind the derive, invoked by hand on a union whose
// first field covers every byte: a pattern naming that one field matches a
// union, but the macro also matches `..`, which no union pattern may use,
// so the union gets no `Pod` (writing its shorter field leaves bytes
// uninitialised).
#[derive(Clone, Copy)]
#[repr(C)]
pub union Overlap {
    pub word: u32,
    pub half: u16,
}

gpu_aligned::__gpu_aligned_derive! {
    type: Overlap;
    name: "Overlap";
    count: 1;
    fields: [{ word: u32, "word", false }];
    blame: {};
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Overlap { half: 1 });
}
