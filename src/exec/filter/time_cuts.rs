//! Cross-type datetime comparisons (`date_col < timestamp '…'`, `tstz_col >= date '…'`)
//! turned into comparisons of the column's own stored integers. Core compares by
//! converting one side (`date_cmp_timestamp_internal` and its kin, honouring the session
//! TimeZone, infinities and overflow); as a function of the column value that comparison
//! never decreases, so the column values below an operand are exactly those below a cut:
//! the least column value that is not below it. `operands` finds the cuts with
//! PostgreSQL's own comparison, once per scan start; this module searches the column's
//! domain for them and turns them into tests. Pure.

use super::{Filter, Test};
use crate::storage::format::zonemap::{Bound, CmpOp};

/// A column type of the datetime btree family, in its stored form (integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeType {
    Date,
    Timestamp,
    TimestampTz,
}

/// DATEVAL_NOBEGIN / DATEVAL_NOEND, and the valid finite dates [MIN_DATE, END_DATE)
/// (days from 2000-01-01: Julian day 0 up to DATE_END_JULIAN).
const DATE_NOBEGIN: i64 = i32::MIN as i64;
const DATE_NOEND: i64 = i32::MAX as i64;
const MIN_DATE: i64 = -2_451_545;
const END_DATE: i64 = 2_147_483_494 - 2_451_545;
/// DT_NOBEGIN / DT_NOEND, and the valid finite timestamps [MIN_TIMESTAMP, END_TIMESTAMP)
/// (microseconds from 2000-01-01).
const TS_NOBEGIN: i64 = i64::MIN;
const TS_NOEND: i64 = i64::MAX;
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;

impl TimeType {
    pub fn code(self) -> u8 {
        match self {
            TimeType::Date => 0,
            TimeType::Timestamp => 1,
            TimeType::TimestampTz => 2,
        }
    }

    pub fn from_code(code: u8) -> Option<TimeType> {
        [TimeType::Date, TimeType::Timestamp, TimeType::TimestampTz].get(code as usize).copied()
    }

    /// -infinity, the least and the greatest valid finite value, +infinity.
    fn domain(self) -> [i64; 4] {
        match self {
            TimeType::Date => [DATE_NOBEGIN, MIN_DATE, END_DATE - 1, DATE_NOEND],
            _ => [TS_NOBEGIN, MIN_TIMESTAMP, END_TIMESTAMP - 1, TS_NOEND],
        }
    }
}

/// The least value of a `column` column for which `reached` holds, None if it holds for
/// none; `reached` must never turn false again as values grow (it is asked about
/// -infinity, valid finite values and +infinity only, some 70 times at most).
pub fn first_reached(column: TimeType, mut reached: impl FnMut(i64) -> bool) -> Option<i64> {
    let [neg_inf, min, max, pos_inf] = column.domain();
    if reached(neg_inf) {
        return Some(neg_inf);
    }
    if !reached(max) {
        return reached(pos_inf).then_some(pos_inf);
    }
    // reached(max) holds: search [min, max] for the first value where it does.
    let (mut lo, mut hi) = (min, max);
    while lo < hi {
        // The halfway point without overflow (the timestamp domain spans more than i64).
        let mid = ((lo as i128 + hi as i128) >> 1) as i64;
        if reached(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// The cuts of an operand in a column's domain: the least column value not below it
/// (`lower`) and the least above it (`upper`); None: no such value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cuts {
    pub lower: Option<i64>,
    pub upper: Option<i64>,
}

impl Cuts {
    /// The cuts for an operand that `cmp(c)` (column value `c` against it, core's sign)
    /// compares with.
    pub fn find(column: TimeType, mut cmp: impl FnMut(i64) -> i32) -> Cuts {
        Cuts { lower: first_reached(column, |c| cmp(c) >= 0), upper: first_reached(column, |c| cmp(c) > 0) }
    }

    /// The test `column op operand` (`op` None: `<>`) on attribute `att`, in the column's
    /// own integers: below the operand is below `lower`, not above it below `upper`.
    pub fn filter(&self, att: usize, op: Option<CmpOp>) -> Filter {
        let below = |cut: Option<i64>| match cut {
            Some(v) => Filter::Test { att, test: Test::Compare(CmpOp::Lt, Bound::Int(v)) },
            None => Filter::Test { att, test: Test::IsNotNull },
        };
        let at_least = |cut: Option<i64>| match cut {
            Some(v) => Filter::Test { att, test: Test::Compare(CmpOp::Ge, Bound::Int(v)) },
            None => Filter::Const(false),
        };
        match op {
            Some(CmpOp::Lt) => below(self.lower),
            Some(CmpOp::Le) => below(self.upper),
            Some(CmpOp::Ge) => at_least(self.lower),
            Some(CmpOp::Gt) => at_least(self.upper),
            Some(CmpOp::Eq) => match (self.lower, self.upper) {
                (None, _) => Filter::Const(false),
                (Some(l), Some(u)) if l == u => Filter::Const(false),
                (l, u) => Filter::And(vec![at_least(l), below(u)]),
            },
            None => match (self.lower, self.upper) {
                (Some(l), Some(u)) if l == u => Filter::Test { att, test: Test::IsNotNull },
                (None, _) => Filter::Test { att, test: Test::IsNotNull },
                (l, None) => below(l),
                (l, u) => Filter::Or(vec![below(l), at_least(u)]),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::filter::kernels::tests::{ints, run};

    const DAY: i64 = 86_400_000_000;
    const HOUR: i64 = 3_600_000_000;
    /// 294277-01-01, the first date past every timestamp (TIMESTAMP_END_JULIAN).
    const TIMESTAMP_END_DATE: i64 = 109_203_528 - 2_451_545;

    /// date_cmp_timestamp_internal for finite dates, infinities and overflow.
    fn date_vs_timestamp(d: i64, t: i64) -> i32 {
        let dt = match d {
            DATE_NOBEGIN => TS_NOBEGIN,
            DATE_NOEND => TS_NOEND,
            d if d >= TIMESTAMP_END_DATE => return if t == TS_NOEND { -1 } else { 1 },
            d => d * DAY,
        };
        dt.cmp(&t) as i32
    }

    /// Local midnights of America/New_York around 2024-03-10 (EST to EDT) and 2024-11-03
    /// (back), as `SET TimeZone = 'America/New_York'; SELECT extract(epoch from
    /// d::timestamptz)` gives them (in microseconds from 2000-01-01): -5 h, then -4 h.
    fn ny_midnight(d: i64) -> i64 {
        // 2024-03-10 is day 8835 from 2000-01-01; 2024-11-03 is 9073.
        let offset = if (8836..9074).contains(&d) { 4 * HOUR } else { 5 * HOUR };
        d * DAY + offset
    }

    fn check(column: TimeType, values: &[i64], cmp: impl Fn(i64) -> i32 + Copy) {
        let cuts = Cuts::find(column, cmp);
        let col = [ints(&values.iter().map(|v| Some(*v)).collect::<Vec<_>>())];
        let ops = [Some(CmpOp::Lt), Some(CmpOp::Le), Some(CmpOp::Eq), Some(CmpOp::Ge), Some(CmpOp::Gt), None];
        for op in ops {
            let want: Vec<u32> = (0..values.len() as u32)
                .filter(|&i| {
                    let c = cmp(values[i as usize]);
                    match op {
                        Some(CmpOp::Lt) => c < 0,
                        Some(CmpOp::Le) => c <= 0,
                        Some(CmpOp::Eq) => c == 0,
                        Some(CmpOp::Ge) => c >= 0,
                        Some(CmpOp::Gt) => c > 0,
                        None => c != 0,
                    }
                })
                .collect();
            assert_eq!(run(&cuts.filter(0, op), &col), want, "{op:?} {cuts:?}");
        }
    }

    fn dates() -> Vec<i64> {
        vec![
            DATE_NOBEGIN,
            MIN_DATE,
            -1,
            0,
            1,
            8834,
            8835,
            8836,
            9072,
            9073,
            9074,
            300_000_000,
            END_DATE - 1,
            DATE_NOEND,
        ]
    }

    #[test]
    fn date_column_against_timestamps() {
        for t in [TS_NOBEGIN, MIN_TIMESTAMP, -1, 0, 1, DAY - 1, DAY, DAY + 1, END_TIMESTAMP - 1, TS_NOEND] {
            check(TimeType::Date, &dates(), |d| date_vs_timestamp(d, t));
        }
        // l_shipdate <= date '1998-12-01' - interval '90' day: 1998-09-02 00:00 is day -484.
        let cuts = Cuts::find(TimeType::Date, |d| date_vs_timestamp(d, -484 * DAY));
        assert_eq!(cuts, Cuts { lower: Some(-484), upper: Some(-483) });
        let cuts = Cuts::find(TimeType::Date, |d| date_vs_timestamp(d, -484 * DAY + 1));
        assert_eq!(cuts, Cuts { lower: Some(-483), upper: Some(-483) });
        // Past the last timestamp: only +infinity dates are above, and the big dates equal nothing.
        let cuts = Cuts::find(TimeType::Date, |d| date_vs_timestamp(d, END_TIMESTAMP - 1));
        assert_eq!(cuts.upper, Some(TIMESTAMP_END_DATE));
        let cuts = Cuts::find(TimeType::Date, |d| date_vs_timestamp(d, TS_NOEND));
        assert_eq!(cuts, Cuts { lower: Some(DATE_NOEND), upper: None });
    }

    #[test]
    fn date_column_against_timestamptz_across_dst() {
        for t in [
            ny_midnight(8835) - 1,
            ny_midnight(8835),
            ny_midnight(8836),
            ny_midnight(8836) - 1,
            ny_midnight(9073),
            ny_midnight(9074) - 1,
            ny_midnight(9074),
            8835 * DAY + 2 * HOUR,
        ] {
            check(TimeType::Date, &dates(), |d| match d {
                DATE_NOBEGIN => -1,
                // Past the timestamps (date2timestamptz_opt_overflow's overflow).
                d if d >= TIMESTAMP_END_DATE => 1,
                d => ny_midnight(d).cmp(&t) as i32,
            });
        }
    }

    #[test]
    fn timestamp_columns_against_a_converted_operand() {
        let values = [TS_NOBEGIN, MIN_TIMESTAMP, -DAY, -1, 0, 1, DAY, END_TIMESTAMP - 1, TS_NOEND];
        for t in [TS_NOBEGIN, MIN_TIMESTAMP, -1, 0, 1, END_TIMESTAMP - 1, TS_NOEND] {
            check(TimeType::TimestampTz, &values, |c| c.cmp(&t) as i32);
        }
        // A date beyond the timestamps: above every finite value, below +infinity.
        check(TimeType::Timestamp, &values, |c| if c == TS_NOEND { 1 } else { -1 });
        let cuts = Cuts::find(TimeType::Timestamp, |c| if c == TS_NOEND { 1 } else { -1 });
        assert_eq!(cuts, Cuts { lower: Some(TS_NOEND), upper: Some(TS_NOEND) });
    }

    #[test]
    fn codes_round_trip() {
        for t in [TimeType::Date, TimeType::Timestamp, TimeType::TimestampTz] {
            assert_eq!(TimeType::from_code(t.code()), Some(t));
        }
        assert_eq!(TimeType::from_code(3), None);
    }
}
