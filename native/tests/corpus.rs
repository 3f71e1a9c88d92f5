//! The adversarial corpus of the Python suite (`tests/corpus`, read in
//! place): `y_` must decode to the JSON beside it, `n_` must fail in strict
//! mode, `i_` as `policies.json` says; each under every chunking.

mod common;

use common::{corpus_dir, decode_every_way, json_equal};
use serde_json::Value as J;
use toonstream_native::Options;

fn cases(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir();
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus not found at {} ({e})", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(".toon")
        })
        .map(|p| {
            let stem = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (stem, std::fs::read(&p).expect("corpus file"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn y_cases_decode_to_their_json() {
    let ys = cases("y_");
    assert!(ys.len() >= 20, "corpus has {} y_ cases", ys.len());
    for (name, data) in ys {
        let json =
            std::fs::read_to_string(corpus_dir().join(format!("{name}.json"))).expect("y_ json");
        let expected: J = serde_json::from_str(&json).expect("y_ json parses");
        let got = decode_every_way(&data, Options::default(), &name);
        assert!(
            matches!(&got, Ok(v) if json_equal(v, &expected)),
            "{name}: got {got:?}, expected {expected}"
        );
    }
}

#[test]
fn n_cases_fail() {
    let ns = cases("n_");
    assert!(ns.len() >= 50, "corpus has {} n_ cases", ns.len());
    for (name, data) in ns {
        let got = decode_every_way(&data, Options::default(), &name);
        assert!(got.is_err(), "{name}: decoded to {got:?}");
    }
}

#[test]
fn i_cases_follow_the_policies() {
    let text = std::fs::read_to_string(corpus_dir().join("policies.json")).expect("policies.json");
    let policies: J = serde_json::from_str(&text).expect("policies parse");
    let is = cases("i_");
    assert_eq!(
        is.len(),
        policies.as_object().map_or(0, |o| o.len()),
        "one policy per i_ case"
    );
    for (name, data) in is {
        let p = &policies[&name];
        let opts = Options {
            strict: p["options"]["strict"].as_bool().unwrap_or(true),
            ..Options::default()
        };
        let got = decode_every_way(&data, opts, &name);
        match p["error"].as_str() {
            Some(code) => assert!(
                matches!(&got, Err(w) if w.code == code),
                "{name}: got {got:?}, want {code}"
            ),
            None => assert!(
                matches!(&got, Ok(v) if json_equal(v, &p["value"])),
                "{name}: got {got:?}, want {}",
                p["value"]
            ),
        }
    }
}
