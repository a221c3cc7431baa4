//! Pushed filters: WHERE clauses a ColumnarScan evaluates itself, on decoded vectors,
//! once. Pure Rust (no PostgreSQL calls; `make lint` checks), unit-tested with `cargo
//! test`.
//!
//! - `Filter` (here): a tree of tests on columns, with their values resolved, in the
//!   physical form columns are stored in (integers widened to i64, floats, bytes).
//!   NOT never appears: the planner pushes negations down to the tests (De Morgan holds
//!   in SQL's three-valued logic, and a filter keeps only rows whose qual is true).
//! - `plan`: the form the plan carries: the same tree with operands that name
//!   expressions the executor evaluates once when the scan starts (constants,
//!   parameters, stable expressions), resolved into a `Filter` by `FilterPlan::resolve`.
//! - `kernels`: the tree evaluated on a vector of each column it reads, narrowing a
//!   selection (the row numbers that are left).
//! - `dense`: a comparison tested on every row of a vector (its first test), 64 values
//!   at a time into bit masks.
//! - `zone`: the tree evaluated on zone maps: no row can pass, every row passes, or
//!   the vector must be read.
//! - `time_cuts`: comparisons across date, timestamp and timestamptz turned into
//!   comparisons of the column's own integers.
//! - `like`: `LIKE` patterns with `%` as their only wildcard, matched on bytes.
//! - `scaled`: numeric tests turned into tests on the mantissas of scaled numerics.
//! - `conjunction`: an AND of tests as the scan runs it: a column's tests merged into
//!   one step, integer and mantissa ranges tested in one branch-free pass.
//! - `pushed`: a resolved filter as the reader asks for it (`VectorFilter`).
//! - `join_keys`: a hash join's inner keys tested on the probe side's key column (join
//!   filters), before the pushed filter.
//! - `operands`: the operands' values, evaluated by the executor (the one file here
//!   that calls PostgreSQL).

pub mod arith;
pub mod conjunction;
pub mod dense;
pub mod join_keys;
pub mod kernels;
pub mod like;
pub mod operands;
pub mod plan;
pub mod pushed;
pub mod scaled;
pub mod time_cuts;
pub mod zone;

use crate::storage::format::numeric;
use crate::storage::format::zonemap::{Bound, CmpOp};
use std::collections::HashSet;

/// A test on one column's value. NULL fails every test but `IsNull`.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// `column op value` (btree order: integers, PostgreSQL's float order, bytes).
    Compare(CmpOp, Bound),
    /// `column <> value`.
    NotEqual(Bound),
    /// `column IN (...)` / `column = ANY(array)`: the set's non-NULL values.
    In(ValueSet),
    /// `column NOT IN (...)` / `column <> ALL(array)`, with no NULL in the list (a NULL
    /// makes the test never true: the planner's `resolve` turns it into `Const(false)`).
    NotIn(ValueSet),
    IsNull,
    IsNotNull,
    /// The value's bytes start with these (`LIKE 'prefix%'`).
    Prefix(Vec<u8>),
    /// `column op value` (None: `<>`) on stored `numeric` bytes, in numeric order.
    Numeric(Option<CmpOp>, Vec<u8>),
    /// `column IN (...)` (`true`) or `NOT IN` (`false`) on stored `numeric` bytes.
    NumericIn(NumericSet, bool),
    /// A byte-string test on the value without its trailing spaces (`char(n)`).
    Trimmed(Box<Test>),
    /// `column op other` (None: `<>`) with another attribute's value in the same row,
    /// both integers, both floats or both numerics; NULL on either side fails.
    Columns(Option<CmpOp>, usize),
    /// `column LIKE pattern` (`NOT LIKE` if the flag is false), `%` its only wildcard.
    Like(like::LikePattern, bool),
    /// `column op value` on byte strings in the order of a collation other than "C"
    /// (text ranges under the database's or a column's collation): each value (each
    /// dictionary entry, for a dictionary vector) compared by the collation's own
    /// comparison. Zone maps keep byte order, so they decide nothing for it.
    Collated(CmpOp, Vec<u8>, Collator),
    /// A boolean operator of core's on the value and a constant (`ILIKE`, regular
    /// expressions, `LIKE` with `_` or an escape) is `wanted`: its own function is called
    /// once per dictionary entry for a dictionary vector, per value otherwise.
    Matches(Matcher, bool),
    /// `left op right` with arithmetic on either side (`arith`), over the attributes
    /// the sides read (the test's own `att` is the first of them). It can raise core's
    /// errors, so it runs on exactly the rows the tests before it leave.
    Arith(Box<arith::ArithTest>),
}

/// Core's function of a text operator with its constant right operand, as the executor
/// hands it in (`operands`): the kernels stay free of PostgreSQL calls.
#[derive(Clone)]
pub struct Matcher {
    pub function: u32,
    pub collation: u32,
    call: std::sync::Arc<MatchFn>,
}

type MatchFn = dyn Fn(&[u8]) -> bool + Send + Sync;

impl Matcher {
    pub fn new(
        function: u32,
        collation: u32,
        call: impl Fn(&[u8]) -> bool + Send + Sync + 'static,
    ) -> Matcher {
        Matcher { function, collation, call: std::sync::Arc::new(call) }
    }

    pub fn matches(&self, value: &[u8]) -> bool {
        (self.call)(value)
    }
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        (self.function, self.collation) == (other.function, other.collation)
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Matcher({}, {})", self.function, self.collation)
    }
}

/// A collation's comparison of two strings, as PostgreSQL makes it (`varstr_cmp`),
/// handed in by the executor (`operands`): the kernels stay free of PostgreSQL calls.
#[derive(Clone)]
pub struct Collator {
    pub collation: u32,
    compare: std::sync::Arc<CompareFn>,
}

type CompareFn = dyn Fn(&[u8], &[u8]) -> std::cmp::Ordering + Send + Sync;

impl Collator {
    pub fn new(
        collation: u32,
        compare: impl Fn(&[u8], &[u8]) -> std::cmp::Ordering + Send + Sync + 'static,
    ) -> Collator {
        Collator { collation, compare: std::sync::Arc::new(compare) }
    }

    pub fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        (self.compare)(a, b)
    }
}

impl PartialEq for Collator {
    fn eq(&self, other: &Self) -> bool {
        self.collation == other.collation
    }
}

impl std::fmt::Debug for Collator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Collator({})", self.collation)
    }
}

/// The values of a `numeric` IN list, in numeric order, each once (1.0 and 1.00 are one).
#[derive(Debug, Clone, PartialEq)]
pub struct NumericSet(Vec<Vec<u8>>);

impl NumericSet {
    /// The set of stored numerics `values`; None if one is no numeric.
    pub fn of(values: &[Vec<u8>]) -> Option<NumericSet> {
        if values.iter().any(|v| numeric::parse(v).is_none()) {
            return None;
        }
        let order = |a: &Vec<u8>, b: &Vec<u8>| numeric::cmp_bytes(a, b).unwrap();
        let mut v = values.to_vec();
        v.sort_by(order);
        v.dedup_by(|a, b| order(a, b) == std::cmp::Ordering::Equal);
        Some(NumericSet(v))
    }

    /// Whether stored numeric `x` equals one of the set's (false if `x` is no numeric).
    pub fn contains(&self, x: &[u8]) -> bool {
        let Some(x) = numeric::parse(x) else { return false };
        self.0.binary_search_by(|v| numeric::cmp(&numeric::parse(v).unwrap(), &x)).is_ok()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Values of an IN list, in the form the kernels look them up in.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueSet {
    /// Integers, or floats as their order keys (`float_key`), sorted, no duplicates.
    Keys(Vec<i64>),
    Bytes(HashSet<Vec<u8>>),
}

impl ValueSet {
    /// The set of `values`; all of one kind (the column's).
    pub fn of(values: &[Bound]) -> ValueSet {
        if values.iter().all(|v| matches!(v, Bound::Bytes(_))) && !values.is_empty() {
            let set = values
                .iter()
                .filter_map(|v| match v {
                    Bound::Bytes(b) => Some(b.clone()),
                    _ => None,
                })
                .collect();
            return ValueSet::Bytes(set);
        }
        let mut keys: Vec<i64> = values
            .iter()
            .filter_map(|v| match v {
                Bound::Int(i) => Some(*i),
                Bound::Float(f) => Some(float_key(*f)),
                Bound::Bytes(_) => None,
            })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        ValueSet::Keys(keys)
    }

    pub fn len(&self) -> usize {
        match self {
            ValueSet::Keys(k) => k.len(),
            ValueSet::Bytes(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A filter tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// A test on attribute `att` (0-based).
    Test {
        att: usize,
        test: Test,
    },
    And(Vec<Filter>),
    Or(Vec<Filter>),
    /// A qual known when the scan starts: `x < NULL` is never true.
    Const(bool),
}

impl Filter {
    /// Whether evaluating the filter can raise an error (an `Arith` test in it).
    pub fn may_fail(&self) -> bool {
        match self {
            Filter::Test { test, .. } => matches!(test, Test::Arith(_)),
            Filter::And(children) | Filter::Or(children) => children.iter().any(Filter::may_fail),
            Filter::Const(_) => false,
        }
    }

    /// The attributes the filter reads, sorted, each once.
    pub fn attributes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_attributes(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_attributes(&self, out: &mut Vec<usize>) {
        match self {
            Filter::Test { att, test } => {
                out.push(*att);
                match test {
                    Test::Columns(_, other) => out.push(*other),
                    Test::Arith(a) => out.extend(a.attributes()),
                    _ => {}
                }
            }
            Filter::And(children) | Filter::Or(children) => {
                children.iter().for_each(|c| c.collect_attributes(out))
            }
            Filter::Const(_) => {}
        }
    }
}

/// Whether a value that compares to the other side as `o` passes `cmp` (None: `<>`).
pub fn passes(cmp: Option<CmpOp>, o: std::cmp::Ordering) -> bool {
    cmp.map_or(o.is_ne(), |c| c.holds(o))
}

/// An integer key whose order is PostgreSQL's float order: NaN above +Infinity and
/// equal to itself, -0 equal to +0. Comparing keys compares the floats.
#[inline(always)]
pub fn float_key(x: f64) -> i64 {
    if x.is_nan() {
        return i64::MAX;
    }
    let x = if x == 0.0 { 0.0 } else { x };
    let bits = x.to_bits() as i64;
    // Negative floats order backwards as bit patterns: flip all bits but the sign.
    if bits < 0 {
        bits ^ i64::MAX
    } else {
        bits
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::filter::*;
    use crate::storage::format::zonemap::pg_float_cmp;

    #[test]
    fn float_keys_follow_postgres_order() {
        let values = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            -0.0,
            0.0,
            f64::MIN_POSITIVE,
            2.0,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for a in values {
            for b in values {
                assert_eq!(float_key(a).cmp(&float_key(b)), pg_float_cmp(a, b), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn attributes_are_listed_once() {
        let f = Filter::Or(vec![
            Filter::Test { att: 3, test: Test::IsNull },
            Filter::And(vec![
                Filter::Test { att: 1, test: Test::IsNull },
                Filter::Test { att: 3, test: Test::IsNotNull },
            ]),
        ]);
        assert_eq!(f.attributes(), vec![1, 3]);
    }

    #[test]
    fn value_sets_sort_and_dedup() {
        assert_eq!(ValueSet::of(&[Bound::Int(3), Bound::Int(1), Bound::Int(3)]), ValueSet::Keys(vec![1, 3]));
        let s = ValueSet::of(&[Bound::Bytes(b"a".to_vec()), Bound::Bytes(b"a".to_vec())]);
        assert_eq!(s.len(), 1);
    }
}
