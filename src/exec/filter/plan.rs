//! The pushed filter as a plan carries it: tests whose values are operands, numbered
//! expressions the executor evaluates once when the scan starts (and again on a
//! rescan, when parameters change). `resolve` then makes the `Filter` the kernels run.

use super::arith::ArithTest;
use super::like::LikePattern;
use super::time_cuts::{Cuts, TimeType};
use super::{Filter, NumericSet, Test, ValueSet};
use crate::exec::expr::plan::{Expr, ExprType};
use crate::storage::format::zonemap::{Bound, CmpOp};

#[derive(Debug, Clone, PartialEq)]
pub enum PlanTest {
    /// `column op operand`.
    Compare(CmpOp, usize),
    NotEqual(usize),
    /// `column = ANY(operand)`, the operand an array.
    In(usize),
    /// `column <> ALL(operand)`.
    NotIn(usize),
    IsNull,
    IsNotNull,
    Prefix(Vec<u8>),
    /// `column LIKE pattern` (`matching`) or `NOT LIKE`; `%` the pattern's only wildcard.
    Like {
        pattern: Vec<u8>,
        matching: bool,
    },
    /// `column op operand` (`cmp` None: `<>`) across the datetime types, as core's
    /// cross-type operator compares them: the operand, of type `operand`, resolves to its
    /// cuts in the `column` type's domain (`time_cuts`).
    Across {
        cmp: Option<CmpOp>,
        k: usize,
        column: TimeType,
        operand: TimeType,
    },
    /// `column op operand` (`cmp` None: `<>`) on a `numeric` column, in numeric order.
    Numeric {
        cmp: Option<CmpOp>,
        k: usize,
    },
    /// `column = ANY(operand)` (`any`) or `column <> ALL(operand)` on a `numeric` column.
    NumericIn {
        k: usize,
        any: bool,
    },
    /// A test on a `char(n)` column: values and operands compared with their trailing
    /// spaces stripped, as bpchar's operators compare them.
    Trimmed {
        test: TrimmedTest,
        k: usize,
    },
    /// `column op other` (`cmp` None: `<>`), two integer, float or numeric columns of
    /// this relation (`other` its attribute, 0-based).
    Columns {
        cmp: Option<CmpOp>,
        other: usize,
    },
    /// `extract(field FROM column) op operand` (`part`: `date_part(field, column)`, a
    /// float8; else a numeric), `cmp` None for `<>`, for a field that grows with time
    /// (`ExtractField::grows_with_time`, its code here) of a date or timestamp column: the
    /// operand resolves to its cuts in the column's domain, found with core's function.
    Extract {
        cmp: Option<CmpOp>,
        k: usize,
        column: TimeType,
        field: u8,
        part: bool,
    },
    /// `substring(column FROM 1 FOR chars) = operand` (or `left(column, chars)`; `any`:
    /// `= ANY(operand)`, an array), on bytes under a deterministic collation: a value of
    /// `chars` characters is a prefix test, a shorter one an equality, a longer one never
    /// matches. `utf8`: characters are counted in UTF-8, else one a byte. `trimmed`: the
    /// column is a `char(n)` cast to text, so its trailing spaces are gone first.
    Leading {
        chars: u32,
        k: usize,
        utf8: bool,
        trimmed: bool,
        any: bool,
    },
    /// `column op operand` (`wanted`: true; else its negation) for a text operator whose
    /// function (`function`, under `collation`) the executor calls on the values
    /// (`ILIKE`, `~`, `~*`, `LIKE` with `_` or an escape and their negators).
    Function {
        function: u32,
        k: usize,
        collation: u32,
        wanted: bool,
    },
    /// `column op operand`, a range test on text (`trimmed`: `char(n)`, without trailing
    /// spaces) under `collation`, a deterministic one whose order is not byte order: the
    /// executor hands the operand in with the collation's comparison (`collations`).
    Collated {
        cmp: CmpOp,
        k: usize,
        collation: u32,
        trimmed: bool,
    },
    /// `left op right` (`cmp` None: `<>`), an arithmetic expression on either side,
    /// both of one type (`exec::filter::arith`); the test's `att` is the first column
    /// they read. The executor puts its `ExprEngine` (PostgreSQL's numerics and errors)
    /// in operand `k`'s place; `right` None: operand `k` is the right side, a value of
    /// `left`'s type (a parameter), else it is only a placeholder.
    Arith {
        cmp: Option<CmpOp>,
        left: Box<Expr>,
        right: Option<Box<Expr>>,
        k: usize,
    },
}

/// The tests of a `Trimmed` one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrimmedTest {
    /// `op` (None: `<>`).
    Compare(Option<CmpOp>),
    /// `= ANY` (true) or `<> ALL` (false).
    In(bool),
}

impl TrimmedTest {
    fn code(self) -> u8 {
        match self {
            TrimmedTest::Compare(Some(op)) => OPS.iter().position(|o| *o == op).unwrap() as u8,
            TrimmedTest::Compare(None) => 5,
            TrimmedTest::In(true) => 6,
            TrimmedTest::In(false) => 7,
        }
    }

    fn from_code(code: u8) -> Option<TrimmedTest> {
        Some(match code {
            0..=4 => TrimmedTest::Compare(Some(OPS[code as usize])),
            5 => TrimmedTest::Compare(None),
            6 => TrimmedTest::In(true),
            7 => TrimmedTest::In(false),
            _ => return None,
        })
    }
}

/// `b` without its trailing spaces (bpchar's `bcTruelen`).
pub fn trim_spaces(b: &[u8]) -> &[u8] {
    &b[..b.iter().rposition(|c| *c != b' ').map_or(0, |i| i + 1)]
}

#[derive(Debug, Clone, PartialEq)]
pub enum FilterPlan {
    Test { att: usize, test: PlanTest },
    And(Vec<FilterPlan>),
    Or(Vec<FilterPlan>),
}

/// An operand's value when the scan starts, in the column's physical form.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandValue {
    /// Not known (a parameter, at plan time): its tests resolve to `Const(true)`, so the
    /// filter only ever says less than it would (for zone-map pruning at plan time;
    /// never for execution).
    Unknown,
    Null,
    Value(Bound),
    /// An array's elements (None: a NULL element).
    Array(Vec<Option<Bound>>),
    /// A datetime operand of an `Across` test, as its cuts in the column's domain.
    Cuts(Cuts),
    /// The operand of a `Collated` test with its collation's comparison.
    Collated(Vec<u8>, super::Collator),
    /// The operand of a `Function` test, bound to the function.
    Matcher(super::Matcher),
    /// The operand of an `Arith` test: what it computes with, and its value.
    Engine(super::arith::ExprEngine, Box<OperandValue>),
}

impl FilterPlan {
    /// The filter for these operand values.
    pub fn resolve(&self, operands: &[OperandValue]) -> Filter {
        match self {
            FilterPlan::Test { att, test } => resolve_test(*att, test, operands),
            FilterPlan::And(children) => junction(children, operands, true),
            FilterPlan::Or(children) => junction(children, operands, false),
        }
    }

    /// The attributes the filter reads, sorted, each once.
    pub fn attributes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.visit(&mut |att, test| {
            out.push(att);
            match test {
                PlanTest::Columns { other, .. } => out.push(*other),
                PlanTest::Arith { left, right, .. } => {
                    left.attributes(&mut out);
                    if let Some(right) = right {
                        right.attributes(&mut out);
                    }
                }
                _ => {}
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many tests the filter has.
    pub fn tests(&self) -> usize {
        let mut n = 0;
        self.visit(&mut |_, _| n += 1);
        n
    }

    fn visit(&self, f: &mut dyn FnMut(usize, &PlanTest)) {
        match self {
            FilterPlan::Test { att, test } => f(*att, test),
            FilterPlan::And(c) | FilterPlan::Or(c) => c.iter().for_each(|c| c.visit(f)),
        }
    }

    /// The filter with each operand number moved up by `first`: a clause's filter, its
    /// operands numbered from 0, placed after the operands of the clauses before it.
    pub fn with_operands_from(&self, first: usize) -> FilterPlan {
        match self {
            FilterPlan::Test { att, test } => {
                let test = match test {
                    PlanTest::Compare(op, k) => PlanTest::Compare(*op, k + first),
                    PlanTest::NotEqual(k) => PlanTest::NotEqual(k + first),
                    PlanTest::In(k) => PlanTest::In(k + first),
                    PlanTest::NotIn(k) => PlanTest::NotIn(k + first),
                    PlanTest::Across { cmp, k, column, operand } => {
                        PlanTest::Across { cmp: *cmp, k: k + first, column: *column, operand: *operand }
                    }
                    PlanTest::Numeric { cmp, k } => PlanTest::Numeric { cmp: *cmp, k: k + first },
                    PlanTest::NumericIn { k, any } => PlanTest::NumericIn { k: k + first, any: *any },
                    PlanTest::Trimmed { test, k } => PlanTest::Trimmed { test: *test, k: k + first },
                    PlanTest::Collated { cmp, k, collation, trimmed } => PlanTest::Collated {
                        cmp: *cmp,
                        k: k + first,
                        collation: *collation,
                        trimmed: *trimmed,
                    },
                    PlanTest::Extract { cmp, k, column, field, part } => PlanTest::Extract {
                        cmp: *cmp,
                        k: k + first,
                        column: *column,
                        field: *field,
                        part: *part,
                    },
                    PlanTest::Leading { chars, k, utf8, trimmed, any } => PlanTest::Leading {
                        chars: *chars,
                        k: k + first,
                        utf8: *utf8,
                        trimmed: *trimmed,
                        any: *any,
                    },
                    PlanTest::Function { function, k, collation, wanted } => PlanTest::Function {
                        function: *function,
                        k: k + first,
                        collation: *collation,
                        wanted: *wanted,
                    },
                    PlanTest::Arith { cmp, left, right, k } => {
                        PlanTest::Arith { cmp: *cmp, left: left.clone(), right: right.clone(), k: k + first }
                    }
                    // No operand: listed, so that a new test with one cannot be missed here.
                    other @ (PlanTest::IsNull
                    | PlanTest::IsNotNull
                    | PlanTest::Prefix(_)
                    | PlanTest::Like { .. }
                    | PlanTest::Columns { .. }) => other.clone(),
                };
                FilterPlan::Test { att: *att, test }
            }
            FilterPlan::And(c) => FilterPlan::And(c.iter().map(|c| c.with_operands_from(first)).collect()),
            FilterPlan::Or(c) => FilterPlan::Or(c.iter().map(|c| c.with_operands_from(first)).collect()),
        }
    }

    /// The operands the filter uses, each once.
    pub fn operands(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_operands(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    fn collect_operands(&self, out: &mut Vec<usize>) {
        match self {
            FilterPlan::Test { test, .. } => match test {
                PlanTest::Compare(_, k)
                | PlanTest::NotEqual(k)
                | PlanTest::In(k)
                | PlanTest::NotIn(k)
                | PlanTest::Across { k, .. }
                | PlanTest::Numeric { k, .. }
                | PlanTest::NumericIn { k, .. }
                | PlanTest::Trimmed { k, .. }
                | PlanTest::Collated { k, .. }
                | PlanTest::Extract { k, .. }
                | PlanTest::Function { k, .. }
                | PlanTest::Arith { k, .. }
                | PlanTest::Leading { k, .. } => out.push(*k),
                _ => {}
            },
            FilterPlan::And(c) | FilterPlan::Or(c) => c.iter().for_each(|c| c.collect_operands(out)),
        }
    }

    /// The operands of `Extract` tests: (operand, column type, field code, part).
    pub fn extractions(&self) -> Vec<(usize, TimeType, u8, bool)> {
        let mut out = Vec::new();
        self.visit(&mut |_, test| {
            if let PlanTest::Extract { k, column, field, part, .. } = test {
                out.push((*k, *column, *field, *part));
            }
        });
        out
    }

    /// The operands of `Function` tests: (operand, function, collation).
    pub fn functions(&self) -> Vec<(usize, u32, u32)> {
        let mut out = Vec::new();
        self.visit(&mut |_, test| {
            if let PlanTest::Function { k, function, collation, .. } = test {
                out.push((*k, *function, *collation));
            }
        });
        out
    }

    /// The operands of `Arith` tests (each the placeholder for its engine).
    pub fn arithmetic(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.visit(&mut |_, test| {
            if let PlanTest::Arith { k, .. } = test {
                out.push(*k);
            }
        });
        out
    }

    /// Whether evaluating the filter can raise an error (an `Arith` test in it).
    pub fn may_fail(&self) -> bool {
        !self.arithmetic().is_empty()
    }

    /// The operands of `Collated` tests: (operand, collation).
    pub fn collations(&self) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        self.visit(&mut |_, test| {
            if let PlanTest::Collated { k, collation, .. } = test {
                out.push((*k, *collation));
            }
        });
        out
    }

    /// The operands that resolve to cuts: (operand, column type, operand type).
    pub fn conversions(&self) -> Vec<(usize, TimeType, TimeType)> {
        let mut out = Vec::new();
        self.visit(&mut |_, test| {
            if let PlanTest::Across { k, column, operand, .. } = test {
                out.push((*k, *column, *operand));
            }
        });
        out
    }
}

/// An AND (`and`) or OR of `children` resolved, constants folded: a child that decides
/// the junction (false for AND, true for OR) decides it, one that cannot is dropped.
fn junction(children: &[FilterPlan], operands: &[OperandValue], and: bool) -> Filter {
    let mut out = Vec::new();
    for c in children {
        match c.resolve(operands) {
            Filter::Const(v) if v != and => return Filter::Const(v),
            Filter::Const(_) => {}
            f => out.push(f),
        }
    }
    match out.len() {
        0 => Filter::Const(and),
        1 => out.pop().unwrap(),
        _ if and => Filter::And(out),
        _ => Filter::Or(out),
    }
}

/// The filter of one test: `Const(false)` when it can never be true (a NULL operand,
/// NOT IN a list holding NULL), `Const(true)` for `x <> ALL('{}')`.
fn resolve_test(att: usize, test: &PlanTest, operands: &[OperandValue]) -> Filter {
    let unknown = |k: &usize| operands[*k] == OperandValue::Unknown;
    match test {
        PlanTest::Compare(_, k)
        | PlanTest::NotEqual(k)
        | PlanTest::In(k)
        | PlanTest::NotIn(k)
        | PlanTest::Across { k, .. }
        | PlanTest::Numeric { k, .. }
        | PlanTest::NumericIn { k, .. }
        | PlanTest::Trimmed { k, .. }
        | PlanTest::Collated { k, .. }
        | PlanTest::Extract { k, .. }
        | PlanTest::Function { k, .. }
        | PlanTest::Arith { k, .. }
        | PlanTest::Leading { k, .. }
            if unknown(k) =>
        {
            return Filter::Const(true)
        }
        _ => {}
    }
    let scalar = |k: usize| match &operands[k] {
        OperandValue::Value(b) => Some(b.clone()),
        _ => None,
    };
    let array = |k: usize| match &operands[k] {
        OperandValue::Array(items) => Some(items),
        _ => None,
    };
    let test = match test {
        PlanTest::Compare(op, k) => scalar(*k).map(|b| Test::Compare(*op, b)),
        PlanTest::NotEqual(k) => scalar(*k).map(Test::NotEqual),
        PlanTest::In(k) => array(*k).and_then(|items| {
            let values: Vec<Bound> = items.iter().flatten().cloned().collect();
            (!values.is_empty()).then(|| Test::In(ValueSet::of(&values)))
        }),
        PlanTest::NotIn(k) => match array(*k) {
            Some(items) if items.is_empty() => return Filter::Const(true),
            Some(items) => {
                items.iter().cloned().collect::<Option<Vec<Bound>>>().map(|v| Test::NotIn(ValueSet::of(&v)))
            }
            None => None,
        },
        PlanTest::IsNull => Some(Test::IsNull),
        PlanTest::IsNotNull => Some(Test::IsNotNull),
        PlanTest::Prefix(p) => Some(Test::Prefix(p.clone())),
        PlanTest::Like { pattern, matching } => Some(Test::Like(LikePattern::new(pattern), *matching)),
        PlanTest::Across { cmp, k, .. } | PlanTest::Extract { cmp, k, .. } => match &operands[*k] {
            OperandValue::Cuts(cuts) => return cuts.filter(att, *cmp),
            // Not converted (a plan-time estimate folds constants only): says less.
            OperandValue::Value(_) => return Filter::Const(true),
            _ => None,
        },
        PlanTest::Numeric { cmp, k } => match scalar(*k) {
            Some(Bound::Bytes(b)) => Some(Test::Numeric(*cmp, b)),
            _ => None,
        },
        PlanTest::NumericIn { k, any } => {
            let Some(items) = array(*k) else { return Filter::Const(false) };
            let bytes = |b: &Bound| match b {
                Bound::Bytes(b) => Some(b.clone()),
                _ => None,
            };
            if *any {
                let values: Option<Vec<Vec<u8>>> = items.iter().flatten().map(bytes).collect();
                values
                    .and_then(|v| NumericSet::of(&v))
                    .filter(|s| !s.is_empty())
                    .map(|s| Test::NumericIn(s, true))
            } else if items.is_empty() {
                return Filter::Const(true);
            } else {
                // A NULL in the list makes NOT IN never true.
                let values: Option<Vec<Vec<u8>>> = items.iter().map(|i| i.as_ref().and_then(bytes)).collect();
                values.and_then(|v| NumericSet::of(&v)).map(|s| Test::NumericIn(s, false))
            }
        }
        PlanTest::Columns { cmp, other } => Some(Test::Columns(*cmp, *other)),
        PlanTest::Leading { chars, k, utf8, trimmed, .. } => {
            let values: Vec<&Vec<u8>> = match &operands[*k] {
                OperandValue::Value(Bound::Bytes(b)) => vec![b],
                OperandValue::Array(items) => items
                    .iter()
                    .flatten()
                    .filter_map(|b| match b {
                        Bound::Bytes(b) => Some(b),
                        _ => None,
                    })
                    .collect(),
                _ => return Filter::Const(false),
            };
            let mut tests: Vec<Filter> = values
                .into_iter()
                .filter_map(|v| {
                    let n = if *utf8 { v.iter().filter(|&&b| b & 0xC0 != 0x80).count() } else { v.len() };
                    let test = match n.cmp(&(*chars as usize)) {
                        std::cmp::Ordering::Equal => Test::Prefix(v.clone()),
                        std::cmp::Ordering::Less => Test::Compare(CmpOp::Eq, Bound::Bytes(v.clone())),
                        std::cmp::Ordering::Greater => return None,
                    };
                    let test = if *trimmed { Test::Trimmed(Box::new(test)) } else { test };
                    Some(Filter::Test { att, test })
                })
                .collect();
            return match tests.len() {
                0 => Filter::Const(false),
                1 => tests.pop().unwrap(),
                _ => Filter::Or(tests),
            };
        }
        PlanTest::Function { k, wanted, .. } => match &operands[*k] {
            OperandValue::Matcher(m) => Some(Test::Matches(m.clone(), *wanted)),
            // Without the function (a plan-time estimate): says less.
            OperandValue::Value(_) => return Filter::Const(true),
            _ => None,
        },
        PlanTest::Arith { cmp, left, right, k } => match &operands[*k] {
            OperandValue::Engine(engine, value) => {
                let right = match (right, &**value) {
                    (Some(right), _) => Some((**right).clone()),
                    (None, OperandValue::Value(v)) => constant(v, left.ty()),
                    // NULL: never true.
                    (None, _) => None,
                };
                right.map(|right| {
                    Test::Arith(Box::new(ArithTest {
                        cmp: *cmp,
                        left: (**left).clone(),
                        right,
                        engine: engine.clone(),
                    }))
                })
            }
            // Without the engine (a plan-time estimate): says less.
            _ => return Filter::Const(true),
        },
        PlanTest::Collated { cmp, k, trimmed, .. } => match &operands[*k] {
            OperandValue::Collated(b, collator) => {
                let b = if *trimmed { trim_spaces(b) } else { b };
                let test = Test::Collated(*cmp, b.to_vec(), collator.clone());
                Some(if *trimmed { Test::Trimmed(Box::new(test)) } else { test })
            }
            // Without the comparison (a plan-time estimate): says less.
            OperandValue::Value(_) => return Filter::Const(true),
            _ => None,
        },
        PlanTest::Trimmed { test, k } => {
            let trim = |b: &Bound| match b {
                Bound::Bytes(b) => Bound::Bytes(trim_spaces(b).to_vec()),
                other => other.clone(),
            };
            let trimmed_operands: Vec<OperandValue> = match &operands[*k] {
                OperandValue::Value(b) => vec![OperandValue::Value(trim(b))],
                OperandValue::Array(items) => {
                    vec![OperandValue::Array(items.iter().map(|i| i.as_ref().map(trim)).collect())]
                }
                other => vec![other.clone()],
            };
            let inner = match test {
                TrimmedTest::Compare(Some(op)) => PlanTest::Compare(*op, 0),
                TrimmedTest::Compare(None) => PlanTest::NotEqual(0),
                TrimmedTest::In(true) => PlanTest::In(0),
                TrimmedTest::In(false) => PlanTest::NotIn(0),
            };
            return match resolve_test(att, &inner, &trimmed_operands) {
                Filter::Test { att, test } => Filter::Test { att, test: Test::Trimmed(Box::new(test)) },
                decided => decided,
            };
        }
    };
    match test {
        Some(test) => Filter::Test { att, test },
        None => Filter::Const(false),
    }
}

const OPS: [CmpOp; 5] = [CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ge, CmpOp::Gt];

/// An operand's value as a constant of an expression of type `ty` (the planner pushes
/// only operands whose values that type holds exactly: a narrower integer, a float4 for
/// a float8, a numeric's stored bytes).
fn constant(v: &Bound, ty: ExprType) -> Option<Expr> {
    Some(match (v, ty) {
        (Bound::Int(value), ExprType::Int2 | ExprType::Int4 | ExprType::Int8) => {
            Expr::Int { value: *value, ty }
        }
        (Bound::Float(value), ExprType::Float4 | ExprType::Float8) => Expr::Float { value: *value, ty },
        (Bound::Bytes(b), ExprType::Numeric) => Expr::Numeric(b.clone()),
        _ => return None,
    })
}

/// A comparison or `<>` (None) as a byte: its place in `OPS`, `<>` after them.
fn cmp_code(cmp: Option<CmpOp>) -> u8 {
    cmp.map_or(OPS.len(), |op| OPS.iter().position(|o| *o == op).unwrap()) as u8
}

/// The comparison `cmp_code` gave `code`; None for a byte it never gives.
fn cmp_of(code: u8) -> Option<Option<CmpOp>> {
    if code as usize == OPS.len() {
        Some(None)
    } else {
        OPS.get(code as usize).map(|op| Some(*op))
    }
}

impl FilterPlan {
    /// The plan as bytes (a plan keeps it as a bytea constant).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut Vec<u8>) {
        let u32_ = |out: &mut Vec<u8>, v: usize| out.extend_from_slice(&(v as u32).to_le_bytes());
        match self {
            FilterPlan::Test { att, test } => {
                out.push(0);
                u32_(out, *att);
                match test {
                    PlanTest::Compare(op, k) => {
                        out.push(0);
                        out.push(OPS.iter().position(|o| o == op).unwrap() as u8);
                        u32_(out, *k);
                    }
                    PlanTest::NotEqual(k) => {
                        out.push(1);
                        u32_(out, *k);
                    }
                    PlanTest::In(k) => {
                        out.push(2);
                        u32_(out, *k);
                    }
                    PlanTest::NotIn(k) => {
                        out.push(3);
                        u32_(out, *k);
                    }
                    PlanTest::IsNull => out.push(4),
                    PlanTest::IsNotNull => out.push(5),
                    PlanTest::Prefix(p) => {
                        out.push(6);
                        u32_(out, p.len());
                        out.extend_from_slice(p);
                    }
                    PlanTest::Numeric { cmp, k } => {
                        out.push(8);
                        out.push(cmp_code(*cmp));
                        u32_(out, *k);
                    }
                    PlanTest::NumericIn { k, any } => {
                        out.push(9);
                        out.push(*any as u8);
                        u32_(out, *k);
                    }
                    PlanTest::Trimmed { test, k } => {
                        out.push(10);
                        out.push(test.code());
                        u32_(out, *k);
                    }
                    PlanTest::Like { pattern, matching } => {
                        out.push(12);
                        out.push(*matching as u8);
                        u32_(out, pattern.len());
                        out.extend_from_slice(pattern);
                    }
                    PlanTest::Columns { cmp, other } => {
                        out.push(11);
                        out.push(cmp_code(*cmp));
                        u32_(out, *other);
                    }
                    PlanTest::Leading { chars, k, utf8, trimmed, any } => {
                        out.push(16);
                        u32_(out, *chars as usize);
                        u32_(out, *k);
                        out.push(*utf8 as u8 | (*trimmed as u8) << 1 | (*any as u8) << 2);
                    }
                    PlanTest::Function { function, k, collation, wanted } => {
                        out.push(15);
                        u32_(out, *function as usize);
                        u32_(out, *k);
                        u32_(out, *collation as usize);
                        out.push(*wanted as u8);
                    }
                    PlanTest::Extract { cmp, k, column, field, part } => {
                        out.push(14);
                        out.push(cmp_code(*cmp));
                        u32_(out, *k);
                        out.push(column.code());
                        out.push(*field);
                        out.push(*part as u8);
                    }
                    PlanTest::Arith { cmp, left, right, k } => {
                        out.push(17);
                        out.push(cmp_code(*cmp));
                        u32_(out, *k);
                        left.write(out);
                        match right {
                            Some(right) => {
                                out.push(1);
                                right.write(out);
                            }
                            None => out.push(0),
                        }
                    }
                    PlanTest::Collated { cmp, k, collation, trimmed } => {
                        out.push(13);
                        out.push(cmp_code(Some(*cmp)));
                        u32_(out, *k);
                        u32_(out, *collation as usize);
                        out.push(*trimmed as u8);
                    }
                    PlanTest::Across { cmp, k, column, operand } => {
                        out.push(7);
                        out.push(cmp_code(*cmp));
                        u32_(out, *k);
                        out.push(column.code());
                        out.push(operand.code());
                    }
                }
            }
            FilterPlan::And(c) | FilterPlan::Or(c) => {
                out.push(if matches!(self, FilterPlan::And(_)) { 1 } else { 2 });
                u32_(out, c.len());
                c.iter().for_each(|c| c.write(out));
            }
        }
    }

    /// The plan `to_bytes` gave; None for bytes it cannot have given.
    pub fn from_bytes(bytes: &[u8]) -> Option<FilterPlan> {
        let mut at = bytes;
        let plan = Self::read(&mut at, 0)?;
        at.is_empty().then_some(plan)
    }

    fn read(at: &mut &[u8], depth: usize) -> Option<FilterPlan> {
        fn byte(at: &mut &[u8]) -> Option<u8> {
            let (b, rest) = at.split_first()?;
            *at = rest;
            Some(*b)
        }
        fn num(at: &mut &[u8]) -> Option<usize> {
            let (b, rest) = at.split_first_chunk::<4>()?;
            *at = rest;
            Some(u32::from_le_bytes(*b) as usize)
        }
        if depth > 1000 {
            return None;
        }
        Some(match byte(at)? {
            0 => {
                let att = num(at)?;
                let test = match byte(at)? {
                    0 => {
                        let op = *OPS.get(byte(at)? as usize)?;
                        PlanTest::Compare(op, num(at)?)
                    }
                    1 => PlanTest::NotEqual(num(at)?),
                    2 => PlanTest::In(num(at)?),
                    3 => PlanTest::NotIn(num(at)?),
                    4 => PlanTest::IsNull,
                    5 => PlanTest::IsNotNull,
                    6 => {
                        let len = num(at)?;
                        let p = at.get(..len)?.to_vec();
                        *at = &at[len..];
                        PlanTest::Prefix(p)
                    }
                    7 => {
                        let cmp = cmp_of(byte(at)?)?;
                        let k = num(at)?;
                        let column = TimeType::from_code(byte(at)?)?;
                        let operand = TimeType::from_code(byte(at)?)?;
                        PlanTest::Across { cmp, k, column, operand }
                    }
                    8 => {
                        let cmp = cmp_of(byte(at)?)?;
                        PlanTest::Numeric { cmp, k: num(at)? }
                    }
                    9 => {
                        let any = match byte(at)? {
                            0 => false,
                            1 => true,
                            _ => return None,
                        };
                        PlanTest::NumericIn { k: num(at)?, any }
                    }
                    10 => {
                        let test = TrimmedTest::from_code(byte(at)?)?;
                        PlanTest::Trimmed { test, k: num(at)? }
                    }
                    11 => {
                        let cmp = cmp_of(byte(at)?)?;
                        PlanTest::Columns { cmp, other: num(at)? }
                    }
                    12 => {
                        let matching = match byte(at)? {
                            0 => false,
                            1 => true,
                            _ => return None,
                        };
                        let len = num(at)?;
                        let pattern = at.get(..len)?.to_vec();
                        *at = &at[len..];
                        PlanTest::Like { pattern, matching }
                    }
                    13 => {
                        let cmp = cmp_of(byte(at)?)??;
                        let k = num(at)?;
                        let collation = num(at)? as u32;
                        let trimmed = match byte(at)? {
                            0 => false,
                            1 => true,
                            _ => return None,
                        };
                        PlanTest::Collated { cmp, k, collation, trimmed }
                    }
                    14 => {
                        let cmp = cmp_of(byte(at)?)?;
                        let k = num(at)?;
                        let column = TimeType::from_code(byte(at)?)?;
                        let field = byte(at)?;
                        let part = match byte(at)? {
                            0 => false,
                            1 => true,
                            _ => return None,
                        };
                        PlanTest::Extract { cmp, k, column, field, part }
                    }
                    15 => {
                        let function = num(at)? as u32;
                        let k = num(at)?;
                        let collation = num(at)? as u32;
                        let wanted = match byte(at)? {
                            0 => false,
                            1 => true,
                            _ => return None,
                        };
                        PlanTest::Function { function, k, collation, wanted }
                    }
                    16 => {
                        let chars = num(at)? as u32;
                        let k = num(at)?;
                        let flags = byte(at)?;
                        if flags > 7 {
                            return None;
                        }
                        let (utf8, trimmed, any) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
                        PlanTest::Leading { chars, k, utf8, trimmed, any }
                    }
                    17 => {
                        let cmp = cmp_of(byte(at)?)?;
                        let k = num(at)?;
                        let (left, rest) = Expr::read(at)?;
                        *at = rest;
                        let right = match byte(at)? {
                            0 => None,
                            1 => {
                                let (right, rest) = Expr::read(at)?;
                                *at = rest;
                                Some(Box::new(right))
                            }
                            _ => return None,
                        };
                        PlanTest::Arith { cmp, left: Box::new(left), right, k }
                    }
                    _ => return None,
                };
                FilterPlan::Test { att, test }
            }
            tag @ (1 | 2) => {
                let n = num(at)?;
                let children = (0..n).map(|_| Self::read(at, depth + 1)).collect::<Option<Vec<_>>>()?;
                if tag == 1 {
                    FilterPlan::And(children)
                } else {
                    FilterPlan::Or(children)
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(att: usize, test: PlanTest) -> FilterPlan {
        FilterPlan::Test { att, test }
    }

    #[test]
    fn operands_move_up_past_earlier_clauses() {
        let clause = FilterPlan::Or(vec![
            t(0, PlanTest::Compare(CmpOp::Lt, 0)),
            t(1, PlanTest::IsNull),
            FilterPlan::And(vec![
                t(2, PlanTest::NotEqual(1)),
                t(3, PlanTest::In(2)),
                t(4, PlanTest::NotIn(3)),
            ]),
        ]);
        let moved = clause.with_operands_from(5);
        assert_eq!(moved.operands(), vec![5, 6, 7, 8]);
        assert_eq!(moved.attributes(), clause.attributes());
        assert_eq!(moved.with_operands_from(0), moved);
        assert_eq!(clause.with_operands_from(0), clause);
    }

    #[test]
    fn leading_characters_resolve_to_prefixes_and_equalities() {
        let leading = t(3, PlanTest::Leading { chars: 2, k: 0, utf8: true, trimmed: false, any: true });
        let b = |s: &str| Some(Bound::Bytes(s.as_bytes().to_vec()));
        let items = OperandValue::Array(vec![b("13"), b("é1"), b("7"), b("123"), None]);
        let f = leading.resolve(&[items]);
        let test = |t: Test| Filter::Test { att: 3, test: t };
        assert_eq!(
            f,
            Filter::Or(vec![
                test(Test::Prefix(b"13".to_vec())),
                test(Test::Prefix("é1".as_bytes().to_vec())),
                test(Test::Compare(CmpOp::Eq, Bound::Bytes(b"7".to_vec()))),
            ])
        );
        assert_eq!(leading.resolve(&[OperandValue::Array(vec![b("123")])]), Filter::Const(false));
        assert_eq!(leading.resolve(&[OperandValue::Null]), Filter::Const(false));
        let bytes = t(3, PlanTest::Leading { chars: 2, k: 0, utf8: false, trimmed: true, any: false });
        assert_eq!(
            bytes.resolve(&[OperandValue::Value(Bound::Bytes("é".as_bytes().to_vec()))]),
            test(Test::Trimmed(Box::new(Test::Prefix("é".as_bytes().to_vec()))))
        );
    }

    #[test]
    fn round_trips_through_bytes() {
        let plan = FilterPlan::And(vec![
            t(0, PlanTest::Compare(CmpOp::Ge, 0)),
            FilterPlan::Or(vec![t(2, PlanTest::Prefix(b"ab".to_vec())), t(1, PlanTest::IsNull)]),
            t(3, PlanTest::NotIn(1)),
            t(3, PlanTest::In(2)),
            t(4, PlanTest::NotEqual(3)),
            t(4, PlanTest::IsNotNull),
            t(
                5,
                PlanTest::Across { cmp: None, k: 4, column: TimeType::Date, operand: TimeType::TimestampTz },
            ),
            t(
                5,
                PlanTest::Across {
                    cmp: Some(CmpOp::Gt),
                    k: 5,
                    column: TimeType::TimestampTz,
                    operand: TimeType::Timestamp,
                },
            ),
        ]);
        let bytes = plan.to_bytes();
        assert_eq!(FilterPlan::from_bytes(&bytes), Some(plan.clone()));
        let numeric = FilterPlan::Or(vec![
            t(6, PlanTest::Numeric { cmp: None, k: 0 }),
            t(6, PlanTest::Numeric { cmp: Some(CmpOp::Le), k: 1 }),
            t(6, PlanTest::NumericIn { k: 2, any: false }),
            t(6, PlanTest::NumericIn { k: 3, any: true }),
            t(7, PlanTest::Trimmed { test: TrimmedTest::Compare(None), k: 4 }),
            t(7, PlanTest::Trimmed { test: TrimmedTest::Compare(Some(CmpOp::Lt)), k: 5 }),
            t(7, PlanTest::Trimmed { test: TrimmedTest::In(false), k: 6 }),
            t(8, PlanTest::Columns { cmp: Some(CmpOp::Lt), other: 9 }),
            t(8, PlanTest::Columns { cmp: None, other: 1 }),
            t(2, PlanTest::Like { pattern: b"%special%requests%".to_vec(), matching: false }),
            t(2, PlanTest::Collated { cmp: CmpOp::Ge, k: 7, collation: 12345, trimmed: true }),
            t(5, PlanTest::Extract { cmp: None, k: 8, column: TimeType::Timestamp, field: 9, part: true }),
            t(2, PlanTest::Function { function: 1633, k: 9, collation: 100, wanted: false }),
            t(2, PlanTest::Leading { chars: 2, k: 10, utf8: true, trimmed: true, any: true }),
            t(
                3,
                PlanTest::Arith {
                    cmp: Some(CmpOp::Gt),
                    left: Box::new(Expr::Binary {
                        op: crate::exec::expr::plan::BinOp::Mul,
                        left: Box::new(Expr::Column { att: 3, ty: ExprType::Numeric }),
                        right: Box::new(Expr::Numeric(vec![0, 0x80, 1, 0])),
                    }),
                    right: Some(Box::new(Expr::Neg(Box::new(Expr::Column {
                        att: 10,
                        ty: ExprType::Numeric,
                    })))),
                    k: 11,
                },
            ),
        ]);
        assert_eq!(numeric.attributes(), vec![1, 2, 3, 5, 6, 7, 8, 9, 10]);
        assert!(numeric.may_fail());
        assert_eq!(numeric.with_operands_from(2).arithmetic(), vec![13]);
        let resolved = numeric.resolve(&vec![OperandValue::Unknown; 12]);
        assert_eq!(resolved, Filter::Const(true));
        assert_eq!(FilterPlan::from_bytes(&numeric.to_bytes()), Some(numeric.clone()));
        assert_eq!(numeric.with_operands_from(2).operands(), vec![2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(numeric.functions(), vec![(9, 1633, 100)]);
        assert_eq!(numeric.with_operands_from(2).extractions(), vec![(10, TimeType::Timestamp, 9, true)]);
        assert_eq!(numeric.collations(), vec![(7, 12345)]);
        assert_eq!(numeric.extractions(), vec![(8, TimeType::Timestamp, 9, true)]);
        assert_eq!(plan.operands(), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(
            plan.conversions(),
            vec![(4, TimeType::Date, TimeType::TimestampTz), (5, TimeType::TimestampTz, TimeType::Timestamp)]
        );
        assert_eq!(FilterPlan::from_bytes(&bytes[..bytes.len() - 1]), None);
        assert_eq!(FilterPlan::from_bytes(&[9]), None);
    }

    #[test]
    fn arithmetic_operands_become_constants_of_the_expression_type() {
        use crate::exec::expr::eval::EvalError;
        use crate::exec::expr::plan::BinOp;
        use crate::exec::filter::arith::{ExprBackend, ExprEngine};
        struct NoBackend;
        impl ExprBackend for NoBackend {
            fn numeric(&self, _: Option<BinOp>, _: &[u8], _: &[u8]) -> Vec<u8> {
                unreachable!()
            }
            fn float8(&self, _: &[u8]) -> f64 {
                unreachable!()
            }
            fn raise(&self, e: EvalError) -> ! {
                panic!("{e:?}")
            }
        }
        let left = Expr::Binary {
            op: BinOp::Add,
            left: Box::new(Expr::Column { att: 1, ty: ExprType::Int8 }),
            right: Box::new(Expr::Int { value: 1, ty: ExprType::Int8 }),
        };
        let plan =
            t(1, PlanTest::Arith { cmp: Some(CmpOp::Lt), left: Box::new(left.clone()), right: None, k: 0 });
        let engine = |v: OperandValue| OperandValue::Engine(ExprEngine::new(NoBackend), Box::new(v));
        match plan.resolve(&[engine(OperandValue::Value(Bound::Int(7)))]) {
            Filter::Test { att: 1, test: Test::Arith(a) } => {
                assert_eq!((a.cmp, &a.left), (Some(CmpOp::Lt), &left));
                assert_eq!(a.right, Expr::Int { value: 7, ty: ExprType::Int8 });
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(plan.resolve(&[engine(OperandValue::Null)]), Filter::Const(false));
        // At plan time (no engine): says less.
        assert_eq!(plan.resolve(&[OperandValue::Value(Bound::Int(7))]), Filter::Const(true));
        assert_eq!(FilterPlan::from_bytes(&plan.to_bytes()), Some(plan));
    }

    #[test]
    fn null_operands_make_tests_false() {
        let plan = FilterPlan::Or(vec![t(0, PlanTest::Compare(CmpOp::Lt, 0)), t(1, PlanTest::IsNull)]);
        let f = plan.resolve(&[OperandValue::Null]);
        assert_eq!(f, Filter::Test { att: 1, test: Test::IsNull });
        let and = FilterPlan::And(vec![t(0, PlanTest::Compare(CmpOp::Lt, 0)), t(1, PlanTest::IsNull)]);
        assert_eq!(and.resolve(&[OperandValue::Null]), Filter::Const(false));
        assert_eq!(
            and.resolve(&[OperandValue::Value(Bound::Int(3))]),
            Filter::And(vec![
                Filter::Test { att: 0, test: Test::Compare(CmpOp::Lt, Bound::Int(3)) },
                Filter::Test { att: 1, test: Test::IsNull },
            ])
        );
    }

    #[test]
    fn arrays_with_nulls() {
        let items = OperandValue::Array(vec![Some(Bound::Int(1)), None]);
        // x IN (1, NULL): true for 1, never for others.
        let f = t(0, PlanTest::In(0)).resolve(std::slice::from_ref(&items));
        assert_eq!(f, Filter::Test { att: 0, test: Test::In(ValueSet::Keys(vec![1])) });
        // x NOT IN (1, NULL): never true.
        assert_eq!(t(0, PlanTest::NotIn(0)).resolve(&[items]), Filter::Const(false));
        // x <> ALL('{}'): always true; x = ANY('{}'): never.
        assert_eq!(t(0, PlanTest::NotIn(0)).resolve(&[OperandValue::Array(vec![])]), Filter::Const(true));
        assert_eq!(t(0, PlanTest::In(0)).resolve(&[OperandValue::Array(vec![])]), Filter::Const(false));
        assert_eq!(t(0, PlanTest::In(0)).resolve(&[OperandValue::Null]), Filter::Const(false));
    }
}
