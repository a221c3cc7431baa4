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
