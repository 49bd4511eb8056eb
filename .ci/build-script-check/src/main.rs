//! The header the build script wrote is the one these types give now: a
//! `.cu` file that includes it from `OUT_DIR` follows the Rust types.

mod gpu_types;

use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::float3;
use gpu_types::{Body, Particle};

/// What a kernel compiled with NVRTC (or an nvcc step given `OUT_DIR` as an
/// include path) would include.
const HEADER: &str = include_str!(concat!(env!("OUT_DIR"), "/gpu_types.cuh"));

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut header = CudaHeader::new();
    header.add::<Particle>()?.add_soa::<Body>()?;
    assert_eq!(HEADER, header.render());
    assert!(HEADER.contains("struct __align__(16) Particle {"));
    assert!(HEADER.contains("struct Body_soa {"));

    let particle = Particle { position: float3::new(1.0, 2.0, 3.0), mass: 0.5 };
    let body = Body { mass: particle.mass, id: 7 };
    assert_eq!((particle.position.z, body.id), (3.0, 7));
    println!("build script check: ok");
    Ok(())
}
