//! Stub: replaced by the real derive.
use proc_macro::TokenStream;

#[proc_macro_derive(GpuAligned, attributes(gpu_aligned))]
pub fn derive_gpu_aligned(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}

#[proc_macro_attribute]
pub fn padded(_args: TokenStream, input: TokenStream) -> TokenStream {
    input
}
