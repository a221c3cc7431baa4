//! The aggregates the fold computes and the input types it reads: the keys of the
//! aggregate table (`fold::Acc::new`). Pure.

/// The aggregate functions the fold computes. Each matches its built-in namesake's
/// transition and final functions exactly (see `fold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Avg,
    Min,
    Max,
    BoolAnd,
    BoolOr,
    /// var_pop, var_samp (variance), stddev_pop, stddev_samp (stddev): of float4/float8
    /// float8_accum's state, as avg(float8) keeps it; of int2/int4/int8/numeric exact
    /// sums of X and X*X (`kernels::variance`).
    VarPop,
    VarSamp,
    StddevPop,
    StddevSamp,
    /// count(DISTINCT col): the distinct non-NULL values, by the type's equality.
    CountDistinct,
}

/// The aggregated column's type, as the fold reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputType {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    /// Another type stored as an integer in its btree order (date, timestamp,
    /// timestamptz, time, oid): min and max only.
    OrderedInt,
    Bool,
    /// Byte strings compared under the aggregate's collation (text, varchar): min and
    /// max only.
    Text,
    /// count(*): no column.
    None,
    /// numeric, decoded as scaled integers: sum, avg, min and max.
    Numeric,
    /// bpchar, compared without trailing spaces under the aggregate's collation: min
    /// and max only.
    Bpchar,
}
