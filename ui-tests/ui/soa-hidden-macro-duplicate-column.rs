// The hidden macro, called directly, cannot be given two columns of one
// name (a raw identifier is the same name): the kernel view would have two
// members for one field. `<Name>Columns`, a struct with a field per column,
// refuses it.
#[derive(Clone, Copy)]
pub struct Body {
    pub mass: f32,
    pub id: u32,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: Body,
    columns: BodyColumns,
    fields: [mass: f32, r#mass: f32, id: u32],
}

fn main() {}
