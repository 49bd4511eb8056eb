//! The READMEs, the crate docs and the examples quote the code and the
//! compiler, and the docs name files of the repository; these tests fail
//! when a quote goes stale, a named file is gone, or an example needs more
//! than `gpu-aligned` to build. (The crate docs' own examples are doctests,
//! the package README's examples are also built by `.ci/package` in a crate
//! that depends on `gpu-aligned` alone, and the layout report's doc asserts
//! the report it shows.)

const README: &str = include_str!("../../README.md");
/// The runtime's package README: what crates.io shows, and the start of the
/// crate docs (`lib.rs` includes it).
const PACKAGE_README: &str = include_str!("../../runtime/README.md");
const DERIVE_README: &str = include_str!("../../derive/README.md");
const CRATE_DOCS: &str = include_str!("../../runtime/src/lib.rs");
/// How the crate docs start.
const README_INCLUDE: &str = "#![doc = include_str!(\"../README.md\")]\n";
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

/// The repository README's Rust is not compiled by itself: each of its
/// blocks is also in the package README, which runs as the crate docs'
/// doctests and which `.ci/package` builds in a user's crate.
#[test]
fn every_rust_block_of_the_readme_is_in_the_package_readme() {
    assert!(
        CRATE_DOCS.starts_with(README_INCLUDE),
        "the crate docs start with the package README"
    );
    let rust = blocks(README, "rust");
    assert!(!rust.is_empty(), "the README shows an example");
    let package = blocks(PACKAGE_README, "rust");
    for block in rust {
        assert!(
            package.contains(&block),
            "this README example is not in runtime/README.md:\n{block}"
        );
    }
}

/// The package READMEs start with the command that adds the crate, then an
/// example, and link only to absolute addresses: crates.io shows them
/// without the repository's files.
#[test]
fn the_package_readmes_start_with_cargo_add_and_link_absolutely() {
    for (name, readme) in [("runtime", PACKAGE_README), ("derive", DERIVE_README)] {
        let mut fences = readme.split("```").skip(1).step_by(2);
        assert_eq!(
            fences.next(),
            Some("sh\ncargo add gpu-aligned\n"),
            "{name}/README.md's first block adds the crate"
        );
        assert!(
            fences
                .next()
                .is_some_and(|block| block.starts_with("rust\n")),
            "{name}/README.md's second block is an example"
        );
        for link in readme.split("](").skip(1) {
            let target = &link[..link.find(')').expect("a closed link")];
            assert!(
                target.starts_with("https://"),
                "{name}/README.md links {target}, which the package lacks"
            );
        }
    }
}

/// Whether `line` names a path that starts at `krate` (`bytemuck::...`, or
/// `use bytemuck`), rather than at `gpu_aligned` (`gpu_aligned::bytemuck::`,
/// or an import from `gpu_aligned`).
fn names_crate_directly(line: &str, krate: &str) -> bool {
    let code = line.trim_start().trim_start_matches("# ");
    if code.starts_with("use gpu_aligned::") {
        return false; // `use gpu_aligned::backend::cuda::{cudarc::driver::...}`
    }
    let pattern = format!("{krate}::");
    line.match_indices(&pattern).any(|(at, _)| {
        !line[..at].ends_with("::")
            && !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
    }) || code.starts_with(&format!("use {krate}"))
}

/// The code blocks of the doc comments in `source` (`///` or `//!`), as
/// lines.
fn doc_code_blocks(source: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut inside: Option<Vec<&str>> = None;
    for line in source.lines() {
        let Some(doc) = line
            .trim_start()
            .strip_prefix("///")
            .or_else(|| line.trim_start().strip_prefix("//!"))
        else {
            continue;
        };
        if doc.trim_start().starts_with("```") {
            match inside.take() {
                Some(block) => blocks.push(block),
                None => inside = Some(Vec::new()),
            }
        } else if let Some(block) = &mut inside {
            block.push(doc);
        }
    }
    blocks
}

/// Every example in the crate docs and the package README builds in a
/// crate that depends on `gpu-aligned` alone (doctests see every
/// dependency of the crate, so they would not notice): bytemuck and cudarc
/// are named through the crate's re-exports.
#[test]
fn the_examples_name_bytemuck_and_cudarc_through_the_crate() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let mut sources = vec![(
        "runtime/README.md".to_owned(),
        as_doc_comment(PACKAGE_README, "//!"),
    )];
    let mut dirs = vec![root.join("runtime/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source folder") {
            let path = entry.expect("a source file").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                sources.push((path.display().to_string(), text));
            }
        }
    }
    let mut lines = 0;
    for (file, source) in &sources {
        for block in doc_code_blocks(source) {
            lines += block.len();
            for krate in ["bytemuck", "cudarc"] {
                // `use gpu_aligned::bytemuck;` (or `...::cuda::cudarc;`) names it for the block.
                let imported = block.iter().any(|line| {
                    let line = line.trim_start().trim_start_matches("# ");
                    line.starts_with("use gpu_aligned::") && line.ends_with(&format!("::{krate};"))
                });
                let Some(line) = block
                    .iter()
                    .find(|line| !imported && names_crate_directly(line, krate))
                else {
                    continue;
                };
                panic!(
                    "{file}: this example names {krate} directly, which a crate depending on \
                     gpu-aligned alone lacks (write gpu_aligned::{krate}, or \
                     gpu_aligned::backend::cuda::cudarc):\n{line}"
                );
            }
        }
    }
    assert!(
        lines > 500,
        "only {lines} example lines found: the scan is broken"
    );
    assert!(names_crate_directly(
        "let b = bytemuck::bytes_of(&v);",
        "bytemuck"
    ));
    assert!(!names_crate_directly(
        "gpu_aligned::bytemuck::bytes_of(&v)",
        "bytemuck"
    ));
}

/// The build-script recipe in the header's docs is the build script that
/// `.ci/package` builds and runs in a crate of its own.
#[test]
fn the_header_docs_build_script_recipe_is_the_one_ci_runs() {
    let docs = include_str!("../../runtime/src/header/mod.rs");
    let script = include_str!("../../.ci/build-script-check/build.rs");
    let block = format!(
        "//! ```rust,ignore\n{}//! ```\n",
        as_doc_comment(script, "//!")
    );
    assert!(
        docs.contains(&block),
        "runtime/src/header/mod.rs's build.rs recipe differs from .ci/build-script-check/build.rs"
    );
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

/// The package README states the same minimum Rust version as
/// the manifest (`.ci/msrv` checks that it is the true minimum, and that
/// the README states the `cuda` feature's).
#[test]
fn the_docs_state_the_declared_rust_version() {
    let manifest = include_str!("../../Cargo.toml");
    let declared = manifest
        .lines()
        .find_map(|line| line.strip_prefix("rust-version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("the workspace's rust-version");
    let package = format!("the rest of the crate needs Rust {declared}");
    assert!(
        PACKAGE_README.contains(&package),
        "runtime/README.md should say: {package}"
    );
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
        ("docs/", include_str!("../../docs/NCCL.md")),
        ("runtime/src/", CRATE_DOCS),
        ("runtime/", PACKAGE_README),
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
        // The crate docs include the package README from the folder above.
        let text = text.strip_prefix(README_INCLUDE).unwrap_or(text);
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

/// The history's links to raw logs, which moved beside it, and to the
/// pages and latest logs one folder up, resolve. Its code paths are those
/// of the commits it measured, so they are not checked.
#[test]
fn every_link_of_the_history_resolves() {
    let history = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .join("docs/history");
    let text = include_str!("../../docs/history/results-2026-11.md");
    let mut linked = 0;
    for link in text.split("](").skip(1) {
        let target = &link[..link.find(')').expect("a closed link")];
        let target = target.split('#').next().unwrap_or_default();
        if target.is_empty() || target.contains("://") {
            continue;
        }
        linked += 1;
        assert!(
            !target.starts_with("../..") && history.join(target).exists(),
            "docs/history/{target} is linked but does not exist"
        );
    }
    assert!(linked > 10, "only {linked} links found: the scan is broken");
}
