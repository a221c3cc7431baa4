//! What an aggregate gives out for a group, before it is a Datum: its final result, or
//! under a Gather its transition state for core's Finalize Aggregate. Pure; the node
//! makes the Datum (`exec::agg::datum`).

use super::kernels::sum_float::MomentsResult;
use crate::storage::format::encoding::point::PointValue;

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
