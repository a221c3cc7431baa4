//! A pushed filter that is an AND of tests, as the scan runs it: the tests on one
//! column merged into one step (`a >= x AND a < y`, a BETWEEN, a date against a
//! date and a timestamp), so that a column is read once, and a range of integers, or
//! of scaled numerics' mantissas at the vector's scale, is tested in one branch-free
//! pass with one unsigned comparison a row. The steps run in the filter's order, each
//! over the rows the ones before it left, its column decoded for those rows alone
//! when they are few (`ColumnSource::column_rows`). The first step over a whole
//! vector reads its values in order, not through the selection. AND's order does
//! not change what passes; but a test that can fail (an expression's overflow) stays
//! where it is, the tests after it after it.

use super::{kernels, scaled, zone, Filter, Test};
use crate::storage::format::encoding::DecodedValues;
use crate::storage::format::zonemap::{Bound, CmpOp, Verdict, ZoneStats};
use crate::storage::read::vector_filter::ColumnSource;
use std::cell::Cell;

/// The tests of an AND, grouped by column.
#[derive(Debug, Clone, PartialEq)]
pub struct Conjunction {
    steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
struct Step {
    att: usize,
    /// The step's tests, each on `att`, as the filter has them (for zone maps, and for
    /// vectors the fused form does not apply to).
    tests: Vec<Test>,
    kind: StepKind,
}

#[derive(Debug, Clone, PartialEq)]
enum StepKind {
    /// `lo <= value <= hi` on integers (None: no value passes).
    Ints(Option<(i64, i64)>),
    /// Numeric comparisons (no `<>`), one range of mantissas per display scale: the
    /// last vector's scale and range are kept (a column's vectors mostly share one).
    Numeric { bounds: Vec<(CmpOp, Vec<u8>)>, last: Cell<Option<(u16, MantissaRange)>> },
    /// Anything else: the tests one after the other.
    Tests,
    /// A child that is no test (an OR), as `kernels::select_with_zones` runs it.
    Other(Filter),
}

/// Which mantissas pass a numeric step at one scale.
#[derive(Debug, Clone, Copy, PartialEq)]
enum MantissaRange {
    /// `lo <= m <= hi`.
    Within(i64, i64),
    /// Every value passes or none does.
    All(bool),
    /// A bound beyond 64 bits that leaves a range (never for a typmod'ed column's own
    /// values): each test on its own.
    Tests,
}

impl Conjunction {
    /// The filter as a conjunction of steps; None if it is no AND of tests (or one).
    pub fn of(filter: &Filter) -> Option<Conjunction> {
        let children: &[Filter] = match filter {
            Filter::And(children) => children,
            Filter::Test { .. } => std::slice::from_ref(filter),
            _ => return None,
        };
        let mut steps: Vec<Step> = Vec::new();
        // Steps before a test that may fail (`Test::Arith`) take no test after it: it
        // runs on exactly the rows the tests before it leave.
        let mut first_open = 0;
        for child in children {
            if child.may_fail() {
                steps.push(Step { att: usize::MAX, tests: Vec::new(), kind: StepKind::Other(child.clone()) });
                first_open = steps.len();
                continue;
            }
            match child {
                Filter::Test { att, test } if !matches!(test, Test::Columns(..)) => {
                    let open = &mut steps[first_open..];
                    match open.iter_mut().find(|s| s.att == *att && !matches!(s.kind, StepKind::Other(_))) {
                        Some(s) => s.tests.push(test.clone()),
                        None => {
                            steps.push(Step { att: *att, tests: vec![test.clone()], kind: StepKind::Tests })
                        }
                    }
                }
                other => steps.push(Step {
                    att: usize::MAX,
                    tests: Vec::new(),
                    kind: StepKind::Other(other.clone()),
                }),
            }
        }
        for s in &mut steps {
            if !matches!(s.kind, StepKind::Other(_)) {
                s.kind = kind_of(&s.tests);
            }
        }
        Some(Conjunction { steps })
    }

    /// Keeps the rows of `selection` (ascending rows of a vector) that pass, skipping
    /// the steps zone maps decide for the vector (`stats`).
    pub fn select(
        &self,
        stats: &dyn Fn(usize) -> Option<ZoneStats>,
        columns: &mut dyn ColumnSource,
        selection: &mut Vec<u32>,
    ) {
        for step in &self.steps {
            if selection.is_empty() {
                return;
            }
            if let StepKind::Other(f) = &step.kind {
                match zone::verdict(f, stats) {
                    Verdict::All => {}
                    Verdict::None => selection.clear(),
                    Verdict::Some => kernels::select_with_zones(f, stats, columns, selection),
                }
                continue;
            }
            let mut verdict = Verdict::All;
            if let Some(s) = stats(step.att) {
                for t in &step.tests {
                    match zone::test_verdict(t, &s) {
                        Verdict::None => {
                            verdict = Verdict::None;
                            break;
                        }
                        Verdict::Some if verdict == Verdict::All => verdict = Verdict::Some,
                        _ => {}
                    }
                }
            } else {
                verdict = Verdict::Some;
            }
            match verdict {
                Verdict::All => {}
                Verdict::None => selection.clear(),
                Verdict::Some => step.select(columns, selection),
            }
        }
    }
}

/// The fused form of a column's tests, where they have one.
fn kind_of(tests: &[Test]) -> StepKind {
    let ints = tests.iter().all(|t| matches!(t, Test::Compare(_, Bound::Int(_)) | Test::IsNotNull))
        && tests.iter().any(|t| matches!(t, Test::Compare(..)));
    if ints {
        let mut range = Some((i64::MIN, i64::MAX));
        for t in tests {
            if let Test::Compare(op, Bound::Int(c)) = t {
                range = range.and_then(|r| narrow(r, *op, *c as i128));
            }
        }
        return StepKind::Ints(range);
    }
    let numeric = tests.iter().all(|t| matches!(t, Test::Numeric(Some(_), _) | Test::IsNotNull))
        && tests.iter().any(|t| matches!(t, Test::Numeric(..)));
    if numeric {
        let bounds = tests
            .iter()
            .filter_map(|t| match t {
                Test::Numeric(Some(op), c) => Some((*op, c.clone())),
                _ => None,
            })
            .collect();
        return StepKind::Numeric { bounds, last: Cell::new(None) };
    }
    StepKind::Tests
}

/// `[lo, hi]` narrowed by `x op c`, in 64 bits; None if no i64 is left.
fn narrow((lo, hi): (i64, i64), op: CmpOp, c: i128) -> Option<(i64, i64)> {
    let (lo, hi) = (lo as i128, hi as i128);
    let (lo, hi) = match op {
        CmpOp::Lt => (lo, hi.min(c.saturating_sub(1))),
        CmpOp::Le => (lo, hi.min(c)),
        CmpOp::Eq => (lo.max(c), hi.min(c)),
        CmpOp::Ge => (lo.max(c), hi),
        CmpOp::Gt => (lo.max(c.saturating_add(1)), hi),
    };
    (lo <= hi).then_some((lo as i64, hi as i64))
}

/// The mantissas at display scale `scale` that pass every comparison of `bounds`.
fn mantissa_range(bounds: &[(CmpOp, Vec<u8>)], scale: u16) -> MantissaRange {
    let mut range = Some((i64::MIN, i64::MAX));
    for (op, c) in bounds {
        match scaled::cut(Some(*op), c, scale) {
            Some(scaled::Cut::All(true)) => {}
            Some(scaled::Cut::All(false)) => return MantissaRange::All(false),
            Some(scaled::Cut::Cmp(Some(op), k)) => {
                // A cut beyond 64 bits passes every mantissa or none: `narrow` in 128
                // bits says which.
                range = range.and_then(|r| narrow(r, op, k));
            }
            // `cut` keeps the operator; `<>` never comes here.
            Some(scaled::Cut::Cmp(None, _)) | None => return MantissaRange::Tests,
        }
    }
    match range {
        None => MantissaRange::All(false),
        Some((i64::MIN, i64::MAX)) => MantissaRange::All(true),
        Some((lo, hi)) => MantissaRange::Within(lo, hi),
    }
}

impl Step {
    fn select(&self, columns: &mut dyn ColumnSource, selection: &mut Vec<u32>) {
        let v = columns.column_rows(self.att, selection);
        let valid = v.validity.as_deref();
        match (&self.kind, &v.values, &v.scaled) {
            (StepKind::Ints(None), _, _) => selection.clear(),
            (StepKind::Ints(Some((lo, hi))), DecodedValues::Int(values), _)
                if v.dictionary.is_none() && v.scaled.is_none() =>
            {
                select_range(values, valid, *lo, *hi, selection)
            }
            (StepKind::Numeric { bounds, last }, _, Some(s)) => {
                let range = match last.get() {
                    Some((scale, range)) if scale == s.scale => range,
                    _ => {
                        let range = mantissa_range(bounds, s.scale);
                        last.set(Some((s.scale, range)));
                        range
                    }
                };
                match range {
                    MantissaRange::Within(lo, hi) => select_range(&s.m, valid, lo, hi, selection),
                    MantissaRange::All(false) => selection.clear(),
                    MantissaRange::All(true) => select_valid(valid, selection),
                    MantissaRange::Tests => self.each_test(v, selection),
                }
            }
            _ => self.each_test(v, selection),
        }
    }

    /// The step's tests one after the other.
    fn each_test(&self, v: &crate::storage::format::encoding::DecodedVector, selection: &mut Vec<u32>) {
        for t in &self.tests {
            if selection.is_empty() {
                return;
            }
            kernels::select_test(t, v, selection);
        }
    }
}

/// Keeps the non-NULL rows.
fn select_valid(valid: Option<&[bool]>, selection: &mut Vec<u32>) {
    if let Some(valid) = valid {
        selection.retain(|&r| valid[r as usize]);
    }
}

/// Keeps the non-NULL rows whose value lies in `[lo, hi]` (`lo <= hi`): one unsigned
/// comparison a row (`value - lo` wraps below `lo` to above `hi - lo`), and no branch.
/// A selection of every row of the vector is read in order, not through its rows.
pub fn select_range(values: &[i64], valid: Option<&[bool]>, lo: i64, hi: i64, selection: &mut Vec<u32>) {
    debug_assert!(lo <= hi);
    let span = hi.wrapping_sub(lo) as u64;
    let inside = |x: i64| (x.wrapping_sub(lo) as u64) <= span;
    let n = selection.len();
    let dense = n <= values.len() && n > 0 && selection[n - 1] as usize == n - 1;
    let mut k = 0;
    match (dense, valid) {
        (true, None) => {
            // The 8 rows of a mask byte are written whole: room for 8 past the end.
            selection.resize(n + 8, 0);
            k = dense_range(&values[..n], lo, span, selection);
        }
        (true, Some(valid)) => {
            let out = &mut selection[..n];
            for (r, (&x, &ok)) in values[..n].iter().zip(&valid[..n]).enumerate() {
                out[k] = r as u32;
                k += (ok & inside(x)) as usize;
            }
        }
        (false, None) => {
            for i in 0..n {
                let r = selection[i];
                selection[k] = r;
                k += inside(values[r as usize]) as usize;
            }
        }
        (false, Some(valid)) => {
            for i in 0..n {
                let r = selection[i];
                selection[k] = r;
                k += (valid[r as usize] & inside(values[r as usize])) as usize;
            }
        }
    }
    selection.truncate(k);
}

/// The rows `0..values.len()` whose value `x` has `x - lo` (wrapping, unsigned) at
/// most `span`, written to the front of `out` (which holds 8 slots more than there
/// are values); returns how many. With AVX2, 4 values are compared at once into a mask
/// of 64 rows, whose rows are then written 8 at a time from a table.
fn dense_range(values: &[i64], lo: i64, span: u64, out: &mut [u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { dense_range_avx2(values, lo, span, out) };
    }
    dense_range_scalar(values, 0, 0, lo, span, out)
}

/// `dense_range` from row `from` on, `k` rows already in `out`: one row at a time.
#[inline(always)]
fn dense_range_scalar(
    values: &[i64],
    from: usize,
    mut k: usize,
    lo: i64,
    span: u64,
    out: &mut [u32],
) -> usize {
    for (r, &x) in values.iter().enumerate().skip(from) {
        out[k] = r as u32;
        k += ((x.wrapping_sub(lo) as u64) <= span) as usize;
    }
    k
}

/// `dense_range` with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dense_range_avx2(values: &[i64], lo: i64, span: u64, out: &mut [u32]) -> usize {
    use std::arch::x86_64::*;
    // `x - lo <= span` unsigned is `(x - lo) ^ MIN <= span ^ MIN` signed: the compare
    // AVX2 has (greater than) of the flipped values, negated.
    let flip = _mm256_set1_epi64x(i64::MIN);
    let vlo = _mm256_set1_epi64x(lo);
    let vspan = _mm256_set1_epi64x((span as i64) ^ i64::MIN);
    let words = values.len() / 64;
    let mut k = 0;
    for w in 0..words {
        let chunk = &values[w * 64..w * 64 + 64];
        let mut mask = 0u64;
        for (q, four) in chunk.chunks_exact(4).enumerate() {
            // SAFETY: `four` is 4 i64s (32 bytes) read unaligned; AVX2 is there (this fn's
            // contract).
            let above = unsafe {
                let x = _mm256_loadu_si256(four.as_ptr() as *const __m256i);
                let d = _mm256_xor_si256(_mm256_sub_epi64(x, vlo), flip);
                _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(d, vspan)))
            };
            mask |= (!above as u64 & 0xf) << (4 * q);
        }
        k = super::dense::write_rows(mask, w * 64, k, out);
    }
    dense_range_scalar(values, words * 64, k, lo, span, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::filter::kernels::{select as reference, select_with_zones};
    use crate::storage::format::encoding::{DecodedVector, ScaledNumerics};
    use crate::storage::format::numeric::stored_literal as stored;
    use crate::storage::format::zonemap::ZoneMap;

    /// Columns by attribute, recording which were asked for.
    struct Cols<'a>(&'a [DecodedVector], Vec<usize>);

    impl ColumnSource for Cols<'_> {
        fn column(&mut self, att: usize) -> &DecodedVector {
            self.1.push(att);
            &self.0[att]
        }
    }

    fn ints(values: &[Option<i64>]) -> DecodedVector {
        let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
        let v: Vec<i64> = values.iter().map(|x| x.unwrap_or(0)).collect();
        let validity = valid.contains(&false).then_some(valid);
        DecodedVector::from_parts(values.len() as u32, validity, DecodedValues::Int(v), None)
    }

    /// Scaled numerics m / 10^scale (None: NULL), as a scan that keeps them numbers reads them.
    fn scaled_vector(m: &[Option<i64>], scale: u16) -> DecodedVector {
        let mut v = ints(m);
        v.values = DecodedValues::Bytes { offsets: vec![0; m.len() + 1], data: Vec::new() };
        v.scaled = Some(ScaledNumerics { m: m.iter().map(|x| x.unwrap_or(0)).collect(), scale });
        v
    }

    /// The same numerics as their stored bytes.
    fn bytes_vector(m: &[Option<i64>], scale: u16) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for x in m {
            if let Some(x) = x {
                crate::storage::format::numeric::write_canonical(*x as i128, scale, &mut data);
            }
            offsets.push(data.len() as u32);
        }
        let mut v = ints(m);
        v.values = DecodedValues::Bytes { offsets, data };
        v
    }

    fn t(att: usize, test: Test) -> Filter {
        Filter::Test { att, test }
    }

    /// The rows of `sel` the conjunction keeps, and the attributes it asked for.
    fn conj(
        f: &Filter,
        cols: &[DecodedVector],
        sel: &[u32],
        stats: &dyn Fn(usize) -> Option<ZoneStats>,
    ) -> (Vec<u32>, Vec<usize>) {
        let c = Conjunction::of(f).expect("an AND of tests");
        let mut sel = sel.to_vec();
        let mut source = Cols(cols, Vec::new());
        c.select(stats, &mut source, &mut sel);
        (sel, source.1)
    }

    /// Checks the conjunction against the tree kernels, on every row and on every third.
    fn same(f: &Filter, cols: &[DecodedVector]) {
        let rows = cols[0].rows;
        for sel in [(0..rows).collect::<Vec<u32>>(), (0..rows).filter(|r| r % 3 == 1).collect()] {
            let mut want = sel.clone();
            reference(f, &mut Cols(cols, Vec::new()), &mut want);
            assert_eq!(conj(f, cols, &sel, &|_| None).0, want, "{f:?} on {} rows", sel.len());
        }
    }

    fn cmp(att: usize, op: CmpOp, c: i64) -> Filter {
        t(att, Test::Compare(op, Bound::Int(c)))
    }

    #[test]
    fn integer_ranges_pass_what_their_tests_pass() {
        use CmpOp::*;
        // Dates with both infinities (DATEVAL_NOBEGIN / NOEND), NULLs, the i64 extremes.
        let specials = [i32::MIN as i64, i32::MAX as i64, i64::MIN, i64::MAX, -1, 0, 1];
        let values: Vec<Option<i64>> = (0..700i64)
            .map(|i| match i % 11 {
                0 => None,
                1 => Some(specials[(i / 11) as usize % specials.len()]),
                _ => Some(i * 37 % 500 - 100),
            })
            .collect();
        let cols = [ints(&values)];
        let no_nulls = [ints(&values.iter().map(|v| v.or(Some(3))).collect::<Vec<_>>())];
        let bounds = [
            i64::MIN,
            i64::MIN + 1,
            i32::MIN as i64,
            -100,
            0,
            50,
            399,
            i32::MAX as i64,
            i64::MAX - 1,
            i64::MAX,
        ];
        for lo_op in [Ge, Gt, Eq] {
            for hi_op in [Lt, Le] {
                for &lo in &bounds {
                    for &hi in &bounds {
                        let f = Filter::And(vec![cmp(0, lo_op, lo), cmp(0, hi_op, hi)]);
                        same(&f, &cols);
                        same(&f, &no_nulls);
                    }
                }
            }
        }
        for op in [Lt, Le, Eq, Ge, Gt] {
            for &c in &bounds {
                same(&cmp(0, op, c), &cols);
                same(&Filter::And(vec![cmp(0, op, c), t(0, Test::IsNotNull)]), &cols);
            }
        }
        // Nothing passes, everything does.
        assert_eq!(
            conj(&Filter::And(vec![cmp(0, Gt, 5), cmp(0, Lt, 5)]), &cols, &[0, 1, 2], &|_| None).0,
            Vec::<u32>::new()
        );
        let all: Vec<u32> = (0..700).collect();
        assert_eq!(conj(&cmp(0, Ge, i64::MIN), &no_nulls, &all, &|_| None).0, all);
    }

    #[test]
    fn dense_ranges_agree_with_one_row_at_a_time() {
        let values: Vec<i64> = (0..2048i64)
            .map(|i| match i % 97 {
                0 => i64::MIN,
                1 => i64::MAX,
                _ => (i * 7919) % 2557 - 300,
            })
            .collect();
        let cuts = [i64::MIN, -300, -1, 0, 1000, 2256, i64::MAX];
        for n in [0usize, 1, 63, 64, 65, 700, 2048] {
            for &lo in &cuts {
                for &hi in cuts.iter().filter(|&&h| h >= lo) {
                    let span = hi.wrapping_sub(lo) as u64;
                    let mut got = vec![0u32; n + 8];
                    let k = dense_range(&values[..n], lo, span, &mut got);
                    let mut want = vec![0u32; n + 8];
                    let j = dense_range_scalar(&values[..n], 0, 0, lo, span, &mut want);
                    assert_eq!(got[..k], want[..j], "{n} rows in [{lo}, {hi}]");
                    let plain: Vec<u32> =
                        (0..n as u32).filter(|&r| (lo..=hi).contains(&values[r as usize])).collect();
                    assert_eq!(got[..k], plain[..]);
                }
            }
        }
    }

    #[test]
    fn numeric_ranges_pass_what_their_tests_pass() {
        use CmpOp::*;
        let m: Vec<Option<i64>> = (0..600i64)
            .map(|i| match i % 13 {
                0 => None,
                1 => Some([i64::MIN, i64::MAX, 0][(i / 13) as usize % 3]),
                _ => Some(i % 23 - 5),
            })
            .collect();
        let constants: Vec<Vec<u8>> = [
            "0.05",
            "0.07",
            "0.055",
            "-0.03",
            "0",
            "0.1",
            "24",
            "NaN",
            "Infinity",
            "-Infinity",
            "92233720368547758.07",
            "92233720368547758.08",
            "-92233720368547758.09",
            "123456789012345678901234567890",
            "0.00000000000000000000000000001",
        ]
        .iter()
        .map(|s| stored(s))
        .collect();
        for scale in [0u16, 2, 4] {
            let scaled = [scaled_vector(&m, scale)];
            let bytes = [bytes_vector(&m, scale)];
            for lo_op in [Ge, Gt, Eq] {
                for hi_op in [Lt, Le] {
                    for lo in &constants {
                        for hi in &constants {
                            let f = Filter::And(vec![
                                t(0, Test::Numeric(Some(lo_op), lo.clone())),
                                t(0, Test::Numeric(Some(hi_op), hi.clone())),
                            ]);
                            same(&f, &scaled);
                            // The bytes' numeric order says the same.
                            let all: Vec<u32> = (0..600).collect();
                            let mut want = all.clone();
                            reference(&f, &mut Cols(&bytes, Vec::new()), &mut want);
                            assert_eq!(conj(&f, &scaled, &all, &|_| None).0, want, "{f:?} at scale {scale}");
                            assert_eq!(conj(&f, &bytes, &all, &|_| None).0, want);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_scale_of_each_vector_is_its_own() {
        // One step over vectors of two scales: 0.05 <= x <= 0.07.
        let f = Filter::And(vec![
            t(0, Test::Numeric(Some(CmpOp::Ge), stored("0.05"))),
            t(0, Test::Numeric(Some(CmpOp::Le), stored("0.07"))),
        ]);
        let c = Conjunction::of(&f).unwrap();
        let m: Vec<Option<i64>> = (0..100).map(Some).collect();
        for (scale, want) in
            [(2u16, vec![5, 6, 7]), (3, (50..=70).collect()), (2, vec![5, 6, 7]), (1, vec![])]
        {
            let cols = [scaled_vector(&m, scale)];
            let mut sel: Vec<u32> = (0..100).collect();
            c.select(&|_| None, &mut Cols(&cols, Vec::new()), &mut sel);
            assert_eq!(sel, want, "scale {scale}");
        }
    }

    #[test]
    fn steps_follow_the_filter_and_zone_maps() {
        use CmpOp::*;
        let a: Vec<Option<i64>> = (0..64).map(|i| (i % 9 != 0).then_some(i)).collect();
        let b: Vec<Option<i64>> = (0..64).map(|i| Some(i % 4)).collect();
        let cols = [ints(&a), scaled_vector(&b, 0), ints(&b)];
        // Two tests on 0, one on 1 between them, an OR and a test on two columns.
        let f = Filter::And(vec![
            cmp(0, Ge, 10),
            t(1, Test::Numeric(Some(Lt), stored("3"))),
            cmp(0, Lt, 50),
            Filter::Or(vec![cmp(2, Eq, 0), cmp(2, Eq, 2)]),
            t(2, Test::Columns(Some(Le), 0)),
            t(2, Test::NotEqual(Bound::Int(7))),
        ]);
        same(&f, &cols);
        let all: Vec<u32> = (0..64).collect();
        let mut want = all.clone();
        select_with_zones(&f, &|_| None, &mut Cols(&cols, Vec::new()), &mut want);
        assert_eq!(conj(&f, &cols, &all, &|_| None).0, want);
        // A step zone maps rule out leaves its columns and the later ones unread.
        let stats = |att: usize| {
            (att == 0).then_some(ZoneStats {
                zone: ZoneMap::Int { min: 60, max: 63 },
                rows: 64,
                null_count: 7,
            })
        };
        assert_eq!(conj(&f, &cols, &all, &stats), (Vec::<u32>::new(), Vec::<usize>::new()));
        // One every row passes is not evaluated.
        let stats = |att: usize| {
            (att == 0).then_some(ZoneStats {
                zone: ZoneMap::Int { min: 20, max: 30 },
                rows: 64,
                null_count: 0,
            })
        };
        let only_b =
            Filter::And(vec![cmp(0, Ge, 10), cmp(0, Lt, 50), t(1, Test::Numeric(Some(Lt), stored("1")))]);
        assert_eq!(conj(&only_b, &cols, &all, &stats), ((0..64).filter(|i| i % 4 == 0).collect(), vec![1]));
        // A lone test, and what is no AND of tests.
        same(&cmp(0, Gt, 40), &cols);
        assert!(Conjunction::of(&Filter::Or(vec![cmp(0, Gt, 1), cmp(0, Lt, 0)])).is_none());
        assert!(Conjunction::of(&Filter::Const(true)).is_none());
    }
}
