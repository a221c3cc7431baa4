//! `left op right` where a side is an arithmetic expression (`exec::expr`): both sides
//! computed for the selected rows by `expr::eval`, then compared as core's btree
//! operators compare them (integers exactly, floats in PostgreSQL's order with NaN
//! above every other value, numerics exactly); NULL on either side fails.
//!
//! The expression can fail (overflow, division by zero), so which rows reach it
//! matters: the planner pushes it only where the rows it is evaluated on are the rows
//! core would evaluate it on (`planner::quals`), and a conjunction never runs a test
//! that comes after it first (`conjunction`). When a vector fails, its rows are
//! computed again one at a time, in order, left side before right: the error raised is
//! the one core raises, at the first row where core fails. The error itself, and
//! numerics beyond 128 bits, go through PostgreSQL (`ExprBackend`, handed in by the
//! executor), so the kernels stay pure.

use super::{float_key, passes};
use crate::exec::expr::eval::{self, Columns, EvalError, Evaluated, NumVal, NumVec, NumericFallback, Values};
use crate::exec::expr::num::{pow10, Num};
use crate::exec::expr::plan::{BinOp, Expr};
use crate::storage::format::encoding::DecodedVector;
use crate::storage::format::numeric;
use crate::storage::format::zonemap::CmpOp;
use crate::storage::read::vector_filter::ColumnSource;
use std::cmp::Ordering;
use std::sync::Arc;

/// What an expression test needs of PostgreSQL: numeric arithmetic beyond 128 bits
/// (numeric_add, ... on stored bytes) and core's error for a failed expression.
pub trait ExprBackend: Send + Sync {
    /// `a op b` (`op` None: `-a`, `b` unused) on stored numerics.
    fn numeric(&self, op: Option<BinOp>, a: &[u8], b: &[u8]) -> Vec<u8>;
    /// numeric_float8 of a stored numeric.
    fn float8(&self, a: &[u8]) -> f64;
    /// Raises core's error (SQLSTATE and message) for `e`.
    fn raise(&self, e: EvalError) -> !;
}

/// The executor's `ExprBackend`, as a test holds it.
#[derive(Clone)]
pub struct ExprEngine(Arc<dyn ExprBackend>);

impl ExprEngine {
    pub fn new(backend: impl ExprBackend + 'static) -> ExprEngine {
        ExprEngine(Arc::new(backend))
    }
}

impl PartialEq for ExprEngine {
    /// Every engine computes alike: tests compare by their expressions.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for ExprEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExprEngine")
    }
}

/// `left cmp right` (`cmp` None: `<>`), both sides of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct ArithTest {
    pub cmp: Option<CmpOp>,
    pub left: Expr,
    pub right: Expr,
    pub engine: ExprEngine,
}

impl ArithTest {
    /// The attributes both sides read, sorted, each once.
    pub fn attributes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.left.attributes(&mut out);
        self.right.attributes(&mut out);
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The decoded vectors the expression reads: all but the last copied out of the source
/// (which lends one vector at a time; their rows only, not the decoder's scratch), the
/// last one lent.
struct Lent<'a> {
    copied: Vec<(usize, DecodedVector)>,
    last: (usize, &'a DecodedVector),
}

impl Columns for Lent<'_> {
    fn column(&self, att: usize) -> &DecodedVector {
        if att == self.last.0 {
            return self.last.1;
        }
        &self.copied.iter().find(|(a, _)| *a == att).expect("a column the expression reads").1
    }
}

/// `v`'s rows, without its decode scratch.
fn rows_of(v: &DecodedVector) -> DecodedVector {
    let mut out =
        DecodedVector::from_parts(v.rows, v.validity.clone(), v.values.clone(), v.dictionary.clone());
    out.scaled = v.scaled.clone();
    out
}

struct Fallback<'a>(&'a dyn ExprBackend);

impl NumericFallback for Fallback<'_> {
    fn binary(&mut self, op: BinOp, a: &[u8], b: &[u8]) -> Vec<u8> {
        self.0.numeric(Some(op), a, b)
    }

    fn neg(&mut self, a: &[u8]) -> Vec<u8> {
        self.0.numeric(None, a, &[])
    }

    fn float8(&mut self, a: &[u8]) -> f64 {
        self.0.float8(a)
    }
}

/// Keeps the rows of `selection` for which `test` is true.
pub fn select(test: &ArithTest, columns: &mut dyn ColumnSource, selection: &mut Vec<u32>) {
    let atts = test.attributes();
    let Some((&last, rest)) = atts.split_last() else {
        panic!("expression test without a column: the planner pushes none")
    };
    if selection.is_empty() {
        return;
    }
    let copied = rest.iter().map(|&a| (a, rows_of(columns.column_rows(a, selection)))).collect();
    let cols = Lent { copied, last: (last, columns.column_rows(last, selection)) };
    let rows = cols.last.1.rows as usize;
    let backend = &*test.engine.0;
    match sides(test, &cols, rows, selection, backend) {
        Ok((l, r)) => retain_compared(test.cmp, l, r, selection),
        Err(e) => backend.raise(first_error(test, &cols, rows, selection, backend).unwrap_or(e)),
    }
}

fn sides(
    test: &ArithTest,
    cols: &Lent,
    rows: usize,
    sel: &[u32],
    backend: &dyn ExprBackend,
) -> Result<(Evaluated, Evaluated), EvalError> {
    let mut fallback = Fallback(backend);
    let l = eval::eval(&test.left, cols, rows, sel, &mut fallback)?;
    let r = eval::eval(&test.right, cols, rows, sel, &mut fallback)?;
    Ok((l, r))
}

/// The error core meets first: the rows one at a time, in order.
fn first_error(
    test: &ArithTest,
    cols: &Lent,
    rows: usize,
    sel: &[u32],
    backend: &dyn ExprBackend,
) -> Option<EvalError> {
    sel.iter().find_map(|r| sides(test, cols, rows, std::slice::from_ref(r), backend).err())
}

/// Keeps the rows where both sides are valid and compare as `cmp` wants.
fn retain_compared(cmp: Option<CmpOp>, l: Evaluated, r: Evaluated, selection: &mut Vec<u32>) {
    let (lv, rv) = (l.valid, r.valid);
    let valid = |i: usize| lv.as_ref().is_none_or(|v| v[i]) && rv.as_ref().is_none_or(|v| v[i]);
    let mut keep = |f: &dyn Fn(usize) -> Ordering| {
        selection.retain(|&i| valid(i as usize) && passes(cmp, f(i as usize)))
    };
    match (l.values, r.values) {
        (Values::Int(x), Values::Int(y)) => keep(&|i| x[i].cmp(&y[i])),
        (Values::Float4(x), Values::Float4(y)) => {
            keep(&|i| float_key(x[i] as f64).cmp(&float_key(y[i] as f64)))
        }
        (Values::Float8(x), Values::Float8(y)) => keep(&|i| float_key(x[i]).cmp(&float_key(y[i]))),
        (Values::Numeric(x), Values::Numeric(y)) => match (x.widened(), y.widened()) {
            // One scale each side (a product against a constant): the smaller scale's
            // mantissas raised to the larger, exactly; a row that leaves 128 bits on
            // its own.
            (NumVec::Scaled { m: a, scale: s }, NumVec::Scaled { m: b, scale: t }) => {
                let at = |m: &[i128], i: usize, scale: u16| NumVal::Small(Num::Fin { m: m[i], scale });
                match pow10(s.abs_diff(t) as u32) {
                    Some(p) if s <= t => keep(&|i| match a[i].checked_mul(p) {
                        Some(x) => x.cmp(&b[i]),
                        None => cmp_numeric(&at(&a, i, s), &at(&b, i, t)),
                    }),
                    Some(p) => keep(&|i| match b[i].checked_mul(p) {
                        Some(y) => a[i].cmp(&y),
                        None => cmp_numeric(&at(&a, i, s), &at(&b, i, t)),
                    }),
                    None => keep(&|i| cmp_numeric(&at(&a, i, s), &at(&b, i, t))),
                }
            }
            (x, y) => keep(&|i| cmp_numeric(&x.get(i), &y.get(i))),
        },
        _ => panic!("expression test: sides of different types"),
    }
}

/// Two numerics in numeric order (NaN above +Infinity, equal to itself).
pub fn cmp_numeric(a: &NumVal, b: &NumVal) -> Ordering {
    if let (NumVal::Small(Num::Fin { m: x, scale: s }), NumVal::Small(Num::Fin { m: y, scale: t })) = (a, b) {
        let up = |m: i128, by: u16| pow10(by as u32).and_then(|p| m.checked_mul(p));
        let (x, y) = if s < t { (up(*x, t - s), Some(*y)) } else { (Some(*x), up(*y, s - t)) };
        if let (Some(x), Some(y)) = (x, y) {
            return x.cmp(&y);
        }
    }
    numeric::cmp_bytes(&a.stored(), &b.stored()).expect("numerics made by the expression engine")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::expr::plan::ExprType;
    use crate::storage::format::encoding::DecodedValues;
    use std::cell::RefCell;

    struct Backend;

    impl ExprBackend for Backend {
        fn numeric(&self, _: Option<BinOp>, _: &[u8], _: &[u8]) -> Vec<u8> {
            unreachable!("no numeric beyond 128 bits here")
        }

        fn float8(&self, _: &[u8]) -> f64 {
            unreachable!("no numeric beyond 128 bits here")
        }

        fn raise(&self, e: EvalError) -> ! {
            std::panic::panic_any(e)
        }
    }

    struct Source(Vec<DecodedVector>, RefCell<Vec<usize>>);

    impl ColumnSource for Source {
        fn column(&mut self, att: usize) -> &DecodedVector {
            self.1.borrow_mut().push(att);
            &self.0[att]
        }
    }

    fn ints(v: &[i64], valid: Option<Vec<bool>>) -> DecodedVector {
        DecodedVector::from_parts(v.len() as u32, valid, DecodedValues::Int(v.to_vec()), None)
    }

    fn floats(v: &[f64]) -> DecodedVector {
        DecodedVector::from_parts(v.len() as u32, None, DecodedValues::Float64(v.to_vec()), None)
    }

    fn col(att: usize, ty: ExprType) -> Box<Expr> {
        Box::new(Expr::Column { att, ty })
    }

    fn bin(op: BinOp, l: Box<Expr>, r: Box<Expr>) -> Expr {
        Expr::Binary { op, left: l, right: r }
    }

    fn int(value: i64) -> Expr {
        Expr::Int { value, ty: ExprType::Int4 }
    }

    fn test(cmp: Option<CmpOp>, left: Expr, right: Expr) -> ArithTest {
        ArithTest { cmp, left, right, engine: ExprEngine::new(Backend) }
    }

    fn run(t: &ArithTest, cols: Vec<DecodedVector>, sel: &[u32]) -> Result<Vec<u32>, EvalError> {
        let mut src = Source(cols, RefCell::new(Vec::new()));
        let mut s = sel.to_vec();
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| select(t, &mut src, &mut s)))
            .map(|_| s)
            .map_err(|p| *p.downcast::<EvalError>().expect("an EvalError"))
    }

    #[test]
    fn compares_sums_and_fails_null() {
        let a = ints(&[1, 5, 7, 0, 3], Some(vec![true, true, true, false, true]));
        let b = ints(&[2, 5, -7, 9, 3], None);
        // a + b < 10
        let t =
            test(Some(CmpOp::Lt), bin(BinOp::Add, col(0, ExprType::Int4), col(1, ExprType::Int4)), int(10));
        assert_eq!(run(&t, vec![a.clone(), b.clone()], &[0, 1, 2, 3, 4]), Ok(vec![0, 2, 4]));
        // a * 2 <> b, only over the rows selected
        let t =
            test(None, bin(BinOp::Mul, col(0, ExprType::Int4), Box::new(int(2))), *col(1, ExprType::Int4));
        assert_eq!(run(&t, vec![a, b], &[1, 3, 4]), Ok(vec![1, 4]));
    }

    #[test]
    fn errors_only_on_selected_rows_and_the_first_as_core() {
        let a = ints(&[i32::MAX as i64, 10, 4, 8], None);
        let b = ints(&[1, 0, 2, 0], None);
        // a / b = 2: row 1 divides by zero, row 0 is not selected.
        let t =
            test(Some(CmpOp::Eq), bin(BinOp::Div, col(0, ExprType::Int4), col(1, ExprType::Int4)), int(2));
        assert_eq!(run(&t, vec![a.clone(), b.clone()], &[2]), Ok(vec![2]));
        assert_eq!(run(&t, vec![a.clone(), b.clone()], &[1, 2]), Err(EvalError::DivisionByZero));
        // (a + 1) > a / b: row 0 overflows on the left, row 1 divides by zero on the right;
        // core meets row 0's error first.
        let t = test(
            Some(CmpOp::Gt),
            bin(BinOp::Add, col(0, ExprType::Int4), Box::new(int(1))),
            bin(BinOp::Div, col(0, ExprType::Int4), col(1, ExprType::Int4)),
        );
        assert_eq!(
            run(&t, vec![a.clone(), b.clone()], &[0, 1]),
            Err(EvalError::IntOutOfRange(ExprType::Int4))
        );
        // Rows 1 and 3: the right side fails at row 1 first.
        assert_eq!(run(&t, vec![a, b], &[1, 3]), Err(EvalError::DivisionByZero));
    }

    #[test]
    fn floats_order_nan_last() {
        let x = floats(&[f64::NAN, 1.0, f64::INFINITY, -0.0]);
        // x * 2 > 1e308: NaN and Infinity pass, as core orders them.
        let t = test(
            Some(CmpOp::Gt),
            bin(
                BinOp::Mul,
                col(0, ExprType::Float8),
                Box::new(Expr::Float { value: 2.0, ty: ExprType::Float8 }),
            ),
            Expr::Float { value: 1e308, ty: ExprType::Float8 },
        );
        assert_eq!(run(&t, vec![x.clone()], &[0, 1, 2, 3]), Ok(vec![0, 2]));
        // x - x = 0: NaN - NaN is NaN, equal only to NaN; Inf - Inf is NaN.
        let t = test(
            Some(CmpOp::Eq),
            bin(BinOp::Sub, col(0, ExprType::Float8), col(0, ExprType::Float8)),
            Expr::Float { value: 0.0, ty: ExprType::Float8 },
        );
        assert_eq!(run(&t, vec![x], &[0, 1, 2, 3]), Ok(vec![1, 3]));
    }

    #[test]
    fn scaled_numerics_compare_with_constants_of_other_scales() {
        let mut v = DecodedVector::from_parts(
            4,
            Some(vec![true, true, true, false]),
            DecodedValues::Bytes { offsets: vec![0; 5], data: Vec::new() },
            None,
        );
        v.scaled = Some(crate::storage::format::encoding::ScaledNumerics {
            m: vec![150, i64::MAX, -5, 7],
            scale: 2,
        });
        let c = |m: i128, scale: u16| Expr::Numeric(Num::Fin { m, scale }.to_stored());
        // x * 1 > 1 (scale 2 against 0); = 1.5 (against scale 1); row 3 is NULL.
        let times_one = || bin(BinOp::Mul, col(0, ExprType::Numeric), Box::new(c(1, 0)));
        let t = test(Some(CmpOp::Gt), times_one(), c(1, 0));
        assert_eq!(run(&t, vec![v.clone()], &[0, 1, 2, 3]), Ok(vec![0, 1]));
        let t = test(Some(CmpOp::Eq), times_one(), c(15, 1));
        assert_eq!(run(&t, vec![v.clone()], &[0, 1, 2, 3]), Ok(vec![0]));
        // A constant of a larger scale than the column's: the column's mantissas are raised.
        let t = test(Some(CmpOp::Lt), *col(0, ExprType::Numeric), c(-4999, 5));
        assert_eq!(run(&t, vec![v], &[0, 1, 2, 3]), Ok(vec![2]));
    }

    #[test]
    fn numerics_compare_across_scales() {
        let n = |s: &str| {
            let (m, scale) = match s.split_once('.') {
                Some((i, f)) => (format!("{i}{f}").parse::<i128>().unwrap(), f.len() as u16),
                None => (s.parse().unwrap(), 0),
            };
            NumVal::Small(Num::Fin { m, scale })
        };
        assert_eq!(cmp_numeric(&n("1.50"), &n("1.5")), Ordering::Equal);
        assert_eq!(cmp_numeric(&n("-2"), &n("1.999")), Ordering::Less);
        assert_eq!(cmp_numeric(&NumVal::Small(Num::NaN), &NumVal::Small(Num::PosInf)), Ordering::Greater);
        assert_eq!(cmp_numeric(&NumVal::Small(Num::NegInf), &n("-99999999999.9")), Ordering::Less);
        let big = NumVal::Small(Num::Fin { m: i128::MAX / 2, scale: 0 });
        assert_eq!(cmp_numeric(&big, &n("0.000000000000000000001")), Ordering::Greater);
    }
}
