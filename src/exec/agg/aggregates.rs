//! The aggregates a ColumnarAgg folds: their specs, their FILTERs resolved for the scan,
//! their collations and their states (`fold::Acc`), folded a vector at a time over the
//! rows a grouping policy gives them.

use super::fold::Acc;
use super::func::{AggFunc, InputType};
use super::groups::Grouper;
use super::kernels::{Gids, Overflow};
use super::numeric_fallback::PgNumeric;
use super::spec::{AggSpec, KeySpec};
use crate::exec::expr::eval::{self, Columns, EvalError, Evaluated, NumVec, Values, VectorRows};
use crate::exec::expr::num::DSCALE_MAX;
use crate::exec::expr::plan::{cast_can_fail, BinOp, Expr, ExprType};
use crate::exec::filter::{kernels as filter_kernels, Filter};
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::read::reader::Reader;
use pgrx::pg_sys;
use std::borrow::Cow;

pub struct Aggregates {
    pub specs: Vec<AggSpec>,
    /// Per aggregate, its FILTER resolved for this scan (set when the scan's operands
    /// are known).
    pub filters: Vec<Option<Filter>>,
    /// Per aggregate, the CASE conditions of its argument resolved for this scan (in
    /// `Expr::conditions`' order; set with `filters`).
    pub conditions: Vec<Vec<Filter>>,
    /// Per aggregate, the collation a text min/max compares in.
    pub collations: Vec<pg_sys::Oid>,
    pub states: Vec<Acc>,
    /// Bytes of state per group, all aggregates together.
    state_bytes: usize,
    sub_sel: Vec<u32>,
    sub_gids: Vec<u32>,
    /// The current vector's numeric columns, decoded once for every aggregate.
    numerics: NumericColumns,
}

/// Numeric columns of the current vector, decoded for its selected rows.
#[derive(Default)]
pub struct NumericColumns(Vec<(usize, NumVec)>);

impl Aggregates {
    pub fn new(specs: Vec<AggSpec>) -> Aggregates {
        let state_bytes = specs.iter().map(AggSpec::bytes_per_group).sum();
        Aggregates {
            specs,
            filters: Vec::new(),
            conditions: Vec::new(),
            collations: Vec::new(),
            states: Vec::new(),
            state_bytes,
            sub_sel: Vec::new(),
            sub_gids: Vec::new(),
            numerics: NumericColumns::default(),
        }
    }

    /// Empty states for a new batch of groups: the one group at once without GROUP BY,
    /// none yet with one.
    pub fn reset(&mut self, grouped: bool) {
        self.states = self.specs.iter().map(|a| Acc::new(a.func, a.input)).collect();
        if !grouped {
            self.states.iter_mut().for_each(|a| a.resize(1));
        }
    }

    /// Per attribute of `natts`, whether the fold reads it only as numbers (numeric
    /// aggregate arguments and expressions, filters), so that vectors of scaled
    /// numerics may stay numbers (`Reader::set_scaled`): not the group keys, nor the
    /// column of an aggregate that reads values as bytes (min/max of text, count).
    pub fn scaled_attributes(&self, keys: &[KeySpec], natts: usize) -> Vec<bool> {
        let mut scaled = vec![true; natts];
        let bytes_read =
            self.specs.iter().filter(|a| a.expr.is_none() && !numeric_fold(a)).filter_map(|a| a.att);
        // A computed key reads its columns as numbers.
        let key_columns = keys.iter().filter(|k| k.expr.is_none()).map(|k| k.att);
        for att in key_columns.chain(bytes_read) {
            if let Some(s) = scaled.get_mut(att) {
                *s = false;
            }
        }
        scaled
    }

    /// Whether the aggregates may see a vector's rows ordered by group (each group's
    /// rows still in row order): no FILTER (its selection must stay ascending), and no
    /// argument whose evaluation can fail in two ways, so that which row fails first
    /// cannot change the error (only integer and float arithmetic can).
    pub fn order_free(&self) -> bool {
        fn numeric_only(e: &Expr) -> bool {
            match e {
                Expr::Column { .. } | Expr::Int { .. } | Expr::Float { .. } | Expr::Numeric(_) => true,
                Expr::Neg(a) => a.ty() == ExprType::Numeric && numeric_only(a),
                // A numeric remainder can also divide by zero.
                Expr::Binary { op, left, right } => {
                    left.ty() == ExprType::Numeric
                        && *op != BinOp::Mod
                        && numeric_only(left)
                        && numeric_only(right)
                }
                // A cast that cannot fail, of an argument that does not compute either.
                Expr::Cast { to, arg } => {
                    !cast_can_fail(arg.ty(), *to)
                        && matches!(**arg, Expr::Column { .. } | Expr::Int { .. } | Expr::Float { .. })
                }
                // Its branches take rows by their order of arrival (kept ascending).
                Expr::Case { .. } => false,
            }
        }
        !self.filtered() && self.specs.iter().all(|a| a.expr.as_ref().is_none_or(numeric_only))
    }

    /// Whether some aggregate has a FILTER.
    pub fn filtered(&self) -> bool {
        self.specs.iter().any(|a| a.filter.is_some())
    }

    /// Makes room for `groups` groups in every state.
    pub fn resize(&mut self, groups: usize) {
        self.states.iter_mut().for_each(|a| a.resize(groups));
    }

    /// Bytes the fold holds, roughly: the states of the grouper's groups (or of the one
    /// group) and the grouper.
    pub fn memory(&self, grouper: Option<&Grouper>) -> usize {
        let groups = grouper.map_or(1, |g| g.len());
        grouper.map_or(0, |g| g.memory()) + groups * self.state_bytes + self.states.len() * 64
    }

    /// Folds the selected rows into every aggregate, each over the rows its FILTER keeps.
    ///
    /// # Safety
    /// Backend thread, during the scan: `reader`'s relation open and its snapshot live,
    /// positioned on a vector by `next_vector`.
    pub unsafe fn fold(&mut self, reader: &mut Reader, sel: &[u32], gids: Gids) {
        let (sub_sel, sub_gids) = (&mut self.sub_sel, &mut self.sub_gids);
        let numerics = &mut self.numerics;
        numerics.0.clear();
        for (i, acc) in self.states.iter_mut().enumerate() {
            let spec = &self.specs[i];
            let vector =
                Vector { sel, numerics: &mut *numerics, conditions: condition_filters(&self.conditions, i) };
            match &self.filters[i] {
                // SAFETY: `reader` is open and positioned (this fn's contract).
                None => unsafe { fold_one(acc, spec, reader, vector, sel, gids, self.collations[i]) },
                Some(filter) => {
                    sub_sel.clear();
                    sub_sel.extend_from_slice(sel);
                    filter_kernels::select(filter, &mut reader.columns(), sub_sel);
                    let sub = match gids {
                        Gids::Same(g) => Gids::Same(g),
                        Gids::Each(all) => {
                            subset(sel, all, sub_sel, sub_gids);
                            Gids::Each(sub_gids)
                        }
                    };
                    // SAFETY: `reader` is open and positioned (this fn's contract).
                    unsafe { fold_one(acc, spec, reader, vector, sub_sel, sub, self.collations[i]) };
                }
            }
        }
    }

    /// Folds the selected rows (all in group 0) into aggregate `i` alone.
    ///
    /// # Safety
    /// As `fold`.
    pub unsafe fn fold_into(&mut self, i: usize, reader: &mut Reader, sel: &[u32]) {
        self.numerics.0.clear();
        let vector =
            Vector { sel, numerics: &mut self.numerics, conditions: condition_filters(&self.conditions, i) };
        // SAFETY: `reader` is open and positioned (this fn's contract).
        unsafe {
            fold_one(
                &mut self.states[i],
                &self.specs[i],
                reader,
                vector,
                sel,
                Gids::Same(0),
                self.collations[i],
            )
        };
    }
}

/// The vector being folded: its selected rows (all aggregates', FILTERs aside) and its
/// numeric columns decoded so far.
struct Vector<'a> {
    sel: &'a [u32],
    numerics: &'a mut NumericColumns,
    /// The aggregate's CASE conditions, resolved.
    conditions: &'a [Filter],
}

/// Aggregate `i`'s resolved CASE conditions (none before the scan resolves them).
fn condition_filters(conditions: &[Vec<Filter>], i: usize) -> &[Filter] {
    conditions.get(i).map_or(&[], |c| c.as_slice())
}

/// Folds the selected rows into one aggregate (its column decoded now).
unsafe fn fold_one(
    acc: &mut Acc,
    spec: &AggSpec,
    reader: &mut Reader,
    vector: Vector,
    sel: &[u32],
    gids: Gids,
    collation: pg_sys::Oid,
) {
    let numeric_sum = numeric_fold(spec);
    let column_expr;
    let expr = match (&spec.expr, spec.att) {
        (Some(e), _) => e,
        // sum/avg/min/max/var/stddev(numeric) of a column: its values decoded once
        // into scaled integers.
        (None, Some(att)) if numeric_sum => {
            column_expr = Expr::Column { att, ty: ExprType::Numeric };
            &column_expr
        }
        (None, Some(att)) => {
            if sel.is_empty() {
                return;
            }
            // SAFETY: `reader`'s relation is open and it is positioned on a vector (the
            // caller's contract, `fold`'s). One group's rows ascend: where they are few,
            // only they are decoded (the fold reads no other row).
            unsafe {
                match gids {
                    Gids::Same(_) => reader.decode_rows(att, sel),
                    Gids::Each(_) => reader.decode(att),
                }
            };
            let col = reader.column(att);
            let cmp = |a: &[u8], b: &[u8]| crate::storage::relation::datum::collated_cmp(a, b, collation);
            report(acc.fold(col, sel, gids, &cmp));
            return;
        }
        (None, None) => {
            acc.count_rows(sel, gids);
            return;
        }
    };
    if sel.is_empty() {
        return;
    }
    // A column of scaled numerics itself: folded from its mantissas where they lie,
    // only the selected rows decoded when they are few (one group's rows are
    // ascending; grouped ones may come ordered by group).
    if let Expr::Column { att, ty: ExprType::Numeric } = expr {
        // SAFETY: as above.
        unsafe {
            match gids {
                Gids::Same(_) => reader.decode_rows(*att, sel),
                Gids::Each(_) => reader.decode(*att),
            }
        };
        let col = reader.column(*att);
        if let Some(s) = &col.scaled {
            report(acc.fold_mantissas(&s.m, s.scale, col.validity.as_deref(), sel, gids));
            return;
        }
    }
    // sum/avg(x * y) of two columns of scaled numerics, one group (TPC-H q6's
    // revenue): the products of the selected rows alone, summed as they are made.
    if let (Expr::Binary { op: BinOp::Mul, left, right }, Gids::Same(group)) = (expr, gids) {
        if let (
            Expr::Column { att: a, ty: ExprType::Numeric },
            Expr::Column { att: b, ty: ExprType::Numeric },
        ) = (&**left, &**right)
        {
            // SAFETY: as above.
            unsafe {
                reader.decode_rows(*a, sel);
                reader.decode_rows(*b, sel);
            }
            let (ca, cb) = (reader.column(*a), reader.column(*b));
            if let (Some(x), Some(y)) = (&ca.scaled, &cb.scaled) {
                let scale = x.scale.checked_add(y.scale).filter(|&s| s <= DSCALE_MAX);
                let valid: Option<Cow<[bool]>> = match (ca.validity.as_deref(), cb.validity.as_deref()) {
                    (None, None) => None,
                    (Some(v), None) | (None, Some(v)) => Some(Cow::Borrowed(v)),
                    (Some(v), Some(w)) => Some(Cow::Owned(v.iter().zip(w).map(|(a, b)| *a && *b).collect())),
                };
                if let Some(scale) = scale {
                    if acc.fold_products_one(group as usize, &x.m, &y.m, scale, valid.as_deref(), sel) {
                        return;
                    }
                }
            }
        }
    }
    // Every column whole (one the paths above decoded for some rows alone is decoded
    // again).
    let mut atts = Vec::new();
    expr.attributes(&mut atts);
    for &att in &atts {
        // SAFETY: as above.
        unsafe { reader.decode(att) };
    }
    // Every column of a vector has its rows (the planner gives no column-free expression).
    let rows = reader.column(atts[0]).rows as usize;
    let mut numeric_atts = Vec::new();
    expr.numeric_columns(&mut numeric_atts);
    for &att in &numeric_atts {
        let col = reader.column(att);
        // Scaled numerics are read from the column itself (a copy is all a decode
        // would be); other numeric columns are decoded once for every aggregate.
        let numeric = matches!(col.values, DecodedValues::Bytes { .. }) && col.scaled.is_none();
        if numeric && !vector.numerics.0.iter().any(|(a, _)| *a == att) {
            match (VectorRows { rows, sel: vector.sel }).numeric(col) {
                Ok(v) => vector.numerics.0.push((att, v)),
                Err(e) => raise(e),
            }
        }
    }
    let columns = ReaderColumns { reader, numerics: vector.numerics };
    // A numeric column itself: folded from the vector's decoded values, not a copy.
    if let Expr::Column { att, ty: ExprType::Numeric } = expr {
        if let Some(values) = columns.numeric(*att) {
            let valid = reader.column(*att).validity.as_deref();
            report(acc.fold_numeric(values, valid, sel, gids));
            return;
        }
    }
    let evaluated = match eval::eval_with(expr, &columns, rows, sel, vector.conditions, &mut PgNumeric) {
        Ok(e) => e,
        Err(e) => raise(e),
    };
    report(fold_evaluated(acc, spec.func, evaluated, rows, sel, gids));
}

/// Whether the aggregate folds numerics as numbers: sum/avg/min/max and the
/// variances and standard deviations of numeric.
fn numeric_fold(spec: &AggSpec) -> bool {
    matches!(
        spec.func,
        AggFunc::Sum
            | AggFunc::Avg
            | AggFunc::Min
            | AggFunc::Max
            | AggFunc::VarPop
            | AggFunc::VarSamp
            | AggFunc::StddevPop
            | AggFunc::StddevSamp
    ) && spec.input == InputType::Numeric
}

/// Folds an expression's values into its aggregate.
fn fold_evaluated(
    acc: &mut Acc,
    func: AggFunc,
    e: Evaluated,
    rows: usize,
    sel: &[u32],
    gids: Gids,
) -> Result<(), Overflow> {
    if func == AggFunc::Count {
        // count(expr) reads whether each value is NULL, not the value.
        let col = DecodedVector::from_parts(rows as u32, e.valid, DecodedValues::Int(vec![0; rows]), None);
        return acc.fold(&col, sel, gids, &|a: &[u8], b: &[u8]| a.cmp(b));
    }
    let values = match e.values {
        Values::Numeric(v) => return acc.fold_numeric(&v, e.valid.as_deref(), sel, gids),
        Values::Int(v) => DecodedValues::Int(v),
        Values::Float4(v) => DecodedValues::Float32(v),
        Values::Float8(v) => DecodedValues::Float64(v),
    };
    let col = DecodedVector::from_parts(rows as u32, e.valid, values, None);
    acc.fold(&col, sel, gids, &|a: &[u8], b: &[u8]| a.cmp(b))
}

/// The reader's decoded columns, for an expression.
struct ReaderColumns<'a> {
    reader: &'a Reader,
    numerics: &'a NumericColumns,
}

impl Columns for ReaderColumns<'_> {
    fn column(&self, att: usize) -> &DecodedVector {
        self.reader.column(att)
    }

    fn numeric(&self, att: usize) -> Option<&NumVec> {
        self.numerics.0.iter().find(|(a, _)| *a == att).map(|(_, v)| v)
    }
}

/// Core's error for an expression that failed (22003 for every overflow).
pub fn raise(e: EvalError) -> ! {
    match e {
        EvalError::CorruptNumeric => crate::storage::shared::error::data_corrupted(e.message()),
        EvalError::DivisionByZero => pgrx::ereport!(
            pgrx::PgLogLevel::ERROR,
            pgrx::PgSqlErrorCode::ERRCODE_DIVISION_BY_ZERO,
            e.message()
        ),
        EvalError::NanToInt(_) | EvalError::InfinityToInt(_) => pgrx::ereport!(
            pgrx::PgLogLevel::ERROR,
            pgrx::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            e.message()
        ),
        _ => pgrx::ereport!(
            pgrx::PgLogLevel::ERROR,
            pgrx::PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            e.message()
        ),
    }
    unreachable!("ereport returned")
}

/// Raises a fold's overflow as core does.
fn report(result: Result<(), Overflow>) {
    match result {
        Ok(()) => {}
        Err(Overflow::Float) => pgrx::ereport!(
            pgrx::PgLogLevel::ERROR,
            pgrx::PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow"
        ),
        Err(Overflow::CorruptNumeric) => {
            crate::storage::shared::error::data_corrupted("a stored numeric value is malformed")
        }
    }
}

/// The rows' group ids for `sub` (a subset of `sel`, both ascending), from `gids`
/// (parallel to `sel`).
fn subset(sel: &[u32], gids: &[u32], sub: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let mut j = 0;
    for &r in sub {
        while sel[j] != r {
            j += 1;
        }
        out.push(gids[j]);
    }
}
