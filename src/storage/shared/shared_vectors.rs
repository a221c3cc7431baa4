//! Decoded fixed-width vectors in shared memory, which every backend's row fetches read.
//!
//! A new connection's index scan on a table not ordered by its key reaches a vector
//! per column for every few rows. Each backend's fetch cache starts empty, so each new
//! connection read those vectors where they lie (a header, a checksum over all their
//! bytes, a value read or two: 3x heap's first run for one TSBS host's 12 hours) and
//! forgot them when it closed. Here a vector decoded once is a slot any backend reads
//! a value from: a lookup of one cache line, then the value's line.
//!
//! The memory is `sets` sets of `WAYS` slots; a vector's key picks its set. Readers
//! take no lock: a slot's sequence number is odd while it is written and changes with
//! every refill, so a reader checks it after reading (a seqlock) and a handle kept from
//! an earlier lookup finds out when its slot was given to another vector. Writers take
//! the set's lock with a single try and skip the fill when another holds it: nobody
//! waits. Within a set the clock hand evicts the first slot not read since it last
//! passed. A vector is admitted when its set has a free slot, or when it was missed
//! once before (a ghost entry per recent miss): a scan that touches each vector once
//! does not push out vectors read again and again.
//!
//! Keys never go stale: stored vectors never change, and a key names the database,
//! relfilenode, storage id, row group, vector, column and stored position (row numbers
//! are never handed out twice under a storage id).
//!
//! Pure: no PostgreSQL calls. `shared_vectors_memory` places it in shared memory.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};

/// Slots per set.
const WAYS: usize = 8;
/// Recent misses each set remembers (their keys' hashes), for admission.
const GHOSTS: usize = 16;
/// Rows a slot holds: a stored vector's most.
pub const SLOT_ROWS: usize = crate::storage::format::layout::VECTOR_ROWS;
const VALIDITY_WORDS: usize = SLOT_ROWS / 64;
const KEY_WORDS: usize = 5;

/// What a vector's words are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordKind {
    /// Integers (all widths, dates, timestamps), as i64.
    Int,
    /// f32 bits in the low half.
    Float32,
    /// f64 bits.
    Float64,
    /// Scaled numerics' mantissas (as i64) of the given scale.
    Scaled(u16),
}

impl WordKind {
    fn to_bits(self) -> u64 {
        match self {
            WordKind::Int => 1,
            WordKind::Float32 => 2,
            WordKind::Float64 => 3,
            WordKind::Scaled(s) => 4 | (s as u64) << 8,
        }
    }

    fn from_bits(b: u64) -> Option<WordKind> {
        Some(match b & 0xff {
            1 => WordKind::Int,
            2 => WordKind::Float32,
            3 => WordKind::Float64,
            4 => WordKind::Scaled((b >> 8) as u16),
            _ => return None,
        })
    }
}

#[repr(C, align(64))]
struct SetHeader {
    lock: AtomicU32,
    hand: AtomicU32,
    ghost_at: AtomicU32,
    _pad: u32,
    /// Each way's key hash (its high half, never 0), 0 for a free slot: a lookup reads
    /// this line and then only the slot whose tag matches.
    tags: [AtomicU32; WAYS],
    ghosts: [AtomicU64; GHOSTS],
}

#[repr(C, align(64))]
struct SlotHeader {
    seq: AtomicU64,
    key: [AtomicU64; KEY_WORDS],
    /// rows | has validity << 16 | kind bits << 24.
    meta: AtomicU64,
    /// Read since the clock hand last passed.
    used: AtomicU32,
    _pad: u32,
}

/// A slot's rows. Headers lie apart from them, side by side: a lookup in memory a new
/// process maps 4 kB at a time touches a page of many headers and then the value's page,
/// not a page for each header.
#[repr(C, align(64))]
struct SlotData {
    validity: [AtomicU64; VALIDITY_WORDS],
    values: [AtomicU64; SLOT_ROWS],
}

/// Bytes `sets` sets take.
pub fn bytes_for(sets: usize) -> usize {
    sets * (std::mem::size_of::<SetHeader>()
        + WAYS * (std::mem::size_of::<SlotHeader>() + std::mem::size_of::<SlotData>()))
}

/// Sets that fit in `bytes`.
pub fn sets_in(bytes: usize) -> usize {
    bytes / bytes_for(1)
}

/// Alignment the memory must have.
pub const ALIGN: usize = 64;

/// A vector's key: which stored vector it is (see the module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorKey(pub [u64; KEY_WORDS]);

impl VectorKey {
    fn hash(&self) -> u64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for w in self.0 {
            h = (h ^ w).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h ^= h >> 31;
        }
        h ^ (h >> 29)
    }
}

/// A vector found or filled: its slot as it was then. Reads through it fail once the
/// slot holds another vector.
#[derive(Debug, Clone, Copy)]
pub struct Handle {
    slot: u32,
    seq: u64,
    rows: u16,
    has_validity: bool,
    kind: WordKind,
}

impl Handle {
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    pub fn kind(&self) -> WordKind {
        self.kind
    }
}

/// The sets and slots, over memory every backend maps at its own address.
pub struct SharedVectors {
    sets: *const SetHeader,
    heads: *const SlotHeader,
    data: *const SlotData,
    set_count: usize,
}

// SAFETY: every field the pointers reach is an atomic, read and written only through
// atomic operations.
unsafe impl Sync for SharedVectors {}
// SAFETY: as for `Sync`.
unsafe impl Send for SharedVectors {}

impl SharedVectors {
    /// The cache in the `bytes` bytes at `base`.
    ///
    /// # Safety
    /// `base` is aligned to `ALIGN`, valid for reads and writes of `bytes` bytes for as
    /// long as the returned value is used, zeroed when first used, and accessed by no
    /// one but `SharedVectors` values.
    pub unsafe fn new(base: *mut u8, bytes: usize) -> SharedVectors {
        assert_eq!(base as usize % ALIGN, 0, "shared vector memory misaligned");
        let set_count = sets_in(bytes);
        let sets = base as *const SetHeader;
        let slots = set_count * WAYS;
        // SAFETY: the slot headers follow the set headers, and the slots' rows follow
        // them, inside `bytes` (`sets_in`).
        let (heads, data) = unsafe {
            let heads = base.add(set_count * std::mem::size_of::<SetHeader>());
            (
                heads as *const SlotHeader,
                heads.add(slots * std::mem::size_of::<SlotHeader>()) as *const SlotData,
            )
        };
        SharedVectors { sets, heads, data, set_count }
    }

    #[cfg(test)]
    fn slots(&self) -> usize {
        self.set_count * WAYS
    }

    fn set(&self, i: usize) -> &SetHeader {
        // SAFETY: `i < set_count`, within the memory `new` was given.
        unsafe { &*self.sets.add(i) }
    }

    fn head(&self, i: usize) -> &SlotHeader {
        // SAFETY: `i < set_count * WAYS`, within the memory `new` was given.
        unsafe { &*self.heads.add(i) }
    }

    fn data(&self, i: usize) -> &SlotData {
        // SAFETY: `i < set_count * WAYS`, within the memory `new` was given.
        unsafe { &*self.data.add(i) }
    }

    /// (set, tag) of a key.
    fn place(&self, key: &VectorKey) -> (usize, u32) {
        let h = key.hash();
        ((h % self.set_count as u64) as usize, ((h >> 32) as u32).max(1))
    }

    /// The vector of `key`, if a slot holds it.
    pub fn find(&self, key: &VectorKey) -> Option<Handle> {
        if self.set_count == 0 {
            return None;
        }
        let (set, tag) = self.place(key);
        self.find_in(set, tag, key)
    }

    fn find_in(&self, set: usize, tag: u32, key: &VectorKey) -> Option<Handle> {
        let s = self.set(set);
        for way in 0..WAYS {
            if s.tags[way].load(Ordering::Relaxed) != tag {
                continue;
            }
            let index = set * WAYS + way;
            let head = self.head(index);
            let seq = head.seq.load(Ordering::Acquire);
            if seq & 1 == 1 {
                continue;
            }
            let same = (0..KEY_WORDS).all(|w| head.key[w].load(Ordering::Relaxed) == key.0[w]);
            let meta = head.meta.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if !same || head.seq.load(Ordering::Relaxed) != seq {
                continue;
            }
            let Some(kind) = WordKind::from_bits(meta >> 24) else { continue };
            if head.used.load(Ordering::Relaxed) == 0 {
                head.used.store(1, Ordering::Relaxed);
            }
            return Some(Handle {
                slot: index as u32,
                seq,
                rows: meta as u16,
                has_validity: (meta >> 16) & 1 == 1,
                kind,
            });
        }
        None
    }

    /// Whether the vector of `key`, just missed, should be filled: its set has a free
    /// slot, or it was missed before. Remembers the miss otherwise.
    pub fn admit(&self, key: &VectorKey) -> bool {
        if self.set_count == 0 {
            return false;
        }
        let (set, _) = self.place(key);
        let s = self.set(set);
        if s.tags.iter().any(|t| t.load(Ordering::Relaxed) == 0) {
            return true;
        }
        let ghost = key.hash() | 1;
        if s.ghosts.iter().any(|g| g.load(Ordering::Relaxed) == ghost) {
            return true;
        }
        let at = s.ghost_at.fetch_add(1, Ordering::Relaxed) as usize % GHOSTS;
        s.ghosts[at].store(ghost, Ordering::Relaxed);
        false
    }

    /// Stores a vector of `rows` rows under `key`: row i's value is the i-th of `words`
    /// (which yields `rows`; unspecified for a NULL row), and with `validity`, row i has a
    /// value when bit `i % 64` of word `i / 64` is set. `None` when another backend is
    /// filling the set just now, or the vector has more rows than a slot.
    pub fn fill(
        &self,
        key: &VectorKey,
        kind: WordKind,
        rows: usize,
        words: impl Iterator<Item = u64>,
        validity: Option<&[u64]>,
    ) -> Option<Handle> {
        if self.set_count == 0 || rows > SLOT_ROWS || validity.is_some_and(|v| v.len() < rows.div_ceil(64)) {
            return None;
        }
        let (set, tag) = self.place(key);
        let s = self.set(set);
        if s.lock.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return None;
        }
        let found = self.find_in(set, tag, key);
        let handle = found.unwrap_or_else(|| {
            let way = self.victim(set);
            let index = set * WAYS + way;
            let (head, slot) = (self.head(index), self.data(index));
            let seq = head.seq.load(Ordering::Relaxed);
            head.seq.store(seq + 1, Ordering::Relaxed);
            fence(Ordering::Release);
            s.tags[way].store(tag, Ordering::Relaxed);
            for (w, k) in head.key.iter().zip(key.0) {
                w.store(k, Ordering::Relaxed);
            }
            let has_validity = validity.is_some();
            head.meta
                .store(rows as u64 | (has_validity as u64) << 16 | kind.to_bits() << 24, Ordering::Relaxed);
            if let Some(v) = validity {
                for (w, &b) in slot.validity.iter().zip(&v[..rows.div_ceil(64)]) {
                    w.store(b, Ordering::Relaxed);
                }
            }
            for (w, b) in slot.values[..rows].iter().zip(words) {
                w.store(b, Ordering::Relaxed);
            }
            head.used.store(1, Ordering::Relaxed);
            head.seq.store(seq + 2, Ordering::Release);
            Handle { slot: index as u32, seq: seq + 2, rows: rows as u16, has_validity, kind }
        });
        s.lock.store(0, Ordering::Release);
        Some(handle)
    }

    /// The way to fill in `set`: a free one, else the first the clock hand finds not
    /// read since it last passed (clearing the marks it passes).
    fn victim(&self, set: usize) -> usize {
        let s = self.set(set);
        if let Some(free) = s.tags.iter().position(|t| t.load(Ordering::Relaxed) == 0) {
            return free;
        }
        let start = s.hand.load(Ordering::Relaxed) as usize;
        let mut way = start % WAYS;
        for step in 0..=WAYS {
            way = (start + step) % WAYS;
            let used = &self.head(set * WAYS + way).used;
            if used.load(Ordering::Relaxed) == 0 {
                break;
            }
            used.store(0, Ordering::Relaxed);
        }
        s.hand.store((way + 1) as u32, Ordering::Relaxed);
        way
    }

    /// Row `at`'s word through `h`: `Some(None)` for a NULL row, `None` when the slot
    /// holds another vector now.
    pub fn read(&self, h: &Handle, at: usize) -> Option<Option<u64>> {
        if at >= h.rows as usize {
            return None;
        }
        let slot = self.data(h.slot as usize);
        let word = slot.values[at].load(Ordering::Relaxed);
        let valid = !h.has_validity || slot.validity[at / 64].load(Ordering::Relaxed) >> (at % 64) & 1 == 1;
        fence(Ordering::Acquire);
        if self.head(h.slot as usize).seq.load(Ordering::Relaxed) != h.seq {
            return None;
        }
        Some(valid.then_some(word))
    }

    /// Where row `at`'s word lies, and the slot's sequence number that `read` checks
    /// after it: for prefetch hints.
    pub fn addresses(&self, h: &Handle, at: usize) -> [*const u8; 2] {
        [
            self.data(h.slot as usize).values[at.min(SLOT_ROWS - 1)].as_ptr() as *const u8,
            self.head(h.slot as usize).seq.as_ptr() as *const u8,
        ]
    }

    /// Slots holding a vector.
    #[cfg(test)]
    fn used_slots(&self) -> usize {
        (0..self.set_count)
            .map(|s| self.set(s).tags.iter().filter(|t| t.load(Ordering::Relaxed) != 0).count())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::{alloc_zeroed, dealloc, Layout};

    struct Memory {
        base: *mut u8,
        layout: Layout,
    }

    impl Memory {
        fn new(sets: usize) -> Memory {
            let layout = Layout::from_size_align(bytes_for(sets), ALIGN).unwrap();
            // SAFETY: a non-zero size.
            let base = unsafe { alloc_zeroed(layout) };
            Memory { base, layout }
        }

        fn cache(&self) -> SharedVectors {
            // SAFETY: aligned, zeroed, live as long as `self`.
            unsafe { SharedVectors::new(self.base, self.layout.size()) }
        }
    }

    impl Drop for Memory {
        fn drop(&mut self) {
            // SAFETY: allocated by `new` with this layout.
            unsafe { dealloc(self.base, self.layout) }
        }
    }

    fn key(n: u64) -> VectorKey {
        VectorKey([1, 7, n, 3, n * 2048])
    }

    fn words(n: u64, rows: usize) -> Vec<u64> {
        (0..rows as u64).map(|i| n * 1_000_000 + i).collect()
    }

    #[test]
    fn a_filled_vector_is_found_and_read_with_its_nulls() {
        let m = Memory::new(4);
        let c = m.cache();
        assert!(c.find(&key(1)).is_none());
        let validity = vec![!0b100u64; 2];
        let h = c.fill(&key(1), WordKind::Float64, 100, words(1, 100).into_iter(), Some(&validity)).unwrap();
        assert_eq!(c.read(&h, 0), Some(Some(1_000_000)));
        assert_eq!(c.read(&h, 2), Some(None));
        assert_eq!(c.read(&h, 99), Some(Some(1_000_099)));
        assert_eq!(c.read(&h, 100), None);
        let found = c.find(&key(1)).unwrap();
        assert_eq!((found.rows(), found.kind()), (100, WordKind::Float64));
        assert_eq!(c.read(&found, 5), Some(Some(1_000_005)));
        assert!(c.find(&key(2)).is_none());
        assert_eq!(c.used_slots(), 1);
        // Filling a key already held gives its slot again.
        let again = c.fill(&key(1), WordKind::Float64, 100, words(9, 100).into_iter(), None).unwrap();
        assert_eq!(c.read(&again, 0), Some(Some(1_000_000)));
    }

    #[test]
    fn kinds_keep_their_scale() {
        let m = Memory::new(1);
        let c = m.cache();
        for (n, kind) in
            [WordKind::Int, WordKind::Float32, WordKind::Float64, WordKind::Scaled(4)].into_iter().enumerate()
        {
            c.fill(&key(n as u64), kind, 3, words(n as u64, 3).into_iter(), None).unwrap();
            assert_eq!(c.find(&key(n as u64)).unwrap().kind(), kind);
        }
    }

    #[test]
    fn a_full_set_admits_a_key_missed_twice_and_evicts_one_not_read_since() {
        let m = Memory::new(1);
        let c = m.cache();
        let handles: Vec<Handle> = (0..WAYS as u64)
            .map(|n| c.fill(&key(n), WordKind::Int, 10, words(n, 10).into_iter(), None).unwrap())
            .collect();
        assert_eq!(c.used_slots(), WAYS);
        // The clock hand clears every mark once, then takes the first way.
        assert!(!c.admit(&key(100)));
        assert!(c.admit(&key(100)));
        // Read way 1 again after the hand cleared it: the hand passes it next time.
        let h = c.fill(&key(100), WordKind::Int, 10, words(100, 10).into_iter(), None).unwrap();
        assert_eq!(c.read(&handles[0], 0), None, "the first way was evicted");
        assert!(c.find(&key(0)).is_none());
        assert_eq!(c.read(&h, 3), Some(Some(100_000_003)));
        assert!(c.find(&key(1)).is_some());
        let h2 = c.fill(&key(101), WordKind::Int, 10, words(101, 10).into_iter(), None).unwrap();
        assert!(c.find(&key(1)).is_some(), "way 1 was read since the hand cleared it");
        assert!(c.find(&key(2)).is_none(), "way 2 was not");
        assert_eq!(c.read(&handles[2], 0), None);
        assert_eq!(c.read(&h2, 0), Some(Some(101_000_000)));
    }

    #[test]
    fn a_held_set_lock_skips_the_fill() {
        let m = Memory::new(1);
        let c = m.cache();
        c.set(0).lock.store(1, Ordering::Relaxed);
        assert!(c.fill(&key(1), WordKind::Int, 10, words(1, 10).into_iter(), None).is_none());
        c.set(0).lock.store(0, Ordering::Relaxed);
        assert!(c.fill(&key(1), WordKind::Int, 10, words(1, 10).into_iter(), None).is_some());
    }

    #[test]
    fn too_many_rows_or_too_little_validity_are_refused() {
        let m = Memory::new(1);
        let c = m.cache();
        assert!(c
            .fill(&key(1), WordKind::Int, SLOT_ROWS + 1, words(1, SLOT_ROWS + 1).into_iter(), None)
            .is_none());
        assert!(c.fill(&key(1), WordKind::Int, 65, words(1, 65).into_iter(), Some(&[!0])).is_none());
        assert!(c.fill(&key(1), WordKind::Int, SLOT_ROWS, words(1, SLOT_ROWS).into_iter(), None).is_some());
    }

    #[test]
    fn no_memory_no_cache() {
        // SAFETY: nothing is read from a cache of no sets.
        let c = unsafe { SharedVectors::new(std::ptr::null_mut::<u8>().wrapping_add(ALIGN), 100) };
        assert_eq!(c.slots(), 0);
        assert!(c.find(&key(1)).is_none());
        assert!(!c.admit(&key(1)));
        assert!(c.fill(&key(1), WordKind::Int, 1, words(1, 1).into_iter(), None).is_none());
    }

    /// Readers on other threads, while a writer keeps refilling two sets' slots with
    /// other vectors, never read a word of a vector other than the one their handle
    /// found: each read either gives the right word or says the slot moved on.
    #[test]
    fn readers_never_see_another_vectors_words() {
        let m = Memory::new(2);
        let c = m.cache();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let reads = AtomicU64::new(0);
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (c, stop, reads) = (&c, &stop, &reads);
                s.spawn(move || {
                    let mut n = t;
                    while !stop.load(Ordering::Relaxed) {
                        n = (n * 7 + 3) % 64;
                        if let Some(h) = c.find(&key(n)) {
                            for at in [0, 1, 511, 2047] {
                                if let Some(v) = c.read(&h, at) {
                                    assert_eq!(v, Some(n * 1_000_000 + at as u64), "vector {n} row {at}");
                                    reads.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                });
            }
            let w: Vec<Vec<u64>> = (0..64).map(|n| words(n, SLOT_ROWS)).collect();
            for round in 0..20_000u64 {
                let n = (round * 13) % 64;
                let _ = c.fill(&key(n), WordKind::Int, SLOT_ROWS, w[n as usize].iter().copied(), None);
                // Mostly misses twice, so most fills evict.
                c.admit(&key(n));
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(reads.load(Ordering::Relaxed) > 0);
    }
}
