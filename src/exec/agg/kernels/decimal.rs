//! sum and avg over numeric: numeric_avg_accum's state. Values come as scaled integers
//! (`exec::expr`: a numeric column decoded once per vector, or an expression's result),
//! and each group sums them in 128 bits at the largest display scale it has seen, with
//! its count and how many inputs had that scale (numeric_avg_accum's N, maxScale and
//! maxScaleCount): 34 bytes a group. A group whose sum leaves 128 bits, or that meets a
//! NaN, an infinity or a value beyond 128 bits, goes on in an exact `DecimalSum`.

use super::{drive, each_row, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::numeric::DecimalSum;
use crate::exec::agg::output::Output;
use crate::exec::expr::eval::{NumVal, NumVec};
use crate::exec::expr::num::{pow10, wide_mul, Num};
use crate::storage::format::encoding::DecodedVector;
use hashbrown::HashMap;

#[derive(Debug, Default)]
pub struct Decimal {
    sum: Vec<i128>,
    scale: Vec<u16>,
    n: Vec<i64>,
    max_scale_count: Vec<i64>,
    /// The groups that left the fast state, by group.
    exact: HashMap<u32, DecimalSum>,
    pub avg: bool,
    /// A vector's sums and counts per group, before they go to the groups
    /// (`fold_scaled64`); kept for the next vector.
    local_sums: Vec<i128>,
    local_counts: Vec<i64>,
}

/// Most groups for which `fold_scaled64` sums a vector's values per group first.
const LOCAL_GROUPS: usize = 256;

impl AggKernel for Decimal {
    const BYTES_PER_GROUP: usize = 34;

    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups, 0);
        self.scale.resize(groups, 0);
        self.n.resize(groups, 0);
        self.max_scale_count.resize(groups, 0);
    }

    /// Numerics come decoded (`fold_numeric`), never as a stored column.
    fn fold(&mut self, _col: &DecodedVector, _sel: &[u32], _gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        wrong_column(self)
    }

    /// numeric_sum, and numeric_avg: the sum over the count (NaN and infinities as the
    /// sum has them).
    fn result(&self, g: usize) -> Output<'_> {
        if let Some(s) = self.exact.get(&(g as u32)) {
            let Some(text) = s.text() else { return Output::Null };
            let special = s.nan > 0 || s.pos_inf > 0 || s.neg_inf > 0;
            let divide_by = (self.avg && !special).then_some(s.n);
            return Output::NumericText { text, divide_by };
        }
        if self.n[g] == 0 {
            return Output::Null;
        }
        // The stored bytes, made directly: numeric_in on a text was most of the time a
        // query with a million groups spent making its results.
        let bytes = Num::Fin { m: self.sum[g], scale: self.scale[g] }.to_stored();
        if self.avg {
            Output::NumericStoredAvg { bytes, n: self.n[g] }
        } else {
            Output::NumericStored(bytes)
        }
    }

    /// numeric_avg_accum's internal state, serialized (numeric_avg_serialize's bytes).
    fn partial_state(&self, g: usize) -> Output<'_> {
        Output::Bytea(self.state(g).serialized())
    }
}

impl Decimal {
    /// No groups yet; `avg` for avg(numeric), else sum.
    pub fn new(avg: bool) -> Decimal {
        Decimal { avg, ..Default::default() }
    }

    /// Folds the selected, valid rows of `values` into the groups `gids` gives.
    pub fn fold_numeric(
        &mut self,
        values: &NumVec,
        valid: Option<&[bool]>,
        sel: &[u32],
        gids: Gids,
    ) -> Result<(), Overflow> {
        let values = match values {
            NumVec::Scaled { m, scale } => {
                self.fold_scaled(m, *scale, valid, sel, gids);
                return Ok(());
            }
            NumVec::Scaled64 { m, scale } => {
                self.fold_scaled64(m, *scale, valid, sel, gids);
                return Ok(());
            }
            NumVec::Rows(v) => v,
        };
        // The first value that is no numeric ends the fold (the query fails with it).
        let mut corrupt = false;
        each_row(valid, sel, gids, |g, r| {
            if corrupt {
                return;
            }
            let fast = match &values[r] {
                NumVal::Small(Num::Fin { m, scale }) if !self.exact.contains_key(&(g as u32)) => {
                    self.add_fast(g, *m, *scale)
                }
                _ => false,
            };
            corrupt = !fast && !self.add_exact(g, &values[r]);
        });
        if corrupt {
            return Err(Overflow::CorruptNumeric);
        }
        Ok(())
    }

    /// Folds scaled values of one display scale: a group at that scale adds the
    /// mantissa, the rest as `add_fast` and `add_exact` do.
    fn fold_scaled(&mut self, m: &[i128], scale: u16, valid: Option<&[bool]>, sel: &[u32], gids: Gids) {
        drive(m, valid, sel, gids, |g, m| {
            // A group may move to the exact sum during the vector: asked per row.
            if !self.exact.is_empty() && self.exact.contains_key(&(g as u32)) {
                self.add_exact(g, &NumVal::Small(Num::Fin { m, scale }));
                return;
            }
            if self.scale[g] == scale {
                if let Some(sum) = self.sum[g].checked_add(m) {
                    self.sum[g] = sum;
                    self.n[g] += 1;
                    self.max_scale_count[g] += 1;
                    return;
                }
            }
            if !self.add_fast(g, m, scale) {
                self.add_exact(g, &NumVal::Small(Num::Fin { m, scale }));
            }
        });
    }

    /// Folds the products `x[r] * y[r]` of two columns of 64-bit mantissas (the
    /// product's display scale is `scale`, numeric_mul's sum of the two) into the one
    /// `group`, computing them for the selected rows alone: a row is NULL if either side
    /// is. Each product is exact in 128 bits; the vector's sum goes to the group once.
    /// False (nothing folded) if that sum would leave 128 bits: the caller then folds
    /// the rows as any expression's.
    pub fn fold_products_one(
        &mut self,
        group: usize,
        x: &[i64],
        y: &[i64],
        scale: u16,
        valid: Option<&[bool]>,
        sel: &[u32],
    ) -> bool {
        let product = |r: usize| x[r] as i128 * y[r] as i128;
        let (mut sum, mut n) = (0i128, 0i64);
        let mut overflow = false;
        match valid {
            None => {
                for &r in sel {
                    let (s, o) = sum.overflowing_add(product(r as usize));
                    sum = s;
                    overflow |= o;
                }
                n = sel.len() as i64;
            }
            Some(v) => {
                for &r in sel.iter().filter(|&&r| v[r as usize]) {
                    let (s, o) = sum.overflowing_add(product(r as usize));
                    sum = s;
                    overflow |= o;
                    n += 1;
                }
            }
        }
        if overflow {
            return false;
        }
        if n > 0 {
            self.add_sum(group, sum, n, scale);
        }
        true
    }

    /// Folds 64-bit mantissas of one display scale: each group's values of the vector
    /// are summed first, in 128 bits (no vector's can overflow them), and added to the
    /// group once (`add_sum`). Past `LOCAL_GROUPS` groups the partial sums would cost
    /// more than they save, and rows add to their groups one by one.
    pub fn fold_scaled64(&mut self, m: &[i64], scale: u16, valid: Option<&[bool]>, sel: &[u32], gids: Gids) {
        let groups = self.sum.len();
        match gids {
            Gids::Same(g) => {
                let (mut sum, mut n) = (0i128, 0i64);
                drive(m, valid, sel, gids, |_, m| {
                    sum += m as i128;
                    n += 1;
                });
                if n > 0 {
                    self.add_sum(g as usize, sum, n, scale);
                }
            }
            Gids::Each(ids) if groups <= LOCAL_GROUPS => {
                // Per run of rows of one group (the rows come ordered by group when the
                // grouping can: `HashGrouping`), a sum in registers; then per group.
                let (mut sums, mut counts) =
                    (std::mem::take(&mut self.local_sums), std::mem::take(&mut self.local_counts));
                sums.clear();
                sums.resize(groups, 0);
                counts.clear();
                counts.resize(groups, 0);
                let mut start = 0;
                for run in ids.chunk_by(|a, b| a == b) {
                    let rows = &sel[start..start + run.len()];
                    start += run.len();
                    let (sum, n) = match valid {
                        None => {
                            (rows.iter().map(|&r| m[r as usize] as i128).sum::<i128>(), rows.len() as i64)
                        }
                        Some(v) => rows
                            .iter()
                            .filter(|&&r| v[r as usize])
                            .fold((0i128, 0i64), |(s, n), &r| (s + m[r as usize] as i128, n + 1)),
                    };
                    let g = run[0] as usize;
                    sums[g] += sum;
                    counts[g] += n;
                }
                for g in 0..groups {
                    if counts[g] > 0 {
                        self.add_sum(g, sums[g], counts[g], scale);
                    }
                }
                (self.local_sums, self.local_counts) = (sums, counts);
            }
            Gids::Each(_) => {
                drive(m, valid, sel, gids, |g, m| {
                    let m = m as i128;
                    // A group may move to the exact sum during the vector: asked per row.
                    let exact = !self.exact.is_empty() && self.exact.contains_key(&(g as u32));
                    if !exact && self.scale[g] == scale {
                        if let Some(sum) = self.sum[g].checked_add(m) {
                            self.sum[g] = sum;
                            self.n[g] += 1;
                            self.max_scale_count[g] += 1;
                            return;
                        }
                    }
                    self.add_sum(g, m, 1, scale);
                });
            }
        }
    }

    /// Adds `sum`, the sum of `n` values of display scale `scale`, to group `g`: the
    /// state `n` single adds leave.
    fn add_sum(&mut self, g: usize, sum: i128, n: i64, scale: u16) {
        let exact = self.exact.contains_key(&(g as u32));
        if !exact {
            let cur = self.scale[g];
            let fast = if scale == cur {
                self.sum[g].checked_add(sum).map(|s| (s, cur, self.max_scale_count[g] + n))
            } else if scale > cur {
                // The group's sum moves to the new, larger scale (its count restarts).
                pow10((scale - cur) as u32)
                    .and_then(|p| wide_mul(self.sum[g], p))
                    .and_then(|s| s.checked_add(sum))
                    .map(|s| (s, scale, n))
            } else {
                pow10((cur - scale) as u32)
                    .and_then(|p| wide_mul(sum, p))
                    .and_then(|x| self.sum[g].checked_add(x))
                    .map(|s| (s, cur, self.max_scale_count[g]))
            };
            if let Some((s, new_scale, count)) = fast {
                self.sum[g] = s;
                self.scale[g] = new_scale;
                self.max_scale_count[g] = count;
                self.n[g] += n;
                return;
            }
        }
        let state = (self.sum[g], self.scale[g], self.n[g], self.max_scale_count[g]);
        let e = self.exact.entry(g as u32).or_insert_with(|| fast_as_exact(state));
        e.add_n(&Num::Fin { m: sum, scale }.to_stored(), n);
    }

    /// Adds m / 10^scale to group `g`'s 128-bit sum; false (nothing changed) if the sum
    /// would not fit.
    #[inline]
    fn add_fast(&mut self, g: usize, m: i128, scale: u16) -> bool {
        let (sum, cur) = (self.sum[g], self.scale[g]);
        let (sum, new_scale, count) = if scale > cur {
            let Some(sum) = pow10((scale - cur) as u32).and_then(|p| wide_mul(sum, p)) else {
                return false;
            };
            (sum, scale, 1)
        } else {
            (sum, cur, self.max_scale_count[g] + (scale == cur) as i64)
        };
        let m = if scale < new_scale {
            match pow10((new_scale - scale) as u32).and_then(|p| wide_mul(m, p)) {
                Some(m) => m,
                None => return false,
            }
        } else {
            m
        };
        let Some(sum) = sum.checked_add(m) else { return false };
        self.sum[g] = sum;
        self.scale[g] = new_scale;
        self.max_scale_count[g] = count;
        self.n[g] += 1;
        true
    }

    /// Adds a value to group `g`'s exact sum (moving the group there first); false for
    /// bytes that are no numeric.
    fn add_exact(&mut self, g: usize, v: &NumVal) -> bool {
        let state = (self.sum[g], self.scale[g], self.n[g], self.max_scale_count[g]);
        let exact = self.exact.entry(g as u32).or_insert_with(|| fast_as_exact(state));
        match v {
            NumVal::Small(n) => exact.add(&n.to_stored()),
            NumVal::Big(b) => exact.add(b),
        }
    }

    /// Group `g`'s state as numeric_avg_accum keeps it.
    fn state(&self, g: usize) -> std::borrow::Cow<'_, DecimalSum> {
        match self.exact.get(&(g as u32)) {
            Some(e) => std::borrow::Cow::Borrowed(e),
            None => std::borrow::Cow::Owned(fast_as_exact((
                self.sum[g],
                self.scale[g],
                self.n[g],
                self.max_scale_count[g],
            ))),
        }
    }
}

/// A fast state (sum, scale, count, max-scale count) as the exact one.
fn fast_as_exact((sum, scale, n, max_scale_count): (i128, u16, i64, i64)) -> DecimalSum {
    let mut exact = DecimalSum::default();
    if n > 0 {
        exact.add(&Num::Fin { m: sum, scale }.to_stored());
        exact.n = n;
        exact.max_scale_count = max_scale_count;
    }
    exact
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(m: i128, scale: u16) -> NumVal {
        NumVal::Small(Num::Fin { m, scale })
    }

    fn fold(d: &mut Decimal, values: &[NumVal], gids: &[u32]) {
        let sel: Vec<u32> = (0..values.len() as u32).collect();
        d.fold_numeric(&NumVec::Rows(values.to_vec()), None, &sel, Gids::Each(gids)).unwrap();
    }

    fn text(o: Output) -> String {
        match o {
            Output::NumericText { text, .. } => text,
            Output::NumericStored(b) | Output::NumericStoredAvg { bytes: b, .. } => {
                Num::from_stored(&b).unwrap().text()
            }
            other => panic!("{other:?}"),
        }
    }

    /// Folds the products of `x` and `y` (scales 2 and 2) both ways: as
    /// `fold_products_one` and as the products' values folded one by one.
    fn products_both_ways(x: &[i64], y: &[i64], valid: Option<&[bool]>, sel: &[u32]) -> (Decimal, Decimal) {
        let mut fast = Decimal::new(false);
        fast.resize(1);
        assert!(fast.fold_products_one(0, x, y, 4, valid, sel));
        let mut slow = Decimal::new(false);
        slow.resize(1);
        let values: Vec<NumVal> = x.iter().zip(y).map(|(&a, &b)| fin(a as i128 * b as i128, 4)).collect();
        slow.fold_numeric(&NumVec::Rows(values), valid, sel, Gids::Same(0)).unwrap();
        (fast, slow)
    }

    #[test]
    fn products_fold_as_their_values() {
        let x: Vec<i64> = (0..2048).map(|i| i * 37 % 10_000 - 300).collect();
        let y: Vec<i64> = (0..2048).map(|i| i % 11).collect();
        let valid: Vec<bool> = (0..2048).map(|i| i % 7 != 3).collect();
        let some: Vec<u32> = (0..2048).filter(|i| i % 5 == 0).collect();
        let all: Vec<u32> = (0..2048).collect();
        for (valid, sel) in
            [(None, &all), (Some(&valid[..]), &all), (Some(&valid[..]), &some), (None, &vec![])]
        {
            let (fast, slow) = products_both_ways(&x, &y, valid, sel);
            assert_eq!(fast.result(0), slow.result(0));
            assert_eq!(fast.partial_state(0), slow.partial_state(0));
        }
        // No row selected: the sum stays NULL.
        assert_eq!(products_both_ways(&x, &y, None, &[]).0.result(0), Output::Null);
        // Products at the ends of 64 bits are exact in 128.
        let x = [i64::MAX, i64::MIN, i64::MIN, -1];
        let y = [i64::MAX, i64::MIN, i64::MAX, i64::MIN];
        let (fast, slow) = products_both_ways(&x, &y, None, &[0, 2, 3]);
        assert_eq!(text(fast.result(0)), text(slow.result(0)));
        // A sum past 128 bits is left to the caller, with nothing folded.
        let mut d = Decimal::new(false);
        d.resize(1);
        assert!(!d.fold_products_one(0, &[i64::MIN; 2], &[i64::MIN; 2], 4, None, &[0, 1]));
        assert_eq!(d.result(0), Output::Null);
    }

    #[test]
    fn sums_take_the_largest_scale() {
        let mut d = Decimal::default();
        d.resize(2);
        // Group 0: 1.5 + 2.25 + 3 = 6.75; group 1: -0.10 + 0.1 = 0.00.
        fold(&mut d, &[fin(15, 1), fin(225, 2), fin(-10, 2), fin(3, 0), fin(1, 1)], &[0, 0, 1, 0, 1]);
        assert_eq!(text(d.result(0)), "6.75");
        assert_eq!(text(d.result(1)), "0.00");
        // The same state as the exact sum keeps (numeric_avg_serialize's bytes).
        let mut exact = DecimalSum::default();
        for v in [fin(15, 1), fin(225, 2), fin(3, 0)] {
            let NumVal::Small(n) = v else { unreachable!() };
            exact.add(&n.to_stored());
        }
        assert_eq!(d.partial_state(0), Output::Bytea(exact.serialized()));
        assert_eq!(d.result(1), Output::NumericStored(Num::Fin { m: 0, scale: 2 }.to_stored()));
        assert_eq!(text(d.result(1)), "0.00");
    }

    #[test]
    fn overflow_and_specials_move_a_group_to_the_exact_sum() {
        let mut d = Decimal::new(true);
        d.resize(3);
        let big = i128::MAX / 2 + 1;
        fold(
            &mut d,
            &[fin(big, 0), fin(5, 1), fin(big, 0), fin(1, 0), NumVal::Small(Num::PosInf), fin(7, 0)],
            &[0, 1, 0, 2, 2, 1],
        );
        // 2 * (2^126) = 2^127: beyond i128, exact.
        let expected = (i128::MAX as u128 + 1).to_string();
        assert_eq!(d.result(0), Output::NumericText { text: expected, divide_by: Some(2) });
        // A fast group: its sum's stored bytes, and the count to divide by.
        let bytes = Num::Fin { m: 75, scale: 1 }.to_stored();
        assert_eq!(d.result(1), Output::NumericStoredAvg { bytes, n: 2 });
        // An infinity: the sum is Infinity, not divided.
        assert_eq!(d.result(2), Output::NumericText { text: "Infinity".into(), divide_by: None });
    }

    #[test]
    fn scaled_vectors_fold_like_rows() {
        let m = vec![150, 225, -10, i128::MAX - 5, 7];
        let sel = [0, 1, 2, 3, 4];
        let gids = [0, 0, 1, 2, 2];
        let mut scaled = Decimal::new(false);
        let mut rows = Decimal::new(false);
        for d in [&mut scaled, &mut rows] {
            d.resize(3);
            // An earlier vector at scale 1 in group 0.
            d.fold_numeric(&NumVec::Rows(vec![fin(5, 1)]), None, &[0], Gids::Same(0)).unwrap();
        }
        scaled
            .fold_numeric(&NumVec::Scaled { m: m.clone(), scale: 2 }, None, &sel, Gids::Each(&gids))
            .unwrap();
        let as_rows = NumVec::Rows(m.iter().map(|&m| fin(m, 2)).collect());
        rows.fold_numeric(&as_rows, None, &sel, Gids::Each(&gids)).unwrap();
        for g in 0..3 {
            assert_eq!(scaled.result(g), rows.result(g));
            assert_eq!(scaled.partial_state(g), rows.partial_state(g));
        }
        // 0.5 + 1.50 + 2.25 = 4.25; group 2 left 128 bits.
        assert_eq!(text(scaled.result(0)), "4.25");
        let total = i128::MAX as u128 + 2;
        assert_eq!(text(scaled.result(2)), format!("{}.{:02}", total / 100, total % 100));
    }

    #[test]
    fn vectors_of_64_bit_mantissas_fold_like_rows() {
        // Few groups (summed per vector first) and many (row by row); earlier vectors
        // at a smaller and a larger scale; a group that leaves 128 bits; NULLs.
        for groups in [3usize, LOCAL_GROUPS + 5] {
            let n = 3000;
            let m: Vec<i64> = (0..n as i64)
                .map(|i| if i % 50 == 0 { i64::MAX - i } else { i * 7919 % 100_000 - 40_000 })
                .collect();
            let valid: Vec<bool> = (0..n).map(|i| i % 17 != 0).collect();
            let sel: Vec<u32> = (0..n as u32).filter(|r| r % 5 != 1).collect();
            let gids: Vec<u32> = sel.iter().map(|&r| r % groups as u32).collect();
            let mut fast = Decimal::new(true);
            let mut rows = Decimal::new(true);
            for d in [&mut fast, &mut rows] {
                d.resize(groups);
                let earlier = vec![fin(5, 1), fin(7, 3), fin(i128::MAX - 2, 2)];
                d.fold_numeric(&NumVec::Rows(earlier), None, &[0, 1, 2], Gids::Each(&[0, 1, 2])).unwrap();
            }
            for _ in 0..2 {
                let scaled = NumVec::Scaled64 { m: m.clone(), scale: 2 };
                fast.fold_numeric(&scaled, Some(&valid), &sel, Gids::Each(&gids)).unwrap();
                let as_rows = NumVec::Rows(m.iter().map(|&m| fin(m as i128, 2)).collect());
                rows.fold_numeric(&as_rows, Some(&valid), &sel, Gids::Each(&gids)).unwrap();
            }
            for g in 0..groups {
                assert_eq!(fast.result(g), rows.result(g), "group {g} of {groups}");
                assert_eq!(fast.partial_state(g), rows.partial_state(g), "group {g} of {groups}");
            }
            // Without groups.
            let mut one = Decimal::new(false);
            let mut one_rows = Decimal::new(false);
            for d in [&mut one, &mut one_rows] {
                d.resize(1);
            }
            one.fold_numeric(&NumVec::Scaled64 { m: m.clone(), scale: 3 }, Some(&valid), &sel, Gids::Same(0))
                .unwrap();
            let as_rows = NumVec::Rows(m.iter().map(|&m| fin(m as i128, 3)).collect());
            one_rows.fold_numeric(&as_rows, Some(&valid), &sel, Gids::Same(0)).unwrap();
            assert_eq!(one.result(0), one_rows.result(0));
            assert_eq!(one.partial_state(0), one_rows.partial_state(0));
        }
    }

    #[test]
    fn empty_groups_are_null() {
        let mut d = Decimal::default();
        d.resize(1);
        assert_eq!(d.result(0), Output::Null);
    }
}
