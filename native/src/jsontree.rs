//! One JSON value parsed into a flat tree of nodes, with each number
//! already in the text the reference writes for the value it reads: what
//! the binding's encoder walks to write a JSON line as a TOON list item with
//! no Python objects in between (`encode_jsonl`'s pass two for records that
//! are not one flat table).
//!
//! The grammar is [`crate::jsonl`]'s (the stdlib reader's strict JSON as
//! the table encoder takes it): anything that reader treats with more care
//! than a plain token, or rejects, is a [`Decline`], and the caller has the
//! reference parse that line.  Strings are unescaped; numbers become the
//! reference's text (`-0` is `0`; a float its shortest form when the token
//! is that float's `repr`, else the exact decimal); a key written twice
//! keeps its first place and its last value, as a Python dict built from
//! the JSON does.
//!
//! Memory: the nodes and the text of one value, kept between values (a
//! [`Doc`] is reused line after line).  No recursion: containers are kept
//! on an explicit stack, at most [`MAX_CHECKED_DEPTH`] deep (deeper values
//! are declined, as `count_values` declines them).
//!
//! ```
//! use toonstream_native::jsontree::{Doc, Node};
//! let mut doc = Doc::new();
//! let root = doc.parse(r#"{"a": [1, 2.50, "x\ty"], "a": -0}"#).unwrap();
//! let Node::Obj(members) = doc.node(root) else { panic!() };
//! let (k, v) = doc.member(members.start, 0);
//! assert_eq!((doc.str(k), doc.num(v)), ("a", "0"));
//! assert_eq!(members.len(), 2); // one member: a key and its value
//! ```

use std::collections::HashMap;
use std::ops::Range;

use crate::jsonl::{Decline, Parser, MAX_CHECKED_DEPTH};

/// A node of the tree: a primitive, or a container whose children are a
/// range of [`Doc`]'s child list (an object's as key, value, key, value...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    Null,
    True,
    False,
    /// a number, as the reference writes its value: a range of the text
    Num(Range<usize>),
    /// a string's contents (unescaped): a range of the text
    Str(Range<usize>),
    /// an array: its items' node ids, a range of the child list
    Arr(Range<usize>),
    /// an object: key and value node ids in turn, a range of the child list
    Obj(Range<usize>),
}

/// The nodes of one parsed JSON value (see the module documentation).
#[derive(Debug, Default)]
pub struct Doc {
    nodes: Vec<Node>,
    kids: Vec<usize>,
    text: String,
    /// children of the open containers, moved to `kids` as each closes
    pending: Vec<usize>,
    /// the open containers: an object?, where their children start in `pending`
    open: Vec<(bool, usize)>,
}

impl Doc {
    pub fn new() -> Self {
        Doc::default()
    }

    /// Parse one line holding one JSON value (whitespace around it), and
    /// return its root node's id.  The previous value's nodes are dropped.
    pub fn parse(&mut self, line: &str) -> Result<usize, Decline> {
        self.nodes.clear();
        self.kids.clear();
        self.text.clear();
        self.pending.clear();
        self.open.clear();
        // The text starts with the line itself: a string without escapes
        // (most) is then a range of it, not a copy of its own.
        self.text.push_str(line);
        let mut p = Parser::new(line);
        loop {
            // a value
            p.ws();
            let rest = &p.s.as_bytes()[p.at..];
            let node = match rest.first() {
                Some(b'"') => {
                    p.at += 1;
                    self.string(&mut p)?
                }
                Some(b't') if rest.starts_with(b"true") => {
                    p.at += 4;
                    Node::True
                }
                Some(b'f') if rest.starts_with(b"false") => {
                    p.at += 5;
                    Node::False
                }
                Some(b'n') if rest.starts_with(b"null") => {
                    p.at += 4;
                    Node::Null
                }
                Some(b'-' | b'0'..=b'9') => {
                    let a = self.text.len();
                    p.number(&mut self.text)?;
                    Node::Num(a..self.text.len())
                }
                Some(&c @ (b'{' | b'[')) => {
                    if self.open.len() >= MAX_CHECKED_DEPTH {
                        return Err(Decline::NotFlat);
                    }
                    p.at += 1;
                    p.ws();
                    let object = c == b'{';
                    let close = if object { b'}' } else { b']' };
                    if p.peek() == Some(close) {
                        p.at += 1;
                        let a = self.kids.len();
                        if object {
                            Node::Obj(a..a)
                        } else {
                            Node::Arr(a..a)
                        }
                    } else {
                        self.open.push((object, self.pending.len()));
                        if object {
                            self.key(&mut p)?;
                        }
                        continue;
                    }
                }
                _ => return Err(Decline::Syntax),
            };
            let mut id = self.push(node);
            // after a value: the next member or item, or the ends of containers
            loop {
                let Some(&(object, from)) = self.open.last() else {
                    p.ws();
                    if p.at != line.len() {
                        return Err(Decline::Syntax); // more after the value
                    }
                    return Ok(id);
                };
                self.pending.push(id);
                p.ws();
                match (p.peek(), object) {
                    (Some(b','), _) => {
                        p.at += 1;
                        if object {
                            self.key(&mut p)?;
                        }
                        break;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        p.at += 1;
                        self.open.pop();
                        let node = self.close(object, from);
                        id = self.push(node);
                    }
                    _ => return Err(Decline::Syntax),
                }
            }
        }
    }

    fn push(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// A string after its opening quote, up to and past the closing one.
    fn string(&mut self, p: &mut Parser<'_>) -> Result<Node, Decline> {
        let a = self.text.len();
        let from = p.at;
        if p.string_into(&mut self.text)? {
            // no escapes: the contents are the line as written (the text's start)
            return Ok(Node::Str(from..p.at - 1));
        }
        Ok(Node::Str(a..self.text.len()))
    }

    /// An object's key and its colon, its node pending.
    fn key(&mut self, p: &mut Parser<'_>) -> Result<(), Decline> {
        p.ws();
        if p.peek() != Some(b'"') {
            return Err(Decline::Syntax);
        }
        p.at += 1;
        let node = self.string(p)?;
        let id = self.push(node);
        self.pending.push(id);
        p.expect(b':')
    }

    /// The node of the container whose children are `pending[from..]`.
    fn close(&mut self, object: bool, from: usize) -> Node {
        if object {
            self.dedupe(from);
        }
        let a = self.kids.len();
        self.kids.extend(self.pending.drain(from..));
        let b = self.kids.len();
        if object {
            Node::Obj(a..b)
        } else {
            Node::Arr(a..b)
        }
    }

    /// An object's members in `pending[from..]` with each key once: at its
    /// first place, with its last value (a Python dict's `d[k] = v` in turn).
    fn dedupe(&mut self, from: usize) {
        let members = &self.pending[from..];
        let n = members.len() / 2;
        let key = |m: usize| match &self.nodes[members[2 * m]] {
            Node::Str(r) => &self.text[r.clone()],
            _ => "",
        };
        // (most objects are small and have no key twice: a check without
        // allocation first, then the rewrite only where it is needed)
        let twice = if n <= 16 {
            // (keys told apart by length and end bytes first: a pair that
            // could be equal is rare, and only then are keys compared)
            let mut seen = 0u64;
            let clash = (0..n).any(|m| {
                let k = key(m).as_bytes();
                let h = (k.len()
                    ^ usize::from(k.first().copied().unwrap_or(0)) << 1
                    ^ usize::from(k.last().copied().unwrap_or(0)) << 2)
                    & 63;
                let hit = seen & (1 << h) != 0;
                seen |= 1 << h;
                hit
            });
            clash && (1..n).any(|i| (0..i).any(|j| key(i) == key(j)))
        } else {
            let mut seen = std::collections::HashSet::with_capacity(n);
            (0..n).any(|i| !seen.insert(key(i)))
        };
        if !twice {
            return;
        }
        let mut at: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut kept: Vec<usize> = Vec::with_capacity(2 * n);
        for m in 0..n {
            let value = members[2 * m + 1];
            match at.get(key(m)) {
                Some(&i) => kept[2 * i + 1] = value,
                None => {
                    at.insert(key(m), kept.len() / 2);
                    kept.push(members[2 * m]);
                    kept.push(value);
                }
            }
        }
        self.pending.truncate(from);
        self.pending.extend(kept);
    }

    /// The node `id`.
    #[inline]
    pub fn node(&self, id: usize) -> &Node {
        &self.nodes[id]
    }

    /// Member `i` (key node, value node) of an object whose children start
    /// at `start` in the child list.
    #[inline]
    pub fn member(&self, start: usize, i: usize) -> (usize, usize) {
        (self.kids[start + 2 * i], self.kids[start + 2 * i + 1])
    }

    /// Child `i` of the child list (an array's item, or an object's key or
    /// value).
    #[inline]
    pub fn kid(&self, i: usize) -> usize {
        self.kids[i]
    }

    /// The text of a string node (empty for any other node).
    #[inline]
    pub fn str(&self, id: usize) -> &str {
        match &self.nodes[id] {
            Node::Str(r) => &self.text[r.clone()],
            _ => "",
        }
    }

    /// The text of a number node (empty for any other node).
    #[inline]
    pub fn num(&self, id: usize) -> &str {
        match &self.nodes[id] {
            Node::Num(r) => &self.text[r.clone()],
            _ => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value as compact JSON-like text (numbers as rendered).
    fn show(doc: &Doc, id: usize) -> String {
        match doc.node(id) {
            Node::Null => "null".into(),
            Node::True => "true".into(),
            Node::False => "false".into(),
            Node::Num(_) => doc.num(id).into(),
            Node::Str(_) => format!("{:?}", doc.str(id)),
            Node::Arr(r) => {
                let items: Vec<String> = r.clone().map(|i| show(doc, doc.kid(i))).collect();
                format!("[{}]", items.join(","))
            }
            Node::Obj(r) => {
                let items: Vec<String> = (0..r.len() / 2)
                    .map(|m| {
                        let (k, v) = doc.member(r.start, m);
                        format!("{:?}:{}", doc.str(k), show(doc, v))
                    })
                    .collect();
                format!("{{{}}}", items.join(","))
            }
        }
    }

    fn parsed(line: &str) -> Result<String, Decline> {
        let mut doc = Doc::new();
        let root = doc.parse(line)?;
        Ok(show(&doc, root))
    }

    #[test]
    fn values_of_every_shape() {
        assert_eq!(parsed(" 1 ").unwrap(), "1");
        assert_eq!(parsed("-0").unwrap(), "0");
        assert_eq!(parsed("1.50").unwrap(), "1.5");
        assert_eq!(parsed("1e2").unwrap(), "100");
        assert_eq!(parsed(r#""a\"b\u00e9""#).unwrap(), r#""a\"bé""#);
        assert_eq!(parsed("[]").unwrap(), "[]");
        assert_eq!(parsed("{ }").unwrap(), "{}");
        assert_eq!(
            parsed(r#"{"a": [1, {"b": [[]], "c": {}}], "d": null, "e": true, "f": false}"#)
                .unwrap(),
            r#"{"a":[1,{"b":[[]],"c":{}}],"d":null,"e":true,"f":false}"#
        );
    }

    #[test]
    fn a_key_twice_keeps_its_first_place_and_last_value() {
        assert_eq!(
            parsed(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap(),
            r#"{"a":3,"b":2}"#
        );
        let wide: Vec<String> = (0..40).map(|i| format!("\"k{}\": {i}", i % 20)).collect();
        let want: Vec<String> = (0..20).map(|i| format!("\"k{i}\":{}", i + 20)).collect();
        assert_eq!(
            parsed(&format!("{{{}}}", wide.join(","))).unwrap(),
            format!("{{{}}}", want.join(","))
        );
    }

    #[test]
    fn declines_what_the_reference_reads_with_more_care() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\": 1} x",
            "NaN",
            "[Infinity]",
            "01",
            "\"\\ud800\"",
            "\"a\tb\"",
            "{1: 2}",
        ] {
            assert!(parsed(bad).is_err(), "{bad:?}");
        }
        let deep = "[".repeat(MAX_CHECKED_DEPTH + 1) + &"]".repeat(MAX_CHECKED_DEPTH + 1);
        assert_eq!(parsed(&deep), Err(Decline::NotFlat));
        let ok = "[".repeat(MAX_CHECKED_DEPTH) + &"]".repeat(MAX_CHECKED_DEPTH);
        assert!(parsed(&ok).is_ok());
    }

    #[test]
    fn a_doc_is_reused() {
        let mut doc = Doc::new();
        let a = doc.parse("[1, 2]").unwrap();
        assert_eq!(show(&doc, a), "[1,2]");
        let b = doc.parse(r#"{"x": "y"}"#).unwrap();
        assert_eq!(show(&doc, b), r#"{"x":"y"}"#);
    }
}
