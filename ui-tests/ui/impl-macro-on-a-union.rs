// The runtime macro behind the derive, invoked by hand on a union whose
// first field covers every byte: a union expression naming that one field
// type-checks, but the macro also reads a field in safe code, which no
// union allows, so the union gets no `Pod` (writing its shorter field
// leaves bytes uninitialised).
#[derive(Clone, Copy)]
#[repr(C)]
pub union Overlap {
    pub word: u32,
    pub half: u16,
}

gpu_aligned::__gpu_aligned_derive! {
    rule: element;
    type: Overlap;
    name: "Overlap";
    count: 1;
    fields: [{ word: u32, "word", false }];
    size: {};
    blame: {};
}

fn main() {
    let _: &[u8] = gpu_aligned::__private::bytemuck::bytes_of(&Overlap { half: 1 });
}
