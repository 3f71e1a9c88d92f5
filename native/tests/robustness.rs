//! Any input decodes or fails with a `DecodeError`, never a panic, with the
//! same outcome however it is chunked; limits hold without recursion or
//! pre-allocation; a failing sink poisons the decoder.

mod common;

use common::{corpus_dir, decode, decode_chunks, Rng, Where};
use toonstream_native::value::{Value, ValueBuilder};
use toonstream_native::{codes, Cells, DecodeError, Decoder, Options, Scalar, Sink, Table};

const PIECES: &[&[u8]] = &[
    b" ",
    b"  ",
    b"- ",
    b":",
    b",",
    b"|",
    b"\t",
    b"\"",
    b"[",
    b"]",
    b"{",
    b"}",
    b"#",
    b"\n",
    b"\r\n",
    b"\\",
    b"0",
    b"-0",
    b"1e5",
    b"a",
    b"[2]",
    b"{a,b}",
    b"\xc3\xa9",
    b"\xff",
    b"\xe2\x82",
    b"\xef\xbb\xbf",
    b"\\u",
    b"[2:]{a}:",
    b"- [1]: x",
    b"x:",
    b"\n  - ",
    b"\n    ",
];

fn mutate(data: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = data.to_vec();
    for _ in 0..1 + rng.below(3) {
        let i = rng.below(b.len() + 1);
        match rng.below(3) {
            0 if !b.is_empty() => {
                b.remove(i.min(b.len() - 1));
            }
            _ => {
                let p = PIECES[rng.below(PIECES.len())];
                b.splice(i..i, p.iter().copied());
            }
        }
    }
    b
}

fn same_every_way(data: &[u8], opts: Options) -> common::Outcome {
    let whole = decode(data, opts);
    assert_eq!(
        decode_chunks(data, opts, &vec![1; data.len()]),
        whole,
        "byte by byte: {data:?}"
    );
    let mut rng = Rng::new(data.len() as u64);
    for _ in 0..4 {
        let cuts: Vec<usize> = (0..data.len() / 3 + 1).map(|_| 1 + rng.below(7)).collect();
        assert_eq!(
            decode_chunks(data, opts, &cuts),
            whole,
            "split {cuts:?}: {data:?}"
        );
    }
    whole
}

#[test]
fn mutated_corpus_is_chunking_invariant() {
    let mut rng = Rng::new(42);
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(corpus_dir())
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toon"))
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    seeds.sort();
    let (mut ok, mut err) = (0, 0);
    for seed in &seeds {
        for strict in [true, false] {
            for _ in 0..15 {
                let data = mutate(seed, &mut rng);
                match same_every_way(
                    &data,
                    Options {
                        strict,
                        ..Options::default()
                    },
                ) {
                    Ok(_) => ok += 1,
                    Err(_) => err += 1,
                }
            }
        }
    }
    assert!(ok > 100 && err > 100, "{ok} decoded, {err} failed");
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng::new(7);
    for _ in 0..3000 {
        let n = rng.below(40);
        let data: Vec<u8> = (0..n)
            .map(|_| {
                let p = PIECES[rng.below(PIECES.len())];
                p[rng.below(p.len())]
            })
            .collect();
        let _ = same_every_way(&data, Options::default());
        let _ = same_every_way(
            &data,
            Options {
                strict: false,
                indent_size: 1 + rng.below(3),
                ..Options::default()
            },
        );
    }
}

fn err(data: &[u8], opts: Options) -> Where {
    decode(data, opts).expect_err("should fail")
}

#[test]
fn deep_nesting_is_a_limit_not_a_stack_overflow() {
    // (values checked against the Python engine: too_deep 100 199 / 1 20005)
    let doc: String = (0..150)
        .map(|d| format!("{}k:\n", "  ".repeat(d)))
        .collect();
    for strict in [true, false] {
        let e = err(
            doc.as_bytes(),
            Options {
                strict,
                max_depth: 100,
                ..Options::default()
            },
        );
        assert_eq!((e.code, e.line, e.column), (codes::TOO_DEEP, 100, 199));
    }
    // 20k nested field groups on one line: a limit, parsed without recursion
    let fields = format!("t[1]{{{}b{}:\n  1", "a{".repeat(20_000), "}".repeat(20_001));
    let e = err(fields.as_bytes(), Options::default());
    assert_eq!((e.code, e.line, e.column), (codes::TOO_DEEP, 1, 20_005));
    // 5000 levels decode (no recursion in the machine or the builder)
    let doc: String = (0..5_000)
        .map(|d| format!("{}k:\n", " ".repeat(d)))
        .collect();
    let v = decode(
        doc.as_bytes(),
        Options {
            indent_size: 1,
            ..Options::default()
        },
    )
    .expect("5000 levels");
    let mut depth = 0;
    let mut cur = &v;
    while let Value::Object(m) = cur {
        match m.first() {
            Some((_, next)) => {
                depth += 1;
                cur = next;
            }
            None => break,
        }
    }
    assert_eq!(depth, 5_000);
    std::mem::forget(v); // (a 5000-deep Drop would recurse in the test's Value, not in the decoder)
}

#[test]
fn declared_lengths_are_never_allocated() {
    // 19 digits: accepted as a claim, then a count mismatch (strict) or fine (not)
    let doc = b"t[9999999999999999999]{a}:\n  1\nl[9999999999999999999]:\n  - x\n";
    let e = err(doc, Options::default());
    assert_eq!((e.code, e.line), (codes::COUNT_MISMATCH, 1));
    assert!(decode(
        doc,
        Options {
            strict: false,
            ..Options::default()
        }
    )
    .is_ok());
    let e = err(b"t[99999999999999999999]: x", Options::default());
    assert_eq!(e.code, codes::BAD_LENGTH);
}

#[test]
fn limits() {
    let e = err(
        b"a: 1\nb: 123456\n",
        Options {
            max_line_length: 6,
            ..Options::default()
        },
    );
    assert_eq!((e.code, e.line, e.column), (codes::LINE_TOO_LONG, 2, 7));
    let e = err(
        b"t[1]{a,b,c}:\n  1,2,3",
        Options {
            max_fields: 2,
            ..Options::default()
        },
    );
    assert_eq!((e.code, e.line), (codes::TOO_MANY_FIELDS, 1));
    let e = err(
        b"n: -12345",
        Options {
            max_number_length: 4,
            ..Options::default()
        },
    );
    assert_eq!((e.code, e.line, e.column), (codes::NUMBER_TOO_LONG, 1, 4));
    // (plain digits too: the int fast path stops at the limit, as the reference's does)
    let e = err(
        b"n: 12345",
        Options {
            max_number_length: 4,
            ..Options::default()
        },
    );
    assert_eq!((e.code, e.line, e.column), (codes::NUMBER_TOO_LONG, 1, 4));
    // start_line shifts every line number
    let e = err(
        b"a: 1\nb[2]: x",
        Options {
            start_line: 10,
            ..Options::default()
        },
    );
    assert_eq!((e.code, e.line), (codes::COUNT_MISMATCH, 11));
    // the root object does not count against max_depth (as in Python)
    let d0 = Options {
        max_depth: 0,
        ..Options::default()
    };
    assert!(decode(b"a: 1", d0).is_ok());
    let e = err(b"a:\n  b: 1", d0);
    assert_eq!((e.code, e.line, e.column), (codes::TOO_DEEP, 1, 1));
    assert!(Decoder::new(Options {
        indent_size: 0,
        ..Options::default()
    })
    .is_err());
}

#[test]
fn errors_are_sticky_and_feed_after_close_fails() {
    let mut d = Decoder::new(Options::default()).expect("options");
    let mut b = ValueBuilder::new();
    let e = d.feed(b"a[2]: x\n", &mut b).expect_err("count");
    assert_eq!(d.feed(b"b: 1\n", &mut b), Err(e.clone()));
    assert_eq!(d.close(&mut b), Err(e));
    let mut d = Decoder::new(Options::default()).expect("options");
    d.feed(b"a: 1", &mut b).expect("feed");
    d.close(&mut b).expect("close");
    let e = d.feed(b"x", &mut b).expect_err("closed");
    assert_eq!((e.code, e.line), (codes::CLOSED, 2));
}

/// A sink whose own error is not a DecodeError: it fails on the third row.
struct Picky {
    rows: usize,
}

#[derive(Debug, PartialEq)]
enum PickyError {
    Decode(&'static str),
    TooManyRows,
}

impl From<DecodeError> for PickyError {
    fn from(e: DecodeError) -> Self {
        PickyError::Decode(e.code)
    }
}

impl Sink for Picky {
    type Error = PickyError;
    fn start_object(&mut self) -> Result<(), PickyError> {
        Ok(())
    }
    fn end_object(&mut self) -> Result<(), PickyError> {
        Ok(())
    }
    fn key(&mut self, _: &str) -> Result<(), PickyError> {
        Ok(())
    }
    fn scalar(&mut self, _: Scalar<'_>) -> Result<(), PickyError> {
        Ok(())
    }
    fn start_array(&mut self, _: u64) -> Result<(), PickyError> {
        Ok(())
    }
    fn values(&mut self, _: &Cells<'_>) -> Result<(), PickyError> {
        Ok(())
    }
    fn end_array(&mut self) -> Result<(), PickyError> {
        Ok(())
    }
    fn start_table(&mut self, t: &Table<'_>) -> Result<(), PickyError> {
        assert_eq!(
            (t.width, t.declared, t.line, t.line_text),
            (2, 5, 1, "t[5]{a,b}:")
        );
        Ok(())
    }
    fn row(&mut self, cells: &Cells<'_>) -> Result<(), PickyError> {
        assert_eq!(cells.len(), 2);
        assert_eq!(cells.get(1), Some(Scalar::Str("x y")));
        self.rows += 1;
        if self.rows == 3 {
            return Err(PickyError::TooManyRows);
        }
        Ok(())
    }
    fn entry(&mut self, _: &str, _: &Cells<'_>) -> Result<(), PickyError> {
        Ok(())
    }
    fn end_table(&mut self, _: bool) -> Result<(), PickyError> {
        Ok(())
    }
}

#[test]
fn a_failing_sink_poisons_the_decoder() {
    let mut d = Decoder::new(Options::default()).expect("options");
    let mut s = Picky { rows: 0 };
    let doc = b"t[5]{a,b}:\n  1, x y\n  2,\"x y\"\n  3,x y\n  4,x y\n";
    assert_eq!(d.feed(doc, &mut s), Err(PickyError::TooManyRows));
    assert_eq!(
        d.feed(b"", &mut s),
        Err(PickyError::Decode(codes::POISONED))
    );
}

/// `feed_lines` calls its hook once per line the machine is done with, in
/// order and however the input is chunked (whole-chunk UTF-8 validation or
/// line by line after a bad byte); the hook's error stops the feed.
#[test]
fn feed_lines_marks_every_line_once() {
    let doc: &[u8] = "a: 1\nb:\n  c: é\n  d: [2]: x,y\ne: \"q\"\n".as_bytes();
    for cut in 0..=doc.len() {
        let mut d = Decoder::new(Options::default()).expect("options");
        let mut b = ValueBuilder::default();
        let mut seen = Vec::new();
        for part in [&doc[..cut], &doc[cut..]] {
            d.feed_lines(part, &mut b, |n, _, _| {
                seen.push(n);
                Ok(())
            })
            .expect("valid");
        }
        assert_eq!(seen, [1, 2, 3, 4, 5], "cut at {cut}");
    }
    // lines before an invalid byte are done (and marked) before the error
    let mut d = Decoder::new(Options::default()).expect("options");
    let mut b = ValueBuilder::default();
    let mut seen = Vec::new();
    let r = d.feed_lines(b"a: 1\nb: 2\nc: \xff\nd: 4\n", &mut b, |n, _, _| {
        seen.push(n);
        Ok(())
    });
    assert_eq!(
        r.map_err(|e| (e.code, e.line)),
        Err((codes::INVALID_UTF8, 3))
    );
    assert_eq!(seen, [1, 2]);
    // the hook's error stops the feed after its line
    let mut d = Decoder::new(Options::default()).expect("options");
    let mut b = ValueBuilder::default();
    let mut seen = Vec::new();
    let r = d.feed_lines(b"a: 1\nb: 2\nc: 3\n", &mut b, |n, _, _| {
        seen.push(n);
        if n == 2 {
            Err(DecodeError {
                code: codes::POISONED,
                message: "stop".into(),
                line: n,
                column: 1,
                line_text: String::new(),
            })
        } else {
            Ok(())
        }
    });
    assert_eq!(r.map_err(|e| e.message), Err("stop".to_string()));
    assert_eq!(seen, [1, 2]);
}

/// Records with repeated key lists (the machine checks a key that is the
/// previous sibling object's next key without a set) and now and then a
/// key list that departs from it, a duplicate, a longer or shorter object,
/// nested objects and keyed tables: the first duplicate in document order
/// is the error, at its line, under every chunking.
#[test]
fn duplicate_keys_are_found_whatever_the_previous_objects_held() {
    let vocab = [
        "a",
        "b",
        "c",
        "id",
        "name",
        "a_longer_key",
        "another_long_key",
        "é",
        "x.y",
    ];
    let mut rng = Rng::new(7);
    let mut dups = 0;
    for doc in 0..400 {
        let mut lines: Vec<String> = Vec::new();
        let mut first_dup: Option<u64> = None;
        let records = 1 + rng.below(12);
        lines.push(format!("[{records}]:"));
        let mut last_keys: Vec<&str> = (0..4).map(|i| vocab[i]).collect();
        for _ in 0..records {
            // mostly the previous record's keys; sometimes another list
            let mut keys = last_keys.clone();
            match rng.below(6) {
                0 => keys.push(vocab[rng.below(vocab.len())]),
                1 if keys.len() > 1 => {
                    keys.pop();
                }
                2 => {
                    let i = rng.below(keys.len());
                    keys[i] = vocab[rng.below(vocab.len())];
                }
                3 => {
                    let (i, j) = (rng.below(keys.len()), rng.below(keys.len()));
                    keys.swap(i, j);
                }
                _ => {}
            }
            let mut seen: Vec<&str> = Vec::new();
            for (n, k) in keys.iter().enumerate() {
                let lead = if n == 0 { "  - " } else { "    " };
                let nested = rng.below(8) == 0;
                if nested {
                    lines.push(format!("{lead}{k}:"));
                } else {
                    lines.push(format!("{lead}{k}: {n}"));
                }
                if seen.contains(k) && first_dup.is_none() {
                    first_dup = Some(lines.len() as u64);
                }
                seen.push(k);
                if nested {
                    // a nested object (its own stack position and template)
                    let inner = ["p", "q", "p", "r"];
                    let m = 1 + rng.below(3);
                    let mut inner_seen: Vec<&str> = Vec::new();
                    for _ in 0..m {
                        let ik = inner[rng.below(inner.len())];
                        lines.push(format!("      {ik}: 1"));
                        if inner_seen.contains(&ik) && first_dup.is_none() {
                            first_dup = Some(lines.len() as u64);
                        }
                        inner_seen.push(ik);
                    }
                }
            }
            last_keys = keys;
        }
        let text = lines.join("\n") + "\n";
        let outcome = same_every_way(text.as_bytes(), Options::default());
        match first_dup {
            None => assert!(outcome.is_ok(), "doc {doc}: {outcome:?}\n{text}"),
            Some(line) => {
                dups += 1;
                let e = outcome.expect_err(&format!("doc {doc}: a duplicate\n{text}"));
                assert_eq!(
                    (e.code, e.line),
                    (codes::DUPLICATE_KEY, line),
                    "doc {doc}\n{text}"
                );
            }
        }
    }
    // (both outcomes are common)
    assert!(
        (50..380).contains(&dups),
        "{dups} documents with a duplicate"
    );
}
