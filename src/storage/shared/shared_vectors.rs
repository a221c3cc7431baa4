//! Decoded fixed-width vectors in shared memory, which every backend's row fetches read.
//!
//! A new connection's index scan on a table not ordered by its key reaches a vector
//! per column for every few rows. Each backend's fetch cache starts empty, so each new
//! connection read those vectors where they lie (a header, a checksum over all their
//! bytes, a value read or two: 3x heap's first run for one TSBS host's 12 hours) and
//! forgot them when it closed. Here a vector decoded once is kept where any backend
//! reads a value from it: a lookup of one cache line, then the value's line.
//!
//! The memory is `sets` sets of `UNITS` units of 4 kB; a vector's key picks its set.
//! A vector is stored in as few bytes per value as its range takes (2, 4 or 8: offsets
//! from its smallest integer, or a float's bits), so it takes 1, 2 or 4 units, aligned
//! to their count. Most integer, date and numeric columns take one unit where 8 bytes a
//! value took four: on a scattered join over 6M rows the vectors of five columns no
//! longer fitted a cache of 256 MB, and every new connection decoded a tenth of them
//! again (its first run 4x the next; with 1 GB, 2x). A NULL is the width's all-ones
//! word, which no value of a vector with NULLs is given (else the vector is not kept).
//!
//! Readers take no lock: a vector's first unit has a sequence number, odd while it is
//! written, changed when the vector is evicted, so a reader checks it after reading (a
//! seqlock) and a handle kept from an earlier lookup finds out when its units were given
//! to other vectors. Writers take the set's lock with a single try and skip the fill
//! when another holds it: nobody waits. Within a set the clock hand evicts the first run
//! of units whose vectors were not read since it last passed. A vector is admitted when
//! its set has room for any vector, or when it was missed once before (a ghost entry
//! per recent miss): a scan that touches each vector once does not push out vectors read
//! again and again.
//!
//! Keys never go stale: stored vectors never change, and a key names the database,
//! relfilenode, storage id, row group, vector, column and stored position (row numbers
//! are never handed out twice under a storage id).
//!
//! Pure: no PostgreSQL calls. `shared_vectors_memory` places it in shared memory.

use std::hash::BuildHasher;
use std::sync::atomic::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// `fill_strings`' working space, kept between its calls: a fetch that misses the cache
/// fills it with a vector or a frame of byte strings each time, and the index, codes
/// and entries made anew for each (grown, rehashed, their memory faulted in) cost more
/// than finding the distinct values.
#[derive(Default)]
struct DictionaryScratch {
    /// Codes, found by their entry's hash.
    index: hashbrown::HashTable<u32>,
    hasher: hashbrown::DefaultHashBuilder,
    codes: Vec<u32>,
    entry_offsets: Vec<u32>,
    entries: Vec<u8>,
}

/// Entry `code` of the dictionary `fill_strings` builds.
fn entry<'a>(entries: &'a [u8], ends: &[u32], code: u32) -> &'a [u8] {
    &entries[ends[code as usize] as usize..ends[code as usize + 1] as usize]
}

thread_local! {
    static STRINGS: std::cell::Cell<DictionaryScratch> = std::cell::Cell::new(DictionaryScratch::default());
}

/// Units per set.
const UNITS: usize = 32;
/// Bytes of a unit.
const UNIT_BYTES: usize = 4096;
/// Most units a vector takes (`SLOT_ROWS` values of 8 bytes).
const MAX_UNITS: usize = 4;
/// Most bytes a vector takes.
pub const MAX_BYTES: usize = MAX_UNITS * UNIT_BYTES;
/// Recent misses each set remembers (their keys' hashes), for admission.
const GHOSTS: usize = 16;
/// Rows a vector may have: a stored vector's most.
pub const SLOT_ROWS: usize = crate::storage::format::layout::VECTOR_ROWS;
const KEY_WORDS: usize = 5;
/// The tag of a unit that continues the vector of a unit before it.
const CONTINUED: u16 = u16::MAX;

const _: () = assert!(SLOT_ROWS * 8 <= MAX_UNITS * UNIT_BYTES && UNITS.is_multiple_of(MAX_UNITS));

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
    /// Byte strings of a dictionary: 2-byte codes, then the entries (`fill_dictionary`,
    /// `read_bytes`).
    Bytes,
}

impl WordKind {
    fn to_bits(self) -> u64 {
        match self {
            WordKind::Int => 1,
            WordKind::Float32 => 2,
            WordKind::Float64 => 3,
            WordKind::Scaled(s) => 4 | (s as u64) << 8,
            WordKind::Bytes => 5,
        }
    }

    fn from_bits(b: u64) -> Option<WordKind> {
        Some(match b & 0xff {
            1 => WordKind::Int,
            2 => WordKind::Float32,
            3 => WordKind::Float64,
            4 => WordKind::Scaled((b >> 8) as u16),
            5 => WordKind::Bytes,
            _ => return None,
        })
    }

    /// Whether words are stored as offsets from the vector's smallest (integers).
    fn offsets(self) -> bool {
        matches!(self, WordKind::Int | WordKind::Scaled(_))
    }
}

/// A set's lines: the tags (what every lookup reads), the marks (read on a hit), then
/// what only writers touch.
#[repr(C, align(64))]
struct SetHeader {
    /// Per unit: 0 free, `CONTINUED`, or the key hash's top bits of the vector whose
    /// first unit it is. A lookup reads this line and then only the units whose tag
    /// matches.
    tags: [AtomicU16; UNITS],
    /// Per first unit: read since the clock hand last passed.
    used: [AtomicU8; UNITS],
    /// Per first unit: how many units its vector takes (written under the lock only).
    units: [AtomicU8; UNITS],
    lock: AtomicU32,
    hand: AtomicU32,
    ghost_at: AtomicU32,
    ghosts: [AtomicU64; GHOSTS],
}

const _: () = assert!(std::mem::offset_of!(SetHeader, used) == 64);

/// A unit's header; only a vector's first unit's means anything.
#[repr(C, align(64))]
struct UnitHeader {
    seq: AtomicU64,
    key: [AtomicU64; KEY_WORDS],
    /// rows | has NULLs << 16 | log2 bytes per value << 17 | kind bits << 24.
    meta: AtomicU64,
    /// What integer offsets are added to.
    base: AtomicU64,
}

/// A unit's bytes.
#[repr(C, align(64))]
struct Unit([AtomicU64; UNIT_BYTES / 8]);

/// Bytes `sets` sets take.
pub fn bytes_for(sets: usize) -> usize {
    sets * (std::mem::size_of::<SetHeader>()
        + UNITS * (std::mem::size_of::<UnitHeader>() + std::mem::size_of::<Unit>()))
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
    /// The key of part `n` of the vector (a zstd frame of its text, kept on its own):
    /// the vector's key with `n + 1` in the top 24 bits of its word 3, which a vector's
    /// own key leaves zero (there the fetch keeps the vector's number in its row group
    /// and its column's, each under 16 bits).
    pub fn part(self, n: usize) -> VectorKey {
        let mut k = self;
        k.0[3] |= (n as u64 + 1) << 40;
        k
    }

    fn hash(&self) -> u64 {
        let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
        for w in self.0 {
            h = (h ^ w).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            h ^= h >> 31;
        }
        h ^ (h >> 29)
    }
}

/// A vector found or filled: its units as they were then. Reads through it fail once
/// the units hold another vector.
#[derive(Debug, Clone, Copy)]
pub struct Handle {
    unit: u32,
    rows: u16,
    /// log2 of bytes per value.
    shift: u8,
    has_nulls: bool,
    kind: WordKind,
    seq: u64,
    base: u64,
}

impl Handle {
    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    pub fn kind(&self) -> WordKind {
        self.kind
    }

    /// Bytes per value.
    #[cfg(test)]
    fn width(&self) -> usize {
        1 << self.shift
    }
}

/// The all-ones word of `shift`'s width: a NULL in a vector with NULLs.
fn null_word(shift: u8) -> u64 {
    u64::MAX >> (64 - (8 << shift))
}

/// Whether row i of `rows` rows has a value, by `validity` (bit `i % 64` of word `i /
/// 64`; none: every row does); `None` when `validity` is too short for `rows` rows.
fn rows_valid(validity: Option<&[u64]>, rows: usize) -> Option<impl Fn(usize) -> bool + Copy + '_> {
    if validity.is_some_and(|v| v.len() < rows.div_ceil(64)) {
        return None;
    }
    Some(move |i: usize| validity.is_none_or(|v| v[i / 64] >> (i % 64) & 1 == 1))
}

/// Units a vector of `bytes` bytes takes: a power of two.
fn units_for(bytes: usize) -> usize {
    bytes.div_ceil(UNIT_BYTES).max(1).next_power_of_two()
}

/// How a vector's values are stored: (log2 bytes per value, base), or `None` when it
/// cannot be kept (a vector with NULLs whose values leave no word free for them).
fn layout_for(
    kind: WordKind,
    rows: usize,
    words: impl Iterator<Item = u64>,
    valid: impl Fn(usize) -> bool,
    has_nulls: bool,
) -> Option<(u8, u64)> {
    let values = words.take(rows).enumerate().filter(|&(i, _)| valid(i)).map(|(_, w)| w);
    let shift = match kind {
        WordKind::Bytes => return None,
        WordKind::Float32 => 2,
        WordKind::Float64 => 3,
        WordKind::Int | WordKind::Scaled(_) => {
            let (lo, hi) =
                values.fold((i64::MAX, i64::MIN), |(lo, hi), w| (lo.min(w as i64), hi.max(w as i64)));
            if lo > hi {
                return Some((1, 0));
            }
            let range = (hi as u64).wrapping_sub(lo as u64);
            let shift = (1..=3).find(|&s| range < null_word(s) || (!has_nulls && range == null_word(s)))?;
            return Some((shift, lo as u64));
        }
    };
    if has_nulls && values.into_iter().any(|w| w & null_word(shift) == null_word(shift)) {
        return None;
    }
    Some((shift, 0))
}

/// The cache's sets and units, over memory every backend maps at its own address.
pub struct SharedVectors {
    sets: *const SetHeader,
    heads: *const UnitHeader,
    data: *const Unit,
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
        let units = set_count * UNITS;
        // SAFETY: the unit headers follow the set headers, and the units follow them,
        // inside `bytes` (`sets_in`).
        let (heads, data) = unsafe {
            let heads = base.add(set_count * std::mem::size_of::<SetHeader>());
            (heads as *const UnitHeader, heads.add(units * std::mem::size_of::<UnitHeader>()) as *const Unit)
        };
        SharedVectors { sets, heads, data, set_count }
    }

    #[cfg(test)]
    fn units(&self) -> usize {
        self.set_count * UNITS
    }

    fn set(&self, i: usize) -> &SetHeader {
        // SAFETY: `i < set_count`, within the memory `new` was given.
        unsafe { &*self.sets.add(i) }
    }

    fn head(&self, i: usize) -> &UnitHeader {
        // SAFETY: `i < set_count * UNITS`, within the memory `new` was given.
        unsafe { &*self.heads.add(i) }
    }

    /// The 8-byte word holding value `at` (of `1 << shift` bytes) of the vector whose
    /// first unit is `unit`.
    fn word(&self, unit: usize, shift: u8, at: usize) -> &AtomicU64 {
        let index = unit * (UNIT_BYTES / 8) + (at << shift) / 8;
        // SAFETY: a vector's units stay within its set and `at` within its rows (the
        // callers check), so the word lies within the memory `new` was given.
        unsafe { &*(self.data as *const AtomicU64).add(index) }
    }

    /// (set, tag) of a key.
    fn place(&self, key: &VectorKey) -> (usize, u16) {
        let h = key.hash();
        ((h % self.set_count as u64) as usize, ((h >> 48) as u16).clamp(1, CONTINUED - 1))
    }

    /// The vector of `key`, if the cache holds it.
    pub fn find(&self, key: &VectorKey) -> Option<Handle> {
        if self.set_count == 0 {
            return None;
        }
        let (set, tag) = self.place(key);
        self.find_in(set, tag, key)
    }

    /// The lines `find` reads in `key`'s set (its tags, and on a hit its marks): for
    /// prefetch hints.
    pub fn set_addresses(&self, key: &VectorKey) -> Option<[*const u8; 2]> {
        let s = (self.set_count > 0).then(|| self.set(self.place(key).0))?;
        Some([s.tags.as_ptr() as *const u8, s.used.as_ptr() as *const u8])
    }

    /// The line `find` reads next for `key`: the header of the unit whose tag matches,
    /// if one does. For prefetch hints (reads the tags).
    pub fn header_address(&self, key: &VectorKey) -> Option<*const u8> {
        if self.set_count == 0 {
            return None;
        }
        let (set, tag) = self.place(key);
        let u = self.set(set).tags.iter().position(|t| t.load(Ordering::Relaxed) == tag)?;
        Some(self.head(set * UNITS + u) as *const UnitHeader as *const u8)
    }

    fn find_in(&self, set: usize, tag: u16, key: &VectorKey) -> Option<Handle> {
        let s = self.set(set);
        for u in 0..UNITS {
            if s.tags[u].load(Ordering::Relaxed) != tag {
                continue;
            }
            let unit = set * UNITS + u;
            let head = self.head(unit);
            let seq = head.seq.load(Ordering::Acquire);
            if seq & 1 == 1 {
                continue;
            }
            let same = (0..KEY_WORDS).all(|w| head.key[w].load(Ordering::Relaxed) == key.0[w]);
            let meta = head.meta.load(Ordering::Relaxed);
            let base = head.base.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if !same || head.seq.load(Ordering::Relaxed) != seq {
                continue;
            }
            let Some(kind) = WordKind::from_bits(meta >> 24) else { continue };
            if s.used[u].load(Ordering::Relaxed) == 0 {
                s.used[u].store(1, Ordering::Relaxed);
            }
            return Some(Handle {
                unit: unit as u32,
                rows: meta as u16,
                shift: ((meta >> 17) & 3) as u8,
                has_nulls: (meta >> 16) & 1 == 1,
                kind,
                seq,
                base,
            });
        }
        None
    }

    /// Whether the vector of `key`, just missed, should be filled: its set has room for
    /// any vector, or it was missed before. Remembers the miss otherwise.
    pub fn admit(&self, key: &VectorKey) -> bool {
        if self.set_count == 0 {
            return false;
        }
        let (set, _) = self.place(key);
        let s = self.set(set);
        if s.tags.iter().filter(|t| t.load(Ordering::Relaxed) == 0).count() >= MAX_UNITS {
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
    /// filling the set just now, the vector has more rows than `SLOT_ROWS`, or its NULLs
    /// cannot be told from its values.
    pub fn fill(
        &self,
        key: &VectorKey,
        kind: WordKind,
        rows: usize,
        words: impl Iterator<Item = u64> + Clone,
        validity: Option<&[u64]>,
    ) -> Option<Handle> {
        if self.set_count == 0 || rows > SLOT_ROWS {
            return None;
        }
        let valid = rows_valid(validity, rows)?;
        let has_nulls = (0..rows).any(|i| !valid(i));
        let (shift, base) = layout_for(kind, rows, words.clone(), valid, has_nulls)?;
        let units = units_for(rows << shift);
        self.put(key, kind, rows, (shift, has_nulls, base), units, |unit| {
            self.store_values(unit, shift, base, kind.offsets(), words.take(rows), valid)
        })
    }

    /// Stores a vector of `rows` byte strings under `key` as its dictionary: row i is
    /// entry `codes[i]`, entry e is `data[offsets[e]..offsets[e + 1]]`; `validity` as
    /// for `fill`. `None` as for `fill`, or when the codes and entries take more than a
    /// vector's most units (or there are 65,535 entries or more).
    pub fn fill_dictionary(
        &self,
        key: &VectorKey,
        rows: usize,
        codes: &[u32],
        offsets: &[u32],
        data: &[u8],
        validity: Option<&[u64]>,
    ) -> Option<Handle> {
        let entries = offsets.len().checked_sub(1)?;
        if self.set_count == 0
            || rows > SLOT_ROWS
            || codes.len() < rows
            || entries >= null_word(1) as usize
            || offsets.last().is_none_or(|&end| end as usize > data.len())
        {
            return None;
        }
        let valid = rows_valid(validity, rows)?;
        if (0..rows).any(|i| valid(i) && codes[i] as usize >= entries) {
            return None;
        }
        let has_nulls = (0..rows).any(|i| !valid(i));
        // Codes, then at a word boundary the entry count, the offsets and the bytes.
        let dict_at = (rows * 2).next_multiple_of(8);
        let total = dict_at + 4 * (entries + 2) + data.len();
        if total > MAX_BYTES {
            return None;
        }
        let base = dict_at as u64 | (total as u64) << 32;
        self.put(key, WordKind::Bytes, rows, (1, has_nulls, base), units_for(total), |unit| {
            self.store_values(unit, 1, 0, false, codes.iter().map(|&c| c as u64), valid);
            let mut image = Vec::with_capacity(total - dict_at);
            image.extend((entries as u32).to_le_bytes());
            for o in offsets {
                image.extend(o.to_le_bytes());
            }
            image.extend(data);
            for (i, chunk) in image.chunks(8).enumerate() {
                let mut w = [0u8; 8];
                w[..chunk.len()].copy_from_slice(chunk);
                self.word(unit, 3, dict_at / 8 + i).store(u64::from_le_bytes(w), Ordering::Relaxed);
            }
        })
    }

    /// Stores a vector of `rows` byte strings under `key` (row i is `data[offsets[i]..
    /// offsets[i + 1]]`; `validity` as for `fill`) as the dictionary of its distinct
    /// values (`fill_dictionary`). `None` as for `fill_dictionary`: given up as soon as
    /// the distinct values outgrow a vector's most units.
    pub fn fill_strings(
        &self,
        key: &VectorKey,
        rows: usize,
        offsets: &[u32],
        data: &[u8],
        validity: Option<&[u64]>,
    ) -> Option<Handle> {
        if self.set_count == 0 || rows > SLOT_ROWS || offsets.len() <= rows {
            return None;
        }
        let valid = rows_valid(validity, rows)?;
        // What the entries may take beside the codes (`fill_dictionary`'s layout).
        let budget = MAX_BYTES.saturating_sub((rows * 2).next_multiple_of(8) + 8);
        let mut kept = STRINGS.with(|s| s.take());
        let DictionaryScratch { index, hasher, codes, entry_offsets, entries } = &mut kept;
        index.clear();
        codes.clear();
        entry_offsets.clear();
        entry_offsets.push(0);
        entries.clear();
        let filled = (|| {
            for i in 0..rows {
                if !valid(i) {
                    codes.push(0);
                    continue;
                }
                let value = data.get(offsets[i] as usize..offsets[i + 1] as usize)?;
                let hash = hasher.hash_one(value);
                let code = match index.find(hash, |&c| entry(entries, entry_offsets, c) == value) {
                    Some(&code) => code,
                    None => {
                        // Checked before the entry is kept: the scratch never holds more
                        // than a vector may.
                        if entries.len() + value.len() + 4 * (entry_offsets.len() + 1) > budget {
                            return None;
                        }
                        let code = (entry_offsets.len() - 1) as u32;
                        entries.extend_from_slice(value);
                        entry_offsets.push(entries.len() as u32);
                        let (entries, entry_offsets) = (&*entries, &*entry_offsets);
                        index.insert_unique(hash, code, |&c| {
                            hasher.hash_one(entry(entries, entry_offsets, c))
                        });
                        code
                    }
                };
                codes.push(code);
            }
            self.fill_dictionary(key, rows, codes, entry_offsets, entries, validity)
        })();
        STRINGS.with(|s| s.set(kept));
        filled
    }

    /// Puts a vector of `units` units under `key` (`layout`: log2 bytes per value, has
    /// NULLs, base), its values written by `write` given its first unit; or finds it
    /// there already.
    fn put(
        &self,
        key: &VectorKey,
        kind: WordKind,
        rows: usize,
        (shift, has_nulls, base): (u8, bool, u64),
        units: usize,
        write: impl FnOnce(usize),
    ) -> Option<Handle> {
        let (set, tag) = self.place(key);
        let s = self.set(set);
        if s.lock.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return None;
        }
        let found = self.find_in(set, tag, key);
        let handle = found.unwrap_or_else(|| {
            let at = self.victim(set, units);
            for u in self.heads_over(set, at, units).into_iter().flatten() {
                self.evict(set, u);
            }
            let unit = set * UNITS + at;
            let head = self.head(unit);
            // Odd while written (and while free): a new odd number, then the next.
            let seq = head.seq.load(Ordering::Relaxed) | 1;
            let seq = seq + 2;
            head.seq.store(seq, Ordering::Relaxed);
            fence(Ordering::Release);
            s.tags[at].store(tag, Ordering::Relaxed);
            for t in &s.tags[at + 1..at + units] {
                t.store(CONTINUED, Ordering::Relaxed);
            }
            s.units[at].store(units as u8, Ordering::Relaxed);
            for (w, k) in head.key.iter().zip(key.0) {
                w.store(k, Ordering::Relaxed);
            }
            head.meta.store(
                rows as u64 | (has_nulls as u64) << 16 | (shift as u64) << 17 | kind.to_bits() << 24,
                Ordering::Relaxed,
            );
            head.base.store(base, Ordering::Relaxed);
            write(unit);
            s.used[at].store(1, Ordering::Relaxed);
            head.seq.store(seq + 1, Ordering::Release);
            Handle { unit: unit as u32, rows: rows as u16, shift, has_nulls, kind, seq: seq + 1, base }
        });
        s.lock.store(0, Ordering::Release);
        Some(handle)
    }

    /// Writes a vector's values into the units from `unit` on, packed `1 << shift` bytes
    /// each, as offsets from `base` when `offsets`; a NULL row as the width's all-ones.
    fn store_values(
        &self,
        unit: usize,
        shift: u8,
        base: u64,
        offsets: bool,
        words: impl Iterator<Item = u64>,
        valid: impl Fn(usize) -> bool,
    ) {
        let per_word = 8 >> shift;
        let bits = 8 << shift;
        let (mut packed, mut filled, mut at) = (0u64, 0usize, 0usize);
        for (i, w) in words.enumerate() {
            let v = match (valid(i), offsets) {
                (false, _) => null_word(shift),
                (true, true) => w.wrapping_sub(base) & null_word(shift),
                (true, false) => w & null_word(shift),
            };
            packed |= if bits == 64 { v } else { v << (filled * bits) };
            filled += 1;
            if filled == per_word {
                self.word(unit, 3, at).store(packed, Ordering::Relaxed);
                (packed, filled, at) = (0, 0, at + 1);
            }
        }
        if filled > 0 {
            self.word(unit, 3, at).store(packed, Ordering::Relaxed);
        }
    }

    /// The first units of the vectors that units `at .. at + units` of `set` belong to
    /// (at most `MAX_UNITS`). Called under the set's lock.
    fn heads_over(&self, set: usize, at: usize, units: usize) -> [Option<usize>; MAX_UNITS] {
        let s = self.set(set);
        let tag = |u: usize| s.tags[u].load(Ordering::Relaxed);
        let mut out = [None; MAX_UNITS];
        let mut n = 0;
        if tag(at) == CONTINUED {
            // Inside a longer vector, whose first unit is aligned to its length.
            out[0] = [2, 4].into_iter().map(|len| at & !(len - 1)).find(|&u| {
                u != at
                    && !matches!(tag(u), 0 | CONTINUED)
                    && s.units[u].load(Ordering::Relaxed) as usize > at - u
            });
            return out;
        }
        for u in at..at + units {
            if !matches!(tag(u), 0 | CONTINUED) {
                out[n] = Some(u);
                n += 1;
            }
        }
        out
    }

    /// Frees the vector whose first unit is `u` of `set`; a handle to it then reads
    /// nothing. Called under the set's lock.
    fn evict(&self, set: usize, u: usize) {
        let s = self.set(set);
        let len = (s.units[u].load(Ordering::Relaxed) as usize).clamp(1, MAX_UNITS);
        let head = self.head(set * UNITS + u);
        // Odd while free: a lookup that read its tag before this skips it, and a handle
        // to it no longer matches, whatever is written over its units later.
        head.seq.store(head.seq.load(Ordering::Relaxed) | 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for t in &s.tags[u..(u + len).min(UNITS)] {
            t.store(0, Ordering::Relaxed);
        }
        s.units[u].store(0, Ordering::Relaxed);
        s.used[u].store(0, Ordering::Relaxed);
    }

    /// Where in `set` to put a vector of `units` units: a free run aligned to its
    /// length, else the first such run the clock hand finds whose vectors were not read
    /// since it last passed (clearing the marks it passes).
    fn victim(&self, set: usize, units: usize) -> usize {
        let s = self.set(set);
        let runs = UNITS / units;
        let free =
            |r: usize| s.tags[r * units..(r + 1) * units].iter().all(|t| t.load(Ordering::Relaxed) == 0);
        if let Some(r) = (0..runs).find(|&r| free(r)) {
            return r * units;
        }
        let start = s.hand.load(Ordering::Relaxed) as usize / units;
        let mut at = (start % runs) * units;
        for step in 0..=2 * runs {
            at = ((start + step) % runs) * units;
            let heads = self.heads_over(set, at, units);
            if heads.iter().flatten().all(|&u| s.used[u].load(Ordering::Relaxed) == 0) {
                break;
            }
            for &u in heads.iter().flatten() {
                s.used[u].store(0, Ordering::Relaxed);
            }
        }
        s.hand.store(((at + units) % UNITS) as u32, Ordering::Relaxed);
        at
    }

    /// Row `at`'s word through `h`: `Some(None)` for a NULL row, `None` when its units
    /// hold another vector now.
    pub fn read(&self, h: &Handle, at: usize) -> Option<Option<u64>> {
        if at >= h.rows as usize || h.kind == WordKind::Bytes {
            return None;
        }
        let v = self.load_value(h.unit as usize, h.shift, at);
        fence(Ordering::Acquire);
        if self.head(h.unit as usize).seq.load(Ordering::Relaxed) != h.seq {
            return None;
        }
        if h.has_nulls && v == null_word(h.shift) {
            return Some(None);
        }
        Some(Some(if h.kind.offsets() { h.base.wrapping_add(v) } else { v }))
    }

    /// Row `at`'s byte string through `h` (of `WordKind::Bytes`), put in `out`:
    /// `Some(None)` for a NULL row, `None` when its units hold another vector now.
    pub fn read_bytes(&self, h: &Handle, at: usize, out: &mut Vec<u8>) -> Option<Option<()>> {
        out.clear();
        self.read_bytes_part(h, at, None, out)
    }

    /// As `read_bytes`, the bytes in `part` of row `at`'s byte string (None: all of
    /// them) appended to `out`; `None` too (`out` as it was) if the string is shorter.
    pub fn read_bytes_part(
        &self,
        h: &Handle,
        at: usize,
        part: Option<std::ops::Range<usize>>,
        out: &mut Vec<u8>,
    ) -> Option<Option<()>> {
        if at >= h.rows as usize || h.kind != WordKind::Bytes {
            return None;
        }
        let before = out.len();
        let unit = h.unit as usize;
        let code = self.load_value(unit, 1, at) as u16;
        let (dict_at, total) = ((h.base as u32) as usize, (h.base >> 32) as usize);
        let value = if h.has_nulls && code as u64 == null_word(1) {
            None
        } else {
            // Read while a writer may be refilling the units: every offset is checked
            // against the vector's length before it is followed, and the sequence number
            // after.
            let entries = self.load_u32(unit, dict_at) as usize;
            let entry_at = dict_at + 4 + 4 * code as usize;
            let data_at = dict_at + 4 * (entries + 2);
            if code as usize >= entries || data_at > total {
                return None;
            }
            let (start, end) =
                (self.load_u32(unit, entry_at) as usize, self.load_u32(unit, entry_at + 4) as usize);
            if start > end || data_at + end > total {
                return None;
            }
            let (from, to) = match part {
                None => (start, end),
                Some(p) if p.start <= p.end && p.end <= end - start => (start + p.start, start + p.end),
                Some(_) => return None,
            };
            self.load_bytes(unit, data_at + from, to - from, out);
            Some(())
        };
        fence(Ordering::Acquire);
        if self.head(unit).seq.load(Ordering::Relaxed) != h.seq {
            out.truncate(before);
            return None;
        }
        Some(value)
    }

    /// Value `at` (of `1 << shift` bytes) of the vector whose first unit is `unit`.
    fn load_value(&self, unit: usize, shift: u8, at: usize) -> u64 {
        let word = self.word(unit, shift, at).load(Ordering::Relaxed);
        let bits = 8usize << shift;
        if bits == 64 {
            word
        } else {
            (word >> ((at % (64 / bits)) * bits)) & null_word(shift)
        }
    }

    /// The u32 at byte `at` (a multiple of 4) of the vector whose first unit is `unit`.
    fn load_u32(&self, unit: usize, at: usize) -> u32 {
        self.load_value(unit, 2, at / 4) as u32
    }

    /// Appends bytes `at .. at + len` of the vector whose first unit is `unit` to `out`.
    fn load_bytes(&self, unit: usize, at: usize, len: usize, out: &mut Vec<u8>) {
        let mut next = at;
        while next < at + len {
            let word = self.word(unit, 0, next).load(Ordering::Relaxed).to_le_bytes();
            let from = next % 8;
            let take = (8 - from).min(at + len - next);
            out.extend_from_slice(&word[from..from + take]);
            next += take;
        }
    }

    /// Where row `at`'s word lies, and the vector's sequence number that `read` checks
    /// after it: for prefetch hints.
    pub fn addresses(&self, h: &Handle, at: usize) -> [*const u8; 2] {
        [
            self.word(h.unit as usize, h.shift, at.min((h.rows as usize).saturating_sub(1))).as_ptr()
                as *const u8,
            self.head(h.unit as usize).seq.as_ptr() as *const u8,
        ]
    }

    /// Units holding a vector.
    #[cfg(test)]
    fn used_units(&self) -> usize {
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

    /// Values needing 8 bytes each.
    fn words(n: u64, rows: usize) -> Vec<u64> {
        (0..rows as u64).map(|i| n << 40 | i).collect()
    }

    fn fill(c: &SharedVectors, n: u64, kind: WordKind, w: &[u64]) -> Option<Handle> {
        c.fill(&key(n), kind, w.len(), w.iter().copied(), None)
    }

    #[test]
    fn a_filled_vector_is_found_and_read_with_its_nulls() {
        let m = Memory::new(4);
        let c = m.cache();
        assert!(c.find(&key(1)).is_none());
        let validity = vec![!0b100u64; 2];
        let w = words(1, 100);
        let h = c.fill(&key(1), WordKind::Float64, 100, w.iter().copied(), Some(&validity)).unwrap();
        assert_eq!(c.read(&h, 0), Some(Some(w[0])));
        assert_eq!(c.read(&h, 2), Some(None));
        assert_eq!(c.read(&h, 99), Some(Some(w[99])));
        assert_eq!(c.read(&h, 100), None);
        let found = c.find(&key(1)).unwrap();
        assert_eq!((found.rows(), found.kind()), (100, WordKind::Float64));
        assert_eq!(c.read(&found, 5), Some(Some(w[5])));
        assert!(c.find(&key(2)).is_none());
        assert_eq!(c.used_units(), 1);
        // Filling a key already held gives its units again.
        let again = fill(&c, 1, WordKind::Float64, &words(9, 100)).unwrap();
        assert_eq!(c.read(&again, 0), Some(Some(w[0])));
    }

    #[test]
    fn kinds_keep_their_scale() {
        let m = Memory::new(1);
        let c = m.cache();
        for (n, kind) in
            [WordKind::Int, WordKind::Float32, WordKind::Float64, WordKind::Scaled(4)].into_iter().enumerate()
        {
            fill(&c, n as u64, kind, &[1, 2, 3]).unwrap();
            assert_eq!(c.find(&key(n as u64)).unwrap().kind(), kind);
        }
    }

    /// Integers take 2, 4 or 8 bytes a value by their range (one word kept free for
    /// NULL when there are NULLs); floats their own width.
    #[test]
    fn values_take_the_bytes_their_range_needs() {
        let m = Memory::new(1);
        let c = m.cache();
        let width = |n: u64, kind, w: &[u64], validity: Option<&[u64]>| {
            let h = c.fill(&key(n), kind, w.len(), w.iter().copied(), validity)?;
            for (i, &x) in w.iter().enumerate() {
                let valid = validity.is_none_or(|v| v[i / 64] >> (i % 64) & 1 == 1);
                assert_eq!(c.read(&h, i), Some(valid.then_some(x)), "vector {n} row {i}");
            }
            Some(h.width())
        };
        // From `lo` to `lo + range`, both there.
        let with_end = |lo: i64, range: u64| -> Vec<u64> {
            let last = SLOT_ROWS as u64 - 1;
            (0..=last)
                .map(|i| (lo as u64).wrapping_add(if i == last { range } else { range.min(i * 37) }))
                .collect()
        };
        assert_eq!(width(1, WordKind::Int, &with_end(-5, 65_535), None), Some(2));
        assert_eq!(width(2, WordKind::Int, &with_end(1 << 40, 65_536), None), Some(4));
        assert_eq!(width(3, WordKind::Scaled(2), &with_end(-7, u32::MAX as u64), None), Some(4));
        assert_eq!(width(4, WordKind::Int, &with_end(0, 1 << 32), None), Some(8));
        assert_eq!(width(5, WordKind::Int, &with_end(i64::MIN, u64::MAX), None), Some(8));
        assert_eq!(width(6, WordKind::Float32, &[1.5f32.to_bits() as u64, u32::MAX as u64], None), Some(4));
        assert_eq!(width(7, WordKind::Float64, &[2.5f64.to_bits()], None), Some(8));
        // With NULLs, the all-ones word is theirs.
        let some_null = [!0u64 ^ 1 << 7; SLOT_ROWS / 64];
        assert_eq!(width(8, WordKind::Int, &with_end(3, 65_534), Some(&some_null)), Some(2));
        assert_eq!(width(9, WordKind::Int, &with_end(3, 65_535), Some(&some_null)), Some(4));
        assert_eq!(width(10, WordKind::Int, &with_end(i64::MIN, u64::MAX - 1), Some(&some_null)), Some(8));
        assert_eq!(width(11, WordKind::Int, &with_end(i64::MIN, u64::MAX), Some(&some_null)), None);
        assert_eq!(
            width(12, WordKind::Float64, &[!0u64, 1, 2], Some(&[0b110])),
            Some(8),
            "the NULL row's word"
        );
        assert_eq!(width(13, WordKind::Float64, &[!0u64, 1, 2], Some(&[0b101])), None);
        assert_eq!(width(14, WordKind::Float32, &[u32::MAX as u64, 1], Some(&[0b01])), None);
        // All NULL.
        assert_eq!(width(15, WordKind::Int, &[5, 6], Some(&[0])), Some(2));
    }

    /// A set holds four times as many vectors of 2-byte values as of 8-byte ones.
    #[test]
    fn narrow_vectors_take_fewer_units() {
        let m = Memory::new(1);
        let c = m.cache();
        let narrow: Vec<u64> = (0..SLOT_ROWS as u64).map(|i| 1000 + i % 300).collect();
        for n in 0..UNITS as u64 {
            assert!(c.admit(&key(n)) || n > (UNITS - MAX_UNITS) as u64);
            fill(&c, n, WordKind::Int, &narrow).unwrap();
        }
        assert_eq!(c.used_units(), UNITS);
        assert!((0..UNITS as u64).all(|n| c.find(&key(n)).is_some()), "none evicted");
        let m = Memory::new(1);
        let c = m.cache();
        for n in 0..(UNITS / MAX_UNITS) as u64 {
            fill(&c, n, WordKind::Float64, &words(n, SLOT_ROWS)).unwrap();
        }
        assert_eq!(c.used_units(), UNITS);
        assert!(!c.admit(&key(100)), "full: a first miss is not admitted");
    }

    #[test]
    fn a_full_set_admits_a_key_missed_twice_and_evicts_one_not_read_since() {
        let m = Memory::new(1);
        let c = m.cache();
        let ways = (UNITS / MAX_UNITS) as u64;
        let handles: Vec<Handle> =
            (0..ways).map(|n| fill(&c, n, WordKind::Float64, &words(n, SLOT_ROWS)).unwrap()).collect();
        assert_eq!(c.used_units(), UNITS);
        // The clock hand clears every mark once, then takes the first run.
        assert!(!c.admit(&key(100)));
        assert!(c.admit(&key(100)));
        let h = fill(&c, 100, WordKind::Float64, &words(100, SLOT_ROWS)).unwrap();
        assert_eq!(c.read(&handles[0], 0), None, "the first vector was evicted");
        assert!(c.find(&key(0)).is_none());
        assert_eq!(c.read(&h, 3), Some(Some(100 << 40 | 3)));
        // Read vector 1 again after the hand cleared it: the hand passes it next time.
        assert!(c.find(&key(1)).is_some());
        let h2 = fill(&c, 101, WordKind::Float64, &words(101, SLOT_ROWS)).unwrap();
        assert!(c.find(&key(1)).is_some(), "vector 1 was read since the hand cleared it");
        assert!(c.find(&key(2)).is_none(), "vector 2 was not");
        assert_eq!(c.read(&handles[2], 0), None);
        assert_eq!(c.read(&h2, 0), Some(Some(101 << 40)));
    }

    /// A narrow vector put inside the units of a wide one evicts it whole: a handle to
    /// the wide one reads nothing after, and its other units are free for the next.
    #[test]
    fn a_narrow_vector_over_a_wide_one_evicts_it() {
        let m = Memory::new(1);
        let c = m.cache();
        let ways = (UNITS / MAX_UNITS) as u64;
        let wide: Vec<Handle> =
            (0..ways).map(|n| fill(&c, n, WordKind::Float64, &words(n, SLOT_ROWS)).unwrap()).collect();
        let narrow = |n: u64| -> Vec<u64> { (0..SLOT_ROWS as u64).map(|i| n * 10 + i % 7).collect() };
        let first = fill(&c, 100, WordKind::Int, &narrow(100)).unwrap();
        let evicted: Vec<u64> = (0..ways).filter(|&n| c.read(&wide[n as usize], 0).is_none()).collect();
        assert_eq!(evicted.len(), 1, "one wide vector made room");
        // Its other three units take three more narrow vectors without evicting.
        for n in 101..104 {
            fill(&c, n, WordKind::Int, &narrow(n)).unwrap();
        }
        assert_eq!((0..ways).filter(|&n| c.read(&wide[n as usize], 0).is_none()).count(), 1);
        assert_eq!(c.read(&first, 9), Some(Some(1000 + 9 % 7)));
        for n in 101..104 {
            let h = c.find(&key(n)).unwrap();
            assert_eq!(c.read(&h, 2047), Some(Some(n * 10 + 2047 % 7)));
        }
        assert_eq!(c.used_units(), UNITS);
        // A wide vector now evicts the narrow ones it lands on.
        for _ in 0..2 {
            c.admit(&key(200));
        }
        let w = fill(&c, 200, WordKind::Float64, &words(200, SLOT_ROWS)).unwrap();
        assert_eq!(c.read(&w, 2047), Some(Some(200 << 40 | 2047)));
        assert_eq!(c.used_units(), UNITS);
    }

    /// Entries `n`-0, `n`-1, ... of varying lengths, as a dictionary's offsets and bytes.
    fn entries(n: u64, count: usize) -> (Vec<u32>, Vec<u8>) {
        let mut offsets = vec![0];
        let mut data = Vec::new();
        for e in 0..count {
            data.extend(format!("{n}-{e}-{}", "x".repeat(e % 13)).bytes());
            offsets.push(data.len() as u32);
        }
        (offsets, data)
    }

    #[test]
    fn a_part_is_kept_as_one_string_under_its_own_key() {
        // A frame of text (`VectorKey::part`): 8,191 bytes, as one value, beside its
        // vector's key and other parts'; read back whole and unchanged.
        let m = Memory::new(1);
        let c = m.cache();
        let frame: Vec<u8> = (0..8191u32).map(|i| (i * 7 + i / 255) as u8).collect();
        let (vector, part) = (key(9), key(9).part(3));
        assert!(part != vector && part != key(9).part(4) && part == key(9).part(3));
        let h = c.fill_strings(&part, 1, &[0, frame.len() as u32], &frame, None).unwrap();
        assert_eq!(c.used_units(), 4, "8 kB of text and its entry: 3 units, taken as 4");
        assert!(c.find(&vector).is_none() && c.find(&key(9).part(4)).is_none());
        let mut out = vec![1, 2, 3];
        assert_eq!(c.read_bytes(&c.find(&part).unwrap(), 0, &mut out), Some(Some(())));
        assert_eq!(out, frame);
        assert_eq!(c.read_bytes(&h, 1, &mut out), None);
        // Read in part: appended; a part beyond the string is not read.
        let mut out = frame[..2].to_vec();
        assert_eq!(c.read_bytes_part(&h, 0, Some(8000..8191), &mut out), Some(Some(())));
        assert_eq!((&out[..2], &out[2..]), (&frame[..2], &frame[8000..]));
        assert_eq!(c.read_bytes_part(&h, 0, Some(8000..8192), &mut out), None);
        assert_eq!(c.read_bytes_part(&h, 0, Some(9000..9001), &mut out), None);
        assert_eq!(out.len(), 193);
        // Past what a vector may take: not kept.
        assert!(c.fill_strings(&key(9).part(5), 1, &[0, 20_000], &[7; 20_000], None).is_none());
    }

    #[test]
    fn a_dictionary_is_kept_as_codes_and_entries() {
        let m = Memory::new(1);
        let c = m.cache();
        let (offsets, data) = entries(7, 40);
        let codes: Vec<u32> = (0..SLOT_ROWS as u32).map(|i| i * 7 % 40).collect();
        let validity = [!0u64 ^ 1 << 5; SLOT_ROWS / 64];
        let h = c.fill_dictionary(&key(1), SLOT_ROWS, &codes, &offsets, &data, Some(&validity)).unwrap();
        assert_eq!(h.kind(), WordKind::Bytes);
        assert_eq!(c.used_units(), 2, "4 kB of codes and the entries");
        let found = c.find(&key(1)).unwrap();
        let mut out = Vec::new();
        for at in [0, 1, 5, 69, 2047] {
            let expect = (at % 64 != 5).then(|| {
                let e = codes[at] as usize;
                data[offsets[e] as usize..offsets[e + 1] as usize].to_vec()
            });
            let got = c.read_bytes(&found, at, &mut out).unwrap().map(|()| out.clone());
            assert_eq!(got, expect, "row {at}");
        }
        assert_eq!(c.read_bytes(&found, SLOT_ROWS, &mut out), None);
        assert_eq!(c.read(&found, 0), None, "not words");
        // Small: one unit. An empty entry reads as an empty string.
        let h = c.fill_dictionary(&key(2), 3, &[0, 1, 1], &[0, 0, 3], b"abc", None).unwrap();
        assert_eq!(c.used_units(), 3);
        assert_eq!(c.read_bytes(&h, 0, &mut out), Some(Some(())));
        assert!(out.is_empty());
        assert_eq!(c.read_bytes(&h, 2, &mut out), Some(Some(())));
        assert_eq!(out, b"abc");
        // Refused: entries beyond 16 kB, a code naming no entry, offsets past the bytes.
        let (offsets, data) = entries(8, 1200);
        assert!(data.len() > 12_000);
        assert!(c.fill_dictionary(&key(3), SLOT_ROWS, &codes, &offsets, &data, None).is_none());
        assert!(c.fill_dictionary(&key(4), 3, &[0, 2, 1], &[0, 0, 3], b"abc", None).is_none());
        assert!(c.fill_dictionary(&key(4), 3, &[0, 2, 1], &[0, 0, 3], b"ab", None).is_none());
        // A NULL row's code may be anything.
        assert!(c.fill_dictionary(&key(4), 3, &[0, 9, 1], &[0, 0, 3], b"abc", Some(&[0b101])).is_some());
    }

    /// Byte strings are kept as the dictionary of their distinct values, while those
    /// fit.
    #[test]
    fn strings_are_kept_as_their_distinct_values() {
        let m = Memory::new(1);
        let c = m.cache();
        let strings = |values: &[String]| {
            let mut offsets = vec![0u32];
            let mut data = Vec::new();
            for v in values {
                data.extend(v.bytes());
                offsets.push(data.len() as u32);
            }
            (offsets, data)
        };
        let few: Vec<String> = (0..SLOT_ROWS).map(|i| format!("host_{}", i / 100)).collect();
        let (offsets, data) = strings(&few);
        let validity = [!0u64 ^ 1 << 63; SLOT_ROWS / 64];
        let h = c.fill_strings(&key(1), SLOT_ROWS, &offsets, &data, Some(&validity)).unwrap();
        assert_eq!(c.used_units(), 2);
        let mut out = Vec::new();
        for at in [0, 99, 100, 127, 128, 2047] {
            let got =
                c.read_bytes(&h, at, &mut out).unwrap().map(|()| String::from_utf8(out.clone()).unwrap());
            assert_eq!(got, (at % 64 != 63).then(|| few[at].clone()), "row {at}");
        }
        // As many distinct values as rows, 12 bytes each: too many.
        let many: Vec<String> = (0..SLOT_ROWS).map(|i| format!("value {i:06}")).collect();
        let (offsets, data) = strings(&many);
        assert!(c.fill_strings(&key(2), SLOT_ROWS, &offsets, &data, None).is_none());
        // Fewer rows fit.
        let (offsets, data) = strings(&many[..500]);
        let h = c.fill_strings(&key(3), 500, &offsets, &data, None).unwrap();
        assert_eq!(c.read_bytes(&h, 499, &mut out), Some(Some(())));
        assert_eq!(out, many[499].as_bytes());
        // Offsets that do not cover the rows are refused.
        assert!(c.fill_strings(&key(4), 501, &offsets, &data, None).is_none());
        // The working space kept between calls (after one given up, too) holds nothing
        // of them: the few values again make the same two units, and read back.
        let (offsets, data) = strings(&few);
        let before = c.used_units();
        let h = c.fill_strings(&key(5), SLOT_ROWS, &offsets, &data, None).unwrap();
        assert_eq!(c.used_units() - before, 2);
        for at in [0, 63, 1999, 2047] {
            assert_eq!(c.read_bytes(&h, at, &mut out), Some(Some(())));
            assert_eq!(out, few[at].as_bytes(), "row {at}");
        }
    }

    #[test]
    fn a_held_set_lock_skips_the_fill() {
        let m = Memory::new(1);
        let c = m.cache();
        c.set(0).lock.store(1, Ordering::Relaxed);
        assert!(fill(&c, 1, WordKind::Int, &words(1, 10)).is_none());
        c.set(0).lock.store(0, Ordering::Relaxed);
        assert!(fill(&c, 1, WordKind::Int, &words(1, 10)).is_some());
    }

    #[test]
    fn too_many_rows_or_too_little_validity_are_refused() {
        let m = Memory::new(1);
        let c = m.cache();
        assert!(fill(&c, 1, WordKind::Int, &words(1, SLOT_ROWS + 1)).is_none());
        assert!(c.fill(&key(1), WordKind::Int, 65, words(1, 65).into_iter(), Some(&[!0])).is_none());
        assert!(fill(&c, 1, WordKind::Int, &words(1, SLOT_ROWS)).is_some());
    }

    #[test]
    fn no_memory_no_cache() {
        // SAFETY: nothing is read from a cache of no sets.
        let c = unsafe { SharedVectors::new(std::ptr::null_mut::<u8>().wrapping_add(ALIGN), 100) };
        assert_eq!(c.units(), 0);
        assert!(c.find(&key(1)).is_none());
        assert!(!c.admit(&key(1)));
        assert!(fill(&c, 1, WordKind::Int, &[1]).is_none());
    }

    /// Readers on other threads, while a writer keeps refilling two sets with vectors
    /// of 2, 4 and 8 bytes a value and dictionaries, never read a value of a vector other than the one
    /// their handle found: each read either gives the right value or says its units
    /// moved on.
    #[test]
    fn readers_never_see_another_vectors_words() {
        let m = Memory::new(2);
        let c = m.cache();
        let stop = std::sync::atomic::AtomicBool::new(false);
        let reads = AtomicU64::new(0);
        let value = |n: u64, at: u64| match n % 3 {
            0 => n * 100 + at % 50,
            1 => n << 20 | at,
            _ => n << 40 | at,
        };
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (c, stop, reads) = (&c, &stop, &reads);
                s.spawn(move || {
                    let mut n = t;
                    while !stop.load(Ordering::Relaxed) {
                        n = (n * 7 + 3) % 64;
                        let mut out = Vec::new();
                        if let Some(h) = c.find(&key(n)) {
                            for at in [0, 1, 511, 2047] {
                                if h.kind() == WordKind::Bytes {
                                    if let Some(v) = c.read_bytes(&h, at, &mut out) {
                                        assert_eq!(v, Some(()));
                                        let e = at % 30;
                                        let (offsets, data) = entries(n, 30);
                                        assert_eq!(out, &data[offsets[e] as usize..offsets[e + 1] as usize]);
                                        reads.fetch_add(1, Ordering::Relaxed);
                                    }
                                } else if let Some(v) = c.read(&h, at) {
                                    assert_eq!(v, Some(value(n, at as u64)), "vector {n} row {at}");
                                    reads.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                        }
                    }
                });
            }
            let w: Vec<Vec<u64>> =
                (0..64).map(|n| (0..SLOT_ROWS as u64).map(|at| value(n, at)).collect()).collect();
            let dictionaries: Vec<(Vec<u32>, Vec<u8>)> = (0..64).map(|n| entries(n, 30)).collect();
            let codes: Vec<u32> = (0..SLOT_ROWS as u32).map(|at| at % 30).collect();
            for round in 0..20_000u64 {
                let n = (round * 13) % 64;
                if n % 4 == 3 {
                    let (offsets, data) = &dictionaries[n as usize];
                    let _ = c.fill_dictionary(&key(n), SLOT_ROWS, &codes, offsets, data, None);
                } else {
                    let _ = c.fill(&key(n), WordKind::Int, SLOT_ROWS, w[n as usize].iter().copied(), None);
                }
                // Mostly misses twice, so most fills evict.
                c.admit(&key(n));
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(reads.load(Ordering::Relaxed) > 0);
    }
}
