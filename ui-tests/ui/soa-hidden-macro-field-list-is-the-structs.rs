// The hidden macro, called directly, cannot be given fewer columns than
// fields, nor a column of another type than its field.
#[derive(Clone, Copy)]
pub struct Body {
    pub mass: f32,
    pub id: u32,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: Body,
    columns: BodyColumns,
    fields: [mass: f32],
}

#[derive(Clone, Copy)]
pub struct Other {
    pub mass: f32,
}

gpu_aligned::__gpu_soa_derive! {
    vis: pub,
    type: Other,
    columns: OtherColumns,
    fields: [mass: u32],
}

fn main() {}
