//! Zone maps: per-vector minimum and maximum of the non-NULL values, used to skip
//! vectors and row groups that a predicate cannot match. Pure.
//!
//! Floats follow PostgreSQL's total order (NaN above +Infinity, -0 equal to +0), so a
//! zone map agrees with the btree operators that the executor would call.

use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZoneMap {
    /// No non-NULL value, or a type without an order we track.
    None,
    Int {
        min: i64,
        max: i64,
    },
    Float {
        min: f64,
        max: f64,
    },
    /// Byte-wise bounds of byte-string values (text, bytea): `min` is at most, `max` at
    /// least, every value in byte order (shorter prefix first).
    Bytes {
        min: ZoneBytes,
        max: ZoneBytes,
    },
}

/// Longest byte-string bound kept inline; longer values get truncated bounds.
pub const ZONE_BYTES: usize = 31;

/// A short byte string stored inline, so zone maps stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ZoneBytes {
    len: u8,
    data: [u8; ZONE_BYTES],
}

impl ZoneBytes {
    /// None when `bytes` is longer than `ZONE_BYTES`.
    pub fn new(bytes: &[u8]) -> Option<ZoneBytes> {
        if bytes.len() > ZONE_BYTES {
            return None;
        }
        let mut data = [0u8; ZONE_BYTES];
        data[..bytes.len()].copy_from_slice(bytes);
        Some(ZoneBytes { len: bytes.len() as u8, data })
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }

    /// A lower bound of `bytes` that fits: its prefix.
    fn lower_bound(bytes: &[u8]) -> ZoneBytes {
        ZoneBytes::new(&bytes[..bytes.len().min(ZONE_BYTES)]).unwrap()
    }

    /// An upper bound of `bytes` that fits: the value itself, or its prefix with the
    /// last byte below 0xFF incremented; None if there is no such byte.
    fn upper_bound(bytes: &[u8]) -> Option<ZoneBytes> {
        if bytes.len() <= ZONE_BYTES {
            return ZoneBytes::new(bytes);
        }
        let prefix = &bytes[..ZONE_BYTES];
        let last = prefix.iter().rposition(|b| *b != 0xFF)?;
        let mut bound = prefix[..=last].to_vec();
        bound[last] += 1;
        ZoneBytes::new(&bound)
    }
}

impl std::fmt::Debug for ZoneBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_slice()))
    }
}

/// PostgreSQL's float comparison (`float8_cmp_internal`): NaN sorts above everything.
pub fn pg_float_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).unwrap(),
    }
}

impl ZoneMap {
    pub fn of_ints(values: &[i64]) -> ZoneMap {
        match (values.iter().min(), values.iter().max()) {
            (Some(&min), Some(&max)) => ZoneMap::Int { min, max },
            _ => ZoneMap::None,
        }
    }

    pub fn of_floats(values: impl IntoIterator<Item = f64>) -> ZoneMap {
        let mut it = values.into_iter();
        let Some(first) = it.next() else { return ZoneMap::None };
        let (mut min, mut max) = (first, first);
        for v in it {
            if pg_float_cmp(v, min) == Ordering::Less {
                min = v;
            }
            if pg_float_cmp(v, max) == Ordering::Greater {
                max = v;
            }
        }
        ZoneMap::Float { min, max }
    }

    /// Byte-wise bounds of byte strings; None when no finite upper bound fits.
    pub fn of_bytes<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> ZoneMap {
        let mut it = values.into_iter();
        let Some(first) = it.next() else { return ZoneMap::None };
        let (mut min, mut max) = (first, first);
        for v in it {
            if v < min {
                min = v;
            }
            if v > max {
                max = v;
            }
        }
        match ZoneBytes::upper_bound(max) {
            Some(max) => ZoneMap::Bytes { min: ZoneBytes::lower_bound(min), max },
            None => ZoneMap::None,
        }
    }

    /// The zone map covering both.
    pub fn merge(self, other: ZoneMap) -> ZoneMap {
        match (self, other) {
            (ZoneMap::None, z) | (z, ZoneMap::None) => z,
            (ZoneMap::Int { min: a, max: b }, ZoneMap::Int { min: c, max: d }) => {
                ZoneMap::Int { min: a.min(c), max: b.max(d) }
            }
            (ZoneMap::Float { min: a, max: b }, ZoneMap::Float { min: c, max: d }) => {
                let min = if pg_float_cmp(c, a) == Ordering::Less { c } else { a };
                let max = if pg_float_cmp(d, b) == Ordering::Greater { d } else { b };
                ZoneMap::Float { min, max }
            }
            (ZoneMap::Bytes { min: a, max: b }, ZoneMap::Bytes { min: c, max: d }) => ZoneMap::Bytes {
                min: if c.as_slice() < a.as_slice() { c } else { a },
                max: if d.as_slice() > b.as_slice() { d } else { b },
            },
            // Mixed kinds cannot happen within one column; keep the map honest anyway.
            _ => ZoneMap::None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn predicates_round_trip_through_bytes() {
        use super::{Bound, CmpOp, ZonePredicate};
        let all = [
            ZonePredicate::IsNull,
            ZonePredicate::IsNotNull,
            ZonePredicate::Compare { op: CmpOp::Lt, value: Bound::Int(-5) },
            ZonePredicate::Compare { op: CmpOp::Gt, value: Bound::Float(2.5) },
            ZonePredicate::Compare { op: CmpOp::Eq, value: Bound::Bytes(b"host_7".to_vec()) },
            ZonePredicate::Compare { op: CmpOp::Ge, value: Bound::Bytes(Vec::new()) },
        ];
        for p in all {
            assert_eq!(ZonePredicate::from_bytes(&p.to_bytes()), Some(p));
        }
        assert_eq!(ZonePredicate::from_bytes(&[0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0]), None);
        assert_eq!(ZonePredicate::from_bytes(&[0, 1, 0, 1]), None);
        assert_eq!(ZonePredicate::from_bytes(&[]), None);
    }

    use super::*;

    #[test]
    fn ints_and_empty() {
        assert_eq!(ZoneMap::of_ints(&[3, -1, 7]), ZoneMap::Int { min: -1, max: 7 });
        assert_eq!(ZoneMap::of_ints(&[]), ZoneMap::None);
    }

    #[test]
    fn floats_use_postgres_order() {
        let z = ZoneMap::of_floats([1.0, f64::NAN, -2.5, f64::INFINITY]);
        match z {
            ZoneMap::Float { min, max } => {
                assert_eq!(min, -2.5);
                assert!(max.is_nan(), "NaN is the largest float in PostgreSQL");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn merge_covers_both() {
        let a = ZoneMap::Int { min: 0, max: 5 };
        let b = ZoneMap::Int { min: -3, max: 2 };
        assert_eq!(a.merge(b), ZoneMap::Int { min: -3, max: 5 });
        assert_eq!(ZoneMap::None.merge(a), a);
        let f = ZoneMap::of_floats([1.0]).merge(ZoneMap::of_floats([f64::NAN]));
        assert!(matches!(f, ZoneMap::Float { min, max } if min == 1.0 && max.is_nan()));
    }
}

/// A comparison operator, by btree strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl CmpOp {
    /// The operator with its operands swapped (`c < x` is `x > c`).
    pub fn commute(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Eq => CmpOp::Eq,
            CmpOp::Ge => CmpOp::Le,
            CmpOp::Gt => CmpOp::Lt,
        }
    }

    /// Whether a value that compares to the other side as `o` passes.
    pub fn holds(self, o: std::cmp::Ordering) -> bool {
        match self {
            CmpOp::Lt => o.is_lt(),
            CmpOp::Le => o.is_le(),
            CmpOp::Eq => o.is_eq(),
            CmpOp::Ge => o.is_ge(),
            CmpOp::Gt => o.is_gt(),
        }
    }
}

/// The constant side of a comparison, in the column's physical representation.
#[derive(Debug, Clone, PartialEq)]
pub enum Bound {
    Int(i64),
    Float(f64),
    /// Compared byte-wise (shorter prefix first), like `memcmp` then length.
    Bytes(Vec<u8>),
}

/// A predicate on one column that zone maps can refute.
#[derive(Debug, Clone, PartialEq)]
pub enum ZonePredicate {
    /// `column op value`; NULLs never satisfy it.
    Compare {
        op: CmpOp,
        value: Bound,
    },
    IsNull,
    IsNotNull,
}

impl ZonePredicate {
    /// The predicate as bytes, for a plan to carry it to the executor.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            ZonePredicate::IsNull => out.push(1),
            ZonePredicate::IsNotNull => out.push(2),
            ZonePredicate::Compare { op, value } => {
                out.push(0);
                out.push(*op as u8);
                match value {
                    Bound::Int(v) => {
                        out.push(0);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Bound::Float(v) => {
                        out.push(1);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                    Bound::Bytes(b) => {
                        out.push(2);
                        out.extend_from_slice(b);
                    }
                }
            }
        }
        out
    }

    /// The predicate `to_bytes` gave; None for bytes it cannot have given.
    pub fn from_bytes(bytes: &[u8]) -> Option<ZonePredicate> {
        let ops = [CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ge, CmpOp::Gt];
        let fixed = |b: &[u8]| <[u8; 8]>::try_from(b).ok();
        match bytes {
            [1] => Some(ZonePredicate::IsNull),
            [2] => Some(ZonePredicate::IsNotNull),
            [0, op, kind, rest @ ..] => {
                let op = *ops.get(*op as usize)?;
                let value = match kind {
                    0 => Bound::Int(i64::from_le_bytes(fixed(rest)?)),
                    1 => Bound::Float(f64::from_le_bytes(fixed(rest)?)),
                    2 => Bound::Bytes(rest.to_vec()),
                    _ => return None,
                };
                Some(ZonePredicate::Compare { op, value })
            }
            _ => None,
        }
    }
}

/// What is known about a vector (or a whole chunk) of one column.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneStats {
    pub zone: ZoneMap,
    pub rows: u64,
    pub null_count: u64,
}

fn may_compare<T: Copy>(op: CmpOp, min: T, max: T, v: T, cmp: impl Fn(T, T) -> Ordering) -> bool {
    match op {
        CmpOp::Lt => cmp(min, v) == Ordering::Less,
        CmpOp::Le => cmp(min, v) != Ordering::Greater,
        CmpOp::Eq => cmp(min, v) != Ordering::Greater && cmp(max, v) != Ordering::Less,
        CmpOp::Ge => cmp(max, v) != Ordering::Less,
        CmpOp::Gt => cmp(max, v) == Ordering::Greater,
    }
}

impl ZonePredicate {
    /// False only when no row described by `s` can satisfy the predicate.
    pub fn may_match(&self, s: &ZoneStats) -> bool {
        let non_null = s.rows.saturating_sub(s.null_count);
        match self {
            ZonePredicate::IsNull => s.null_count > 0,
            ZonePredicate::IsNotNull => non_null > 0,
            ZonePredicate::Compare { op, value } => {
                if non_null == 0 {
                    return false;
                }
                let op = *op;
                match (&s.zone, value) {
                    (ZoneMap::Int { min, max }, Bound::Int(v)) => {
                        may_compare(op, *min, *max, *v, |a, b| a.cmp(&b))
                    }
                    (ZoneMap::Float { min, max }, Bound::Float(v)) => {
                        may_compare(op, *min, *max, *v, pg_float_cmp)
                    }
                    (ZoneMap::Bytes { min, max }, Bound::Bytes(v)) => {
                        may_compare(op, min.as_slice(), max.as_slice(), v.as_slice(), |a, b| a.cmp(b))
                    }
                    // No zone map for this column, or kinds that do not match: unknown.
                    _ => true,
                }
            }
        }
    }
}

#[cfg(test)]
mod predicate_tests {
    use super::*;

    fn ints(min: i64, max: i64) -> ZoneStats {
        ZoneStats { zone: ZoneMap::Int { min, max }, rows: 100, null_count: 0 }
    }

    fn cmp(op: CmpOp, v: i64) -> ZonePredicate {
        ZonePredicate::Compare { op, value: Bound::Int(v) }
    }

    #[test]
    fn comparisons_refute_only_disjoint_ranges() {
        let s = ints(10, 20);
        assert!(!cmp(CmpOp::Lt, 10).may_match(&s));
        assert!(cmp(CmpOp::Lt, 11).may_match(&s));
        assert!(cmp(CmpOp::Le, 10).may_match(&s));
        assert!(!cmp(CmpOp::Le, 9).may_match(&s));
        assert!(cmp(CmpOp::Eq, 15).may_match(&s));
        assert!(!cmp(CmpOp::Eq, 21).may_match(&s));
        assert!(!cmp(CmpOp::Eq, 9).may_match(&s));
        assert!(cmp(CmpOp::Ge, 20).may_match(&s));
        assert!(!cmp(CmpOp::Ge, 21).may_match(&s));
        assert!(!cmp(CmpOp::Gt, 20).may_match(&s));
        assert!(cmp(CmpOp::Gt, 19).may_match(&s));
    }

    #[test]
    fn commuted_operators() {
        // 15 < x  ==  x > 15
        assert_eq!(CmpOp::Lt.commute(), CmpOp::Gt);
        assert_eq!(CmpOp::Ge.commute(), CmpOp::Le);
        assert_eq!(CmpOp::Eq.commute(), CmpOp::Eq);
    }

    #[test]
    fn nulls() {
        let all_null = ZoneStats { zone: ZoneMap::None, rows: 5, null_count: 5 };
        assert!(!cmp(CmpOp::Eq, 1).may_match(&all_null));
        assert!(ZonePredicate::IsNull.may_match(&all_null));
        assert!(!ZonePredicate::IsNotNull.may_match(&all_null));
        let no_null = ints(1, 2);
        assert!(!ZonePredicate::IsNull.may_match(&no_null));
        assert!(ZonePredicate::IsNotNull.may_match(&no_null));
    }

    #[test]
    fn floats_follow_postgres_nan_order() {
        let s = ZoneStats { zone: ZoneMap::Float { min: 1.0, max: f64::NAN }, rows: 3, null_count: 0 };
        let gt = |v: f64| ZonePredicate::Compare { op: CmpOp::Gt, value: Bound::Float(v) };
        assert!(gt(1e300).may_match(&s), "NaN is above every number");
        assert!(!gt(f64::NAN).may_match(&s), "nothing is above NaN");
        let plain = ZoneStats { zone: ZoneMap::Float { min: -1.0, max: 2.5 }, rows: 3, null_count: 1 };
        assert!(!gt(2.5).may_match(&plain));
        assert!(!ZonePredicate::Compare { op: CmpOp::Eq, value: Bound::Float(f64::NAN) }.may_match(&plain));
    }

    #[test]
    fn unknown_zone_never_refutes_a_comparison() {
        let s = ZoneStats { zone: ZoneMap::None, rows: 10, null_count: 0 };
        assert!(cmp(CmpOp::Eq, 1).may_match(&s));
        let mixed = ZoneStats { zone: ZoneMap::Int { min: 0, max: 1 }, rows: 10, null_count: 0 };
        assert!(ZonePredicate::Compare { op: CmpOp::Eq, value: Bound::Float(5.0) }.may_match(&mixed));
    }
}

#[cfg(test)]
mod bytes_tests {
    use super::*;

    fn eq(v: &[u8]) -> ZonePredicate {
        ZonePredicate::Compare { op: CmpOp::Eq, value: Bound::Bytes(v.to_vec()) }
    }

    fn stats(zone: ZoneMap) -> ZoneStats {
        ZoneStats { zone, rows: 10, null_count: 0 }
    }

    #[test]
    fn short_strings_keep_exact_bounds() {
        let z = ZoneMap::of_bytes([&b"host_5"[..], b"host_12", b"host_3"]);
        let ZoneMap::Bytes { min, max } = z else { panic!("{z:?}") };
        assert_eq!(min.as_slice(), b"host_12");
        assert_eq!(max.as_slice(), b"host_5");
        assert!(eq(b"host_3").may_match(&stats(z)));
        assert!(!eq(b"host_6").may_match(&stats(z)));
        assert!(!eq(b"host_1").may_match(&stats(z)), "host_1 sorts before host_12");
        assert!(!eq(b"").may_match(&stats(z)));
    }

    #[test]
    fn long_strings_get_truncated_but_safe_bounds() {
        let long_a = [b'a'; 40];
        let long_z = [b'z'; 40];
        let z = ZoneMap::of_bytes([&long_a[..], &long_z[..]]);
        assert!(eq(&long_a).may_match(&stats(z)));
        assert!(eq(&long_z).may_match(&stats(z)));
        let mut above = long_z.to_vec();
        above.push(b'z');
        assert!(eq(&above).may_match(&stats(z)), "truncated max is rounded up, so it still covers");
        assert!(!eq(b"{").may_match(&stats(z)), "'{{' sorts after every string of z's");
        let all_ff = [0xFFu8; 40];
        assert_eq!(ZoneMap::of_bytes([&all_ff[..]]), ZoneMap::None, "no finite upper bound fits");
    }

    #[test]
    fn merge_and_ranges() {
        let a = ZoneMap::of_bytes([&b"b"[..], b"d"]);
        let b = ZoneMap::of_bytes([&b"a"[..], b"c"]);
        let m = a.merge(b);
        let ZoneMap::Bytes { min, max } = m else { panic!() };
        assert_eq!((min.as_slice(), max.as_slice()), (&b"a"[..], &b"d"[..]));
        let lt = |v: &[u8]| ZonePredicate::Compare { op: CmpOp::Lt, value: Bound::Bytes(v.to_vec()) };
        assert!(!lt(b"a").may_match(&stats(m)));
        assert!(lt(b"aa").may_match(&stats(m)));
    }
}

/// What zone maps tell about a filter on a vector or row group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No row can pass: the vector need not be decoded.
    None,
    /// Every row passes: the filter need not be evaluated.
    All,
    /// Some rows may pass: evaluate.
    Some,
}
