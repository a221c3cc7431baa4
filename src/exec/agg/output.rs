//! What an aggregate gives out for a group, before it is a Datum: its final result, or
//! under a Gather its transition state for core's Finalize Aggregate. Pure; the node
//! makes the Datum (`exec::agg::datum`).

use crate::exec::expr::num::Num;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::zonemap::CmpOp;

/// The final functions over float8_accum's {N, Sx, Sxx}.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum MomentsResult {
    /// float8_avg: Sx / N.
    #[default]
    Avg,
    /// float8_var_pop: Sxx / N.
    VarPop,
    /// float8_var_samp: Sxx / (N - 1), NULL for N <= 1.
    VarSamp,
    /// float8_stddev_pop: sqrt(Sxx / N).
    StddevPop,
    /// float8_stddev_samp: sqrt(Sxx / (N - 1)), NULL for N <= 1.
    StddevSamp,
}

#[derive(Debug, PartialEq)]
pub enum Output<'a> {
    Null,
    Int8(i64),
    Float8(f64),
    Bool(bool),
    /// A value of the output column's own type (float4, an integer-like type, text).
    Value(PointValue<'a>),
    Numeric(i128),
    /// numeric_div(sum, n): the final step of avg over integers.
    NumericAvg {
        sum: i128,
        n: i64,
    },
    /// The numeric `text` reads as, divided by `divide_by` if given (avg of numeric).
    NumericText {
        text: String,
        divide_by: Option<i64>,
    },
    /// A numeric, its stored bytes (the payload of its varlena).
    NumericStored(Vec<u8>),
    /// numeric_div(the numeric of these stored bytes, n): avg of numeric.
    NumericStoredAvg {
        bytes: Vec<u8>,
        n: i64,
    },
    /// An int8[] state (int4_avg_accum's {count, sum}).
    Int8Array([i64; 2]),
    /// A float8[] state (float8_accum's {N, Sx, Sxx}).
    Float8Array([f64; 3]),
    /// An internal state, serialized as its serialize function writes it.
    Bytea(Vec<u8>),
    /// var_pop/var_samp/stddev_pop/stddev_samp of integers or numeric: core's final
    /// function on the NumericAggState of these numeric_serialize bytes.
    NumericVariance {
        state: Vec<u8>,
        result: MomentsResult,
    },
}

/// Whether a group whose aggregate gave `output` may pass the HAVING test `aggregate
/// cmp value` (`spec::HavingTest`): false only where it clearly fails. NULL never
/// passes (the comparison operators are strict); a number is compared with a margin
/// that covers its conversion to f64; anything else, NaN included, may pass. Core's
/// HAVING checks the groups kept exactly.
pub fn may_pass(output: &Output, cmp: CmpOp, value: f64) -> bool {
    let numeric = |b: &[u8]| match Num::from_stored(b) {
        Some(Num::Fin { m, scale }) => Some(m as f64 / 10f64.powi(i32::from(scale))),
        Some(Num::PosInf) => Some(f64::INFINITY),
        Some(Num::NegInf) => Some(f64::NEG_INFINITY),
        _ => None,
    };
    let v = match output {
        Output::Null => return false,
        Output::Int8(x) => Some(*x as f64),
        Output::Float8(f) => Some(*f),
        Output::Numeric(m) => Some(*m as f64),
        Output::NumericAvg { sum, n } => Some(*sum as f64 / *n as f64),
        Output::NumericStored(b) => numeric(b),
        Output::NumericStoredAvg { bytes, n } => numeric(bytes).map(|v| v / *n as f64),
        Output::NumericText { text, divide_by } => {
            text.parse::<f64>().ok().map(|v| v / divide_by.map_or(1.0, |n| n as f64))
        }
        Output::Value(PointValue::Int(x)) => Some(*x as f64),
        Output::Value(PointValue::Float64(f)) => Some(*f),
        Output::Value(PointValue::Float32(f)) => Some(f64::from(*f)),
        _ => None,
    };
    let Some(v) = v.filter(|v| !v.is_nan()) else { return true };
    if value.is_nan() {
        return true;
    }
    // Infinities compare exactly (a margin around them is NaN or infinite).
    let margin = if v.is_finite() && value.is_finite() {
        1e-9 * v.abs().max(value.abs()) + f64::MIN_POSITIVE
    } else {
        0.0
    };
    match cmp {
        CmpOp::Lt => v < value + margin,
        CmpOp::Le => v <= value + margin,
        CmpOp::Eq => (v - value).abs() <= margin,
        CmpOp::Ge => v >= value - margin,
        CmpOp::Gt => v > value - margin,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::numeric::stored_literal;

    #[test]
    fn having_drops_only_groups_that_clearly_fail() {
        // sum(l_quantity) > 300: 300.00 fails exactly, but is kept for core to decide.
        assert!(may_pass(&Output::NumericStored(stored_literal("300.01")), CmpOp::Gt, 300.0));
        assert!(may_pass(&Output::NumericStored(stored_literal("300.00")), CmpOp::Gt, 300.0));
        assert!(!may_pass(&Output::NumericStored(stored_literal("299.99")), CmpOp::Gt, 300.0));
        assert!(!may_pass(&Output::Null, CmpOp::Ge, 0.0));
        assert!(may_pass(&Output::Int8(10), CmpOp::Eq, 10.0));
        assert!(!may_pass(&Output::Int8(11), CmpOp::Le, 10.0));
        assert!(may_pass(&Output::NumericAvg { sum: 7, n: 2 }, CmpOp::Lt, 3.6));
        assert!(!may_pass(&Output::NumericAvg { sum: 7, n: 2 }, CmpOp::Lt, 3.4));
        // NaN (greater than every number in PostgreSQL) and what is not a number stay.
        assert!(may_pass(&Output::Float8(f64::NAN), CmpOp::Lt, 1.0));
        assert!(may_pass(&Output::NumericStored(stored_literal("NaN")), CmpOp::Lt, 1.0));
        assert!(may_pass(&Output::Bool(false), CmpOp::Gt, 1.0));
        assert!(!may_pass(&Output::Float8(f64::NEG_INFINITY), CmpOp::Gt, -1e300));
        assert!(may_pass(&Output::Float8(f64::INFINITY), CmpOp::Gt, 1e300));
        assert!(may_pass(&Output::Float8(f64::INFINITY), CmpOp::Ge, f64::INFINITY));
        assert!(!may_pass(&Output::Float8(f64::INFINITY), CmpOp::Gt, f64::INFINITY));
        assert!(!may_pass(&Output::Int8(5), CmpOp::Gt, f64::INFINITY));
    }
}

/// What an aggregate gives for a group of no rows (a LEFT JOIN's row without a match,
/// in an eagerly aggregated join): the counts 0, every other aggregate NULL, as core's
/// final functions give over an empty or all-NULL input.
pub fn of_no_rows(func: super::func::AggFunc) -> Output<'static> {
    use super::func::AggFunc::*;
    match func {
        CountStar | Count | CountDistinct => Output::Int8(0),
        Sum | Avg | Min | Max | BoolAnd | BoolOr | VarPop | VarSamp | StddevPop | StddevSamp => Output::Null,
    }
}

#[cfg(test)]
mod no_rows_tests {
    use super::{of_no_rows, Output};
    use crate::exec::agg::func::AggFunc;

    #[test]
    fn counts_are_zero_and_the_rest_null() {
        assert_eq!(of_no_rows(AggFunc::Count), Output::Int8(0));
        assert_eq!(of_no_rows(AggFunc::CountDistinct), Output::Int8(0));
        assert_eq!(of_no_rows(AggFunc::Sum), Output::Null);
        assert_eq!(of_no_rows(AggFunc::StddevSamp), Output::Null);
    }
}
