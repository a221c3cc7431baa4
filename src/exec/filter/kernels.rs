//! A filter evaluated on vectors: each test keeps the rows of a selection (row numbers
//! within the vector, ascending) whose value passes. The loops are generic over the
//! value type and the test, so each (type, operator) pair compiles to its own tight
//! loop: no per-value call through a pointer, no Datum.

use super::dense::{self, Op};
use super::plan::trim_spaces;
use super::{float_key, scaled, zone, Filter, Test, ValueSet};
use crate::storage::format::encoding::{DecodedValues, DecodedVector, Dictionary, ScaledNumerics};
use crate::storage::format::numeric;
use crate::storage::format::zonemap::{Bound, CmpOp};
use crate::storage::format::zonemap::{Verdict, ZoneStats};
use crate::storage::read::vector_filter::ColumnSource;

/// Keeps the rows of `selection` that pass `filter`; `columns` gives the decoded vector
/// of each attribute `filter.attributes()` lists, asked for only when a test needs it.
pub fn select(filter: &Filter, columns: &mut dyn ColumnSource, selection: &mut Vec<u32>) {
    match filter {
        Filter::Const(true) => {}
        Filter::Const(false) => selection.clear(),
        Filter::Test { att, test: Test::Columns(op, other) } => {
            select_columns(*op, *att, *other, columns, selection)
        }
        Filter::Test { test: Test::Arith(t), .. } => super::arith::select(t, columns, selection),
        // The test reads only the selected rows: the source may decode just those.
        Filter::Test { att, test } => select_test(test, columns.column_rows(*att, selection), selection),
        Filter::And(children) => {
            for c in children {
                if selection.is_empty() {
                    return;
                }
                select(c, columns, selection);
            }
        }
        Filter::Or(children) => {
            // Each child looks only at the rows no earlier child has kept.
            let mut kept: Vec<u32> = Vec::new();
            let mut rest = selection.clone();
            for c in children {
                if rest.is_empty() {
                    break;
                }
                let mut passed = rest.clone();
                select(c, columns, &mut passed);
                if passed.is_empty() {
                    continue;
                }
                kept = union(&kept, &passed);
                let mut p = passed.iter().peekable();
                rest.retain(|r| {
                    while p.peek().is_some_and(|&&x| x < *r) {
                        p.next();
                    }
                    p.peek() != Some(&r)
                });
            }
            *selection = kept;
        }
    }
}

/// `select`, skipping the parts of `filter` that zone maps decide for the vector:
/// an AND's children that every row passes, an OR's children that no row passes (and
/// the whole OR if one child passes every row).
pub fn select_with_zones(
    filter: &Filter,
    stats: &dyn Fn(usize) -> Option<ZoneStats>,
    columns: &mut dyn ColumnSource,
    selection: &mut Vec<u32>,
) {
    match filter {
        Filter::And(children) => {
            for c in children {
                if selection.is_empty() {
                    return;
                }
                match zone::verdict(c, stats) {
                    Verdict::All => {}
                    Verdict::None => selection.clear(),
                    Verdict::Some => select_with_zones(c, stats, columns, selection),
                }
            }
        }
        // Children that may fail run in order, on every row the ones before leave.
        Filter::Or(_) if filter.may_fail() => select(filter, columns, selection),
        Filter::Or(children) => {
            let verdicts: Vec<Verdict> = children.iter().map(|c| zone::verdict(c, stats)).collect();
            if verdicts.contains(&Verdict::All) {
                return;
            }
            let left: Vec<Filter> = children
                .iter()
                .zip(&verdicts)
                .filter(|(_, v)| **v == Verdict::Some)
                .map(|(c, _)| c.clone())
                .collect();
            match left.len() {
                0 => selection.clear(),
                1 => select_with_zones(&left[0], stats, columns, selection),
                _ => select(&Filter::Or(left), columns, selection),
            }
        }
        _ => select(filter, columns, selection),
    }
}

/// The sorted union of two sorted selections.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Keeps the rows for which `keep(row)` holds; written without a branch per row.
#[inline(always)]
fn retain(selection: &mut Vec<u32>, keep: impl Fn(usize) -> bool) {
    let mut n = 0;
    for i in 0..selection.len() {
        let r = selection[i];
        selection[n] = r;
        n += keep(r as usize) as usize;
    }
    selection.truncate(n);
}

/// Keeps the non-NULL rows that pass `pass(row)`.
#[inline(always)]
fn retain_valid(validity: Option<&[bool]>, selection: &mut Vec<u32>, pass: impl Fn(usize) -> bool) {
    match validity {
        None => retain(selection, pass),
        Some(valid) => retain(selection, |r| valid[r] & pass(r)),
    }
}

/// One loop per operator: `$key` is what row `$r` compares with `$c`.
macro_rules! compare {
    ($op:expr, $valid:expr, $sel:expr, $c:expr, |$r:ident| $key:expr) => {{
        let c = $c;
        match $op {
            Op::Lt => retain_valid($valid, $sel, |$r| $key < c),
            Op::Le => retain_valid($valid, $sel, |$r| $key <= c),
            Op::Eq => retain_valid($valid, $sel, |$r| $key == c),
            Op::Ge => retain_valid($valid, $sel, |$r| $key >= c),
            Op::Gt => retain_valid($valid, $sel, |$r| $key > c),
            Op::Ne => retain_valid($valid, $sel, |$r| $key != c),
        }
    }};
}

/// The bytes of row `r` of a byte-string vector.
#[inline(always)]
fn bytes_at<'a>(offsets: &[u32], data: &'a [u8], r: usize) -> &'a [u8] {
    &data[offsets[r] as usize..offsets[r + 1] as usize]
}

pub(super) fn select_test(test: &Test, v: &DecodedVector, selection: &mut Vec<u32>) {
    let valid = v.validity.as_deref();
    if let (Some(s), false) = (&v.scaled, matches!(test, Test::IsNull | Test::IsNotNull)) {
        return select_scaled(test, v, s, selection);
    }
    if let (Some(d), false) = (&v.dictionary, matches!(test, Test::IsNull | Test::IsNotNull)) {
        return select_dictionary(test, d, valid, selection);
    }
    match test {
        Test::IsNull => match valid {
            None => selection.clear(),
            Some(valid) => retain(selection, |r| !valid[r]),
        },
        Test::IsNotNull => {
            if let Some(valid) = valid {
                retain(selection, |r| valid[r]);
            }
        }
        Test::Compare(op, bound) => compare_values(Some(*op), bound, v, selection),
        Test::NotEqual(bound) => compare_values(None, bound, v, selection),
        Test::In(set) => select_in(set, v, selection, true),
        Test::NotIn(set) => select_in(set, v, selection, false),
        Test::Prefix(prefix) => match &v.values {
            DecodedValues::Bytes { offsets, data } => {
                let p = prefix.as_slice();
                match valid {
                    None => retain(selection, |r| bytes_at(offsets, data, r).starts_with(p)),
                    Some(valid) => {
                        retain(selection, |r| valid[r] && bytes_at(offsets, data, r).starts_with(p))
                    }
                }
            }
            _ => mismatch(),
        },
        // `select` reads both columns of these.
        Test::Columns(..) | Test::Arith(_) => mismatch(),
        Test::Numeric(..)
        | Test::NumericIn(..)
        | Test::Trimmed(_)
        | Test::Like(..)
        | Test::Collated(..)
        | Test::Matches(..) => match &v.values {
            DecodedValues::Bytes { offsets, data } => {
                let pass = bytes_pass(test);
                retain_valid(valid, selection, |r| pass(bytes_at(offsets, data, r)))
            }
            _ => mismatch(),
        },
    }
}

/// A test (not a null test) on scaled numerics: numeric comparisons and IN lists on
/// the mantissas (`scaled`), anything else on the rows' bytes.
fn select_scaled(test: &Test, v: &DecodedVector, s: &ScaledNumerics, selection: &mut Vec<u32>) {
    let valid = v.validity.as_deref();
    let m = &s.m;
    match test {
        Test::Numeric(op, c) => match scaled::cut(*op, c, s.scale) {
            Some(scaled::Cut::All(pass)) => {
                return match (pass, valid) {
                    (false, _) => selection.clear(),
                    (true, None) => {}
                    (true, Some(valid)) => retain(selection, |r| valid[r]),
                };
            }
            Some(scaled::Cut::Cmp(op, k)) => {
                return match i64::try_from(k) {
                    Ok(k) => compare!(to_op(op), valid, selection, k, |r| m[r]),
                    Err(_) => compare!(to_op(op), valid, selection, k, |r| m[r] as i128),
                };
            }
            None => {}
        },
        Test::NumericIn(set, wanted) => {
            if let Some(keys) = scaled::keys(&set.0, s.scale) {
                return in_keys(&keys, m, valid, selection, *wanted, |x| x);
            }
        }
        _ => {}
    }
    select_test(test, &as_bytes(v, s), selection)
}

/// A vector of scaled numerics as byte strings (for the tests that read bytes).
fn as_bytes(v: &DecodedVector, s: &ScaledNumerics) -> DecodedVector {
    let mut offsets = Vec::with_capacity(v.rows as usize + 1);
    let mut data = Vec::new();
    offsets.push(0);
    for r in 0..v.rows as usize {
        if v.is_valid(r) {
            s.write_stored(r, &mut data);
        }
        offsets.push(data.len() as u32);
    }
    DecodedVector::from_parts(v.rows, v.validity.clone(), DecodedValues::Bytes { offsets, data }, None)
}

fn to_op(op: Option<CmpOp>) -> Op {
    match op {
        Some(CmpOp::Lt) => Op::Lt,
        Some(CmpOp::Le) => Op::Le,
        Some(CmpOp::Eq) => Op::Eq,
        Some(CmpOp::Ge) => Op::Ge,
        Some(CmpOp::Gt) => Op::Gt,
        None => Op::Ne,
    }
}

type BytesTest<'a> = dyn Fn(&[u8]) -> bool + 'a;

/// A numeric test on one stored value, in numeric order (a value that is no numeric
/// passes none: the decoder's checksums keep such bytes out).
fn numeric_pass(test: &Test) -> Box<BytesTest<'_>> {
    match test {
        Test::Numeric(op, c) => {
            let Some(c) = numeric::parse(c) else { mismatch() };
            let op = *op;
            Box::new(move |x| numeric::parse(x).is_some_and(|x| super::passes(op, numeric::cmp(&x, &c))))
        }
        Test::NumericIn(set, wanted) => {
            let wanted = *wanted;
            Box::new(move |x| numeric::parse(x).is_some() && set.contains(x) == wanted)
        }
        _ => mismatch(),
    }
}

/// A test on a vector kept as a dictionary: decided once per entry, then looked up by
/// each row's code.
fn select_dictionary(test: &Test, d: &Dictionary, valid: Option<&[bool]>, selection: &mut Vec<u32>) {
    if matches!(test, Test::In(set) if set.is_empty()) {
        return selection.clear();
    }
    let pass = bytes_pass(test);
    let matches: Vec<bool> = (0..d.len()).map(|e| pass(d.entry(e))).collect();
    let codes = &d.codes;
    retain_valid(valid, selection, |r| matches[codes[r] as usize]);
}

/// A test on one byte-string value.
fn bytes_pass(test: &Test) -> Box<BytesTest<'_>> {
    match test {
        Test::Compare(op, Bound::Bytes(c)) => {
            let c = c.as_slice();
            match op {
                CmpOp::Lt => Box::new(move |x| x < c),
                CmpOp::Le => Box::new(move |x| x <= c),
                CmpOp::Eq => Box::new(move |x| x == c),
                CmpOp::Ge => Box::new(move |x| x >= c),
                CmpOp::Gt => Box::new(move |x| x > c),
            }
        }
        Test::NotEqual(Bound::Bytes(c)) => Box::new(move |x| x != c.as_slice()),
        Test::In(ValueSet::Bytes(set)) => Box::new(move |x| set.contains(x)),
        Test::NotIn(ValueSet::Bytes(set)) => Box::new(move |x| !set.contains(x)),
        Test::Prefix(p) => Box::new(move |x| x.starts_with(p)),
        Test::Numeric(..) | Test::NumericIn(..) => numeric_pass(test),
        Test::Like(pattern, matching) => Box::new(move |x| pattern.matches(x) == *matching),
        Test::Trimmed(inner) => {
            let inner = bytes_pass(inner);
            Box::new(move |x| inner(trim_spaces(x)))
        }
        Test::Matches(matcher, wanted) => Box::new(move |x| matcher.matches(x) == *wanted),
        Test::Collated(op, c, collator) => {
            let (op, c) = (*op, c.as_slice());
            Box::new(move |x| op.holds(collator.compare(x, c)))
        }
        _ => mismatch(),
    }
}

/// `a op b` (`op` None: `<>`) for two columns of the same row: the first one's values
/// are copied, as the source lends one vector at a time.
fn select_columns(
    op: Option<CmpOp>,
    a: usize,
    b: usize,
    columns: &mut dyn ColumnSource,
    selection: &mut Vec<u32>,
) {
    // Scaled numerics compare on their bytes here (column pairs are rare).
    let bytes = |v: &DecodedVector| match &v.scaled {
        Some(s) => as_bytes(v, s),
        None => v.clone(),
    };
    let left = bytes(columns.column(a));
    let (values, validity) = (left.values, left.validity);
    let dictionary = left.dictionary;
    let right = &bytes(columns.column(b));
    let both_valid =
        |r: usize| validity.as_ref().is_none_or(|v| v[r]) && right.validity.as_ref().is_none_or(|v| v[r]);
    let passes = |o: std::cmp::Ordering| super::passes(op, o);
    let float = |v: &DecodedValues, r: usize| match v {
        DecodedValues::Float64(x) => float_key(x[r]),
        DecodedValues::Float32(x) => float_key(x[r] as f64),
        _ => mismatch(),
    };
    match (&values, &right.values) {
        (DecodedValues::Int(x), DecodedValues::Int(y)) => {
            retain(selection, |r| both_valid(r) && passes(x[r].cmp(&y[r])))
        }
        (DecodedValues::Bytes { .. }, DecodedValues::Bytes { .. }) => {
            // numeric: NaN and values that are no numeric (never stored) as core orders them,
            // or failing.
            let (x, y) = ((&values, dictionary.as_ref()), (&right.values, right.dictionary.as_ref()));
            retain(selection, |r| {
                both_valid(r)
                    && numeric::cmp_bytes(row_bytes(x.0, x.1, r), row_bytes(y.0, y.1, r)).is_some_and(passes)
            })
        }
        (x, y) => retain(selection, |r| both_valid(r) && passes(float(x, r).cmp(&float(y, r)))),
    }
}

/// Row `r` of a byte-string vector, plain or kept as a dictionary.
#[inline(always)]
fn row_bytes<'a>(values: &'a DecodedValues, dictionary: Option<&'a Dictionary>, r: usize) -> &'a [u8] {
    match (dictionary, values) {
        (Some(d), _) => d.entry(d.codes[r] as usize),
        (None, DecodedValues::Bytes { offsets, data }) => bytes_at(offsets, data, r),
        _ => mismatch(),
    }
}

/// A test whose value kind is not the column's: the planner never makes one.
fn mismatch() -> ! {
    panic!("pushed filter: value kind does not match the column")
}

/// `x op bound`; `op` None is `<>`.
fn compare_values(op: Option<CmpOp>, bound: &Bound, v: &DecodedVector, selection: &mut Vec<u32>) {
    let valid = v.validity.as_deref();
    let op = to_op(op);
    // A selection as long as the vector holds every row (selections are sorted, without
    // repeats): a vector's first test, on most scans the one that drops the most rows.
    let every_row = selection.len() == v.rows as usize;
    match (&v.values, bound) {
        (DecodedValues::Int(values), Bound::Int(c)) if every_row && values.len() == selection.len() => {
            dense::ints(op, values, valid, selection, *c)
        }
        (DecodedValues::Float64(values), Bound::Float(c))
            if every_row && values.len() == selection.len() && !c.is_nan() =>
        {
            dense::floats(op, values, valid, selection, *c)
        }
        (DecodedValues::Int(values), Bound::Int(c)) => compare!(op, valid, selection, *c, |r| values[r]),
        (DecodedValues::Float64(values), Bound::Float(c)) => {
            compare!(op, valid, selection, float_key(*c), |r| float_key(values[r]))
        }
        (DecodedValues::Float32(values), Bound::Float(c)) => {
            compare!(op, valid, selection, float_key(*c), |r| float_key(values[r] as f64))
        }
        (DecodedValues::Bytes { offsets, data }, Bound::Bytes(c)) => {
            compare!(op, valid, selection, c.as_slice(), |r| bytes_at(offsets, data, r))
        }
        _ => mismatch(),
    }
}

fn select_in(set: &ValueSet, v: &DecodedVector, selection: &mut Vec<u32>, wanted: bool) {
    let valid = v.validity.as_deref();
    match (&v.values, set) {
        (DecodedValues::Int(values), ValueSet::Keys(keys)) => {
            in_keys(keys, values, valid, selection, wanted, |x| x)
        }
        (DecodedValues::Float64(values), ValueSet::Keys(keys)) => {
            in_keys(keys, values, valid, selection, wanted, float_key)
        }
        (DecodedValues::Float32(values), ValueSet::Keys(keys)) => {
            in_keys(keys, values, valid, selection, wanted, |x| float_key(x as f64))
        }
        (DecodedValues::Bytes { offsets, data }, ValueSet::Bytes(set)) => match valid {
            None => retain(selection, |r| set.contains(bytes_at(offsets, data, r)) == wanted),
            Some(valid) => {
                retain(selection, |r| valid[r] && set.contains(bytes_at(offsets, data, r)) == wanted)
            }
        },
        // An empty list of another kind (`x IN (NULL)`) matches nothing, and its
        // negation was resolved away.
        (_, set) if set.is_empty() && wanted => selection.clear(),
        _ => mismatch(),
    }
}

/// Short lists are scanned, longer ones searched.
const LINEAR_IN: usize = 8;

#[inline(always)]
fn in_keys<T: Copy>(
    keys: &[i64],
    values: &[T],
    valid: Option<&[bool]>,
    selection: &mut Vec<u32>,
    wanted: bool,
    key: impl Fn(T) -> i64,
) {
    if keys.len() <= LINEAR_IN {
        retain_valid(valid, selection, |r| keys.contains(&key(values[r])) == wanted)
    } else {
        retain_valid(valid, selection, |r| keys.binary_search(&key(values[r])).is_ok() == wanted)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::exec::filter::NumericSet;
    use crate::storage::format::encoding::{
        decode_vector, encode_vector, CompressionPolicy, PhysicalKind, VectorValues,
    };

    pub(crate) fn ints(values: &[Option<i64>]) -> DecodedVector {
        let raw: Vec<i64> = values.iter().flatten().copied().collect();
        roundtrip(VectorValues::Int(&raw), &validity(values), PhysicalKind::Int)
    }

    fn floats(values: &[Option<f64>]) -> DecodedVector {
        let raw: Vec<f64> = values.iter().flatten().copied().collect();
        roundtrip(VectorValues::Float64(&raw), &validity(values), PhysicalKind::Float64)
    }

    fn texts(values: &[Option<&str>]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values.iter().flatten() {
            data.extend_from_slice(v.as_bytes());
            offsets.push(data.len() as u32);
        }
        let bytes = VectorValues::Bytes { offsets: &offsets, data: &data };
        roundtrip(bytes, &validity(values), PhysicalKind::Bytes)
    }

    fn validity<T>(values: &[Option<T>]) -> Vec<bool> {
        values.iter().map(Option::is_some).collect()
    }

    /// Through the real encoder and decoder, as a scan sees them.
    fn roundtrip(values: VectorValues, validity: &[bool], kind: PhysicalKind) -> DecodedVector {
        let mut bytes = Vec::new();
        let nulls = (!validity.iter().all(|v| *v)).then_some(validity);
        encode_vector(validity.len() as u32, nulls, values, &CompressionPolicy::default(), &mut bytes);
        let mut out = DecodedVector::default();
        decode_vector(&bytes, kind, &mut out).unwrap();
        out
    }

    /// Columns that count how often each is asked for.
    struct Cols<'a>(&'a [DecodedVector], Vec<usize>);

    impl ColumnSource for Cols<'_> {
        fn column(&mut self, att: usize) -> &DecodedVector {
            self.1.push(att);
            &self.0[att]
        }
    }

    pub(crate) fn run(filter: &Filter, columns: &[DecodedVector]) -> Vec<u32> {
        let mut sel: Vec<u32> = (0..columns[0].rows).collect();
        select(filter, &mut Cols(columns, Vec::new()), &mut sel);
        sel
    }

    #[test]
    fn columns_after_a_test_that_leaves_nothing_are_not_asked_for() {
        let c = [ints(&[Some(1), Some(2)]), texts(&[Some("a"), Some("b")])];
        let f = Filter::And(vec![
            test(0, Test::Compare(CmpOp::Gt, Bound::Int(5))),
            test(1, Test::Compare(CmpOp::Eq, Bound::Bytes(b"a".to_vec()))),
        ]);
        let mut cols = Cols(&c, Vec::new());
        let mut sel = vec![0, 1];
        select(&f, &mut cols, &mut sel);
        assert!(sel.is_empty());
        assert_eq!(cols.1, vec![0]);
    }

    fn test(att: usize, test: Test) -> Filter {
        Filter::Test { att, test }
    }

    /// What PostgreSQL keeps for `x op c`: non-NULL rows whose keys compare so.
    fn expected(values: &[Option<f64>], op: CmpOp, c: f64) -> Vec<u32> {
        let c = float_key(c);
        let keep = |x: f64| match op {
            CmpOp::Lt => float_key(x) < c,
            CmpOp::Le => float_key(x) <= c,
            CmpOp::Eq => float_key(x) == c,
            CmpOp::Ge => float_key(x) >= c,
            CmpOp::Gt => float_key(x) > c,
        };
        (0..values.len() as u32).filter(|&r| values[r as usize].is_some_and(keep)).collect()
    }

    #[test]
    fn a_first_test_of_every_row_keeps_what_one_through_the_selection_keeps() {
        let specials = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -1.5, 2.0];
        // Around the 64-row chunks: empty, short, exact, one over, with NULLs or without.
        for len in [0usize, 1, 63, 64, 65, 130, 2048] {
            for with_nulls in [false, true] {
                let values: Vec<Option<f64>> = (0..len)
                    .map(|i| (!with_nulls || i % 5 != 3).then(|| specials[(i * 7 + i / 3) % specials.len()]))
                    .collect();
                let v = floats(&values);
                for c in [f64::NAN, 0.0, -0.0, 1.5, f64::INFINITY, -10.0] {
                    for op in [CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ge, CmpOp::Gt] {
                        let want = expected(&values, op, c);
                        let mut all: Vec<u32> = (0..len as u32).collect();
                        select_test(&Test::Compare(op, Bound::Float(c)), &v, &mut all);
                        assert_eq!(all, want, "len {len} nulls {with_nulls} {op:?} {c}");
                        // The same test through a selection that lacks row 0.
                        let mut some: Vec<u32> = (1..len as u32).collect();
                        select_test(&Test::Compare(op, Bound::Float(c)), &v, &mut some);
                        let want_some: Vec<u32> = want.iter().copied().filter(|&r| r != 0).collect();
                        assert_eq!(
                            some, want_some,
                            "len {len} nulls {with_nulls} {op:?} {c}, row 0 left out"
                        );
                    }
                    let mut all: Vec<u32> = (0..len as u32).collect();
                    select_test(&Test::NotEqual(Bound::Float(c)), &v, &mut all);
                    let eq = expected(&values, CmpOp::Eq, c);
                    let ne: Vec<u32> = (0..len as u32)
                        .filter(|r| values[*r as usize].is_some() && !eq.contains(r))
                        .collect();
                    assert_eq!(all, ne, "len {len} nulls {with_nulls} <> {c}");
                }
            }
        }
    }

    #[test]
    fn a_first_integer_test_of_every_row_keeps_what_one_through_the_selection_keeps() {
        for len in [1usize, 64, 65, 300] {
            let values: Vec<Option<i64>> =
                (0..len as i64).map(|i| (i % 7 != 2).then_some((i * 37) % 101 - 50)).collect();
            let v = ints(&values);
            for op in [CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ge, CmpOp::Gt] {
                for c in [-50, 0, 13, 51] {
                    let mut all: Vec<u32> = (0..len as u32).collect();
                    select_test(&Test::Compare(op, Bound::Int(c)), &v, &mut all);
                    let mut some: Vec<u32> = (1..len as u32).collect();
                    select_test(&Test::Compare(op, Bound::Int(c)), &v, &mut some);
                    all.retain(|&r| r != 0);
                    assert_eq!(all, some, "len {len} {op:?} {c}");
                }
            }
        }
    }

    #[test]
    fn integer_comparisons_skip_nulls() {
        let c = [ints(&[Some(1), None, Some(5), Some(-3), Some(5)])];
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Lt, Bound::Int(5))), &c), vec![0, 3]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Le, Bound::Int(5))), &c), vec![0, 2, 3, 4]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Int(5))), &c), vec![2, 4]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Ge, Bound::Int(1))), &c), vec![0, 2, 4]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Gt, Bound::Int(1))), &c), vec![2, 4]);
        assert_eq!(run(&test(0, Test::NotEqual(Bound::Int(5))), &c), vec![0, 3]);
        assert_eq!(run(&test(0, Test::IsNull), &c), vec![1]);
        assert_eq!(run(&test(0, Test::IsNotNull), &c), vec![0, 2, 3, 4]);
    }

    #[test]
    fn floats_follow_postgres_order() {
        let c = [floats(&[Some(f64::NAN), Some(-0.0), Some(0.0), Some(f64::INFINITY), None, Some(-1.0)])];
        // NaN is above +Infinity and equal to NaN; -0 equals 0.
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Gt, Bound::Float(1e308))), &c), vec![0, 3]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Float(f64::NAN))), &c), vec![0]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Float(0.0))), &c), vec![1, 2]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Lt, Bound::Float(f64::NAN))), &c), vec![1, 2, 3, 5]);
        assert_eq!(run(&test(0, Test::NotEqual(Bound::Float(-0.0))), &c), vec![0, 3, 5]);
        let set = ValueSet::of(&[Bound::Float(f64::NAN), Bound::Float(-0.0)]);
        assert_eq!(run(&test(0, Test::In(set.clone())), &c), vec![0, 1, 2]);
        assert_eq!(run(&test(0, Test::NotIn(set)), &c), vec![3, 5]);
    }

    #[test]
    fn float4_columns_compare_exactly_with_float8_values() {
        let raw = [0.1f32, 0.5, f32::NAN];
        let c = [roundtrip(VectorValues::Float32(&raw), &[true; 3], PhysicalKind::Float32)];
        // 0.1::float4 is not 0.1::float8 (float48 operators compare the widened value).
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Float(0.1))), &c), Vec::<u32>::new());
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Float(0.1f32 as f64))), &c), vec![0]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Ge, Bound::Float(0.5))), &c), vec![1, 2]);
    }

    #[test]
    fn byte_strings_compare_bytewise_and_by_prefix() {
        let c = [texts(&[Some("apple"), Some("app"), None, Some("banana"), Some(""), Some("apricot")])];
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Lt, Bound::Bytes(b"apple".to_vec()))), &c), vec![1, 4]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Eq, Bound::Bytes(b"app".to_vec()))), &c), vec![1]);
        assert_eq!(run(&test(0, Test::Compare(CmpOp::Ge, Bound::Bytes(b"apr".to_vec()))), &c), vec![3, 5]);
        assert_eq!(run(&test(0, Test::Prefix(b"app".to_vec())), &c), vec![0, 1]);
        assert_eq!(run(&test(0, Test::Prefix(Vec::new())), &c), vec![0, 1, 3, 4, 5]);
        let set = ValueSet::of(&[Bound::Bytes(b"banana".to_vec()), Bound::Bytes(Vec::new())]);
        assert_eq!(run(&test(0, Test::In(set.clone())), &c), vec![3, 4]);
        assert_eq!(run(&test(0, Test::NotIn(set)), &c), vec![0, 1, 5]);
        assert_eq!(run(&test(0, Test::NotEqual(Bound::Bytes(b"app".to_vec()))), &c), vec![0, 3, 4, 5]);
    }

    #[test]
    fn zone_maps_spare_the_tests_they_decide() {
        use crate::storage::format::zonemap::ZoneMap;
        let c = [ints(&[Some(1), Some(2), Some(3)]), ints(&[Some(10), Some(20), Some(30)])];
        let stats = |att: usize| {
            let (min, max) = if att == 0 { (1, 3) } else { (10, 30) };
            Some(ZoneStats { zone: ZoneMap::Int { min, max }, rows: 3, null_count: 0 })
        };
        // Column 0 is within the range in every row: only column 1 is read.
        let f = Filter::And(vec![
            test(0, Test::Compare(CmpOp::Ge, Bound::Int(0))),
            test(1, Test::Compare(CmpOp::Gt, Bound::Int(15))),
        ]);
        let mut cols = Cols(&c, Vec::new());
        let mut sel = vec![0, 1, 2];
        select_with_zones(&f, &stats, &mut cols, &mut sel);
        assert_eq!((sel, cols.1), (vec![1, 2], vec![1]));
        // An OR with a child every row passes reads nothing.
        let f = Filter::Or(vec![test(1, Test::Compare(CmpOp::Gt, Bound::Int(15))), test(0, Test::IsNotNull)]);
        let mut cols = Cols(&c, Vec::new());
        let mut sel = vec![0, 1, 2];
        select_with_zones(&f, &stats, &mut cols, &mut sel);
        assert_eq!((sel, cols.1), (vec![0, 1, 2], vec![]));
    }

    #[test]
    fn dictionary_vectors_give_the_same_rows() {
        // 2,000 rows of 5 distinct values (the encoder picks a dictionary), some NULL.
        let names = ["host_1", "host_2", "host_10", "", "zeta"];
        let values: Vec<Option<&str>> =
            (0..2000).map(|i| if i % 7 == 0 { None } else { Some(names[i % names.len()]) }).collect();
        let plain = texts(&values);
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values.iter().flatten() {
            data.extend_from_slice(v.as_bytes());
            offsets.push(data.len() as u32);
        }
        let mut bytes = Vec::new();
        let valid = validity(&values);
        let info = encode_vector(
            2000,
            Some(&valid),
            VectorValues::Bytes { offsets: &offsets, data: &data },
            &CompressionPolicy::NONE,
            &mut bytes,
        );
        assert_eq!(info.encoding, crate::storage::format::encoding::EncodingId::Dictionary);
        let mut coded = DecodedVector::default();
        coded.keep_dictionary = true;
        decode_vector(&bytes, PhysicalKind::Bytes, &mut coded).unwrap();
        assert!(coded.dictionary.is_some());
        let b = |s: &str| Bound::Bytes(s.as_bytes().to_vec());
        let tests = [
            Test::Compare(CmpOp::Eq, b("host_1")),
            Test::Compare(CmpOp::Lt, b("host_10")),
            Test::Compare(CmpOp::Ge, b("host_2")),
            Test::NotEqual(b("")),
            Test::In(ValueSet::of(&[b("host_2"), b("zeta")])),
            Test::NotIn(ValueSet::of(&[b("host_2"), b("zeta")])),
            Test::Prefix(b"host_1".to_vec()),
            Test::Like(crate::exec::filter::like::LikePattern::new(b"%1%"), true),
            Test::Like(crate::exec::filter::like::LikePattern::new(b"h%t%2"), false),
            Test::IsNull,
            Test::IsNotNull,
        ];
        for t in tests {
            let f = test(0, t.clone());
            assert_eq!(run(&f, std::slice::from_ref(&coded)), run(&f, std::slice::from_ref(&plain)), "{t:?}");
        }
    }

    /// Stored numeric bytes (short header) of `digits` (base 10000) at `weight`.
    fn num(negative: bool, weight: i8, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let h = 0x8000 | if negative { 0x2000 } else { 0 } | (dscale << 7) | ((weight as i16 as u16) & 0x7F);
        let mut b = h.to_le_bytes().to_vec();
        digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b
    }

    fn byte_rows(
        values: &[Option<Vec<u8>>],
        policy: &CompressionPolicy,
        keep_dictionary: bool,
    ) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values.iter().flatten() {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        let mut bytes = Vec::new();
        let valid = validity(values);
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        encode_vector(valid.len() as u32, Some(&valid), values, policy, &mut bytes);
        let mut out = DecodedVector::default();
        out.keep_dictionary = keep_dictionary;
        decode_vector(&bytes, PhysicalKind::Bytes, &mut out).unwrap();
        out
    }

    #[test]
    fn numerics_compare_in_numeric_order() {
        let nan = 0xC000u16.to_le_bytes().to_vec();
        let pinf = 0xD000u16.to_le_bytes().to_vec();
        let ninf = 0xF000u16.to_le_bytes().to_vec();
        // 0.05, 0.050, 0.07, 24, 24.00, -1, NaN, Infinity, -Infinity, NULL; 200 times.
        let distinct = [
            Some(num(false, -1, 2, &[500])),
            Some(num(false, -1, 3, &[500])),
            Some(num(false, -1, 2, &[700])),
            Some(num(false, 0, 0, &[24])),
            Some(num(false, 0, 2, &[24])),
            Some(num(true, 0, 0, &[1])),
            Some(nan.clone()),
            Some(pinf),
            Some(ninf),
            None,
        ];
        let values: Vec<Option<Vec<u8>>> = (0..2000).map(|i| distinct[i % distinct.len()].clone()).collect();
        let plain = byte_rows(&values, &CompressionPolicy::default(), false);
        let coded = byte_rows(&values, &CompressionPolicy::NONE, true);
        assert!(coded.dictionary.is_some());
        let rows = |of: &[usize]| -> Vec<u32> {
            (0..2000u32).filter(|r| of.contains(&(*r as usize % distinct.len()))).collect()
        };
        let five = num(false, -1, 1, &[500]);
        let cases = [
            (Test::Numeric(Some(CmpOp::Eq), five.clone()), rows(&[0, 1])),
            (Test::Numeric(None, five.clone()), rows(&[2, 3, 4, 5, 6, 7, 8])),
            (Test::Numeric(Some(CmpOp::Ge), five.clone()), rows(&[0, 1, 2, 3, 4, 6, 7])),
            (Test::Numeric(Some(CmpOp::Lt), num(false, 0, 0, &[24])), rows(&[0, 1, 2, 5, 8])),
            (Test::Numeric(Some(CmpOp::Gt), num(false, 0, 0, &[24])), rows(&[6, 7])),
            (Test::Numeric(Some(CmpOp::Eq), nan.clone()), rows(&[6])),
            (Test::Numeric(Some(CmpOp::Le), num(true, 0, 0, &[1])), rows(&[5, 8])),
            (Test::NumericIn(NumericSet::of(&[five.clone(), nan.clone()]).unwrap(), true), rows(&[0, 1, 6])),
            (Test::NumericIn(NumericSet::of(&[five, nan]).unwrap(), false), rows(&[2, 3, 4, 5, 7, 8])),
        ];
        for (t, want) in cases {
            let f = test(0, t.clone());
            assert_eq!(run(&f, std::slice::from_ref(&plain)), want, "{t:?}");
            assert_eq!(run(&f, std::slice::from_ref(&coded)), want, "dictionary {t:?}");
        }
    }

    /// make_result's bytes of m / 10^scale.
    fn canonical(m: i64, scale: u16) -> Vec<u8> {
        let mut b = Vec::new();
        numeric::write_canonical(m as i128, scale, &mut b);
        b
    }

    #[test]
    fn scaled_numerics_pass_what_their_bytes_pass() {
        // A discount-like column (scale 2) with NULLs, as scaled numerics read two ways:
        // as numbers (`keep_scaled`) and as bytes.
        let values: Vec<Option<Vec<u8>>> =
            (0..2000i64).map(|i| (i % 13 != 0).then(|| canonical(i % 23 - 5, 2))).collect();
        let mut scaled_rows = byte_rows(&values, &CompressionPolicy::default(), false);
        assert!(scaled_rows.scaled.is_none());
        let bytes = scaled_rows.clone();
        let mut encoded = Vec::new();
        {
            let mut offsets = vec![0u32];
            let mut data = Vec::new();
            for v in values.iter().flatten() {
                data.extend_from_slice(v);
                offsets.push(data.len() as u32);
            }
            let info = encode_vector(
                2000,
                Some(&validity(&values)),
                VectorValues::Bytes { offsets: &offsets, data: &data },
                &CompressionPolicy::default(),
                &mut encoded,
            );
            assert_eq!(info.encoding, crate::storage::format::encoding::EncodingId::ScaledNumeric);
        }
        scaled_rows.keep_scaled = true;
        decode_vector(&encoded, PhysicalKind::Bytes, &mut scaled_rows).unwrap();
        assert_eq!(scaled_rows.scaled.as_ref().map(|s| s.scale), Some(2));
        let nan = 0xC000u16.to_le_bytes().to_vec();
        let ninf = 0xF000u16.to_le_bytes().to_vec();
        let huge = {
            let mut b = 0u16.to_le_bytes().to_vec();
            b.extend_from_slice(&10i16.to_le_bytes());
            b.extend_from_slice(&1u16.to_le_bytes());
            b
        };
        let constants = [
            canonical(5, 2),
            canonical(7, 2),
            canonical(1, 1),
            canonical(55, 3),
            canonical(-3, 0),
            canonical(0, 0),
            nan.clone(),
            ninf,
            huge.clone(),
        ];
        let ops = [Some(CmpOp::Lt), Some(CmpOp::Le), Some(CmpOp::Eq), Some(CmpOp::Ge), Some(CmpOp::Gt), None];
        let mut tests: Vec<Test> = Vec::new();
        for c in &constants {
            for op in ops {
                tests.push(Test::Numeric(op, c.clone()));
            }
        }
        let set = NumericSet::of(&[canonical(5, 2), canonical(60, 3), canonical(1, 4), nan, huge]).unwrap();
        tests.push(Test::NumericIn(set.clone(), true));
        tests.push(Test::NumericIn(set, false));
        tests.push(Test::IsNull);
        tests.push(Test::IsNotNull);
        for t in tests {
            let f = test(0, t.clone());
            let want = run(&f, std::slice::from_ref(&bytes));
            assert_eq!(run(&f, std::slice::from_ref(&scaled_rows)), want, "{t:?}");
        }
        // Two columns of a row compare on the bytes.
        let f = test(0, Test::Columns(Some(CmpOp::Le), 1));
        let pair = [scaled_rows.clone(), bytes.clone()];
        let all_valid: Vec<u32> = (0..2000).filter(|i| i % 13 != 0).collect();
        assert_eq!(run(&f, &pair), all_valid);
    }

    #[test]
    fn blank_padded_values_compare_without_trailing_spaces() {
        let distinct = [Some("ab   "), Some("ab"), Some(""), Some("   "), Some("ab c "), Some("b "), None];
        let b = |s: &str| Bound::Bytes(s.as_bytes().to_vec());
        let trimmed = |t: Test| Test::Trimmed(Box::new(t));
        byte_cases_on_plain_and_dictionary(
            &distinct,
            vec![
                (trimmed(Test::Compare(CmpOp::Eq, b("ab"))), &[0, 1]),
                (trimmed(Test::Compare(CmpOp::Eq, b(""))), &[2, 3]),
                (trimmed(Test::NotEqual(b("ab"))), &[2, 3, 4, 5]),
                (trimmed(Test::Compare(CmpOp::Lt, b("ab c"))), &[0, 1, 2, 3]),
                (trimmed(Test::Compare(CmpOp::Ge, b("b"))), &[5]),
                (trimmed(Test::In(ValueSet::of(&[b("b"), b("")]))), &[2, 3, 5]),
                (trimmed(Test::NotIn(ValueSet::of(&[b("b"), b("")]))), &[0, 1, 4]),
            ],
        );
    }

    /// Each test of `cases` on 2,000 rows cycling over `distinct`, stored plain and as
    /// a dictionary, keeps the rows holding the values at the indexes it names.
    fn byte_cases_on_plain_and_dictionary(distinct: &[Option<&str>], cases: Vec<(Test, &[usize])>) {
        let values: Vec<Option<Vec<u8>>> =
            (0..2000).map(|i| distinct[i % distinct.len()].map(|s| s.as_bytes().to_vec())).collect();
        let plain = byte_rows(&values, &CompressionPolicy::default(), false);
        let coded = byte_rows(&values, &CompressionPolicy::NONE, true);
        assert!(coded.dictionary.is_some());
        for (t, of) in cases {
            let want: Vec<u32> =
                (0..2000u32).filter(|r| of.contains(&(*r as usize % distinct.len()))).collect();
            let f = test(0, t.clone());
            assert_eq!(run(&f, std::slice::from_ref(&plain)), want, "{t:?}");
            assert_eq!(run(&f, std::slice::from_ref(&coded)), want, "dictionary {t:?}");
        }
    }

    #[test]
    fn collated_ranges_use_the_collations_order() {
        // A stand-in collation: case-insensitive, then bytes (as a libc locale puts "b"
        // between "A" and "C", where byte order has every capital first).
        let collator = crate::exec::filter::Collator::new(7, |a: &[u8], b: &[u8]| {
            a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase()).then_with(|| a.cmp(b))
        });
        let distinct = [Some("A"), Some("b"), Some("C"), Some("b  "), Some(""), None];
        let collated = |op, s: &str| Test::Collated(op, s.as_bytes().to_vec(), collator.clone());
        byte_cases_on_plain_and_dictionary(
            &distinct,
            vec![
                (collated(CmpOp::Lt, "C"), &[0, 1, 3, 4]),
                (collated(CmpOp::Gt, "a"), &[1, 2, 3]),
                (collated(CmpOp::Ge, "b"), &[1, 2, 3]),
                (collated(CmpOp::Le, "b"), &[0, 1, 4]),
                // char(n): compared without trailing spaces.
                (Test::Trimmed(Box::new(collated(CmpOp::Le, "b"))), &[0, 1, 3, 4]),
            ],
        );
    }

    #[test]
    fn two_numeric_columns_of_a_row() {
        let nan = 0xC000u16.to_le_bytes().to_vec();
        // Left cycles over 3 values (a dictionary), right over 4 (plain): 12 pairs.
        let left = [Some(num(false, 0, 0, &[24])), Some(nan.clone()), None];
        let right = [Some(num(false, 0, 2, &[24])), Some(num(false, -1, 2, &[500])), Some(nan), None];
        let l: Vec<Option<Vec<u8>>> = (0..2000).map(|i| left[i % 3].clone()).collect();
        let r: Vec<Option<Vec<u8>>> = (0..2000).map(|i| right[i % 4].clone()).collect();
        let c = [
            byte_rows(&l, &CompressionPolicy::NONE, true),
            byte_rows(&r, &CompressionPolicy::default(), false),
        ];
        assert!(c[0].dictionary.is_some() && c[1].dictionary.is_none());
        // Ranks: 24 = 24.00 < NaN; 0.05 < 24.
        let rank = |v: &Option<Vec<u8>>| {
            v.as_ref().map(|b| {
                if b.len() == 2 && b[1] == 0xC0 {
                    2
                } else if b.len() == 4 && b[2] == 0xF4 {
                    0
                } else {
                    1
                }
            })
        };
        for (op, want) in [
            (Some(CmpOp::Lt), std::cmp::Ordering::Less),
            (Some(CmpOp::Eq), std::cmp::Ordering::Equal),
            (Some(CmpOp::Gt), std::cmp::Ordering::Greater),
        ] {
            let expected: Vec<u32> = (0..2000u32)
                .filter(|&i| match (rank(&l[i as usize]), rank(&r[i as usize])) {
                    (Some(a), Some(b)) => a.cmp(&b) == want,
                    _ => false,
                })
                .collect();
            assert_eq!(run(&test(0, Test::Columns(op, 1)), &c), expected, "{op:?}");
        }
    }

    #[test]
    fn two_columns_of_a_row() {
        let c = [
            ints(&[Some(1), Some(5), None, Some(3), Some(-2)]),
            ints(&[Some(2), Some(5), Some(1), None, Some(-3)]),
            floats(&[Some(1.0), Some(f64::NAN), Some(0.0), Some(-0.0), None]),
            floats(&[Some(f64::NAN), Some(f64::NAN), Some(-0.0), Some(0.0), Some(1.0)]),
        ];
        let cols = |op, a, b| test(a, Test::Columns(op, b));
        assert_eq!(run(&cols(Some(CmpOp::Lt), 0, 1), &c), vec![0]);
        assert_eq!(run(&cols(Some(CmpOp::Le), 0, 1), &c), vec![0, 1]);
        assert_eq!(run(&cols(Some(CmpOp::Eq), 0, 1), &c), vec![1]);
        assert_eq!(run(&cols(Some(CmpOp::Gt), 0, 1), &c), vec![4]);
        assert_eq!(run(&cols(None, 0, 1), &c), vec![0, 4]);
        assert_eq!(run(&cols(Some(CmpOp::Ge), 1, 0), &c), vec![0, 1]);
        // PostgreSQL's float order: NaN equals NaN and is above 1; -0 equals 0.
        assert_eq!(run(&cols(Some(CmpOp::Eq), 2, 3), &c), vec![1, 2, 3]);
        assert_eq!(run(&cols(Some(CmpOp::Lt), 2, 3), &c), vec![0]);
        let f =
            Filter::And(vec![cols(Some(CmpOp::Le), 0, 1), test(0, Test::Compare(CmpOp::Gt, Bound::Int(1)))]);
        assert_eq!(f.attributes(), vec![0, 1]);
        assert_eq!(run(&f, &c), vec![1]);
    }

    #[test]
    fn long_in_lists_are_searched() {
        let values: Vec<Option<i64>> = (0..100).map(Some).collect();
        let c = [ints(&values)];
        let set = ValueSet::of(&(0..50).map(|i| Bound::Int(i * 3)).collect::<Vec<_>>());
        let got = run(&test(0, Test::In(set.clone())), &c);
        assert_eq!(got, (0..100).filter(|i| i % 3 == 0).collect::<Vec<u32>>());
        let got = run(&test(0, Test::NotIn(set)), &c);
        assert_eq!(got, (0..100).filter(|i| i % 3 != 0).collect::<Vec<u32>>());
    }

    #[test]
    fn and_narrows_or_merges() {
        let c = [
            ints(&[Some(1), Some(2), Some(3), Some(4), None]),
            texts(&[Some("a"), Some("b"), Some("a"), None, Some("a")]),
        ];
        let a = test(1, Test::Compare(CmpOp::Eq, Bound::Bytes(b"a".to_vec())));
        let big = test(0, Test::Compare(CmpOp::Ge, Bound::Int(3)));
        assert_eq!(run(&Filter::And(vec![a.clone(), big.clone()]), &c), vec![2]);
        assert_eq!(run(&Filter::Or(vec![a.clone(), big.clone()]), &c), vec![0, 2, 3, 4]);
        assert_eq!(run(&Filter::Or(vec![big.clone(), a.clone()]), &c), vec![0, 2, 3, 4]);
        assert_eq!(run(&Filter::Or(vec![Filter::Const(false), test(0, Test::IsNull)]), &c), vec![4]);
        assert_eq!(run(&Filter::And(vec![Filter::Const(false), a]), &c), Vec::<u32>::new());
        assert_eq!(run(&Filter::Const(true), &c), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_selection_is_narrowed_not_widened() {
        let c = [ints(&[Some(1), Some(2), Some(3), Some(4)])];
        let mut sel = vec![1, 3];
        select(&test(0, Test::Compare(CmpOp::Ge, Bound::Int(1))), &mut Cols(&c, Vec::new()), &mut sel);
        assert_eq!(sel, vec![1, 3]);
        let mut sel = vec![1, 3];
        select(
            &Filter::Or(vec![test(0, Test::IsNotNull), Filter::Const(true)]),
            &mut Cols(&c, Vec::new()),
            &mut sel,
        );
        assert_eq!(sel, vec![1, 3]);
    }
}
