//! Join filters: the keys of a hash join's built (inner) side, tested on the probe
//! side's key column inside its ColumnarScan, before any other column is decoded. A
//! fact row whose key is not among the inner keys cannot join (the join's `=` is strict
//! and exact on these integer kinds), so dropping it early changes nothing but speed.
//!
//! - `JoinKeySet`: the exact set of inner keys (integers in the column's physical form,
//!   i64), with their min and max for zone maps; a bitmap over [min, max] when the keys
//!   are dense enough, otherwise an open-addressing hash set.
//! - `JoinKeyFilter`: a `VectorFilter` that tests the key column against the set and
//!   then hands the survivors to the scan's pushed filter (if any), counting the rows
//!   each removed.

use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::format::zonemap::{Verdict, ZoneMap, ZoneStats};
use crate::storage::read::vector_filter::{ColumnSource, VectorFilter};
use std::cell::Cell;
use std::rc::Rc;

/// A bitmap is used when it is no larger than the hash set would be (`hash_slots`, 64
/// bits each: 128 bits a key or more), or at most `SMALL_BITMAP_BITS`
/// whatever the keys (and at most `MAX_BITMAP_BITS` in all): one load and a shift per
/// probe, no hashing and no branch on the probe's outcome. A 256 kB bitmap stays in the
/// L2 cache, where a probe costs less than a hash set's mispredicted probe loop (TPC-H
/// q8: 1,451 part keys over 200k values, 6M probes); q10's 57k order keys spread over
/// 6M values take a 750 kB bitmap where the hash set takes 1 MB.
const SMALL_BITMAP_BITS: u64 = 1 << 21;
const MAX_BITMAP_BITS: u64 = 1 << 27;

/// The exact set of a hash join's inner keys.
#[derive(Debug, Clone)]
pub struct JoinKeySet {
    min: i64,
    max: i64,
    len: usize,
    lookup: Lookup,
}

#[derive(Debug, Clone)]
enum Lookup {
    /// No key: nothing passes.
    Empty,
    /// Bit `k - min` is set for each key `k`.
    Bitmap(Vec<u64>),
    /// Open addressing, linear probing; `slots.len()` a power of two, at most half full;
    /// a slot holding `EMPTY_SLOT` is free, and whether that value is a key is `has_empty`.
    Hashed { slots: Vec<i64>, shift: u32, has_empty: bool },
}

const EMPTY_SLOT: i64 = i64::MIN;

/// The hash set's slots for `len` keys: a power of two, at most half full.
fn hash_slots(len: usize) -> usize {
    (len * 2).next_power_of_two().max(16)
}

/// Fibonacci hashing: the top bits of the product spread sequential keys evenly.
#[inline(always)]
fn slot_of(key: i64, shift: u32) -> usize {
    ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl JoinKeySet {
    /// The set of `keys` (any order, duplicates allowed).
    pub fn new(mut keys: Vec<i64>) -> JoinKeySet {
        keys.sort_unstable();
        keys.dedup();
        let (Some(&min), Some(&max)) = (keys.first(), keys.last()) else {
            return JoinKeySet { min: 0, max: -1, len: 0, lookup: Lookup::Empty };
        };
        let len = keys.len();
        let range = (max as i128 - min as i128 + 1) as u128;
        let bitmap_bits = (hash_slots(len) as u128 * 64).max(SMALL_BITMAP_BITS as u128);
        let lookup = if range <= bitmap_bits.min(MAX_BITMAP_BITS as u128) {
            let mut bits = vec![0u64; (range as usize).div_ceil(64)];
            for k in &keys {
                let b = (*k as i128 - min as i128) as usize;
                bits[b / 64] |= 1 << (b % 64);
            }
            Lookup::Bitmap(bits)
        } else {
            let capacity = hash_slots(len);
            let shift = 64 - capacity.trailing_zeros();
            let mut slots = vec![EMPTY_SLOT; capacity];
            let mut has_empty = false;
            for &k in &keys {
                if k == EMPTY_SLOT {
                    has_empty = true;
                    continue;
                }
                let mut s = slot_of(k, shift);
                while slots[s] != EMPTY_SLOT {
                    s = (s + 1) & (capacity - 1);
                }
                slots[s] = k;
            }
            Lookup::Hashed { slots, shift, has_empty }
        };
        JoinKeySet { min, max, len, lookup }
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The smallest and largest key (None if empty).
    pub fn bounds(&self) -> Option<(i64, i64)> {
        (!self.is_empty()).then_some((self.min, self.max))
    }

    #[inline(always)]
    pub fn contains(&self, key: i64) -> bool {
        if key < self.min || key > self.max {
            return false;
        }
        match &self.lookup {
            Lookup::Empty => false,
            Lookup::Bitmap(bits) => {
                let b = (key as i128 - self.min as i128) as usize;
                bits[b / 64] >> (b % 64) & 1 == 1
            }
            Lookup::Hashed { slots, shift, has_empty } => {
                if key == EMPTY_SLOT {
                    return *has_empty;
                }
                let mask = slots.len() - 1;
                let mut s = slot_of(key, *shift);
                loop {
                    let v = slots[s];
                    if v == key {
                        return true;
                    }
                    if v == EMPTY_SLOT {
                        return false;
                    }
                    s = (s + 1) & mask;
                }
            }
        }
    }

    /// What zone maps say of the key test on a vector or row group: no row can pass
    /// when its range misses [min, max] or it holds only NULLs.
    pub fn verdict(&self, stats: Option<ZoneStats>) -> Verdict {
        if self.is_empty() {
            return Verdict::None;
        }
        match stats {
            Some(s) if s.null_count >= s.rows && s.rows > 0 => Verdict::None,
            Some(ZoneStats { zone: ZoneMap::Int { min, max }, .. }) if max < self.min || min > self.max => {
                Verdict::None
            }
            _ => Verdict::Some,
        }
    }

    /// Keeps the rows of `selection` whose value in `v` (an integer vector) is a key;
    /// NULLs never are (the join's `=` is strict).
    pub fn select(&self, v: &DecodedVector, selection: &mut Vec<u32>) {
        let DecodedValues::Int(values) = &v.values else {
            // The planner pushes join filters on integer columns only.
            panic!("join filter on a non-integer vector")
        };
        // One loop per kind of set, so that a bitmap's probe is a few instructions with
        // no branch on its outcome (this runs for every row the scan reads).
        match &self.lookup {
            Lookup::Empty => selection.clear(),
            Lookup::Bitmap(bits) => {
                let (min, max) = (self.min, self.max);
                let span = max.wrapping_sub(min) as u64;
                keep(values, v.validity.as_deref(), selection, |k| {
                    // A key outside [min, max] reads bit `span` and is then dropped by the
                    // range test (both computed, neither branched on).
                    let b = (k.wrapping_sub(min) as u64).min(span);
                    (k >= min) & (k <= max) & (bits[(b / 64) as usize] >> (b % 64) & 1 == 1)
                })
            }
            Lookup::Hashed { .. } => keep(values, v.validity.as_deref(), selection, |k| self.contains(k)),
        }
    }
}

/// Keeps the rows of `selection` whose value is valid and passes `test`.
#[inline(always)]
fn keep(values: &[i64], validity: Option<&[bool]>, selection: &mut Vec<u32>, test: impl Fn(i64) -> bool) {
    let mut n = 0;
    match validity {
        // Every row of the vector selected (the join filter runs first): the row numbers
        // are the positions, not loaded from the selection.
        None if selection.len() == values.len() => {
            let rows = selection.as_mut_slice();
            for (i, &k) in values.iter().enumerate() {
                // SAFETY: `n <= i < values.len() == rows.len()`.
                unsafe { *rows.get_unchecked_mut(n) = i as u32 };
                n += test(k) as usize;
            }
        }
        None => {
            for i in 0..selection.len() {
                let r = selection[i];
                selection[n] = r;
                n += test(values[r as usize]) as usize;
            }
        }
        Some(valid) => {
            for i in 0..selection.len() {
                let r = selection[i];
                selection[n] = r;
                n += (valid[r as usize] && test(values[r as usize])) as usize;
            }
        }
    }
    selection.truncate(n);
}

/// A join filter as the reader asks for it: the key test first, then the scan's own
/// pushed filter on the rows left. `removed` counts the rows the key test removed
/// (EXPLAIN ANALYZE's `Rows Removed by Join Filter`); the reader's own count holds both.
pub struct JoinKeyFilter {
    att: usize,
    keys: JoinKeySet,
    pushed: Option<Box<dyn VectorFilter>>,
    attributes: Vec<usize>,
    removed: Rc<Cell<u64>>,
}

impl JoinKeyFilter {
    /// The filter testing attribute `att` against `keys`, then `pushed`.
    pub fn boxed(
        att: usize,
        keys: JoinKeySet,
        pushed: Option<Box<dyn VectorFilter>>,
        removed: Rc<Cell<u64>>,
    ) -> Box<dyn VectorFilter> {
        let mut attributes: Vec<usize> = pushed.as_ref().map(|p| p.attributes().to_vec()).unwrap_or_default();
        attributes.push(att);
        attributes.sort_unstable();
        attributes.dedup();
        Box::new(JoinKeyFilter { att, keys, pushed, attributes, removed })
    }
}

impl VectorFilter for JoinKeyFilter {
    fn attributes(&self) -> &[usize] {
        &self.attributes
    }

    fn verdict(&self, stats: &dyn Fn(usize) -> Option<ZoneStats>) -> Verdict {
        if self.keys.verdict(stats(self.att)) == Verdict::None {
            return Verdict::None;
        }
        match &self.pushed {
            Some(p) if p.verdict(stats) == Verdict::None => Verdict::None,
            _ => Verdict::Some,
        }
    }

    fn select(
        &self,
        stats: &dyn Fn(usize) -> Option<ZoneStats>,
        columns: &mut dyn ColumnSource,
        selection: &mut Vec<u32>,
    ) {
        let before = selection.len();
        self.keys.select(columns.column(self.att), selection);
        self.removed.set(self.removed.get() + (before - selection.len()) as u64);
        if let (Some(p), false) = (&self.pushed, selection.is_empty()) {
            p.select(stats, columns, selection);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[Option<i64>]) -> DecodedVector {
        let validity =
            values.iter().any(|v| v.is_none()).then(|| values.iter().map(|v| v.is_some()).collect());
        DecodedVector::from_parts(
            values.len() as u32,
            validity,
            DecodedValues::Int(values.iter().map(|v| v.unwrap_or(0)).collect()),
            None,
        )
    }

    struct One(DecodedVector);
    impl ColumnSource for One {
        fn column(&mut self, _att: usize) -> &DecodedVector {
            &self.0
        }
    }

    #[test]
    fn dense_keys_use_a_bitmap_and_sparse_ones_a_hash_set() {
        let dense = JoinKeySet::new((100..200).rev().collect());
        assert!(matches!(dense.lookup, Lookup::Bitmap(_)));
        let sparse = JoinKeySet::new(vec![i64::MIN, -7, 0, 1 << 40, i64::MAX, 0]);
        assert!(matches!(sparse.lookup, Lookup::Hashed { .. }));
        // Few keys over a range a small bitmap covers: a bitmap all the same.
        let few = JoinKeySet::new((0..1451).map(|i| 1 + i * 137).collect());
        assert!(matches!(few.lookup, Lookup::Bitmap(_)));
        assert!(few.contains(1 + 1450 * 137) && !few.contains(2) && !few.contains(1 + 1451 * 137));
        let wide = JoinKeySet::new(vec![0, 1 << 21]);
        assert!(matches!(wide.lookup, Lookup::Hashed { .. }), "just past a small bitmap's range");
        for set in [&dense, &sparse] {
            let probe = [
                i64::MIN,
                i64::MIN + 1,
                -8,
                -7,
                -1,
                0,
                1,
                99,
                100,
                150,
                199,
                200,
                1 << 40,
                i64::MAX - 1,
                i64::MAX,
            ];
            for k in probe {
                let expected = match set.lookup {
                    Lookup::Bitmap(_) => (100..200).contains(&k),
                    _ => [i64::MIN, -7, 0, 1 << 40, i64::MAX].contains(&k),
                };
                assert_eq!(set.contains(k), expected, "{k}");
            }
        }
        assert_eq!(dense.len(), 100);
        assert_eq!(dense.bounds(), Some((100, 199)));
        assert_eq!(sparse.len(), 5);
        assert_eq!(sparse.bounds(), Some((i64::MIN, i64::MAX)));
    }

    #[test]
    fn a_large_random_set_is_exact() {
        // A pseudo-random sample: every key found, every other value not.
        let mut x: u64 = 0x1234_5678;
        let mut keys = Vec::new();
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.push((x % 10_000_000_000) as i64);
        }
        let set = JoinKeySet::new(keys.clone());
        assert!(matches!(set.lookup, Lookup::Hashed { .. }));
        let truth: std::collections::HashSet<i64> = keys.iter().copied().collect();
        assert_eq!(set.len(), truth.len());
        for k in &keys {
            assert!(set.contains(*k));
        }
        for probe in (0..10_000_000_000i64).step_by(9_999_991) {
            assert_eq!(set.contains(probe), truth.contains(&probe), "{probe}");
        }
    }

    #[test]
    fn an_empty_set_passes_nothing() {
        let set = JoinKeySet::new(vec![]);
        assert!(set.is_empty());
        assert_eq!(set.bounds(), None);
        assert!(!set.contains(0));
        assert_eq!(set.verdict(None), Verdict::None);
    }

    #[test]
    fn zone_maps_outside_the_key_range_are_refuted() {
        let set = JoinKeySet::new(vec![10, 20, 30]);
        let zone = |min, max, nulls| {
            Some(ZoneStats { zone: ZoneMap::Int { min, max }, rows: 10, null_count: nulls })
        };
        assert_eq!(set.verdict(zone(0, 9, 0)), Verdict::None);
        assert_eq!(set.verdict(zone(31, 90, 0)), Verdict::None);
        assert_eq!(set.verdict(zone(0, 10, 0)), Verdict::Some);
        assert_eq!(set.verdict(zone(25, 26, 0)), Verdict::Some, "inside the range: must be read");
        assert_eq!(
            set.verdict(Some(ZoneStats { zone: ZoneMap::None, rows: 10, null_count: 10 })),
            Verdict::None
        );
        assert_eq!(set.verdict(None), Verdict::Some);
    }

    #[test]
    fn nulls_and_missing_keys_are_removed_and_counted() {
        let removed = Rc::new(Cell::new(0));
        let f = JoinKeyFilter::boxed(2, JoinKeySet::new(vec![1, 3, 5]), None, removed.clone());
        assert_eq!(f.attributes(), &[2]);
        let mut cols = One(ints(&[Some(1), None, Some(3), Some(4), Some(5), Some(6)]));
        let mut sel: Vec<u32> = vec![0, 1, 2, 3, 4, 5];
        f.select(&|_| None, &mut cols, &mut sel);
        assert_eq!(sel, vec![0, 2, 4]);
        assert_eq!(removed.get(), 3);
        // Only the rows still selected are tested.
        let mut sel: Vec<u32> = vec![3, 4];
        f.select(&|_| None, &mut cols, &mut sel);
        assert_eq!(sel, vec![4]);
        assert_eq!(removed.get(), 4);
        // Without NULLs, a whole vector (its positions, not the selection's) and part of
        // it keep the same rows.
        let mut cols = One(ints(&[Some(5), Some(2), Some(3), Some(3), Some(9), Some(1)]));
        let mut sel: Vec<u32> = (0..6).collect();
        f.select(&|_| None, &mut cols, &mut sel);
        assert_eq!(sel, vec![0, 2, 3, 5]);
        let mut sel: Vec<u32> = vec![1, 2, 4, 5];
        f.select(&|_| None, &mut cols, &mut sel);
        assert_eq!(sel, vec![2, 5]);
    }

    #[test]
    fn a_bitmap_at_the_ends_of_the_range_keeps_exactly_its_keys() {
        let removed = Rc::new(Cell::new(0));
        for keys in [vec![i64::MAX - 10, i64::MAX], vec![i64::MIN, i64::MIN + 3]] {
            let set = JoinKeySet::new(keys.clone());
            assert!(matches!(set.lookup, Lookup::Bitmap(_)));
            let f = JoinKeyFilter::boxed(0, set, None, removed.clone());
            let probes =
                [i64::MIN, i64::MIN + 1, i64::MIN + 3, -1, 0, i64::MAX - 11, i64::MAX - 10, i64::MAX];
            let mut cols = One(ints(&probes.map(Some)));
            let mut sel: Vec<u32> = (0..probes.len() as u32).collect();
            f.select(&|_| None, &mut cols, &mut sel);
            let kept: Vec<i64> = sel.iter().map(|&r| probes[r as usize]).collect();
            assert_eq!(kept, keys);
        }
    }

    #[test]
    fn the_pushed_filter_runs_on_the_survivors() {
        use crate::exec::filter::pushed::PushedFilter;
        use crate::exec::filter::{Filter, Test};
        use crate::storage::format::zonemap::{Bound, CmpOp};
        let removed = Rc::new(Cell::new(0));
        let pushed =
            PushedFilter::boxed(Filter::Test { att: 2, test: Test::Compare(CmpOp::Gt, Bound::Int(2)) });
        let f = JoinKeyFilter::boxed(2, JoinKeySet::new(vec![1, 3, 5]), Some(pushed), removed.clone());
        let mut cols = One(ints(&[Some(1), Some(2), Some(3), Some(5)]));
        let mut sel: Vec<u32> = vec![0, 1, 2, 3];
        f.select(&|_| None, &mut cols, &mut sel);
        assert_eq!(sel, vec![2, 3]);
        assert_eq!(removed.get(), 1, "row 0 fell to the pushed filter, row 1 to the keys");
        let stats = |_| Some(ZoneStats { zone: ZoneMap::Int { min: 0, max: 2 }, rows: 4, null_count: 0 });
        assert_eq!(f.verdict(&stats), Verdict::None, "the pushed filter refutes [0, 2]");
    }
}
