//! A hash index over keys that live elsewhere: the strict duplicate-key
//! check of big objects (the machine's key set, past its linear part) and
//! of keyed tables' entry keys (the binding's `KeySet`, fed from Python and
//! from split runs) share it.  Each owner keeps its keys in one buffer of
//! its own (no allocation per key) and numbers them in insertion order; the
//! index maps a key's hash to the number of the first key with that hash,
//! and the owner's own comparison tells the keys with one hash apart.
//!
//! The hash is SipHash, randomly keyed (as std's `HashSet`): crafted
//! collisions cannot make the check quadratic.  Keys whose hash an earlier
//! key has (not met in practice) go to a short list, searched only for that
//! hash.
//!
//! ```
//! use toonstream_native::keys::KeyIndex;
//! let keys = ["a", "b", "a"];
//! let mut held: Vec<&str> = Vec::new();
//! let mut index: KeyIndex = KeyIndex::default();
//! let mut fresh = Vec::new();
//! for k in keys {
//!     let h = index.hash(k.as_bytes());
//!     let seen = index.find(h, |i| held[i] == k);
//!     if !seen {
//!         index.add(h, held.len());
//!         held.push(k);
//!     }
//!     fresh.push(!seen);
//! }
//! assert_eq!(fresh, [true, true, false]);
//! ```

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher, RandomState};

/// The index: a key's hash to the number of the first key with that hash;
/// the later keys with a hash already taken in `more`.
#[derive(Default)]
pub struct KeyIndex<S = RandomState> {
    state: S,
    // (the crate's tests force collisions through these)
    pub(crate) first: HashMap<u64, usize, BuildHasherDefault<Prehashed>>,
    pub(crate) more: Vec<(u64, usize)>,
}

impl<S: BuildHasher> KeyIndex<S> {
    /// An empty index whose keys are hashed by `state`.
    pub fn with_hasher(state: S) -> Self {
        KeyIndex {
            state,
            first: HashMap::default(),
            more: Vec::new(),
        }
    }

    /// The hash [`find`](Self::find) and [`add`](Self::add) take for `key`.
    #[inline]
    pub fn hash(&self, key: &[u8]) -> u64 {
        self.state.hash_one(key)
    }

    /// Whether a key with hash `h` is indexed for which `is(number)` holds
    /// (the owner compares its key `number` with the one sought).
    #[inline]
    pub fn find(&self, h: u64, is: impl Fn(usize) -> bool) -> bool {
        match self.first.get(&h) {
            None => false,
            // (a key with this hash: the same key, or one of the rare others)
            Some(&i) => is(i) || self.more.iter().any(|&(hh, j)| hh == h && is(j)),
        }
    }

    /// Index key `number` under its hash `h` (the caller has checked with
    /// [`find`](Self::find) that no equal key is indexed).
    #[inline]
    pub fn add(&mut self, h: u64, number: usize) {
        match self.first.entry(h) {
            Entry::Vacant(v) => {
                v.insert(number);
            }
            Entry::Occupied(_) => self.more.push((h, number)),
        }
    }

    /// Room for `n` more keys.
    pub fn reserve(&mut self, n: usize) {
        self.first.reserve(n);
    }
}

/// The hasher of a table whose keys are hashes already (SipHash values):
/// the key is its own hash.
#[derive(Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // (only u64 keys are hashed with it; any other input still hashes)
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key the same hash: all but the first in `more`.
    #[derive(Default)]
    struct Same;

    impl BuildHasher for Same {
        type Hasher = Same;
        fn build_hasher(&self) -> Same {
            Same
        }
    }

    impl Hasher for Same {
        fn finish(&self) -> u64 {
            7
        }
        fn write(&mut self, _: &[u8]) {}
    }

    fn insert<S: BuildHasher>(
        index: &mut KeyIndex<S>,
        held: &mut Vec<Vec<u8>>,
        key: &[u8],
    ) -> bool {
        let h = index.hash(key);
        if index.find(h, |i| held[i] == key) {
            return false;
        }
        index.add(h, held.len());
        held.push(key.to_vec());
        true
    }

    #[test]
    fn keys_with_one_hash_are_told_apart() {
        let words: [&[u8]; 7] = [b"a", b"b", b"", b"ab", b"\xc3\xa9", b"b", b"a"];
        let want = [true, true, true, true, true, false, false];
        let (mut sip, mut sip_held) = (KeyIndex::<RandomState>::default(), Vec::new());
        let (mut same, mut same_held) = (KeyIndex::with_hasher(Same), Vec::new());
        for (w, fresh) in words.iter().zip(want) {
            assert_eq!(insert(&mut sip, &mut sip_held, w), fresh, "{w:?}");
            assert_eq!(insert(&mut same, &mut same_held, w), fresh, "{w:?}");
        }
        for w in words.iter().chain([&&b"c"[..], &&b"ba"[..]]) {
            let held = words.contains(w);
            let found = (
                sip.find(sip.hash(w), |i| sip_held[i] == *w),
                same.find(same.hash(w), |i| same_held[i] == *w),
            );
            assert_eq!(found, (held, held), "{w:?}");
        }
        assert_eq!(
            (sip_held.len(), same_held.len(), same.more.len()),
            (5, 5, 4)
        );
    }
}
