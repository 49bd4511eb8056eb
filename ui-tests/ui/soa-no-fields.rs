// A structure of arrays needs a column: no fields is refused, braces or not.
#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Empty {}

#[derive(Clone, Copy, gpu_aligned::GpuSoa)]
struct Unit;

fn main() {}
