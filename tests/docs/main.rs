//! The docs and examples quote the compiler and the code; these tests fail
//! when a quote goes stale.

/// The demo prints the compiler's error for a 12-byte `Float3`; the ui test
/// holds what the compiler prints today.
#[test]
fn the_demo_quotes_the_compilers_error_for_a_12_byte_float3() {
    let demo = include_str!("../../runtime/examples/demo.rs");
    let expected = include_str!("../../ui-tests/ui/float3-is-12-bytes.stderr");
    let start = demo
        .find("const FLOAT3_ERROR: &str = r\"")
        .expect("the demo's FLOAT3_ERROR")
        + "const FLOAT3_ERROR: &str = r\"".len();
    let quoted = &demo[start..start + demo[start..].find("\";").expect("the end of the quote")];
    assert_eq!(
        quoted, expected,
        "runtime/examples/demo.rs quotes a stale error; it should read:\n{expected}"
    );
}
