//! The official TOON 4.0 decode fixtures (read from the pinned toon-spec
//! checkout, never copied): expected values, `shouldError` cases, and the
//! same outcome whole, byte by byte, at every cut and in random splits.

mod common;

use common::{decode_every_way, json_equal, spec_dir};
use serde_json::Value as J;
use toonstream_native::Options;

fn options(case: &J) -> Options {
    let o = &case["options"];
    Options {
        indent_size: o["indentSize"].as_u64().unwrap_or(2) as usize,
        strict: o["strict"].as_bool().unwrap_or(true),
        ..Options::default()
    }
}

/// Run every case of one decode fixture file; returns the failures.
fn run_file(file: &str) {
    let path = spec_dir().join("tests/fixtures/decode").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "spec fixture {} not found ({e}); set TOONSTREAM_SPEC_DIR",
            path.display()
        )
    });
    let doc: J = serde_json::from_str(&text).expect("fixture JSON");
    let cases = doc["tests"].as_array().expect("tests array");
    assert!(!cases.is_empty(), "{file} has no cases");
    let mut failed = Vec::new();
    for case in cases {
        let name = format!("{file}: {}", case["name"].as_str().unwrap_or("?"));
        let input = case["input"].as_str().expect("decode input is a string");
        let out = decode_every_way(input.as_bytes(), options(case), &name);
        let ok = if case["shouldError"].as_bool().unwrap_or(false) {
            out.is_err()
        } else {
            matches!(&out, Ok(v) if json_equal(v, &case["expected"]))
        };
        if !ok {
            failed.push(format!(
                "{name}\n    input: {input:?}\n    got: {out:?}\n    expected: {}",
                case["expected"]
            ));
        }
    }
    println!(
        "{file}: {} passed, {} failed",
        cases.len() - failed.len(),
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} failing:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

macro_rules! fixture_files {
    ($($test:ident => $file:literal),* $(,)?) => {
        $(#[test] fn $test() { run_file($file); })*

        /// Every file of the fixture folder has a test above.
        #[test]
        fn every_fixture_file_is_covered() {
            let known = [$($file),*];
            let dir = spec_dir().join("tests/fixtures/decode");
            let mut n = 0;
            for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{} ({e})", dir.display())) {
                let name = e.expect("entry").file_name().to_string_lossy().into_owned();
                if name.ends_with(".json") {
                    assert!(known.contains(&name.as_str()), "new fixture file {name}: add it to fixture_files!");
                    n += 1;
                }
            }
            assert_eq!(n, known.len());
        }
    };
}

fixture_files! {
    arrays_nested => "arrays-nested.json",
    arrays_primitive => "arrays-primitive.json",
    arrays_tabular => "arrays-tabular.json",
    blank_lines => "blank-lines.json",
    comments => "comments.json",
    delimiters => "delimiters.json",
    indentation_errors => "indentation-errors.json",
    numbers => "numbers.json",
    objects_keyed => "objects-keyed.json",
    objects => "objects.json",
    primitives => "primitives.json",
    root_form => "root-form.json",
    validation_errors => "validation-errors.json",
    whitespace => "whitespace.json",
}
