//! Evaluates an `Expr` over a vector's selected rows into a typed result vector, with
//! core's semantics: NULL in, NULL out (every operator is strict); integer overflow
//! raises "smallint/integer/bigint out of range" and float overflow and underflow
//! "value out of range" (22003) as int4pl, float8mul, ... do; numerics exactly
//! (`num`), a value or result beyond 128 bits computed by PostgreSQL's own functions
//! (`NumericFallback`). Only selected, non-NULL rows are computed (core evaluates an
//! aggregate's argument for the rows that reach it, no others). A CASE tests its
//! conditions with the pushed-filter kernels and computes each branch for the rows
//! that take it alone, so a branch fails only where core's would. Pure.

use super::num::{pow10, wide_mul, Num};
use super::plan::{BinOp, Expr, ExprType};
use crate::exec::filter::{kernels as filter_kernels, Filter};
use crate::storage::format::encoding::{DecodedValues, DecodedVector, ScaledNumerics};
use crate::storage::read::vector_filter::ColumnSource;

/// A numeric result: exact in 128 bits, or a numeric's stored bytes (computed by
/// PostgreSQL).
#[derive(Debug, Clone, PartialEq)]
pub enum NumVal {
    Small(Num),
    Big(Box<[u8]>),
}

impl NumVal {
    /// The value's stored bytes.
    pub fn stored(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            NumVal::Small(n) => std::borrow::Cow::Owned(n.to_stored()),
            NumVal::Big(b) => std::borrow::Cow::Borrowed(b),
        }
    }

    fn of_stored(bytes: Vec<u8>) -> NumVal {
        match Num::from_stored(&bytes) {
            Some(n) => NumVal::Small(n),
            None => NumVal::Big(bytes.into_boxed_slice()),
        }
    }
}

/// PostgreSQL's numeric functions, for values beyond 128 bits: given and giving stored
/// bytes. They raise core's own errors ("value overflows numeric format").
pub trait NumericFallback {
    fn binary(&mut self, op: BinOp, a: &[u8], b: &[u8]) -> Vec<u8>;
    fn neg(&mut self, a: &[u8]) -> Vec<u8>;
    /// numeric_float8 (raising float8in's error for a value beyond float8's range).
    fn float8(&mut self, a: &[u8]) -> f64;
}

/// A result vector, indexed by row (rows not selected, or NULL, hold a filler).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Int(Vec<i64>),
    Float4(Vec<f32>),
    Float8(Vec<f64>),
    Numeric(NumVec),
}

/// Numeric values of a vector, indexed by row.
#[derive(Debug, Clone, PartialEq)]
pub enum NumVec {
    /// Every selected, valid row finite at one display scale (a typmod'ed column's
    /// always are, and what `+ - *` make of them): row r is m[r] / 10^scale. The loops
    /// over it are plain 128-bit integer arithmetic.
    Scaled { m: Vec<i128>, scale: u16 },
    /// `Scaled` whose mantissas fit 64 bits (a column stored as scaled numerics, and
    /// what `+ - *` make of such while no row overflows): dense 64-bit loops, over
    /// every row of the vector, which a row that leaves 64 bits sends to `Scaled`.
    Scaled64 { m: Vec<i64>, scale: u16 },
    /// Anything else, per row: NaN, infinities, mixed scales, values beyond 128 bits.
    Rows(Vec<NumVal>),
}

impl NumVec {
    /// Row r's value.
    pub fn get(&self, r: usize) -> NumVal {
        match self {
            NumVec::Scaled { m, scale } => NumVal::Small(Num::Fin { m: m[r], scale: *scale }),
            NumVec::Scaled64 { m, scale } => NumVal::Small(Num::Fin { m: m[r] as i128, scale: *scale }),
            NumVec::Rows(v) => v[r].clone(),
        }
    }

    fn into_rows(self) -> Vec<NumVal> {
        match self.widened() {
            NumVec::Scaled { m, scale } => {
                m.into_iter().map(|m| NumVal::Small(Num::Fin { m, scale })).collect()
            }
            NumVec::Scaled64 { .. } => unreachable!("widened"),
            NumVec::Rows(v) => v,
        }
    }

    /// `Scaled64` as `Scaled` (others as they are).
    pub fn widened(self) -> NumVec {
        match self {
            NumVec::Scaled64 { m, scale } => {
                NumVec::Scaled { m: m.into_iter().map(i128::from).collect(), scale }
            }
            v => v,
        }
    }

    /// `Scaled` whose mantissas all fit 64 bits as `Scaled64` (others as they are).
    fn narrowed(self) -> NumVec {
        match self {
            NumVec::Scaled { m, scale } if m.iter().all(|&x| i64::try_from(x).is_ok()) => {
                NumVec::Scaled64 { m: m.into_iter().map(|x| x as i64).collect(), scale }
            }
            v => v,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    pub values: Values,
    /// None when no row is NULL; otherwise per row, true = not NULL.
    pub valid: Option<Vec<bool>>,
}

/// Why an evaluation stopped: core's error for the same row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalError {
    /// An integer result outside its type (the type says which message).
    IntOutOfRange(ExprType),
    FloatOverflow,
    FloatUnderflow,
    /// A stored numeric that is no numeric.
    CorruptNumeric,
    /// A division by zero (22012).
    DivisionByZero,
    /// A numeric NaN or infinity cast to an integer type (0A000).
    NanToInt(ExprType),
    InfinityToInt(ExprType),
}

impl EvalError {
    /// Core's message (SQLSTATE 22003 for out of range, 22012 for division by zero,
    /// 0A000 for NaN or infinity to an integer, XX001 for a corrupt value).
    pub fn message(self) -> &'static str {
        match self {
            EvalError::IntOutOfRange(ExprType::Int2) => "smallint out of range",
            EvalError::IntOutOfRange(ExprType::Int8) => "bigint out of range",
            EvalError::IntOutOfRange(_) => "integer out of range",
            EvalError::FloatOverflow => "value out of range: overflow",
            EvalError::FloatUnderflow => "value out of range: underflow",
            EvalError::CorruptNumeric => "a stored numeric value is malformed",
            EvalError::DivisionByZero => "division by zero",
            EvalError::NanToInt(ExprType::Int2) => "cannot convert NaN to smallint",
            EvalError::NanToInt(ExprType::Int8) => "cannot convert NaN to bigint",
            EvalError::NanToInt(_) => "cannot convert NaN to integer",
            EvalError::InfinityToInt(ExprType::Int2) => "cannot convert infinity to smallint",
            EvalError::InfinityToInt(ExprType::Int8) => "cannot convert infinity to bigint",
            EvalError::InfinityToInt(_) => "cannot convert infinity to integer",
        }
    }
}

/// What an evaluation reads: the vector's decoded columns, by attribute.
pub trait Columns {
    fn column(&self, att: usize) -> &DecodedVector;
    /// A numeric column's values already decoded for (at least) the selected rows.
    fn numeric(&self, _att: usize) -> Option<&NumVec> {
        None
    }
}

/// Evaluates `expr` for the selected rows `sel` of a vector of `rows` rows.
pub fn eval(
    expr: &Expr,
    cols: &dyn Columns,
    rows: usize,
    sel: &[u32],
    fallback: &mut dyn NumericFallback,
) -> Result<Evaluated, EvalError> {
    eval_with(expr, cols, rows, sel, &[], fallback)
}

/// `eval` of an expression with CASE conditions, `conds` their filters resolved for
/// the scan, in `Expr::conditions`' order.
pub fn eval_with(
    expr: &Expr,
    cols: &dyn Columns,
    rows: usize,
    sel: &[u32],
    conds: &[Filter],
    fallback: &mut dyn NumericFallback,
) -> Result<Evaluated, EvalError> {
    assert_eq!(conds.len(), expr.condition_count(), "CASE conditions not resolved");
    let mut e = Evaluator { cols, rows, sel, fallback, conds, cursor: 0 };
    e.eval(expr)
}

struct Evaluator<'a> {
    cols: &'a dyn Columns,
    rows: usize,
    sel: &'a [u32],
    fallback: &'a mut dyn NumericFallback,
    /// The CASE conditions, and the first of the node being evaluated (`eval` takes
    /// them in `Expr::conditions`' order).
    conds: &'a [Filter],
    cursor: usize,
}

/// The decoded columns as the filter kernels read them (every column a CASE condition
/// reads is decoded before the expression is evaluated).
struct Decoded<'a>(&'a dyn Columns);

impl ColumnSource for Decoded<'_> {
    fn column(&mut self, att: usize) -> &DecodedVector {
        self.0.column(att)
    }
}

/// Rows of `all` (ascending) that are not in `taken` (ascending, a subset of `all`).
fn rows_left(all: &[u32], taken: &[u32]) -> Vec<u32> {
    let mut left = Vec::with_capacity(all.len() - taken.len());
    let mut t = taken.iter().peekable();
    for &r in all {
        if t.peek() == Some(&&r) {
            t.next();
        } else {
            left.push(r);
        }
    }
    left
}

/// Both validities: a row is valid if it is in both.
fn both(a: Option<Vec<bool>>, b: Option<Vec<bool>>) -> Option<Vec<bool>> {
    match (a, b) {
        (None, v) | (v, None) => v,
        (Some(mut a), Some(b)) => {
            a.iter_mut().zip(b).for_each(|(x, y)| *x &= y);
            Some(a)
        }
    }
}

fn int_range(ty: ExprType) -> (i64, i64) {
    match ty {
        ExprType::Int2 => (i16::MIN as i64, i16::MAX as i64),
        ExprType::Int4 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// A vector's selected rows, for decoding a numeric column of it.
pub struct VectorRows<'a> {
    pub rows: usize,
    pub sel: &'a [u32],
}

impl VectorRows<'_> {
    /// The selected rows that are valid under `valid`.
    fn live<'v>(&'v self, valid: &'v Option<Vec<bool>>) -> impl Iterator<Item = usize> + 'v {
        self.sel.iter().map(|&r| r as usize).filter(move |&r| valid.as_ref().is_none_or(|v| v[r]))
    }

    /// A numeric column's selected values: scaled integers if they allow, else per row.
    pub fn numeric(&self, col: &DecodedVector) -> Result<NumVec, EvalError> {
        if let Some(s) = &col.scaled {
            // Stored as scaled numerics: the mantissas as they are, nothing parsed.
            return Ok(NumVec::Scaled64 { m: s.m.clone(), scale: s.scale });
        }
        let valid = &col.validity;
        match self.scaled_column(col, valid) {
            Some(v) => Ok(v.narrowed()),
            None => self.numeric_rows(col, valid),
        }
    }

    /// The selected, valid rows' stored numerics, each with `f`.
    fn each_stored(
        &self,
        col: &DecodedVector,
        valid: &Option<Vec<bool>>,
        mut f: impl FnMut(usize, &[u8]) -> bool,
    ) -> bool {
        if let Some(s) = &col.scaled {
            let mut b = Vec::with_capacity(16);
            self.live(valid).all(|r| {
                b.clear();
                s.write_stored(r, &mut b);
                f(r, &b)
            })
        } else if let Some(d) = &col.dictionary {
            self.live(valid).all(|r| f(r, d.entry(d.codes[r] as usize)))
        } else if let DecodedValues::Bytes { offsets, data } = &col.values {
            self.live(valid).all(|r| f(r, &data[offsets[r] as usize..offsets[r + 1] as usize]))
        } else {
            unreachable!("a numeric column stored as {:?}", col.values)
        }
    }

    /// A numeric column as scaled integers, if every selected value is finite with one
    /// display scale and fits (a dictionary's entries are read once each).
    pub fn scaled_column(&self, col: &DecodedVector, valid: &Option<Vec<bool>>) -> Option<NumVec> {
        if let Some(s) = &col.scaled {
            return Some(NumVec::Scaled64 { m: s.m.clone(), scale: s.scale });
        }
        let mut m = vec![0i128; self.rows];
        let mut scale = None;
        let mut entries: Vec<Option<i128>> = match &col.dictionary {
            Some(d) => vec![None; d.len()],
            None => Vec::new(),
        };
        let mut take = |b: &[u8]| -> Option<i128> {
            let Some(Num::Fin { m, scale: s }) = Num::from_stored(b) else { return None };
            (*scale.get_or_insert(s) == s).then_some(m)
        };
        let ok = match &col.dictionary {
            Some(d) => self.live(valid).all(|r| {
                let e = d.codes[r] as usize;
                if entries[e].is_none() {
                    entries[e] = take(d.entry(e));
                }
                entries[e].map(|v| m[r] = v).is_some()
            }),
            None => self.each_stored(col, valid, |r, b| take(b).map(|v| m[r] = v).is_some()),
        };
        ok.then(|| NumVec::Scaled { m, scale: scale.unwrap_or(0) })
    }

    /// A numeric column per row.
    pub fn numeric_rows(&self, col: &DecodedVector, valid: &Option<Vec<bool>>) -> Result<NumVec, EvalError> {
        let mut out = vec![NumVal::Small(Num::ZERO); self.rows];
        let mut corrupt = false;
        self.each_stored(col, valid, |r, b| {
            out[r] = match Num::from_stored(b) {
                Some(n) => NumVal::Small(n),
                None if crate::exec::agg::numeric::parse(b).is_some() => NumVal::Big(b.into()),
                None => {
                    corrupt = true;
                    return false;
                }
            };
            true
        });
        if corrupt {
            return Err(EvalError::CorruptNumeric);
        }
        Ok(NumVec::Rows(out))
    }
}

impl<'a> Evaluator<'a> {
    /// The selected rows that are valid under `valid`.
    fn live<'v>(&'v self, valid: &'v Option<Vec<bool>>) -> impl Iterator<Item = usize> + 'v {
        self.sel.iter().map(|&r| r as usize).filter(move |&r| valid.as_ref().is_none_or(|v| v[r]))
    }

    fn eval(&mut self, expr: &Expr) -> Result<Evaluated, EvalError> {
        match expr {
            Expr::Column { att, ty } => self.column(*att, *ty),
            Expr::Int { value, .. } => Ok(self.constant(Values::Int(vec![*value; self.rows]))),
            Expr::Float { value, ty: ExprType::Float4 } => {
                Ok(self.constant(Values::Float4(vec![*value as f32; self.rows])))
            }
            Expr::Float { value, .. } => Ok(self.constant(Values::Float8(vec![*value; self.rows]))),
            Expr::Numeric(bytes) => {
                let values = match Num::from_stored(bytes) {
                    Some(Num::Fin { m, scale }) => match i64::try_from(m) {
                        Ok(m) => NumVec::Scaled64 { m: vec![m; self.rows], scale },
                        Err(_) => NumVec::Scaled { m: vec![m; self.rows], scale },
                    },
                    Some(n) => NumVec::Rows(vec![NumVal::Small(n); self.rows]),
                    None if crate::exec::agg::numeric::parse(bytes).is_some() => {
                        NumVec::Rows(vec![NumVal::Big(bytes.clone().into_boxed_slice()); self.rows])
                    }
                    None => return Err(EvalError::CorruptNumeric),
                };
                Ok(self.constant(Values::Numeric(values)))
            }
            Expr::Neg(arg) => {
                let ty = arg.ty();
                let mut x = self.eval(arg)?;
                self.negate(ty, &mut x)?;
                Ok(x)
            }
            Expr::Binary { op, left, right } => {
                let ty = left.ty();
                // A numeric constant and 64-bit mantissas: the constant stays a scalar.
                match (small_constant(left), small_constant(right)) {
                    (Some(c), None) => return self.with_constant(*op, c, right, true),
                    (None, Some(c)) => return self.with_constant(*op, c, left, false),
                    _ => {}
                }
                // Columns of scaled numerics are read where they lie, not copied.
                if let Some(e) = self.binary_in_place(*op, left, right) {
                    return Ok(e);
                }
                let mut l = self.eval(left)?;
                let r = self.eval(right)?;
                l.valid = both(l.valid.take(), r.valid);
                self.binary(*op, ty, &mut l, r.values)?;
                Ok(l)
            }
            Expr::Cast { to, arg } => {
                let x = self.eval(arg)?;
                self.cast(arg.ty(), *to, x)
            }
            Expr::Case { whens, otherwise } => self.case(expr.ty(), whens, otherwise.as_deref()),
        }
    }

    /// A CASE: each branch's condition narrows the rows no earlier branch took, and its
    /// value is computed for those rows alone; rows no branch takes get ELSE's value,
    /// or NULL.
    fn case(
        &mut self,
        ty: ExprType,
        whens: &[(crate::exec::filter::plan::FilterPlan, Expr)],
        otherwise: Option<&Expr>,
    ) -> Result<Evaluated, EvalError> {
        let base = self.cursor;
        let mut next = base + whens.len();
        let mut left: Vec<u32> = self.sel.to_vec();
        let mut parts: Vec<(Vec<u32>, Evaluated)> = Vec::with_capacity(whens.len() + 1);
        for (k, (_, value)) in whens.iter().enumerate() {
            let mut taken = left.clone();
            if !taken.is_empty() {
                filter_kernels::select(&self.conds[base + k], &mut Decoded(self.cols), &mut taken);
            }
            if !taken.is_empty() {
                left = rows_left(&left, &taken);
                let v = self.branch(value, &taken, next)?;
                parts.push((taken, v));
            }
            next += value.condition_count();
        }
        if let (Some(value), false) = (otherwise, left.is_empty()) {
            let v = self.branch(value, &left, next)?;
            parts.push((std::mem::take(&mut left), v));
            next += value.condition_count();
        } else if let Some(value) = otherwise {
            next += value.condition_count();
        }
        self.cursor = next;
        Ok(merge_branches(ty, self.rows, parts, &left))
    }

    /// `value` for rows `sel` alone, its CASE conditions from `first`.
    fn branch(&mut self, value: &Expr, sel: &[u32], first: usize) -> Result<Evaluated, EvalError> {
        let mut sub = Evaluator {
            cols: self.cols,
            rows: self.rows,
            sel,
            fallback: &mut *self.fallback,
            conds: self.conds,
            cursor: first,
        };
        sub.eval(value)
    }

    /// A column of scaled numerics (`ScaledNumerics`), as its mantissas and scale.
    fn scaled_column(&self, e: &Expr) -> Option<(&'a ScaledNumerics, &'a Option<Vec<bool>>)> {
        let Expr::Column { att, ty: ExprType::Numeric } = e else { return None };
        let col: &'a DecodedVector = self.cols.column(*att);
        col.scaled.as_ref().map(|s| (s, &col.validity))
    }

    /// `left op right` when both sides are columns of scaled numerics: in one loop over
    /// the columns' own values. None (nothing evaluated) when that is not the case or a
    /// row leaves 64 bits.
    fn binary_in_place(&mut self, op: BinOp, left: &Expr, right: &Expr) -> Option<Evaluated> {
        let ((x, xv), (y, yv)) = (self.scaled_column(left)?, self.scaled_column(right)?);
        let (m, scale) = scaled64_op(op, &x.m, x.scale, &y.m, y.scale)?;
        let valid = both(xv.clone(), yv.clone());
        Some(Evaluated { values: Values::Numeric(NumVec::Scaled64 { m, scale }), valid })
    }

    /// `c op x` (`c_left`) or `x op c` for a finite numeric constant c = (m, scale) of
    /// 64 bits: in one loop with c a scalar when x's values are 64-bit mantissas and
    /// no row overflows, else as any two operands are.
    fn with_constant(
        &mut self,
        op: BinOp,
        c: (i64, u16),
        x: &Expr,
        c_left: bool,
    ) -> Result<Evaluated, EvalError> {
        if let Some((x, valid)) = self.scaled_column(x) {
            if let Some((m, scale)) = scaled64_scalar_op(op, &x.m, x.scale, c, c_left) {
                let values = Values::Numeric(NumVec::Scaled64 { m, scale });
                return Ok(Evaluated { values, valid: valid.clone() });
            }
        }
        let mut e = self.eval(x)?;
        if let Values::Numeric(NumVec::Scaled64 { m, scale }) = &e.values {
            if let Some((m, scale)) = scaled64_scalar_op(op, m, *scale, c, c_left) {
                e.values = Values::Numeric(NumVec::Scaled64 { m, scale });
                return Ok(e);
            }
        }
        let constant = Values::Numeric(NumVec::Scaled64 { m: vec![c.0; self.rows], scale: c.1 });
        if c_left {
            let mut l = Evaluated { values: constant, valid: e.valid };
            self.binary(op, ExprType::Numeric, &mut l, e.values)?;
            Ok(l)
        } else {
            self.binary(op, ExprType::Numeric, &mut e, constant)?;
            Ok(e)
        }
    }

    fn constant(&self, values: Values) -> Evaluated {
        Evaluated { values, valid: None }
    }

    fn column(&mut self, att: usize, ty: ExprType) -> Result<Evaluated, EvalError> {
        let col = self.cols.column(att);
        let valid = col.validity.clone();
        let values = match (&col.values, ty) {
            (DecodedValues::Int(v), _) => Values::Int(v.clone()),
            (DecodedValues::Float32(v), _) => Values::Float4(v.clone()),
            (DecodedValues::Float64(v), _) => Values::Float8(v.clone()),
            // A column several aggregates read is decoded once per vector.
            (_, ExprType::Numeric) => Values::Numeric(match self.cols.numeric(att) {
                Some(v) => v.clone(),
                None => VectorRows { rows: self.rows, sel: self.sel }.numeric(col)?,
            }),
            _ => unreachable!("an expression column of type {ty:?} stored as another"),
        };
        Ok(Evaluated { values, valid })
    }

    fn negate(&mut self, ty: ExprType, x: &mut Evaluated) -> Result<(), EvalError> {
        let valid = x.valid.take();
        let result = match &mut x.values {
            Values::Int(v) => {
                let (lo, _) = int_range(ty);
                let mut result = Ok(());
                for r in self.live(&valid) {
                    if v[r] == lo {
                        result = Err(EvalError::IntOutOfRange(ty));
                        break;
                    }
                    v[r] = -v[r];
                }
                result
            }
            Values::Float4(v) => {
                self.live(&valid).for_each(|r| v[r] = -v[r]);
                Ok(())
            }
            Values::Float8(v) => {
                self.live(&valid).for_each(|r| v[r] = -v[r]);
                Ok(())
            }
            Values::Numeric(NumVec::Scaled64 { m, .. }) if self.live(&valid).all(|r| m[r] != i64::MIN) => {
                self.live(&valid).for_each(|r| m[r] = -m[r]);
                Ok(())
            }
            Values::Numeric(NumVec::Scaled { m, .. }) if self.live(&valid).all(|r| m[r] != i128::MIN) => {
                self.live(&valid).for_each(|r| m[r] = -m[r]);
                Ok(())
            }
            Values::Numeric(nums) => {
                let mut v = std::mem::replace(nums, NumVec::Rows(Vec::new())).into_rows();
                let rows: Vec<usize> = self.live(&valid).collect();
                for r in rows {
                    v[r] = match &v[r] {
                        NumVal::Small(n) => match n.checked_neg() {
                            Some(n) => NumVal::Small(n),
                            None => NumVal::of_stored(self.fallback.neg(&n.to_stored())),
                        },
                        NumVal::Big(b) => NumVal::of_stored(self.fallback.neg(b)),
                    };
                }
                *nums = NumVec::Rows(v);
                Ok(())
            }
        };
        x.valid = valid;
        result
    }

    fn binary(&mut self, op: BinOp, ty: ExprType, l: &mut Evaluated, r: Values) -> Result<(), EvalError> {
        if let (
            Values::Numeric(NumVec::Scaled64 { m: x, scale: s }),
            Values::Numeric(NumVec::Scaled64 { m: y, scale: t }),
        ) = (&l.values, &r)
        {
            if let Some((m, scale)) = scaled64_op(op, x, *s, y, *t) {
                l.values = Values::Numeric(NumVec::Scaled64 { m, scale });
                return Ok(());
            }
        }
        let rows: Vec<usize> = self.live(&l.valid).collect();
        match (&mut l.values, r) {
            (Values::Int(a), Values::Int(b)) => {
                let (lo, hi) = int_range(ty);
                for &i in &rows {
                    let v = match op {
                        BinOp::Add => a[i].checked_add(b[i]),
                        BinOp::Sub => a[i].checked_sub(b[i]),
                        BinOp::Mul => a[i].checked_mul(b[i]),
                        // int4div & co.: zero first, then MIN / -1 out of range.
                        BinOp::Div if b[i] == 0 => return Err(EvalError::DivisionByZero),
                        BinOp::Div => a[i].checked_div(b[i]),
                        // int4mod & co.: zero raises, x % -1 is 0 (also for MIN).
                        BinOp::Mod if b[i] == 0 => return Err(EvalError::DivisionByZero),
                        BinOp::Mod if b[i] == -1 => Some(0),
                        BinOp::Mod => a[i].checked_rem(b[i]),
                    };
                    a[i] = v.filter(|v| (lo..=hi).contains(v)).ok_or(EvalError::IntOutOfRange(ty))?;
                }
            }
            (Values::Float8(a), Values::Float8(b)) => {
                for &i in &rows {
                    a[i] = float_op(op, a[i], b[i])?;
                }
            }
            (Values::Float4(a), Values::Float4(b)) => {
                for &i in &rows {
                    a[i] = float4_op(op, a[i], b[i])?;
                }
            }
            (Values::Numeric(a), Values::Numeric(b)) => {
                let (wa, b) = (std::mem::replace(a, NumVec::Rows(Vec::new())).widened(), b.widened());
                *a = wa;
                let fast = match (&*a, &b) {
                    (NumVec::Scaled { m: x, scale: s }, NumVec::Scaled { m: y, scale: t }) => {
                        scaled_op(op, x, *s, y, *t, &rows)
                    }
                    _ => None,
                };
                *a = match fast {
                    Some(v) => v,
                    None => {
                        let (a, b) =
                            (std::mem::replace(a, NumVec::Rows(Vec::new())).into_rows(), b.into_rows());
                        NumVec::Rows(self.numeric_rows_op(op, a, &b, &rows)?)
                    }
                };
            }
            (a, b) => unreachable!("operands of different types: {a:?} {b:?}"),
        }
        Ok(())
    }

    /// `a op b` per row, exact in 128 bits where it fits, else by PostgreSQL.
    fn numeric_rows_op(
        &mut self,
        op: BinOp,
        mut a: Vec<NumVal>,
        b: &[NumVal],
        rows: &[usize],
    ) -> Result<Vec<NumVal>, EvalError> {
        for &i in rows {
            let fast = match (&a[i], &b[i]) {
                (NumVal::Small(x), NumVal::Small(y)) => match op {
                    BinOp::Add => x.checked_add(*y),
                    BinOp::Sub => x.checked_sub(*y),
                    BinOp::Mul => x.checked_mul(*y),
                    // Its result scale is numeric_div's to choose: PostgreSQL computes it.
                    BinOp::Div => None,
                    BinOp::Mod => x.checked_rem(*y).map_err(|_| EvalError::DivisionByZero)?,
                },
                _ => None,
            };
            a[i] = match fast {
                Some(n) => NumVal::Small(n),
                None => NumVal::of_stored(self.fallback.binary(op, &a[i].stored(), &b[i].stored())),
            };
        }
        Ok(a)
    }

    /// A cast of `x` to `to`. The widening ones convert every row; the others compute
    /// the selected, valid rows alone (the rest hold fillers that must not fail) and
    /// raise core's error at the first that is out of the target's range.
    fn cast(&mut self, from: ExprType, to: ExprType, x: Evaluated) -> Result<Evaluated, EvalError> {
        let valid = x.valid;
        let rows: Vec<usize> = self.live(&valid).collect();
        let (lo, hi) = int_range(to);
        let values = match (x.values, to) {
            (Values::Int(v), ExprType::Int2 | ExprType::Int4 | ExprType::Int8) => {
                if super::plan::cast_can_fail(from, to) && rows.iter().any(|&r| !(lo..=hi).contains(&v[r])) {
                    return Err(EvalError::IntOutOfRange(to));
                }
                Values::Int(v)
            }
            (Values::Int(v), ExprType::Float8) => Values::Float8(v.iter().map(|&i| i as f64).collect()),
            (Values::Int(v), ExprType::Float4) => Values::Float4(v.iter().map(|&i| i as f32).collect()),
            (Values::Float4(v), ExprType::Float8) => Values::Float8(v.iter().map(|&f| f as f64).collect()),
            // Integers are their own mantissas at scale 0.
            (Values::Int(v), ExprType::Numeric) => Values::Numeric(NumVec::Scaled64 { m: v, scale: 0 }),
            // dtof: an infinite result of a finite value overflows, a zero one of a
            // non-zero value underflows.
            (Values::Float8(v), ExprType::Float4) => {
                let mut out = vec![0f32; self.rows];
                for &r in &rows {
                    let f = v[r] as f32;
                    if f.is_infinite() && !v[r].is_infinite() {
                        return Err(EvalError::FloatOverflow);
                    }
                    if f == 0.0 && v[r] != 0.0 {
                        return Err(EvalError::FloatUnderflow);
                    }
                    out[r] = f;
                }
                Values::Float4(out)
            }
            // dtoi4 & co.: rint (ties to even), then NaN or out of range raises.
            (Values::Float8(v), t) if t.is_int() => Values::Int(float_to_int(&v, &rows, to, self.rows)?),
            (Values::Float4(v), t) if t.is_int() => {
                let v: Vec<f64> = v.iter().map(|&f| f as f64).collect();
                Values::Int(float_to_int(&v, &rows, to, self.rows)?)
            }
            (Values::Numeric(n), ExprType::Float8) => Values::Float8(self.numeric_to_float8(n, &rows)),
            // numeric_int4 & co.: NaN and the infinities raise, then the value rounded
            // half away from zero must be in range.
            (Values::Numeric(n), t) if t.is_int() => {
                let mut out = vec![0i64; self.rows];
                for &r in &rows {
                    let v = n.get(r);
                    let rounded = match &v {
                        NumVal::Small(Num::NaN) => return Err(EvalError::NanToInt(to)),
                        NumVal::Small(Num::PosInf | Num::NegInf) => return Err(EvalError::InfinityToInt(to)),
                        NumVal::Small(x) => super::num::round_to_integer(Some(*x), &[]),
                        NumVal::Big(b) => super::num::round_to_integer(None, b),
                    };
                    out[r] = rounded
                        .and_then(|x| i64::try_from(x).ok())
                        .filter(|x| (lo..=hi).contains(x))
                        .ok_or(EvalError::IntOutOfRange(to))?;
                }
                Values::Int(out)
            }
            (v, to) => unreachable!("a cast of {v:?} to {to:?}"),
        };
        Ok(Evaluated { values, valid })
    }

    /// numeric_float8 of the rows `rows`: numeric_out's text read by float8in, which is
    /// the correctly rounded double of the value; a mantissa of 53 bits over a power of
    /// ten a double holds exactly is one correctly rounded division. Others are parsed,
    /// and values whose double would be zero or infinite (or beyond 128 bits) are
    /// PostgreSQL's own (its error).
    fn numeric_to_float8(&mut self, n: NumVec, rows: &[usize]) -> Vec<f64> {
        const EXACT: [f64; 23] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
            1e18, 1e19, 1e20, 1e21, 1e22,
        ];
        const MANTISSA: i128 = 1 << 53;
        let mut out = vec![0f64; self.rows];
        let fallback = &mut *self.fallback;
        let mut of = |v: NumVal| -> f64 {
            match v {
                NumVal::Small(Num::NaN) => f64::NAN,
                NumVal::Small(Num::PosInf) => f64::INFINITY,
                NumVal::Small(Num::NegInf) => f64::NEG_INFINITY,
                NumVal::Small(Num::Fin { m, scale })
                    if m.abs() <= MANTISSA && (scale as usize) < EXACT.len() =>
                {
                    m as f64 / EXACT[scale as usize]
                }
                NumVal::Small(n @ Num::Fin { m, .. }) => match n.text().parse::<f64>() {
                    Ok(f) if f.is_finite() && (f != 0.0 || m == 0) => f,
                    _ => fallback.float8(&n.to_stored()),
                },
                NumVal::Big(b) => fallback.float8(&b),
            }
        };
        match n {
            NumVec::Scaled64 { m, scale } if (scale as usize) < EXACT.len() => {
                let p = EXACT[scale as usize];
                for &r in rows {
                    out[r] = if (m[r] as i128).abs() <= MANTISSA {
                        m[r] as f64 / p
                    } else {
                        of(NumVal::Small(Num::Fin { m: m[r] as i128, scale }))
                    };
                }
            }
            n => rows.iter().for_each(|&r| out[r] = of(n.get(r))),
        }
        out
    }
}

/// `x op y` on two vectors of 64-bit mantissas, for every row (the rows not selected,
/// or NULL, hold fillers that compute harmlessly: one that overflows only sends the
/// vector to the 128-bit path, which computes the selected rows alone): the result
/// and its display scale (numeric_add's larger one, numeric_mul's sum), or None if
/// some row leaves 64 bits. Branch-free loops the compiler can vectorise.
/// One vector of a CASE's values from its branches' (each computed for its rows);
/// `null_rows` took no branch. Numerics stay scaled integers where every branch's are
/// at one scale (each value keeps its own display scale otherwise).
fn merge_branches(
    ty: ExprType,
    rows: usize,
    parts: Vec<(Vec<u32>, Evaluated)>,
    null_rows: &[u32],
) -> Evaluated {
    let mut valid = vec![true; rows];
    null_rows.iter().for_each(|&r| valid[r as usize] = false);
    for (sel, e) in &parts {
        if let Some(v) = &e.valid {
            sel.iter().for_each(|&r| valid[r as usize] = v[r as usize]);
        }
    }
    fn scatter<T: Copy + Default>(
        rows: usize,
        parts: &[(Vec<u32>, Evaluated)],
        get: impl Fn(&Values) -> &[T],
    ) -> Vec<T> {
        let mut out = vec![T::default(); rows];
        for (sel, e) in parts {
            let v = get(&e.values);
            sel.iter().for_each(|&r| out[r as usize] = v[r as usize]);
        }
        out
    }
    let values = match ty {
        ExprType::Int2 | ExprType::Int4 | ExprType::Int8 => Values::Int(scatter(rows, &parts, |v| match v {
            Values::Int(x) => x,
            _ => unreachable!("a CASE branch of another type"),
        })),
        ExprType::Float4 => Values::Float4(scatter(rows, &parts, |v| match v {
            Values::Float4(x) => x,
            _ => unreachable!("a CASE branch of another type"),
        })),
        ExprType::Float8 => Values::Float8(scatter(rows, &parts, |v| match v {
            Values::Float8(x) => x,
            _ => unreachable!("a CASE branch of another type"),
        })),
        ExprType::Numeric => Values::Numeric(merge_numeric(rows, parts)),
    };
    let valid = (!valid.iter().all(|v| *v)).then_some(valid);
    Evaluated { values, valid }
}

/// The numeric branches of a CASE as one vector.
fn merge_numeric(rows: usize, parts: Vec<(Vec<u32>, Evaluated)>) -> NumVec {
    fn nums(e: &Evaluated) -> &NumVec {
        match &e.values {
            Values::Numeric(n) => n,
            _ => unreachable!("a CASE branch of another type"),
        }
    }
    let scales: Vec<Option<u16>> = parts
        .iter()
        .map(|(_, e)| match nums(e) {
            NumVec::Scaled64 { scale, .. } | NumVec::Scaled { scale, .. } => Some(*scale),
            NumVec::Rows(_) => None,
        })
        .collect();
    let one_scale = scales.first().copied().flatten().filter(|s| scales.iter().all(|x| *x == Some(*s)));
    match one_scale {
        Some(scale) if parts.iter().all(|(_, e)| matches!(nums(e), NumVec::Scaled64 { .. })) => {
            let mut m = vec![0i64; rows];
            for (sel, e) in &parts {
                let NumVec::Scaled64 { m: x, .. } = nums(e) else { unreachable!() };
                sel.iter().for_each(|&r| m[r as usize] = x[r as usize]);
            }
            NumVec::Scaled64 { m, scale }
        }
        Some(scale) => {
            let mut m = vec![0i128; rows];
            for (sel, e) in &parts {
                match nums(e) {
                    NumVec::Scaled64 { m: x, .. } => {
                        sel.iter().for_each(|&r| m[r as usize] = x[r as usize] as i128)
                    }
                    NumVec::Scaled { m: x, .. } => sel.iter().for_each(|&r| m[r as usize] = x[r as usize]),
                    NumVec::Rows(_) => unreachable!("one scale"),
                }
            }
            NumVec::Scaled { m, scale }
        }
        None => {
            let mut out = vec![NumVal::Small(Num::ZERO); rows];
            for (sel, e) in &parts {
                let n = nums(e);
                sel.iter().for_each(|&r| out[r as usize] = n.get(r as usize));
            }
            NumVec::Rows(out)
        }
    }
}

fn scaled64_op(op: BinOp, x: &[i64], s: u16, y: &[i64], t: u16) -> Option<(Vec<i64>, u16)> {
    if matches!(op, BinOp::Div | BinOp::Mod) {
        // numeric_div chooses its scale: the per-row path asks PostgreSQL; a remainder
        // can divide by zero, which the per-row path raises at its row.
        return None;
    }
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut out = Vec::with_capacity(n);
    let mut overflow = false;
    let scale = match op {
        BinOp::Div | BinOp::Mod => unreachable!("returned above"),
        BinOp::Mul => {
            let scale = s.checked_add(t).filter(|&v| v <= super::num::DSCALE_MAX)?;
            out.extend(x.iter().zip(y).map(|(&a, &b)| {
                let (v, o) = a.overflowing_mul(b);
                overflow |= o;
                v
            }));
            scale
        }
        BinOp::Add | BinOp::Sub => {
            let scale = s.max(t);
            let fx = i64::try_from(pow10((scale - s) as u32)?).ok()?;
            let fy = i64::try_from(pow10((scale - t) as u32)?).ok()?;
            let sub = op == BinOp::Sub;
            out.extend(x.iter().zip(y).map(|(&a, &b)| {
                let (a1, o1) = a.overflowing_mul(fx);
                let (b1, o2) = b.overflowing_mul(fy);
                let (v, o3) = if sub { a1.overflowing_sub(b1) } else { a1.overflowing_add(b1) };
                overflow |= o1 | o2 | o3;
                v
            }));
            scale
        }
    };
    (!overflow).then_some((out, scale))
}

/// A finite numeric constant whose mantissa fits 64 bits, as (m, scale).
fn small_constant(e: &Expr) -> Option<(i64, u16)> {
    match e {
        Expr::Numeric(bytes) => match Num::from_stored(bytes)? {
            Num::Fin { m, scale } => Some((i64::try_from(m).ok()?, scale)),
            _ => None,
        },
        _ => None,
    }
}

/// `c op x` (`c_left`) or `x op c` for every row of `x` (see `scaled64_op`), c a
/// scalar (m, scale); None if some row leaves 64 bits.
fn scaled64_scalar_op(op: BinOp, x: &[i64], s: u16, c: (i64, u16), c_left: bool) -> Option<(Vec<i64>, u16)> {
    if matches!(op, BinOp::Div | BinOp::Mod) {
        // numeric_div chooses its scale: the per-row path asks PostgreSQL; a remainder
        // can divide by zero, which the per-row path raises at its row.
        return None;
    }
    let (cm, t) = c;
    let mut overflow = false;
    let out: Vec<i64>;
    let scale = match op {
        BinOp::Div | BinOp::Mod => unreachable!("returned above"),
        BinOp::Mul => {
            let scale = s.checked_add(t).filter(|&v| v <= super::num::DSCALE_MAX)?;
            out = x
                .iter()
                .map(|&a| {
                    let (v, o) = a.overflowing_mul(cm);
                    overflow |= o;
                    v
                })
                .collect();
            scale
        }
        BinOp::Add | BinOp::Sub => {
            let scale = s.max(t);
            let fx = i64::try_from(pow10((scale - s) as u32)?).ok()?;
            // The constant at the result's scale, once.
            let c = cm.checked_mul(i64::try_from(pow10((scale - t) as u32)?).ok()?)?;
            let sign = match (op, c_left) {
                (BinOp::Sub, false) => -1i64,
                _ => 1,
            };
            let c = c.checked_mul(sign)?;
            let negate_x = op == BinOp::Sub && c_left;
            out = x
                .iter()
                .map(|&a| {
                    let (a1, o1) = a.overflowing_mul(fx);
                    let (a2, o2) = if negate_x { a1.overflowing_neg() } else { (a1, false) };
                    let (v, o3) = a2.overflowing_add(c);
                    overflow |= o1 | o2 | o3;
                    v
                })
                .collect();
            scale
        }
    };
    (!overflow).then_some((out, scale))
}

/// `x op y` on two scaled vectors, for the rows `rows`, at the result's display scale
/// (numeric_add's larger one, numeric_mul's sum); None if some row does not fit.
fn scaled_op(op: BinOp, x: &[i128], s: u16, y: &[i128], t: u16, rows: &[usize]) -> Option<NumVec> {
    if matches!(op, BinOp::Div | BinOp::Mod) {
        // numeric_div chooses its scale: the per-row path asks PostgreSQL; a remainder
        // can divide by zero, which the per-row path raises at its row.
        return None;
    }
    let mut m = vec![0i128; x.len()];
    let scale = match op {
        BinOp::Div | BinOp::Mod => unreachable!("returned above"),
        BinOp::Mul => {
            let scale = s.checked_add(t).filter(|&v| v <= super::num::DSCALE_MAX)?;
            for &r in rows {
                m[r] = wide_mul(x[r], y[r])?;
            }
            scale
        }
        BinOp::Add | BinOp::Sub => {
            let scale = s.max(t);
            let (fx, fy) = (pow10((scale - s) as u32)?, pow10((scale - t) as u32)?);
            for &r in rows {
                // One side at the other's scale already (often both): no multiplication.
                let a = if fx == 1 { x[r] } else { wide_mul(x[r], fx)? };
                let b = if fy == 1 { y[r] } else { wide_mul(y[r], fy)? };
                m[r] = if op == BinOp::Add { a.checked_add(b)? } else { a.checked_sub(b)? };
            }
            scale
        }
    };
    Some(NumVec::Scaled { m, scale })
}

/// dtoi2 / dtoi4 / dtoi8 (and ftoi*, whose float4 is exact as a double) of the rows
/// `rows`: rint, then NaN or a value outside [MIN, -MIN) raises the type's error.
fn float_to_int(v: &[f64], rows: &[usize], to: ExprType, len: usize) -> Result<Vec<i64>, EvalError> {
    let (lo, _) = int_range(to);
    let (lo, hi) = (lo as f64, -(lo as f64));
    let mut out = vec![0i64; len];
    for &r in rows {
        let x = v[r].round_ties_even();
        if x.is_nan() || !(lo <= x && x < hi) {
            return Err(EvalError::IntOutOfRange(to));
        }
        out[r] = x as i64;
    }
    Ok(out)
}

/// float8pl / float8mi / float8mul: an infinite result of finite operands overflows,
/// a zero product of non-zero ones underflows.
fn float_op(op: BinOp, a: f64, b: f64) -> Result<f64, EvalError> {
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => return float_div(a, b),
        BinOp::Mod => unreachable!("no float modulo"),
    };
    if v.is_infinite() && !a.is_infinite() && !b.is_infinite() {
        return Err(EvalError::FloatOverflow);
    }
    if op == BinOp::Mul && v == 0.0 && a != 0.0 && b != 0.0 {
        return Err(EvalError::FloatUnderflow);
    }
    Ok(v)
}

/// float4pl / float4mi / float4mul, in single precision.
fn float4_op(op: BinOp, a: f32, b: f32) -> Result<f32, EvalError> {
    let v = match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => return float_div(a, b),
        BinOp::Mod => unreachable!("no float modulo"),
    };
    if v.is_infinite() && !a.is_infinite() && !b.is_infinite() {
        return Err(EvalError::FloatOverflow);
    }
    if op == BinOp::Mul && v == 0.0 && a != 0.0 && b != 0.0 {
        return Err(EvalError::FloatUnderflow);
    }
    Ok(v)
}

/// float8div / float4div (float.h's float8_div): division by zero (also of NaN or an
/// infinity) raises, then overflow and underflow as core checks them.
fn float_div<F: num_traits_lite::Float>(a: F, b: F) -> Result<F, EvalError> {
    if b == F::ZERO {
        return Err(EvalError::DivisionByZero);
    }
    let v = a / b;
    if v.is_infinite() && !a.is_infinite() {
        return Err(EvalError::FloatOverflow);
    }
    if v == F::ZERO && a != F::ZERO && !b.is_infinite() {
        return Err(EvalError::FloatUnderflow);
    }
    Ok(v)
}

/// What `float_div` needs of f32 and f64.
mod num_traits_lite {
    pub trait Float: Copy + PartialEq + std::ops::Div<Output = Self> {
        const ZERO: Self;
        fn is_infinite(self) -> bool;
    }
    impl Float for f64 {
        const ZERO: f64 = 0.0;
        fn is_infinite(self) -> bool {
            f64::is_infinite(self)
        }
    }
    impl Float for f32 {
        const ZERO: f32 = 0.0;
        fn is_infinite(self) -> bool {
            f32::is_infinite(self)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scaled 64-bit arithmetic on vectors: every row's result is the exact one, and None
    /// exactly when some row leaves 64 bits (from small magnitudes to near 2^63).
    #[test]
    fn scaled64_arithmetic_is_exact_or_declines() {
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..400 {
            // Magnitudes from small (the unchecked loops) to near 2^63 (the checked ones).
            let bits = 4 + round % 60;
            let mut value = || {
                let v = (next() >> (64 - bits)) as i64;
                if next() & 1 == 0 {
                    v
                } else {
                    -v
                }
            };
            let x: Vec<i64> = (0..37).map(|_| value()).collect();
            let y: Vec<i64> = (0..37).map(|_| value()).collect();
            let (s, t) = ((round % 3) as u16, (round % 5) as u16);
            for op in [BinOp::Mul, BinOp::Add, BinOp::Sub] {
                let scale = if op == BinOp::Mul { s + t } else { s.max(t) };
                let exact = |a: i64, b: i64| -> i128 {
                    let (a, b) = (a as i128, b as i128);
                    match op {
                        BinOp::Mul => a * b,
                        _ => {
                            let (a, b) =
                                (a * 10i128.pow((scale - s) as u32), b * 10i128.pow((scale - t) as u32));
                            if op == BinOp::Sub {
                                a - b
                            } else {
                                a + b
                            }
                        }
                    }
                };
                let want: Option<Vec<i64>> =
                    x.iter().zip(&y).map(|(&a, &b)| i64::try_from(exact(a, b)).ok()).collect();
                assert_eq!(scaled64_op(op, &x, s, &y, t), want.map(|m| (m, scale)), "{op:?} at {bits} bits");
                let c = y[0];
                for c_left in [false, true] {
                    let want: Option<Vec<i64>> = x
                        .iter()
                        .map(|&a| i64::try_from(if c_left { exact(c, a) } else { exact(a, c) }).ok())
                        .collect();
                    let got = if c_left {
                        // `c op x`: the constant takes the left operand's scale here.
                        scaled64_scalar_op(op, &x, t, (c, s), true)
                    } else {
                        scaled64_scalar_op(op, &x, s, (c, t), false)
                    };
                    // The scalar form may also decline where a constant alone leaves 64 bits.
                    if let Some(got) = got {
                        assert_eq!(
                            Some(got),
                            want.map(|m| (m, scale)),
                            "{op:?} scalar {c_left} at {bits} bits"
                        );
                    }
                }
            }
        }
    }

    struct Cols(Vec<DecodedVector>);
    impl Columns for Cols {
        fn column(&self, att: usize) -> &DecodedVector {
            &self.0[att]
        }
    }

    /// A fallback that must not be needed.
    struct NoFallback;
    impl NumericFallback for NoFallback {
        fn binary(&mut self, op: BinOp, _: &[u8], _: &[u8]) -> Vec<u8> {
            panic!("fallback asked for {op:?}")
        }
        fn neg(&mut self, _: &[u8]) -> Vec<u8> {
            panic!("fallback asked for a negation")
        }
        fn float8(&mut self, _: &[u8]) -> f64 {
            panic!("fallback asked for a float8")
        }
    }

    /// A fallback that records what it was asked and answers NaN.
    #[derive(Default)]
    struct Recording(Vec<BinOp>);
    impl NumericFallback for Recording {
        fn binary(&mut self, op: BinOp, _: &[u8], _: &[u8]) -> Vec<u8> {
            self.0.push(op);
            Num::NaN.to_stored()
        }
        fn neg(&mut self, _: &[u8]) -> Vec<u8> {
            Num::NaN.to_stored()
        }
        fn float8(&mut self, _: &[u8]) -> f64 {
            f64::NAN
        }
    }

    fn ints(v: &[i64], valid: Option<Vec<bool>>) -> DecodedVector {
        DecodedVector::from_parts(v.len() as u32, valid, DecodedValues::Int(v.to_vec()), None)
    }

    fn numerics(texts: &[&str]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for t in texts {
            data.extend(parse_num(t).to_stored());
            offsets.push(data.len() as u32);
        }
        DecodedVector::from_parts(texts.len() as u32, None, DecodedValues::Bytes { offsets, data }, None)
    }

    fn parse_num(t: &str) -> Num {
        match t {
            "NaN" => Num::NaN,
            "Infinity" => Num::PosInf,
            "-Infinity" => Num::NegInf,
            _ => {
                let neg = t.starts_with('-');
                let t = t.trim_start_matches('-');
                let (int, frac) = t.split_once('.').unwrap_or((t, ""));
                let m: i128 = format!("{int}{frac}").parse().unwrap();
                Num::Fin { m: if neg { -m } else { m }, scale: frac.len() as u16 }
            }
        }
    }

    fn texts(e: &Evaluated, sel: &[u32]) -> Vec<String> {
        let Values::Numeric(v) = &e.values else { panic!("not numeric: {e:?}") };
        sel.iter()
            .map(|&r| match (&v.get(r as usize), e.valid.as_ref().is_none_or(|x| x[r as usize])) {
                (_, false) => "NULL".to_string(),
                (NumVal::Small(n), true) => n.text(),
                (NumVal::Big(_), true) => "big".to_string(),
            })
            .collect()
    }

    fn col(att: usize, ty: ExprType) -> Box<Expr> {
        Box::new(Expr::Column { att, ty })
    }

    fn bin(op: BinOp, l: Box<Expr>, r: Box<Expr>) -> Box<Expr> {
        Box::new(Expr::Binary { op, left: l, right: r })
    }

    fn numeric_const(t: &str) -> Box<Expr> {
        Box::new(Expr::Numeric(parse_num(t).to_stored()))
    }

    #[test]
    fn q1_charge_is_exact_with_core_scales() {
        // extendedprice * (1 - discount) * (1 + tax), numeric(15,2) columns; the
        // expected texts are what PostgreSQL 15 printed for the same rows.
        let cols = Cols(vec![
            numerics(&["12345.67", "0.01", "99999.99", "-5.00"]),
            numerics(&["0.04", "0.10", "0.00", "0.05"]),
            numerics(&["0.02", "0.08", "0.08", "0.00"]),
        ]);
        let n = ExprType::Numeric;
        let one = || numeric_const("1");
        let disc = bin(BinOp::Mul, col(0, n), bin(BinOp::Sub, one(), col(1, n)));
        let charge = bin(BinOp::Mul, disc.clone(), bin(BinOp::Add, one(), col(2, n)));
        let sel = [0, 1, 2, 3];
        let e = eval(&disc, &cols, 4, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &sel), ["11851.8432", "0.0090", "99999.9900", "-4.7500"]);
        let e = eval(&charge, &cols, 4, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &sel), ["12088.880064", "0.009720", "107999.989200", "-4.750000"]);
    }

    #[test]
    fn scaled_numerics_are_read_as_their_mantissas() {
        use crate::storage::format::encoding::ScaledNumerics;
        // The same column as bytes and as scaled numerics (NULL in row 1).
        let texts_in = ["12345.67", "0.00", "-5.00", "0.01"];
        let valid = Some(vec![true, false, true, true]);
        let mut bytes = numerics(&texts_in);
        bytes.validity = valid.clone();
        let mut scaled = DecodedVector::from_parts(
            4,
            valid,
            DecodedValues::Bytes { offsets: vec![0; 5], data: Vec::new() },
            None,
        );
        scaled.scaled = Some(ScaledNumerics { m: vec![1234567, 0, -500, 1], scale: 2 });
        let n = ExprType::Numeric;
        let expr = bin(BinOp::Mul, col(0, n), bin(BinOp::Sub, numeric_const("1"), col(1, n)));
        let disc = numerics(&["0.04", "0.10", "0.00", "0.05"]);
        let sel = [0, 1, 2, 3];
        let a = eval(&expr, &Cols(vec![bytes, disc.clone()]), 4, &sel, &mut NoFallback).unwrap();
        let b = eval(&expr, &Cols(vec![scaled.clone(), disc]), 4, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&a, &sel), texts(&b, &sel));
        assert_eq!(texts(&b, &sel), ["11851.8432", "NULL", "-5.0000", "0.0095"]);
        let rows = VectorRows { rows: 4, sel: &sel };
        assert_eq!(rows.numeric(&scaled), Ok(NumVec::Scaled64 { m: vec![1234567, 0, -500, 1], scale: 2 }));
        let NumVec::Rows(per_row) = rows.numeric_rows(&scaled, &scaled.validity).unwrap() else { panic!() };
        assert_eq!(per_row[3], NumVal::Small(Num::Fin { m: 1, scale: 2 }));
    }

    #[test]
    fn products_that_leave_64_bits_go_on_in_128() {
        let n = ExprType::Numeric;
        // 92233720368547758.07 * 10.00 leaves 64 bits (and an unselected row's would
        // have, too); 1.5 + 2.25 stays in them.
        let cols = Cols(vec![DecodedVector::from_parts(
            3,
            None,
            DecodedValues::Bytes { offsets: vec![0; 4], data: Vec::new() },
            None,
        )]);
        let mut c = cols;
        c.0[0].scaled = Some(crate::storage::format::encoding::ScaledNumerics {
            m: vec![i64::MAX, 150, i64::MIN],
            scale: 2,
        });
        let e = eval(&bin(BinOp::Mul, col(0, n), numeric_const("10.00")), &c, 3, &[0, 1], &mut NoFallback)
            .unwrap();
        assert!(matches!(e.values, Values::Numeric(NumVec::Scaled { .. })));
        assert_eq!(texts(&e, &[0, 1]), ["922337203685477580.7000", "15.0000"]);
        let e =
            eval(&bin(BinOp::Add, col(0, n), numeric_const("2.25")), &c, 3, &[1], &mut NoFallback).unwrap();
        assert!(matches!(e.values, Values::Numeric(NumVec::Scaled { .. })), "row 0 overflows, unselected");
        assert_eq!(texts(&e, &[1]), ["3.75"]);
        let e = eval(&bin(BinOp::Sub, col(0, n), numeric_const("0.5")), &c, 3, &[1], &mut NoFallback);
        assert_eq!(texts(&e.unwrap(), &[1]), ["1.00"]);
        // Two columns of scaled numerics, read in place; row 0's square leaves 64 bits
        // (selected: computed in 128; unselected: the rest stays in 64).
        let sq = bin(BinOp::Mul, col(0, n), col(0, n));
        let e = eval(&sq, &c, 3, &[0, 1], &mut NoFallback).unwrap();
        assert_eq!(
            texts(&e, &[0, 1]),
            ["8507059173023461584739690778423250.1249".to_string(), "2.2500".into()]
        );
        let e = eval(&sq, &c, 3, &[1], &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[1]), ["2.2500"]);
        let e = eval(&bin(BinOp::Sub, numeric_const("1"), col(0, n)), &c, 3, &[1], &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[1]), ["-0.50"]);
        let small = Cols(vec![numerics(&["1.5", "2.25"])]);
        let e = eval(&bin(BinOp::Mul, col(0, n), col(0, n)), &small, 2, &[0, 1], &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[0, 1]), ["2.25", "5.0625"]);
        let e = eval(&Expr::Neg(col(0, n)), &c, 3, &[0, 1], &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[0, 1]), ["-92233720368547758.07", "-1.50"]);
        let e = eval(&Expr::Neg(col(0, n)), &c, 3, &[2], &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[2]), ["92233720368547758.08"]);
    }

    #[test]
    fn nulls_propagate_and_unselected_rows_are_not_computed() {
        let i4 = ExprType::Int4;
        let cols = Cols(vec![
            ints(&[1, i32::MAX as i64, 3], Some(vec![true, true, false])),
            ints(&[10, 1, 30], None),
        ]);
        let sum = bin(BinOp::Add, col(0, i4), col(1, i4));
        // Row 1 would overflow, but it is not selected; row 2 is NULL.
        let e = eval(&sum, &cols, 3, &[0, 2], &mut NoFallback).unwrap();
        assert_eq!(e.valid, Some(vec![true, true, false]));
        let Values::Int(v) = &e.values else { panic!() };
        assert_eq!(v[0], 11);
        assert_eq!(
            eval(&sum, &cols, 3, &[0, 1], &mut NoFallback),
            Err(EvalError::IntOutOfRange(ExprType::Int4))
        );
        assert_eq!(EvalError::IntOutOfRange(i4).message(), "integer out of range");
    }

    #[test]
    fn integer_overflow_per_type() {
        let cols = Cols(vec![ints(&[i16::MAX as i64, i16::MIN as i64, i64::MAX, i64::MIN], None)]);
        let c = |ty| col(0, ty);
        let two = |ty| Box::new(Expr::Int { value: 2, ty });
        let i2 = ExprType::Int2;
        let i8 = ExprType::Int8;
        // 32767::int2 * 2: smallint out of range.
        let e = eval(&bin(BinOp::Mul, c(i2), two(i2)), &cols, 4, &[0], &mut NoFallback);
        assert_eq!(e.unwrap_err().message(), "smallint out of range");
        // -(-32768::int2): smallint out of range.
        assert!(eval(&Expr::Neg(c(i2)), &cols, 4, &[1], &mut NoFallback).is_err());
        // 9223372036854775807 + 2: bigint out of range.
        let e = eval(&bin(BinOp::Add, c(i8), two(i8)), &cols, 4, &[2], &mut NoFallback);
        assert_eq!(e.unwrap_err().message(), "bigint out of range");
        assert!(eval(&Expr::Neg(c(i8)), &cols, 4, &[3], &mut NoFallback).is_err());
        // int2 widened to int4 does not overflow: 32767::int2 * 2::int4 = 65534.
        let wide =
            bin(BinOp::Mul, Box::new(Expr::Cast { to: ExprType::Int4, arg: c(i2) }), two(ExprType::Int4));
        let e = eval(&wide, &cols, 4, &[0], &mut NoFallback).unwrap();
        assert!(matches!(&e.values, Values::Int(v) if v[0] == 65534));
    }

    #[test]
    fn float_overflow_and_underflow_as_float8mul() {
        let f8 = ExprType::Float8;
        let cols = Cols(vec![DecodedVector::from_parts(
            3,
            None,
            DecodedValues::Float64(vec![1e300, 1e-300, f64::INFINITY]),
            None,
        )]);
        let sq = bin(BinOp::Mul, col(0, f8), col(0, f8));
        assert_eq!(eval(&sq, &cols, 3, &[0], &mut NoFallback), Err(EvalError::FloatOverflow));
        assert_eq!(eval(&sq, &cols, 3, &[1], &mut NoFallback), Err(EvalError::FloatUnderflow));
        // Infinity * Infinity is no overflow.
        let e = eval(&sq, &cols, 3, &[2], &mut NoFallback).unwrap();
        assert!(matches!(&e.values, Values::Float8(v) if v[2] == f64::INFINITY));
        // int → float8: 3::int4 * 0.5::float8.
        let cols = Cols(vec![ints(&[3], None)]);
        let half = Box::new(Expr::Float { value: 0.5, ty: f8 });
        let cast = Box::new(Expr::Cast { to: f8, arg: col(0, ExprType::Int4) });
        let e = eval(&bin(BinOp::Mul, cast, half), &cols, 1, &[0], &mut NoFallback).unwrap();
        assert_eq!(e.values, Values::Float8(vec![1.5]));
    }

    #[test]
    fn numeric_specials_mixed_scales_and_casts() {
        let n = ExprType::Numeric;
        let cols = Cols(vec![
            numerics(&["NaN", "Infinity", "-Infinity", "1.5", "2.250", "Infinity"]),
            ints(&[1, 0, 2, 3, -4, 0], None),
        ]);
        let qty = Box::new(Expr::Cast { to: n, arg: col(1, ExprType::Int4) });
        let sel = [0, 1, 2, 3, 4, 5];
        // x * qty: NaN * 1 = NaN, Infinity * 0 = NaN, -Infinity * 2 = -Infinity.
        let e = eval(&bin(BinOp::Mul, col(0, n), qty.clone()), &cols, 6, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &sel), ["NaN", "NaN", "-Infinity", "4.5", "-9.000", "NaN"]);
        // x - qty + 0.05
        let e = eval(
            &bin(BinOp::Add, bin(BinOp::Sub, col(0, n), qty), numeric_const("0.05")),
            &cols,
            6,
            &sel,
            &mut NoFallback,
        )
        .unwrap();
        assert_eq!(texts(&e, &sel), ["NaN", "Infinity", "-Infinity", "-1.45", "6.300", "Infinity"]);
        let e = eval(&Expr::Neg(col(0, n)), &cols, 6, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &sel), ["NaN", "-Infinity", "Infinity", "-1.5", "-2.250", "-Infinity"]);
    }

    #[test]
    fn one_scale_vectors_stay_scaled_integers() {
        let n = ExprType::Numeric;
        let cols = Cols(vec![numerics(&["1.25", "-3.50", "0.00"]), numerics(&["1.5", "2.25", "3"])]);
        let sel = [0, 1, 2];
        let e =
            eval(&bin(BinOp::Mul, col(0, n), numeric_const("2")), &cols, 3, &sel, &mut NoFallback).unwrap();
        assert_eq!(e.values, Values::Numeric(NumVec::Scaled64 { m: vec![250, -700, 0], scale: 2 }));
        // Mixed scales are kept per row, with each row's own scale.
        let e = eval(&bin(BinOp::Add, col(0, n), col(1, n)), &cols, 3, &sel, &mut NoFallback).unwrap();
        assert!(matches!(&e.values, Values::Numeric(NumVec::Rows(_))));
        assert_eq!(texts(&e, &sel), ["2.75", "-1.25", "3.00"]);
        // A scaled product that leaves 128 bits goes per row (and to PostgreSQL).
        let cols = Cols(vec![numerics(&["10000000000000000000000000", "3"])]);
        let mut fallback = Recording::default();
        let e = eval(&bin(BinOp::Mul, col(0, n), col(0, n)), &cols, 2, &[0, 1], &mut fallback).unwrap();
        assert_eq!((fallback.0.len(), texts(&e, &[0, 1])), (1, vec!["NaN".to_string(), "9".to_string()]));
    }

    #[test]
    fn results_beyond_128_bits_go_to_postgresql() {
        let n = ExprType::Numeric;
        let cols = Cols(vec![numerics(&["10000000000000000000000000", "2"])]);
        let sq = bin(BinOp::Mul, col(0, n), col(0, n));
        let mut fallback = Recording::default();
        let e = eval(&sq, &cols, 2, &[0, 1], &mut fallback).unwrap();
        // Only the row that does not fit asks PostgreSQL.
        assert_eq!(fallback.0, vec![BinOp::Mul]);
        assert_eq!(texts(&e, &[0, 1]), ["NaN", "4"]);
    }

    #[test]
    fn case_takes_rows_branch_by_branch_and_computes_each_for_its_rows() {
        use crate::exec::filter::plan::FilterPlan;
        use crate::exec::filter::Test;
        use crate::storage::format::zonemap::{Bound, CmpOp};
        let i4 = ExprType::Int4;
        // Row 3's value would overflow `* 2`, but its condition sends it to ELSE.
        let x = ints(&[1, 10, 0, i32::MAX as i64, 7, 3], Some(vec![true, true, false, true, true, true]));
        let cols = Cols(vec![x]);
        let gt =
            |c| crate::exec::filter::Filter::Test { att: 0, test: Test::Compare(CmpOp::Gt, Bound::Int(c)) };
        let lt =
            |c| crate::exec::filter::Filter::Test { att: 0, test: Test::Compare(CmpOp::Lt, Bound::Int(c)) };
        let plan = |att| FilterPlan::Test { att, test: crate::exec::filter::plan::PlanTest::IsNull };
        let case = Expr::Case {
            whens: vec![
                (plan(0), *bin(BinOp::Mul, col(0, i4), Box::new(Expr::Int { value: 2, ty: i4 }))),
                (plan(0), *col(0, i4)),
            ],
            otherwise: Some(Box::new(Expr::Int { value: -1, ty: i4 })),
        };
        let sel = [0, 1, 2, 3, 4];
        // WHEN x > 5 AND x < 100 THEN x * 2 WHEN x < 5 THEN x ELSE -1; NULL falls through.
        let conds = [crate::exec::filter::Filter::And(vec![gt(5), lt(100)]), lt(5)];
        let e = eval_with(&case, &cols, 6, &sel, &conds, &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        assert_eq!([v[0], v[1], v[2], v[3], v[4]], [1, 20, -1, -1, 14]);
        assert_eq!(e.valid, None);
        // Without ELSE the rows no branch takes are NULL.
        let no_else = Expr::Case { whens: vec![(plan(0), *col(0, i4))], otherwise: None };
        let e = eval_with(&no_else, &cols, 6, &sel, &conds[1..], &mut NoFallback).unwrap();
        let valid = e.valid.unwrap();
        assert_eq!([valid[0], valid[1], valid[2], valid[3], valid[4]], [true, false, false, false, false]);
        // A branch a row takes fails as core's operator does.
        let overflowing = [gt(5), lt(5)];
        let e = eval_with(&case, &cols, 6, &sel, &overflowing, &mut NoFallback);
        assert_eq!(e, Err(EvalError::IntOutOfRange(i4)));
    }

    #[test]
    fn numeric_case_branches_keep_their_own_scales() {
        use crate::exec::filter::plan::FilterPlan;
        use crate::exec::filter::{Filter, Test};
        use crate::storage::format::zonemap::{Bound, CmpOp};
        let n = ExprType::Numeric;
        let cols = Cols(vec![ints(&[1, 2, 3], None), numerics(&["1.25", "2.50", "3.75"])]);
        let plan = FilterPlan::Test { att: 0, test: crate::exec::filter::plan::PlanTest::IsNull };
        let case = Expr::Case { whens: vec![(plan, *col(1, n))], otherwise: Some(numeric_const("0")) };
        let conds = [Filter::Test { att: 0, test: Test::Compare(CmpOp::Ge, Bound::Int(2)) }];
        let e = eval_with(&case, &cols, 3, &[0, 1, 2], &conds, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &[0, 1, 2]), ["0", "2.50", "3.75"]);
        let Values::Numeric(NumVec::Rows(_)) = e.values else { panic!("mixed scales are kept per row") };
    }

    #[test]
    fn division_as_int4div_and_float8div() {
        let i4 = ExprType::Int4;
        let cols = Cols(vec![ints(&[-7, 7, i32::MIN as i64, 5], None), ints(&[2, -2, -1, 0], None)]);
        let div = bin(BinOp::Div, col(0, i4), col(1, i4));
        let e = eval(&div, &cols, 4, &[0, 1], &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        assert_eq!([v[0], v[1]], [-3, -3]);
        assert_eq!(eval(&div, &cols, 4, &[2], &mut NoFallback), Err(EvalError::IntOutOfRange(i4)));
        assert_eq!(eval(&div, &cols, 4, &[3], &mut NoFallback), Err(EvalError::DivisionByZero));
        assert_eq!(float_div(1.0f64, 0.0), Err(EvalError::DivisionByZero));
        assert_eq!(float_div(f64::NAN, -0.0), Err(EvalError::DivisionByZero));
        assert_eq!(float_div(1e308f64, 1e-10), Err(EvalError::FloatOverflow));
        assert_eq!(float_div(1e-308f64, 1e300), Err(EvalError::FloatUnderflow));
        assert_eq!(float_div(1.0f64, f64::INFINITY), Ok(0.0));
        assert_eq!(float_div(f64::INFINITY, 2.0), Ok(f64::INFINITY));
        assert_eq!(float_div(3.0f32, 2.0), Ok(1.5));
    }

    #[test]
    fn remainder_as_int4mod_and_numeric_mod() {
        let i4 = ExprType::Int4;
        let cols = Cols(vec![ints(&[-7, 7, i32::MIN as i64, 5], None), ints(&[2, -2, -1, 0], None)]);
        let rem = bin(BinOp::Mod, col(0, i4), col(1, i4));
        let e = eval(&rem, &cols, 4, &[0, 1, 2], &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        // The dividend's sign; MIN % -1 is 0, not an overflow.
        assert_eq!([v[0], v[1], v[2]], [-1, 1, 0]);
        assert_eq!(eval(&rem, &cols, 4, &[3], &mut NoFallback), Err(EvalError::DivisionByZero));
        // numeric_mod: the larger display scale, specials as numeric.c, zero raises.
        let n = ExprType::Numeric;
        let cols = Cols(vec![
            numerics(&["7.5", "-7.25", "NaN", "Infinity", "3.1", "4", "Infinity", "0"]),
            numerics(&["2", "2.0", "0", "3", "-Infinity", "1.25", "0", "5"]),
        ]);
        let rem = bin(BinOp::Mod, col(0, n), col(1, n));
        let sel = [0, 1, 2, 3, 4, 5, 7];
        let e = eval(&rem, &cols, 8, &sel, &mut NoFallback).unwrap();
        assert_eq!(texts(&e, &sel), ["1.5", "-1.25", "NaN", "NaN", "3.1", "0.25", "0"]);
        assert_eq!(eval(&rem, &cols, 8, &[6], &mut NoFallback), Err(EvalError::DivisionByZero));
        let e = eval(&bin(BinOp::Mod, col(0, n), numeric_const("0.50")), &cols, 8, &[0, 5], &mut NoFallback);
        assert_eq!(texts(&e.unwrap(), &[0, 5]), ["0.00", "0.00"]);
    }

    #[test]
    fn narrowing_casts_fail_only_on_the_rows_computed() {
        let cast = |to, arg| Box::new(Expr::Cast { to, arg });
        let cols = Cols(vec![
            ints(&[40000, 7, -32768, i64::MAX], None),
            DecodedVector::from_parts(
                5,
                None,
                DecodedValues::Float64(vec![2.5, -3.5, 2147483647.4, 2147483647.5, f64::NAN]),
                None,
            ),
            DecodedVector::from_parts(3, None, DecodedValues::Float64(vec![1e39, 1e-50, 0.1]), None),
        ]);
        let to_i2 = cast(ExprType::Int2, col(0, ExprType::Int8));
        let e = eval(&to_i2, &cols, 4, &[1, 2], &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        assert_eq!([v[1], v[2]], [7, -32768]);
        assert_eq!(
            eval(&to_i2, &cols, 4, &[0], &mut NoFallback),
            Err(EvalError::IntOutOfRange(ExprType::Int2))
        );
        // dtoi4: rint (ties to even), NaN and 2^31 out of range.
        let to_i4 = cast(ExprType::Int4, col(1, ExprType::Float8));
        let e = eval(&to_i4, &cols, 5, &[0, 1, 2], &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        assert_eq!([v[0], v[1], v[2]], [2, -4, 2147483647]);
        for r in [3, 4] {
            assert_eq!(
                eval(&to_i4, &cols, 5, &[r], &mut NoFallback),
                Err(EvalError::IntOutOfRange(ExprType::Int4))
            );
        }
        // dtof: overflow, underflow.
        let to_f4 = cast(ExprType::Float4, col(2, ExprType::Float8));
        assert_eq!(eval(&to_f4, &cols, 3, &[0], &mut NoFallback), Err(EvalError::FloatOverflow));
        assert_eq!(eval(&to_f4, &cols, 3, &[1], &mut NoFallback), Err(EvalError::FloatUnderflow));
        let e = eval(&to_f4, &cols, 3, &[2], &mut NoFallback).unwrap();
        assert_eq!(e.values, Values::Float4(vec![0.0, 0.0, 0.1f32]));
    }

    #[test]
    fn numeric_to_float8_is_the_correctly_rounded_double() {
        let cols = Cols(vec![numerics(&[
            "0.1",
            "123456789.123456789",
            "-2.50",
            "NaN",
            "-Infinity",
            "0.000000000000000000000000001",
            "98765432109876543210.5",
        ])]);
        let e = eval(
            &Expr::Cast { to: ExprType::Float8, arg: col(0, ExprType::Numeric) },
            &cols,
            7,
            &[0, 1, 2, 3, 4, 5, 6],
            &mut NoFallback,
        )
        .unwrap();
        let Values::Float8(v) = e.values else { panic!("floats") };
        assert_eq!(v[0], 0.1);
        assert_eq!(v[1], "123456789.123456789".parse::<f64>().unwrap());
        assert_eq!(v[2], -2.5);
        assert!(v[3].is_nan());
        assert_eq!(v[4], f64::NEG_INFINITY);
        assert_eq!(v[5], 1e-27);
        assert_eq!(v[6], 98765432109876543210.5);
    }

    #[test]
    fn numeric_to_integer_rounds_half_away_from_zero() {
        let cols =
            Cols(vec![numerics(&["2.5", "-2.5", "2.49", "-0.5", "32767.4", "32767.5", "NaN", "-Infinity"])]);
        let to_i2 = Expr::Cast { to: ExprType::Int2, arg: col(0, ExprType::Numeric) };
        let e = eval(&to_i2, &cols, 8, &[0, 1, 2, 3, 4], &mut NoFallback).unwrap();
        let Values::Int(v) = &e.values else { panic!("ints") };
        assert_eq!(&v[..5], &[3, -3, 2, -1, 32767]);
        assert_eq!(
            eval(&to_i2, &cols, 8, &[5], &mut NoFallback),
            Err(EvalError::IntOutOfRange(ExprType::Int2))
        );
        assert_eq!(eval(&to_i2, &cols, 8, &[6], &mut NoFallback), Err(EvalError::NanToInt(ExprType::Int2)));
        assert_eq!(
            eval(&to_i2, &cols, 8, &[7], &mut NoFallback),
            Err(EvalError::InfinityToInt(ExprType::Int2))
        );
        // Beyond 128 bits: read from the stored digits (base 10000).
        let stored = |negative: bool, weight: i16, dscale: u16, digits: &[u16]| {
            let mut b = ((if negative { 0x4000 } else { 0 }) | dscale).to_le_bytes().to_vec();
            b.extend_from_slice(&weight.to_le_bytes());
            digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
            b
        };
        // 12.5000...0001 (44 fraction digits) and -1.4999...
        let mut digits = vec![12, 5000];
        digits.extend([0; 9]);
        digits.push(1);
        assert_eq!(super::super::num::round_to_integer(None, &stored(false, 0, 44, &digits)), Some(13));
        assert_eq!(
            super::super::num::round_to_integer(None, &stored(true, 0, 8, &[1, 4999, 9999])),
            Some(-1)
        );
        assert_eq!(super::super::num::round_to_integer(None, &stored(false, 2, 0, &[7])), Some(700_000_000));
        assert_eq!(super::super::num::round_to_integer(None, &stored(false, 40, 0, &[1])), None);
    }
}
