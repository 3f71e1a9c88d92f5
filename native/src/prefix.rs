//! ijson prefixes of the open containers, shared by the sinks that report
//! or select values by prefix: the JSON writer here, and the binding's
//! `rows`, `parse` and `items`/`kvitems`.
//!
//! The rules are the Python drivers' (`_Scope` in `toonstream/decoder.py`),
//! which follow ijson's yajl2_c backend edge cases included: an object
//! member's prefix is `parent.key`, except in the root object where it is
//! `key` (so `{"": {"": 1}}` gives `"."`); an array element's is
//! `parent.item`, or `item` when the parent prefix is empty.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Map,
    Array,
    /// a tabular array (its rows are objects at `child`)
    Table,
    /// a keyed table (its entries are objects at `key(entry)`)
    Keyed,
}

/// An open container and its consumer's mark `M` (what it needs of it).
pub struct Scope<M> {
    pub kind: Kind,
    /// the container's own prefix
    pub prefix: String,
    /// the root container (its members are not dotted)
    pub root: bool,
    /// the prefix of the next child value (set per key in a map)
    pub child: String,
    pub mark: M,
}

impl<M> Scope<M> {
    pub fn new(kind: Kind, prefix: String, root: bool, mark: M) -> Self {
        let child = if matches!(kind, Kind::Array | Kind::Table) {
            item_prefix(&prefix)
        } else {
            prefix.clone()
        };
        Scope {
            kind,
            prefix,
            root,
            child,
            mark,
        }
    }

    /// The prefix of the value under `name` in this object.
    pub fn key(&self, name: &str) -> String {
        let mut p = String::with_capacity(self.prefix.len() + 1 + name.len());
        self.write_key(name, &mut p);
        p
    }

    /// A key of this object was read: the next value's prefix is the key's
    /// (the buffer is reused: no allocation per member once it is long enough).
    pub fn set_key(&mut self, name: &str) {
        let mut child = std::mem::take(&mut self.child);
        child.clear();
        self.write_key(name, &mut child);
        self.child = child;
    }

    fn write_key(&self, name: &str, out: &mut String) {
        out.push_str(&self.prefix);
        if !self.root {
            out.push('.');
        }
        out.push_str(name);
    }
}

/// The prefix of an array's elements.
pub fn item_prefix(prefix: &str) -> String {
    if prefix.is_empty() {
        "item".to_string()
    } else {
        format!("{prefix}.item")
    }
}

/// The prefix of the next value: the innermost scope's child, or `""` at the root.
pub fn value_prefix<M>(scopes: &[Scope<M>]) -> &str {
    scopes.last().map_or("", |s| s.child.as_str())
}
