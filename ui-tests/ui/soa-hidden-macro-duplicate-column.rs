// The hidden macro, called directly, cannot be given two columns of one
// name: the kernel view would have two members for one field.
#[derive(Clone, Copy)]
pub struct Body {
    pub mass: f32,
    pub id: u32,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: Body,
    columns: BodyColumns,
    where: [],
    fields: [mass: f32, mass: f32, id: u32],
}

fn main() {}
