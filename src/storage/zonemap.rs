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
            // Mixed kinds cannot happen within one column; keep the map honest anyway.
            _ => ZoneMap::None,
        }
    }
}

#[cfg(test)]
mod tests {
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
}

/// The constant side of a comparison, in the column's physical representation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    Int(i64),
    Float(f64),
}

/// A predicate on one column that zone maps can refute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZonePredicate {
    /// `column op value`; NULLs never satisfy it.
    Compare {
        op: CmpOp,
        value: Bound,
    },
    IsNull,
    IsNotNull,
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
        match *self {
            ZonePredicate::IsNull => s.null_count > 0,
            ZonePredicate::IsNotNull => non_null > 0,
            ZonePredicate::Compare { op, value } => {
                if non_null == 0 {
                    return false;
                }
                match (s.zone, value) {
                    (ZoneMap::Int { min, max }, Bound::Int(v)) => {
                        may_compare(op, min, max, v, |a, b| a.cmp(&b))
                    }
                    (ZoneMap::Float { min, max }, Bound::Float(v)) => {
                        may_compare(op, min, max, v, pg_float_cmp)
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
