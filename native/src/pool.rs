//! Big column buffers kept for reuse, as polars' allocator keeps freed pages.
//!
//! The frame reader's typed columns ([`crate::columns`]) are written into
//! buffers of a few hundred KB per column and run, which Polars frees when a
//! frame is dropped.  With glibc's allocator such a buffer is a fresh mapping
//! each time: every page of it is faulted in (zeroed by the kernel) when it is
//! first written, in every read, and those faults were most of what a warm
//! `read_toon` spent beyond `polars.read_csv` (whose jemalloc keeps the pages
//! a read frees; `benchmarks/README.md`, "TOON → Polars / Arrow").  So the
//! binding gives a released column's buffers back here ([`give`]), and the
//! next run takes them ([`take_zeroed`], [`push_bytes`]): memory already
//! mapped.
//!
//! Bounds: only buffers of at least [`MIN_BYTES`] are kept, at most
//! [`MAX_BYTES`] in all, and none longer than [`MAX_AGE`]: older ones, on
//! every shelf, are freed by the next call that gives or takes one, and by a
//! thread that runs while anything is kept (jemalloc's default decay is 10 s
//! too).  Safe code only: a kept `Vec<T>` is reused as a `Vec<T>`.  No call
//! waits for a lock: a shelf another thread holds is passed by (the buffer
//! freed, or a new one made), so a process forked while one was held cannot
//! hang on it.
//!
//! ```
//! use toonstream_native::pool;
//! let v: Vec<i64> = pool::take_zeroed(100_000);
//! assert!(v.len() == 100_000 && v.iter().all(|&x| x == 0));
//! pool::give(v);                                   // kept (800 KB)
//! let w: Vec<i64> = pool::take_zeroed(90_000);     // the same memory, zeroed again
//! assert_eq!(w.len(), 90_000);
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Smaller buffers are left to the allocator (its arenas reuse them).
pub const MIN_BYTES: usize = 64 << 10;
/// The most kept at once, all element types together.
pub const MAX_BYTES: usize = 256 << 20;
/// A kept buffer not taken again within this is freed.
pub const MAX_AGE: Duration = Duration::from_secs(10);

/// A buffer kept: its capacity in bytes, and when it was given.
struct Kept<T> {
    v: Vec<T>,
    at: Instant,
}

/// The kept buffers of one element type.
pub struct Shelf<T> {
    kept: Mutex<Vec<Kept<T>>>,
}

/// Bytes kept on every shelf (the [`MAX_BYTES`] bound).
static HELD: AtomicUsize = AtomicUsize::new(0);
/// When every shelf was last rid of its old buffers ([`expire_all`]).
static SWEPT: Mutex<Option<Instant>> = Mutex::new(None);

fn bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// Count `size` more bytes kept, if the bound allows.
fn hold(size: usize) -> bool {
    HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
        h.checked_add(size).filter(|&n| n <= MAX_BYTES)
    })
    .is_ok()
}

/// Count `size` bytes no longer kept.
fn release(size: usize) {
    let _ = HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |h| {
        Some(h.saturating_sub(size))
    });
}

impl<T> Shelf<T> {
    const fn new() -> Self {
        Shelf {
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Free what is older than [`MAX_AGE`] (the lock held).
    fn expire(kept: &mut Vec<Kept<T>>, now: Instant) {
        if kept.is_empty() {
            return;
        }
        kept.retain(|k| {
            let fresh = now.duration_since(k.at) < MAX_AGE;
            if !fresh {
                release(bytes(&k.v));
            }
            fresh
        });
    }

    /// The smallest kept buffer whose capacity holds `len` elements (and is
    /// not more than 4 times that: a big one stays for a big request), emptied.
    fn take(&self, len: usize) -> Option<Vec<T>> {
        let mut kept = self.kept.try_lock().ok()?;
        Self::expire(&mut kept, Instant::now());
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, k)| k.v.capacity() >= len && k.v.capacity() / 4 <= len.max(1))
            .min_by_key(|(_, k)| k.v.capacity())
            .map(|(i, _)| i)?;
        let mut v = kept.swap_remove(best).v;
        release(bytes(&v));
        v.clear();
        Some(v)
    }

    fn give(&self, v: Vec<T>) {
        let size = bytes(&v);
        if size < MIN_BYTES {
            return;
        }
        if let Ok(mut kept) = self.kept.try_lock() {
            let now = Instant::now();
            Self::expire(&mut kept, now);
            if hold(size) {
                kept.push(Kept { v, at: now });
            } else {
                return;
            }
        }
        keep_swept();
    }

    /// [`Self::expire`], taking the lock (one shelf's at a time: see [`expire_all`]).
    fn sweep(&self, now: Instant) {
        if let Ok(mut kept) = self.kept.try_lock() {
            Self::expire(&mut kept, now);
        }
    }
}

/// Old buffers freed on every shelf, not only on the one a call uses (a
/// read of strings frees what a read of floats left), at most once a second;
/// called with no shelf's lock held.
fn expire_all() {
    let now = Instant::now();
    match SWEPT.try_lock() {
        Ok(mut last) => {
            if last.is_some_and(|t| now.duration_since(t) < Duration::from_secs(1)) {
                return;
            }
            *last = Some(now);
        }
        Err(_) => return,
    }
    sweep_all(now);
}

fn sweep_all(now: Instant) {
    BYTES.sweep(now);
    INT64.sweep(now);
    FLOAT64.sweep(now);
    INT128.sweep(now);
    VIEWS.sweep(now);
}

/// Whether a sweeper thread is running ([`keep_swept`]).
static SWEEPER: AtomicBool = AtomicBool::new(false);

/// While anything is kept, a thread frees what grows old, so that a process
/// that reads no more tables gets its memory back within about
/// [`MAX_AGE`] and a half, not at its next read.  It ends when nothing is
/// kept (and is started again by the next [`give`]); if it cannot be
/// started, expiry happens on the calls as before.
fn keep_swept() {
    if SWEEPER.swap(true, Ordering::AcqRel) {
        return;
    }
    let started = std::thread::Builder::new()
        .name("toonstream-pool".into())
        .spawn(|| loop {
            std::thread::sleep(MAX_AGE / 2);
            sweep_all(Instant::now());
            if HELD.load(Ordering::Acquire) == 0 {
                SWEEPER.store(false, Ordering::Release);
                // (a buffer given between the check and the store starts another)
                if HELD.load(Ordering::Acquire) == 0 || SWEEPER.swap(true, Ordering::AcqRel) {
                    return;
                }
            }
        });
    if started.is_err() {
        SWEEPER.store(false, Ordering::Release);
    }
}

/// The element types the column buffers are made of.
pub trait Pooled: Sized + Copy + Default + 'static {
    fn shelf() -> &'static Shelf<Self>;
}

macro_rules! shelves {
    ($($t:ty => $name:ident),* $(,)?) => {$(
        static $name: Shelf<$t> = Shelf::new();
        impl Pooled for $t {
            fn shelf() -> &'static Shelf<$t> {
                &$name
            }
        }
    )*};
}

shelves!(u8 => BYTES, i64 => INT64, f64 => FLOAT64, i128 => INT128, u128 => VIEWS);

/// `len` zeros: a kept buffer if one fits, else a new one (its capacity
/// rounded up to a power of two, so that runs of a few more lines can take
/// it again).
pub fn take_zeroed<T: Pooled>(len: usize) -> Vec<T> {
    if len * std::mem::size_of::<T>() < MIN_BYTES {
        return vec![T::default(); len];
    }
    expire_all();
    match T::shelf().take(len) {
        Some(mut v) => {
            v.resize(len, T::default());
            v
        }
        None => {
            let mut v = Vec::with_capacity(len.next_power_of_two());
            v.resize(len, T::default());
            v
        }
    }
}

/// A buffer no longer used, kept for [`take_zeroed`] and [`push_bytes`]
/// (or freed: see the module's bounds).
pub fn give<T: Pooled>(v: Vec<T>) {
    if v.capacity() * std::mem::size_of::<T>() >= MIN_BYTES {
        expire_all();
        T::shelf().give(v)
    }
}

/// `out.extend_from_slice(more)`, growing `out` into a kept buffer (the
/// old one given back) when it is full and big, as `Vec` would double it;
/// a small one grows as a `Vec` does (a frame of a few rows keeps a few bytes).
#[inline(always)]
pub fn push_bytes(out: &mut Vec<u8>, more: &[u8]) {
    let need = out.len() + more.len();
    if out.capacity() < need && need >= MIN_BYTES / 2 {
        grow(out, need);
    }
    out.extend_from_slice(more);
}

/// `out` moved into a buffer of at least `need` bytes (twice its capacity).
#[cold]
#[inline(never)]
fn grow(out: &mut Vec<u8>, need: usize) {
    let want = need.max(2 * out.capacity());
    expire_all();
    let mut next = BYTES
        .take(want)
        .unwrap_or_else(|| Vec::with_capacity(want.next_power_of_two()));
    next.extend_from_slice(out);
    give(std::mem::replace(out, next));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_are_not_kept_and_big_ones_are_zeroed_again() {
        let mut v: Vec<u128> = take_zeroed(MIN_BYTES / 16);
        v.iter_mut().for_each(|x| *x = 7);
        give(v);
        let w: Vec<u128> = take_zeroed(MIN_BYTES / 16 - 3);
        assert!(w.len() == MIN_BYTES / 16 - 3 && w.iter().all(|&x| x == 0));
        let small: Vec<u128> = take_zeroed(3);
        assert_eq!(small, vec![0; 3]);
    }

    #[test]
    fn pushed_bytes_are_all_kept_in_order() {
        let mut out = Vec::new();
        let mut want = Vec::new();
        for i in 0..100_000u32 {
            let b = i.to_le_bytes();
            push_bytes(&mut out, &b);
            want.extend_from_slice(&b);
        }
        assert_eq!(out, want);
        assert!(out.capacity() >= MIN_BYTES);
        let mut small = Vec::new();
        push_bytes(&mut small, b"a string of 24 bytes....");
        assert!(small.capacity() < 1024, "{}", small.capacity()); // (no 64 KiB for a few bytes)
    }
}
