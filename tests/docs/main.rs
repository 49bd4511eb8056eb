//! The README, the crate docs and the examples quote the code and the
//! compiler, and the docs name files of the repository; these tests fail
//! when a quote goes stale or a named file is gone. (The crate docs' own
//! examples are doctests, and the layout report's doc asserts the report it
//! shows.)

const README: &str = include_str!("../../README.md");
const CRATE_DOCS: &str = include_str!("../../runtime/src/lib.rs");
const FLOAT3_ERROR: &str = include_str!("../../ui-tests/ui/float3-is-12-bytes.stderr");

/// The fenced blocks of `text` whose info string is `lang`.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        let body = &rest[start + open.len()..];
        let end = body.find("```").expect("a closed code block");
        found.push(&body[..end]);
        rest = &body[end + 3..];
    }
    found
}

/// `text` as it reads in `//!` or `///` doc comments.
fn as_doc_comment(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                format!("{prefix}\n")
            } else {
                format!("{prefix} {line}\n")
            }
        })
        .collect()
}

/// The README's Rust is not compiled by itself: each of its blocks is also
/// in the crate docs, where it runs as a doctest.
#[test]
fn every_rust_block_of_the_readme_runs_as_a_crate_doctest() {
    let rust = blocks(README, "rust");
    assert!(!rust.is_empty(), "the README shows an example");
    for block in rust {
        assert!(
            CRATE_DOCS.contains(&as_doc_comment(block, "//!")),
            "this README example is not in runtime/src/lib.rs's crate docs:\n{block}"
        );
    }
}

/// The README and the derive's docs quote the error for a 12-byte struct:
/// its first lines, as the ui test has them today.
#[test]
fn the_readme_and_the_derive_docs_quote_the_compilers_error() {
    let head: String = FLOAT3_ERROR
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(
        blocks(README, "text").contains(&head.as_str()),
        "the README quotes a stale error; it should read:\n{head}"
    );
    assert!(
        CRATE_DOCS.contains(&as_doc_comment(&head, "///")),
        "the derive's docs in runtime/src/lib.rs quote a stale error; it should read:\n{head}"
    );
}

/// The demo prints the compiler's error for a 12-byte `Float3`; the ui test
/// holds what the compiler prints today.
#[test]
fn the_demo_quotes_the_compilers_error_for_a_12_byte_float3() {
    let demo = include_str!("../../runtime/examples/demo.rs");
    let start = demo
        .find("const FLOAT3_ERROR: &str = r\"")
        .expect("the demo's FLOAT3_ERROR")
        + "const FLOAT3_ERROR: &str = r\"".len();
    let quoted = &demo[start..start + demo[start..].find("\";").expect("the end of the quote")];
    assert_eq!(
        quoted, FLOAT3_ERROR,
        "runtime/examples/demo.rs quotes a stale error; it should read:\n{FLOAT3_ERROR}"
    );
}

/// The crate docs and the README state the same minimum Rust versions as
/// the manifest (`.ci/msrv` checks that those are the true minimums).
#[test]
fn the_docs_state_the_declared_rust_version() {
    let manifest = include_str!("../../Cargo.toml");
    let declared = manifest
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("the workspace's rust-version");
    let crate_docs = format!("the rest of the crate needs Rust {declared}");
    assert!(
        CRATE_DOCS.contains(&crate_docs),
        "lib.rs should say: {crate_docs}"
    );
    let readme = format!("Rust {declared} or later");
    assert!(README.contains(&readme), "the README should say: {readme}");
}

/// Every file or folder the README, RESULTS, SOA and the crate docs name
/// (a relative link, or a backticked path under one of the repository's
/// top-level folders) exists, and none of them points outside the
/// repository.
#[test]
fn every_path_the_docs_name_exists_in_the_repository() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let docs = [
        ("", README),
        ("docs/", include_str!("../../docs/RESULTS.md")),
        ("docs/", include_str!("../../docs/SOA.md")),
        ("docs/", include_str!("../../docs/SANITIZER.md")),
        ("runtime/src/", CRATE_DOCS),
    ];
    let top = [
        "runtime/",
        "derive/",
        "tests/",
        "ui-tests/",
        "docs/",
        "benches/",
        "fuzz/",
        "no-std-check/",
        ".ci/",
    ];
    let mut named = 0;
    for (dir, text) in docs {
        assert!(
            !text.contains("../") && !text.contains("GPU-FACTS"),
            "a doc in {dir:?} points outside the repository"
        );
        // Relative Markdown links, without their anchors (the crate docs'
        // links are intra-doc links, which rustdoc checks).
        let links = if dir == "runtime/src/" { "" } else { text };
        for link in links.split("](").skip(1) {
            let target = &link[..link.find(')').expect("a closed link")];
            let target = target.split('#').next().unwrap_or_default();
            if target.is_empty() || target.contains("://") {
                continue;
            }
            named += 1;
            assert!(
                root.join(dir).join(target).exists(),
                "{dir}{target} is linked but does not exist"
            );
        }
        // Paths in code spans, such as `tests/growth/arena.rs`.
        for span in text.split('`').skip(1).step_by(2) {
            for word in span.split_whitespace() {
                let path = word.trim_end_matches([',', ';', ':', ')', '.']);
                if top.iter().any(|dir| path.starts_with(dir)) {
                    named += 1;
                    assert!(
                        root.join(path).exists(),
                        "`{path}` is named but does not exist"
                    );
                }
            }
        }
    }
    assert!(named > 20, "only {named} paths found: the scan is broken");
}
