//! A filter judged by zone maps (per vector or per row group): whether no row, every
//! row, or maybe some rows pass. Bounds of byte strings may be truncated (a lower bound
//! at most, an upper bound at least every value), which keeps both answers sound.

use super::{float_key, Filter, Test, ValueSet};
use crate::storage::format::zonemap::{Bound, CmpOp, Verdict, ZoneMap, ZonePredicate, ZoneStats};

/// The verdict of `filter`; `stats(att)` describes attribute `att` (None: unknown).
pub fn verdict(filter: &Filter, stats: &dyn Fn(usize) -> Option<ZoneStats>) -> Verdict {
    match filter {
        Filter::Const(true) => Verdict::All,
        Filter::Const(false) => Verdict::None,
        Filter::Test { att, test } => match stats(*att) {
            Some(s) => test_verdict(test, &s),
            None => Verdict::Some,
        },
        Filter::And(children) => junction(children, stats, Verdict::None, Verdict::All),
        Filter::Or(children) => junction(children, stats, Verdict::All, Verdict::None),
    }
}

/// The verdict of an AND (a child's `None` decides it; `All` if every child's is) or an
/// OR (`All` decides; `None` if every child's is): `deciding` and `neutral`.
fn junction(
    children: &[Filter],
    stats: &dyn Fn(usize) -> Option<ZoneStats>,
    deciding: Verdict,
    neutral: Verdict,
) -> Verdict {
    let mut all_neutral = true;
    for (i, c) in children.iter().enumerate() {
        match verdict(c, stats) {
            // A child that may fail must still run on the rows before a later child
            // decides (core evaluates them in order).
            v if v == deciding && children[..i].iter().any(Filter::may_fail) => return Verdict::Some,
            v if v == deciding => return deciding,
            v => all_neutral &= v == neutral,
        }
    }
    if all_neutral {
        neutral
    } else {
        Verdict::Some
    }
}

/// min and max as comparable keys: integers, float order keys, or byte strings.
enum Range<'a> {
    Keys(i64, i64),
    Bytes(&'a [u8], &'a [u8]),
}

fn range(zone: &ZoneMap) -> Option<Range<'_>> {
    match zone {
        ZoneMap::Int { min, max } => Some(Range::Keys(*min, *max)),
        ZoneMap::Float { min, max } => Some(Range::Keys(float_key(*min), float_key(*max))),
        ZoneMap::Bytes { min, max } => Some(Range::Bytes(min.as_slice(), max.as_slice())),
        ZoneMap::None => None,
    }
}

/// Whether every value in [min, max] passes `x op c`.
fn all_compare<T: Ord + ?Sized>(op: CmpOp, min: &T, max: &T, c: &T) -> bool {
    match op {
        CmpOp::Lt => max < c,
        CmpOp::Le => max <= c,
        CmpOp::Eq => min == c && max == c,
        CmpOp::Ge => min >= c,
        CmpOp::Gt => min > c,
    }
}

pub(super) fn test_verdict(test: &Test, s: &ZoneStats) -> Verdict {
    let non_null = s.rows.saturating_sub(s.null_count);
    match test {
        // Zone maps hold no range of an expression's values; and an all-NULL column
        // does not spare core the expression's other operands (which may fail).
        Test::Arith(_) => return Verdict::Some,
        Test::IsNull => {
            return if s.null_count == 0 {
                Verdict::None
            } else if non_null == 0 {
                Verdict::All
            } else {
                Verdict::Some
            }
        }
        Test::IsNotNull => {
            return if non_null == 0 {
                Verdict::None
            } else if s.null_count == 0 {
                Verdict::All
            } else {
                Verdict::Some
            }
        }
        _ if non_null == 0 => return Verdict::None,
        _ => {}
    }
    let Some(r) = range(&s.zone) else { return Verdict::Some };
    let (none, all) = match (test, &r) {
        (Test::Compare(op, value), _) => {
            let none = !ZonePredicate::Compare { op: *op, value: value.clone() }.may_match(s);
            let all = match (&r, value) {
                (Range::Keys(min, max), Bound::Int(c)) => all_compare(*op, min, max, c),
                (Range::Keys(min, max), Bound::Float(c)) => all_compare(*op, min, max, &float_key(*c)),
                (Range::Bytes(min, max), Bound::Bytes(c)) => all_compare(*op, *min, *max, c.as_slice()),
                _ => false,
            };
            (none, all)
        }
        (Test::NotEqual(value), _) => {
            let equal_only = match (&r, value) {
                (Range::Keys(min, max), Bound::Int(c)) => min == max && min == c,
                (Range::Keys(min, max), Bound::Float(c)) => min == max && *min == float_key(*c),
                (Range::Bytes(min, max), Bound::Bytes(c)) => min == max && *min == c.as_slice(),
                _ => false,
            };
            let outside = match (&r, value) {
                (Range::Keys(min, max), Bound::Int(c)) => c < min || c > max,
                (Range::Keys(min, max), Bound::Float(c)) => float_key(*c) < *min || float_key(*c) > *max,
                (Range::Bytes(min, max), Bound::Bytes(c)) => c.as_slice() < *min || c.as_slice() > *max,
                _ => false,
            };
            (equal_only, outside)
        }
        (Test::In(set), _) => in_verdict(set, &r),
        (Test::NotIn(set), _) => {
            let (none, all) = in_verdict(set, &r);
            (all, none)
        }
        (Test::Prefix(p), Range::Bytes(min, max)) => {
            let upper = prefix_upper(p);
            let none = *max < p.as_slice() || upper.as_deref().is_some_and(|u| *min >= u);
            let all = *min >= p.as_slice() && upper.as_deref().is_some_and(|u| *max < u);
            (none, all)
        }
        _ => (false, false),
    };
    if none {
        Verdict::None
    } else if all && s.null_count == 0 {
        Verdict::All
    } else {
        Verdict::Some
    }
}

/// (no value of [min, max] is in the set, every one is) for an IN list.
fn in_verdict(set: &ValueSet, r: &Range) -> (bool, bool) {
    match (set, r) {
        (ValueSet::Keys(keys), Range::Keys(min, max)) => {
            // keys are sorted: is any of them within [min, max]?
            let first = keys.partition_point(|k| k < min);
            let none = keys.get(first).is_none_or(|k| k > max);
            let all = min == max && !none;
            (none, all)
        }
        (ValueSet::Bytes(set), Range::Bytes(min, max)) => {
            let none = set.iter().all(|v| v.as_slice() < *min || v.as_slice() > *max);
            let all = min == max && set.contains(*min);
            (none, all)
        }
        _ => (false, false),
    }
}

/// The least byte string above every string that starts with `p`; None if there is
/// none (`p` is empty or all 0xFF).
fn prefix_upper(p: &[u8]) -> Option<Vec<u8>> {
    let last = p.iter().rposition(|b| *b != 0xFF)?;
    let mut upper = p[..=last].to_vec();
    upper[last] += 1;
    Some(upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::zonemap::ZoneMap;

    fn ints(min: i64, max: i64, nulls: u64) -> ZoneStats {
        ZoneStats { zone: ZoneMap::Int { min, max }, rows: 100, null_count: nulls }
    }

    fn bytes(min: &str, max: &str) -> ZoneStats {
        ZoneStats { zone: ZoneMap::of_bytes([min.as_bytes(), max.as_bytes()]), rows: 10, null_count: 0 }
    }

    fn on(test: Test, s: ZoneStats) -> Verdict {
        verdict(&Filter::Test { att: 0, test }, &|_| Some(s))
    }

    #[test]
    fn comparisons() {
        let cmp = |op, c| Test::Compare(op, Bound::Int(c));
        assert_eq!(on(cmp(CmpOp::Lt, 10), ints(10, 20, 0)), Verdict::None);
        assert_eq!(on(cmp(CmpOp::Lt, 21), ints(10, 20, 0)), Verdict::All);
        assert_eq!(on(cmp(CmpOp::Lt, 21), ints(10, 20, 1)), Verdict::Some, "NULLs do not pass");
        assert_eq!(on(cmp(CmpOp::Lt, 15), ints(10, 20, 0)), Verdict::Some);
        assert_eq!(on(cmp(CmpOp::Eq, 7), ints(7, 7, 0)), Verdict::All);
        assert_eq!(on(cmp(CmpOp::Ge, 10), ints(10, 20, 0)), Verdict::All);
        assert_eq!(on(cmp(CmpOp::Gt, 20), ints(10, 20, 0)), Verdict::None);
        assert_eq!(on(Test::NotEqual(Bound::Int(7)), ints(7, 7, 0)), Verdict::None);
        assert_eq!(on(Test::NotEqual(Bound::Int(30)), ints(7, 9, 0)), Verdict::All);
        assert_eq!(on(Test::NotEqual(Bound::Int(8)), ints(7, 9, 0)), Verdict::Some);
    }

    #[test]
    fn floats_with_nan() {
        let s = ZoneStats { zone: ZoneMap::Float { min: 1.0, max: f64::NAN }, rows: 5, null_count: 0 };
        assert_eq!(on(Test::Compare(CmpOp::Ge, Bound::Float(1.0)), s), Verdict::All);
        assert_eq!(on(Test::Compare(CmpOp::Gt, Bound::Float(f64::NAN)), s), Verdict::None);
        assert_eq!(on(Test::Compare(CmpOp::Lt, Bound::Float(f64::INFINITY)), s), Verdict::Some);
    }

    #[test]
    fn null_tests() {
        assert_eq!(on(Test::IsNull, ints(1, 2, 0)), Verdict::None);
        assert_eq!(on(Test::IsNull, ints(1, 2, 3)), Verdict::Some);
        let all_null = ZoneStats { zone: ZoneMap::None, rows: 3, null_count: 3 };
        assert_eq!(on(Test::IsNull, all_null), Verdict::All);
        assert_eq!(on(Test::IsNotNull, all_null), Verdict::None);
        assert_eq!(on(Test::Compare(CmpOp::Lt, Bound::Int(5)), all_null), Verdict::None);
        assert_eq!(on(Test::IsNotNull, ints(1, 2, 0)), Verdict::All);
    }

    #[test]
    fn in_lists() {
        let set = ValueSet::of(&[Bound::Int(3), Bound::Int(50)]);
        assert_eq!(on(Test::In(set.clone()), ints(10, 20, 0)), Verdict::None);
        assert_eq!(on(Test::In(set.clone()), ints(10, 60, 0)), Verdict::Some);
        assert_eq!(on(Test::In(set.clone()), ints(3, 3, 0)), Verdict::All);
        assert_eq!(on(Test::NotIn(set.clone()), ints(10, 20, 0)), Verdict::All);
        assert_eq!(on(Test::NotIn(set), ints(50, 50, 0)), Verdict::None);
    }

    #[test]
    fn prefixes() {
        assert_eq!(on(Test::Prefix(b"host_1".to_vec()), bytes("host_10", "host_19")), Verdict::All);
        assert_eq!(on(Test::Prefix(b"host_2".to_vec()), bytes("host_10", "host_19")), Verdict::None);
        assert_eq!(on(Test::Prefix(b"host_1".to_vec()), bytes("host_0", "host_3")), Verdict::Some);
        assert_eq!(on(Test::Prefix(b"a".to_vec()), bytes("b", "c")), Verdict::None);
    }

    #[test]
    fn trees() {
        let lt = |c| Filter::Test { att: 0, test: Test::Compare(CmpOp::Lt, Bound::Int(c)) };
        let s = |_| Some(ints(10, 20, 0));
        assert_eq!(verdict(&Filter::And(vec![lt(30), lt(5)]), &s), Verdict::None);
        assert_eq!(verdict(&Filter::And(vec![lt(30), lt(15)]), &s), Verdict::Some);
        assert_eq!(verdict(&Filter::And(vec![lt(30), lt(25)]), &s), Verdict::All);
        assert_eq!(verdict(&Filter::Or(vec![lt(5), lt(15)]), &s), Verdict::Some);
        assert_eq!(verdict(&Filter::Or(vec![lt(5), lt(25)]), &s), Verdict::All);
        assert_eq!(verdict(&Filter::Or(vec![lt(5), lt(10)]), &s), Verdict::None);
        assert_eq!(verdict(&lt(5), &|_| None), Verdict::Some);
    }
}
