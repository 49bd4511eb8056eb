#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Cell {
    alive: bool,
    age: u32,
}

fn main() {}
