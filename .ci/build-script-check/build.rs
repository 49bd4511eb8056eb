// build.rs: writes the CUDA header of the types in src/gpu_types.rs, which
// the crate and this script both compile, so the .cu side is regenerated
// whenever the Rust types change.
#[path = "src/gpu_types.rs"]
mod gpu_types;

use gpu_aligned::header::CudaHeader;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    println!("cargo:rerun-if-changed=src/gpu_types.rs");
    let mut header = CudaHeader::new();
    header.add::<gpu_types::Particle>()?.add_soa::<gpu_types::Body>()?;
    let out = std::path::Path::new(&std::env::var("OUT_DIR")?).join("gpu_types.cuh");
    std::fs::write(out, header.render())?;
    Ok(())
}
