//! Room for the buffers whose size the data decides (a column's values in a write buffer,
//! an encoded or compressed vector, a chunk read back, a decoded vector of byte strings),
//! taken so that a refusal can become an ERROR.
//!
//! Rust's collections abort the process when the allocator refuses them; in a backend
//! that makes PostgreSQL reset every session, as after a crash. These buffers are the
//! ones that reach hundreds of megabytes (a 100 MB `text` value is held a few times over
//! on its way to and from disk), so they are taken with `try_reserve`, and a refusal
//! goes to the handler the PostgreSQL layer installs (an ERROR, SQLSTATE 53200).
//!
//! Every other allocation goes through `Allocator`, the global allocator: the system's,
//! with a reserve of `RESERVE_BYTES` held aside. An allocation the system refuses lets
//! the reserve go and is tried again, and the next reservation here raises the refusal
//! (`check`): the backend gets to a point where an ERROR can unwind instead of
//! aborting. The reserve is taken again when the transaction ends (`rearm`).
//!
//! Pure: the handler is a plain function pointer; without one a refusal panics.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What a refused reservation does: it never returns (the PostgreSQL layer raises an
/// ERROR, which unwinds as a panic through Rust frames).
pub type Refused = fn(bytes: usize) -> !;

static ON_REFUSED: OnceLock<Refused> = OnceLock::new();

/// Installs what a refusal does (once, at library load; later calls are ignored).
pub fn on_refused(handler: Refused) {
    let _ = ON_REFUSED.set(handler);
}

fn refused(bytes: usize) -> ! {
    match ON_REFUSED.get() {
        Some(handler) => handler(bytes),
        None => panic!("out of memory: a request of {bytes} bytes was refused"),
    }
}

/// Bytes held aside for allocations the system refuses: enough for the refused one (a
/// vector's scratch, a few hundred kB) and what runs until the next `check`.
const RESERVE_BYTES: usize = 8 << 20;

fn reserve_layout() -> Layout {
    Layout::from_size_align(RESERVE_BYTES, 16).expect("a valid layout")
}

/// Memory held aside, and whether an allocation spent it.
struct Reserve {
    /// The block, while held (null once spent).
    held: AtomicPtr<u8>,
    /// The size of the allocation that spent it, 0 while it has not been.
    spent_on: AtomicUsize,
}

impl Reserve {
    const fn new() -> Reserve {
        Reserve { held: AtomicPtr::new(std::ptr::null_mut()), spent_on: AtomicUsize::new(0) }
    }

    /// Lets the block go for an allocation of `bytes` the system refused; false if it
    /// was already spent.
    fn spend(&self, bytes: usize) -> bool {
        let held = self.held.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if held.is_null() {
            return false;
        }
        // SAFETY: `held` came from `System.alloc(reserve_layout())` in `rearm`, and the
        // swap made this the only place that frees it.
        unsafe { System.dealloc(held, reserve_layout()) };
        self.spent_on.store(bytes.max(1), Ordering::Release);
        true
    }

    /// Takes the block if it is not held, and forgets a refusal nobody raised.
    fn rearm(&self) {
        self.spent_on.store(0, Ordering::Release);
        if !self.held.load(Ordering::Acquire).is_null() {
            return;
        }
        // SAFETY: a non-zero-sized layout.
        let block = unsafe { System.alloc(reserve_layout()) };
        if block.is_null() {
            return;
        }
        if self
            .held
            .compare_exchange(std::ptr::null_mut(), block, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // SAFETY: `block` is ours, from the same layout.
            unsafe { System.dealloc(block, reserve_layout()) };
        }
    }

    /// The size of the allocation that spent the block, once, if one did.
    #[inline]
    fn refusal(&self) -> Option<usize> {
        if self.spent_on.load(Ordering::Relaxed) == 0 {
            return None;
        }
        Some(self.spent_on.swap(0, Ordering::AcqRel)).filter(|&b| b != 0)
    }

    #[cfg(test)]
    fn is_held(&self) -> bool {
        !self.held.load(Ordering::Acquire).is_null()
    }
}

static RESERVE: Reserve = Reserve::new();

/// The global allocator: the system's, falling back on the reserve (see the module).
pub struct Allocator;

/// `p`, what the system gave for a request of `bytes`; when it refused (null), the
/// reserve is let go and the request made `again`.
fn or_after_spending_reserve(p: *mut u8, bytes: usize, again: impl FnOnce() -> *mut u8) -> *mut u8 {
    if p.is_null() && RESERVE.spend(bytes) {
        again()
    } else {
        p
    }
}

// SAFETY: every block comes from `System` and goes back to it with the layout it was
// allocated with; the reserve is only a block of `System`'s held aside.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc(layout) };
        or_after_spending_reserve(p, layout.size(), || {
            // SAFETY: as above.
            unsafe { System.alloc(layout) }
        })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.alloc_zeroed(layout) };
        or_after_spending_reserve(p, layout.size(), || {
            // SAFETY: as above.
            unsafe { System.alloc_zeroed(layout) }
        })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is `System`'s; `ptr` came from it.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        or_after_spending_reserve(p, new_size, || {
            // SAFETY: as above; a refused realloc left `ptr` valid for this second try.
            unsafe { System.realloc(ptr, layout, new_size) }
        })
    }
}

/// Takes the reserve if it is not held: at load, and when a transaction ends (a refusal
/// may have spent it; a system that still refuses leaves it for the next try). Also
/// forgets a refusal no `check` raised: the statement that met it got through.
pub fn rearm() {
    RESERVE.rearm();
}

/// Raises the refusal (the handler) if an allocation had to spend the reserve since the
/// last check: the memory it stood for is gone, and the statement must end.
#[inline]
pub fn check() {
    if let Some(bytes) = RESERVE.refusal() {
        refused(bytes);
    }
}

/// Makes room for `additional` more elements in `v`, as `Vec::reserve` would (it at
/// least doubles, so pushes stay amortized), or calls the refusal handler. When doubling
/// is refused, exactly what is asked is tried: a large value's buffer need not hold
/// twice its size.
#[inline]
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) {
    check();
    if v.try_reserve(additional).is_ok() || v.try_reserve_exact(additional).is_ok() {
        return;
    }
    // The request refused last: the buffer at exactly the size asked for.
    refused(v.len().saturating_add(additional).saturating_mul(std::mem::size_of::<T>()))
}

/// `v.push(x)`, its growth taken fallibly (a write buffer's columns grow a value at a
/// time; together they reach hundreds of megabytes).
#[inline]
pub fn push<T>(v: &mut Vec<T>, x: T) {
    check();
    if v.len() == v.capacity() {
        reserve(v, 1);
    }
    v.push(x);
}

/// An empty vector with room for `n` elements, or the refusal handler.
pub fn with_capacity<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    reserve(&mut v, n);
    v
}

/// `v.extend_from_slice(s)`, its room taken fallibly (and copied as `copy` copies:
/// decoded payloads and frames are a few kilobytes).
pub fn extend_from_slice<T: Copy>(v: &mut Vec<T>, s: &[T]) {
    reserve(v, s.len());
    super::copy::extend_from_slice(v, s);
}

/// `v.resize(len, value)`, its room taken fallibly.
pub fn resize<T: Clone>(v: &mut Vec<T>, len: usize, value: T) {
    reserve(v, len.saturating_sub(v.len()));
    v.resize(len, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserving_grows_like_vec_and_keeps_contents() {
        let mut v: Vec<u8> = Vec::new();
        for i in 0..1000u32 {
            extend_from_slice(&mut v, &i.to_le_bytes());
        }
        assert_eq!(v.len(), 4000);
        assert_eq!(&v[4..8], &1u32.to_le_bytes());
        // Amortized: far fewer reallocations than pushes (capacity at least doubles).
        let mut w: Vec<u64> = Vec::new();
        let mut grew = 0;
        for i in 0..10_000u64 {
            let cap = w.capacity();
            reserve(&mut w, 1);
            w.push(i);
            grew += usize::from(w.capacity() != cap);
        }
        assert!(grew < 20, "{grew} reallocations");
        let mut r = with_capacity::<u16>(10);
        assert!(r.capacity() >= 10);
        resize(&mut r, 5, 7);
        assert_eq!(r, [7; 5]);
    }

    #[test]
    fn a_spent_reserve_is_reported_once_and_taken_again() {
        // A reserve of its own: the global one serves every test's allocations.
        let r = Reserve::new();
        assert!(!r.spend(100), "nothing to spend before it is taken");
        r.rearm();
        assert!(r.is_held());
        assert_eq!(r.refusal(), None);
        assert!(r.spend(4096));
        assert!(!r.is_held());
        assert!(!r.spend(4096), "spent once");
        assert_eq!(r.refusal(), Some(4096));
        assert_eq!(r.refusal(), None, "reported once");
        assert!(r.spend(0) || !r.is_held());
        // Taken again at the transaction's end; a refusal nobody raised is forgotten.
        r.spend(10);
        r.rearm();
        assert!(r.is_held());
        assert_eq!(r.refusal(), None);
        assert!(r.spend(1));
        r.rearm();
    }

    #[test]
    fn an_impossible_request_goes_to_the_handler_not_an_abort() {
        // Without a handler (plain `cargo test`) a refusal panics, which the test can see;
        // `Vec::reserve` would abort the whole process instead.
        let outcome = std::panic::catch_unwind(|| {
            let mut v: Vec<u64> = Vec::new();
            reserve(&mut v, usize::MAX / 16);
        });
        let message = outcome.expect_err("refused").downcast::<String>().expect("a message");
        assert!(message.starts_with("out of memory"), "{message}");
    }
}
