//! Two threads for the rows of a big tabular array (native/PLAN.md §3): a
//! chunk that continues a table is cut at a line feed near the middle of
//! the table's rows in it; the first half is decoded here as usual while a
//! fork of the machine and of the sink ([`ForkRows`]) reads the second half
//! on another thread; the fork's output is then joined in order, up to the
//! last line it read as a row of that table with nothing pending.
//!
//! No grammar is decided here: the fork hands its lines to the same
//! [`Machine::line`](crate::machine) as the decoder does (rows are split,
//! checked and typed by that code; a table's rows hold no raw line feed, so
//! a cut at one is a cut between rows).  Only what the fork read *as rows
//! of the same table, in the state the first half left* is used: the join
//! checks that the first half left the machine and the sink where the fork
//! assumed (the same table on top, holding a row, no blank line pending,
//! room in its declared count, no error of the sink waiting); else the
//! fork's work is dropped and the second half is decoded here.  The fork
//! stops at the first line that is not such a row (the table's end, an
//! error); from that line on the decoder reads on its own, so every error
//! (code, message, line, column, line text) and every check is the
//! single-threaded one, and the output before an error is the same.
//!
//! Memory: the fork's output for its half (the chunk is the caller's).

use std::thread;

use crate::error::Stop;
use crate::events::ForkRows;
use crate::lines::LineSplitter;
use crate::machine::{ForkPoint, Machine};
use crate::Decoder;

/// Each half of a cut is at least this long: less is not worth a thread.
const HALF: usize = 1 << 19;
/// The rows of a table in a chunk are read on two threads when they are at
/// least this long ([`Decoder::feed_two_threads`]).
pub const TWO_THREADS_MIN: usize = 2 * HALF;
/// Where no fork can be made, the input is decoded in pieces of about this
/// size, a fork tried after each (a table may have begun).
const PIECE: usize = 1 << 16;

/// What a fork read: its first `lines` lines (`bytes` bytes) held `rows`
/// rows of its table and made its output up to `mark`.
#[derive(Clone, Copy, Debug, Default)]
struct Read {
    lines: u64,
    bytes: usize,
    rows: u64,
    mark: usize,
}

/// A fork of the decoder and the sink, for the lines after a cut.
struct Fork<S> {
    lines: LineSplitter,
    machine: Machine,
    at: ForkPoint,
    sink: S,
}

enum Step<S> {
    /// decode this many bytes here
    Feed(usize),
    /// the first `mid` bytes here, `mid..end` (complete lines) by the fork too
    Cut {
        mid: usize,
        end: usize,
        fork: Box<Fork<S>>,
    },
}

impl Decoder {
    /// [`Decoder::feed`], with the rows of a big tabular array (a megabyte
    /// or more of them in `data`) read on two threads: the second half's
    /// rows go to a fork of the sink ([`ForkRows`]) whose output is joined
    /// in order.  The outcome (what the sink holds, errors, the decoder's
    /// state) is `feed`'s, however `data` is cut (see `split.rs`).
    pub fn feed_two_threads<S: ForkRows>(
        &mut self,
        data: &[u8],
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.feed_cut(data, sink, HALF)
    }

    /// Rows the innermost tabular array still declares, when the rows that
    /// come next could be read on two threads by [`Decoder::feed_two_threads`]
    /// (0 else): a caller that feeds small chunks can gather them while a
    /// big table's rows come (each half of a cut is [`TWO_THREADS_MIN`]`/2`
    /// bytes or more).
    pub fn rows_ahead<S: ForkRows>(&self, sink: &S) -> u64 {
        if self.failed.is_some() || self.poisoned || !sink.can_fork_rows() {
            return 0;
        }
        self.machine.rows_left()
    }

    /// [`Decoder::feed_two_threads`] with halves of at least `half` bytes.
    fn feed_cut<S: ForkRows>(
        &mut self,
        data: &[u8],
        sink: &mut S,
        half: usize,
    ) -> Result<(), S::Error> {
        let mut rest = data;
        // (a fork stopped before the end of its half: its stopping line is read here first)
        let mut one_line = false;
        let mut forks = true;
        while !rest.is_empty() {
            let step = if self.failed.is_some() || self.poisoned || !forks {
                Step::Feed(rest.len())
            } else if one_line {
                one_line = false;
                Step::Feed(line_end(rest, 0))
            } else {
                self.step(rest, sink, half)
            };
            let (mid, end, fork) = match step {
                Step::Feed(n) => {
                    self.feed(&rest[..n], sink)?;
                    rest = &rest[n..];
                    continue;
                }
                Step::Cut { mid, end, fork } => (mid, end, fork),
            };
            let (first, second) = rest.split_at(mid);
            let at = fork.at;
            let (done, forked) = thread::scope(|scope| {
                let other = thread::Builder::new()
                    .name("toonstream-rows".into())
                    .spawn_scoped(scope, move || read_rows(&second[..end - mid], *fork));
                let done = self.feed(first, sink);
                match other.map(|h| h.join()) {
                    Ok(Ok(forked)) => (done, Some(forked)),
                    Ok(Err(panic)) => std::panic::resume_unwind(panic),
                    Err(_) => (done, None), // (no thread: the second half is read here)
                }
            });
            done?;
            match forked {
                Some((read, fork))
                    if self.machine.joins_rows(&at, read.rows) && sink.joins_rows() =>
                {
                    self.lines.skip_lines(read.lines);
                    let line = self.lines.lines_emitted;
                    self.machine.join_rows(read.rows, line);
                    sink.join_rows(fork, read.mark, read.rows, line);
                    self.forked_rows += read.rows;
                    rest = &second[read.bytes..];
                    one_line = read.bytes < end - mid;
                }
                _ => {
                    rest = second;
                    forks = false;
                }
            }
        }
        Ok(())
    }

    /// What to do with `rest`: a cut in the middle of the rows the innermost
    /// table still declares, when they are long enough and both the machine
    /// and the sink can fork; else a piece to decode here.
    fn step<S: ForkRows>(&self, rest: &[u8], sink: &mut S, half: usize) -> Step<S> {
        if rest.len() < 2 * half {
            return Step::Feed(rest.len());
        }
        let piece = || Step::Feed(line_end(rest, PIECE.min(half)));
        let left = self.machine.rows_left();
        if left == 0 {
            return piece();
        }
        // (complete lines only: the last, partial one stays the decoder's)
        let Some(end) = memchr::memrchr(b'\n', rest).map(|i| i + 1) else {
            return Step::Feed(rest.len());
        };
        // Where the declared rows end if every line is one of them: the cut
        // is in their middle (a document of many middling tables is not cut
        // where the first half would leave the table).
        let rows_end = usize::try_from(left - 1)
            .ok()
            .and_then(|n| memchr::memchr_iter(b'\n', &rest[..end]).nth(n))
            .map_or(end, |i| i + 1);
        if rows_end < 2 * half {
            return Step::Feed(rows_end);
        }
        let mid = line_end(rest, rows_end / 2);
        if mid >= end {
            return piece();
        }
        let (Some((machine, at)), Some(sink)) = (self.machine.fork_rows(), sink.fork_rows()) else {
            return piece();
        };
        Step::Cut {
            mid,
            end,
            fork: Box::new(Fork {
                lines: self.lines.fork(),
                machine,
                at,
                sink,
            }),
        }
    }
}

/// The offset after the first line feed at or after `at` (or the end).
fn line_end(data: &[u8], at: usize) -> usize {
    match data.get(at..).and_then(|d| memchr::memchr(b'\n', d)) {
        Some(i) => at + i + 1,
        None => data.len(),
    }
}

/// The fork reads `data` (complete lines) up to the first line that is not
/// a row of its table, or an error; what it read up to the last row with
/// nothing pending is what can be joined.
fn read_rows<S: ForkRows>(data: &[u8], fork: Fork<S>) -> (Read, S) {
    let Fork {
        mut lines,
        mut machine,
        mut sink,
        ..
    } = fork;
    let mut read = Read::default();
    let mut n = 0;
    // (any stop, an error or the table's end, ends the fork's part: the
    // decoder reads that line again and says what it is)
    let _ = lines.feed(data, &mut |no, line| -> Result<(), Stop<()>> {
        machine
            .line(no, line, &mut sink)
            .map_err(|_| Stop::Sink(()))?;
        n += 1;
        if let (Some(rows), Some(mark)) = (machine.forked_rows(), sink.rows_mark()) {
            read = Read {
                lines: n,
                bytes: 0,
                rows,
                mark,
            };
        } else if !machine.in_forked_table() {
            return Err(Stop::Sink(()));
        }
        Ok(())
    });
    if read.lines > 0 {
        read.bytes = usize::try_from(read.lines - 1)
            .ok()
            .and_then(|k| memchr::memchr_iter(b'\n', data).nth(k))
            .map_or(data.len(), |i| i + 1);
    }
    (read, sink)
}

#[cfg(test)]
mod tests {
    use crate::json::{JsonError, JsonOptions, JsonWriter};
    use crate::{Decoder, Options};

    /// The binding's sequence of calls: the output (all of it, up to an
    /// error) and the error; `half: None` is the single-threaded `feed`.
    fn run(
        doc: &[u8],
        opts: &JsonOptions,
        strict: bool,
        cuts: &[usize],
        half: Option<usize>,
    ) -> (Vec<u8>, Option<JsonError>, u64) {
        let mut d = Decoder::new(Options {
            strict,
            max_line_length: 300,
            ..Options::default()
        })
        .unwrap();
        let mut w = JsonWriter::new(opts.clone());
        let mut out = Vec::new();
        let r = (|| {
            let mut at = 0;
            for &c in cuts.iter().chain([doc.len()].iter()) {
                let c = c.clamp(at, doc.len());
                let piece = &doc[at..c];
                at = c;
                match half {
                    Some(h) => d.feed_cut(piece, &mut w, h),
                    None => d.feed(piece, &mut w),
                }
                .map_err(|e| w.first_error(e))?;
                w.check()?;
                out.extend(w.take_output());
            }
            w.check()?;
            d.end_input(&mut w).map_err(|e| w.first_error(e))?;
            w.check()?;
            d.close(&mut w)?;
            w.finish()
        })();
        out.extend(w.take_output());
        (out, r.err(), d.forked_rows())
    }

    /// Single-threaded and cut at every offset near the middle (and with
    /// small halves, several cuts per feed) agree; returns the rows forked.
    fn same(doc: &[u8], opts: &JsonOptions, strict: bool) -> u64 {
        let want = run(doc, opts, strict, &[], None);
        assert_eq!(want.2, 0);
        let mut forked = 0;
        let mid = doc.len() / 2;
        let mut cases: Vec<(Vec<usize>, usize)> = vec![(vec![], 40), (vec![], 64), (vec![], 1000)];
        for k in 0..24 {
            cases.push((vec![mid - 12 + k], 50));
        }
        for k in 0..6 {
            cases.push((vec![17 + k * 5], 50));
        }
        cases.push(((1..doc.len() / 500).map(|i| i * 500).collect(), 100));
        cases.push(((1..doc.len() / 77).map(|i| i * 77).collect(), 30));
        for (cuts, half) in cases {
            let got = run(doc, opts, strict, &cuts, Some(half));
            assert_eq!(
                (String::from_utf8_lossy(&got.0), &got.1),
                (String::from_utf8_lossy(&want.0), &want.1),
                "cuts {cuts:?} half {half}"
            );
            forked += got.2;
        }
        forked
    }

    fn table(n: usize, width_of: impl Fn(usize) -> Option<String>) -> String {
        let mut s = format!("[{n}]{{id,name,score,ok}}:\n");
        for i in 0..n {
            match width_of(i) {
                Some(line) => s.push_str(&line),
                None => s.push_str(&format!(
                    "  {i},{},{}.5,{}\n",
                    match i % 5 {
                        0 => format!("\"a,{i}\""),
                        1 => "\"q\\\"x\"".to_string(),
                        2 => "null".to_string(),
                        _ => format!("n{i} x"),
                    },
                    i % 9,
                    i % 2 == 0
                )),
            }
        }
        s
    }

    fn jsonl() -> JsonOptions {
        JsonOptions {
            jsonl: true,
            ..JsonOptions::default()
        }
    }

    #[test]
    fn rows_on_two_threads_are_the_rows_of_one() {
        let doc = table(400, |_| None);
        assert!(same(doc.as_bytes(), &jsonl(), true) > 0);
        assert!(same(doc.as_bytes(), &JsonOptions::default(), true) > 0);
        let pretty = JsonOptions {
            indent: Some(2),
            ..JsonOptions::default()
        };
        assert!(same(doc.as_bytes(), &pretty, false) > 0);
        // CRLF, comments and blank lines among the rows (non-strict), a BOM
        let crlf = format!("\u{feff}{}", doc.replace('\n', "\r\n"));
        assert!(same(crlf.as_bytes(), &jsonl(), true) > 0);
        let notes = table(400, |i| match i % 37 {
            3 => Some(format!("  # note {i}\n  {i},x,1,true\n")),
            5 => Some(format!("\n  {i},x,1,true\n")),
            _ => None,
        });
        assert!(same(notes.as_bytes(), &jsonl(), false) > 0);
        same(notes.as_bytes(), &jsonl(), true);
    }

    #[test]
    fn tables_under_a_path_and_in_list_items() {
        let rows = table(300, |_| None).replace("\n  ", "\n    ");
        let doc = format!("a: 1\ndata:\n  rows{rows}  b: 2\nz: 3\n");
        for path in ["data.rows", "data", ""] {
            let opts = JsonOptions {
                path: Some(path.into()),
                jsonl: path == "data.rows",
                ..JsonOptions::default()
            };
            assert!(same(doc.as_bytes(), &opts, true) > 0, "{path}");
        }
        // a path into the rows: no fork (the rows are outside the value written)
        let opts = JsonOptions {
            path: Some("data.rows.item.name".into()),
            ..JsonOptions::default()
        };
        assert_eq!(same(doc.as_bytes(), &opts, true), 0);
        // many middling tables, one per list item
        let mut doc = String::from("[6]:\n");
        for t in 0..6 {
            doc.push_str(&format!("  - t[{}]{{x,y}}:\n", 40 + t * 30));
            for i in 0..40 + t * 30 {
                doc.push_str(&format!("      {i},{t}\n"));
            }
            doc.push_str("    k: v\n");
        }
        assert!(same(doc.as_bytes(), &jsonl(), true) > 0);
        assert!(same(doc.as_bytes(), &JsonOptions::default(), false) > 0);
    }

    #[test]
    fn errors_at_any_row_are_the_single_threaded_ones() {
        let bad_rows: [&[u8]; 12] = [
            b"  1,2\n",                             // width
            b"  1,\"open,2,true\n",                 // unterminated string
            b"  1,\"a\\q\",2,true\n",               // bad escape
            b"   1,a,2,true\n",                     // indentation (not a multiple)
            b"    1,a,2,true\n",                    // over-indented
            b"\t1,a,2,true\n",                      // tab
            b"  1,a,2,true,5\n",                    // width
            b"  k: v\n",                            // key-value at row depth
            b"x: 1\n",                              // the table ends (count)
            b"  1,a,\xff,true\n",                   // invalid UTF-8
            b"\n\n  1,a,2,true\n",                  // blank lines in the array
            b"  1,a,1e99999999999999999999,true\n", // a number the JSON cannot hold
        ];
        let mut forked = 0;
        for bad in bad_rows {
            for at in [2, 150, 199, 200, 201, 260, 398] {
                let text = table(400, |i| (i == at).then(|| "@\n".to_string()));
                let k = text.find("@\n").unwrap();
                let t = text.as_bytes();
                let doc = [&t[..k], bad, &t[k + 2..]].concat();
                for strict in [true, false] {
                    forked += same(&doc, &jsonl(), strict);
                }
            }
        }
        assert!(forked > 0);
        // more rows than declared, fewer, and a long line
        let doc = table(400, |_| None).replace("[400]", "[399]");
        same(doc.as_bytes(), &jsonl(), true);
        let doc = table(400, |_| None).replace("[400]", "[401]");
        same(doc.as_bytes(), &JsonOptions::default(), true);
        let doc = table(400, |i| {
            (i == 250).then(|| format!("  1,{},2,true\n", "w".repeat(400)))
        });
        same(doc.as_bytes(), &jsonl(), true);
    }
}
