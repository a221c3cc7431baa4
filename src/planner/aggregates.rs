//! Which aggregates and group keys the batch fold computes, asked by every path that
//! replaces a grouping stage (ColumnarAgg, LastPoint's per-key max / min): `aggregate`
//! (an Aggref as an `AggSpec`), `group_key` (a GROUP BY expression as a `KeySpec`), and
//! `covered_aggrefs` (the Aggrefs of the target and HAVING, if they use no column that
//! no group key covers).

use super::{agg_args, quals};
use crate::exec::agg::spec::{
    AggFunc, AggSpec, Expr, ExprType, ExtractField, ExtractOf, InputType, KeyKind, KeySpec, TruncUnit,
};
use crate::pg_list;
use crate::storage::relation::datum::ColumnKind;
use pgrx::pg_sys;
use pgrx::prelude::*;

/// The Aggrefs of `trees` (the target and HAVING; a NULL one is skipped), or None if
/// one of them uses a column that no group key of `keys` covers.
///
/// # Safety
/// Backend thread, while planning: `keys` and every non-NULL tree of `trees` are valid
/// expression trees.
pub unsafe fn covered_aggrefs(
    keys: &[*mut pg_sys::Node],
    trees: [*mut pg_sys::Node; 2],
) -> Option<Vec<*mut pg_sys::Aggref>> {
    let mut aggrefs = Vec::new();
    for node in trees {
        if node.is_null() {
            continue;
        }
        let mut walk = Walk { keys, aggrefs: &mut aggrefs };
        // SAFETY: `node` and the keys are valid trees (this fn's contract), and `walk`
        // outlives the walk `uncovered` makes, borrowed by nothing else meanwhile.
        if unsafe { pg_sys::expression_tree_walker(node, Some(uncovered), &mut walk as *mut Walk as *mut _) }
        {
            return None;
        }
    }
    Some(aggrefs)
}

/// The context of `uncovered`: the group keys, and the Aggrefs found so far.
struct Walk<'a> {
    keys: &'a [*mut pg_sys::Node],
    aggrefs: &'a mut Vec<*mut pg_sys::Aggref>,
}

/// Collects the Aggrefs; true (stop) at a column reference that no group key covers.
///
/// # Safety
/// An `expression_tree_walker` callback: `node` is NULL or a valid node, `context` points
/// to a live `Walk`, not otherwise borrowed during the walk.
#[pg_guard]
unsafe extern "C-unwind" fn uncovered(node: *mut pg_sys::Node, context: *mut std::ffi::c_void) -> bool {
    if node.is_null() {
        return false;
    }
    // SAFETY: `context` is the caller's live Walk, borrowed only here for this call
    // (this fn's contract); `node` is non-NULL and valid, as are the group keys, so
    // equal() compares two valid trees and the Aggrefs kept are nodes of the tree walked.
    unsafe {
        let walk = &mut *(context as *mut Walk);
        if walk.keys.iter().any(|&k| pg_sys::equal(k as *const _, node as *const _)) {
            return false;
        }
        match (*node).type_ {
            pg_sys::NodeTag::T_Aggref => {
                let a = node as *mut pg_sys::Aggref;
                if !walk.aggrefs.iter().any(|&b| pg_sys::equal(b as *const _, a as *const _)) {
                    walk.aggrefs.push(a);
                }
                false
            }
            pg_sys::NodeTag::T_Var
            | pg_sys::NodeTag::T_PlaceHolderVar
            | pg_sys::NodeTag::T_GroupingFunc
            | pg_sys::NodeTag::T_WindowFunc => true,
            _ => pg_sys::expression_tree_walker(node, Some(uncovered), context),
        }
    }
}

/// Types whose stored integers group exactly as their equality does.
const INT_KEY_TYPES: [pg_sys::Oid; 9] = [
    pg_sys::INT2OID,
    pg_sys::INT4OID,
    pg_sys::INT8OID,
    pg_sys::BOOLOID,
    pg_sys::DATEOID,
    pg_sys::TIMESTAMPOID,
    pg_sys::TIMESTAMPTZOID,
    pg_sys::TIMEOID,
    pg_sys::OIDOID,
];

/// Types whose equality is byte equality (text under a deterministic collation).
const BYTE_KEY_TYPES: [pg_sys::Oid; 4] =
    [pg_sys::TEXTOID, pg_sys::VARCHAROID, pg_sys::BYTEAOID, pg_sys::UUIDOID];

/// A group key the fold computes, or None. An expression key may be a CASE only with
/// `conditions` (its conditions' operands are appended there).
///
/// # Safety
/// Backend thread, while planning: `expr` is a valid expression tree, `kinds` the column
/// kinds of range table entry `relid`'s relation (indexed by attribute number - 1);
/// `conditions`, if given, holds the planner's live nodes for that relation.
pub unsafe fn group_key(
    expr: *mut pg_sys::Node,
    eqop: pg_sys::Oid,
    relid: u32,
    kinds: &[ColumnKind],
    conditions: Option<&mut agg_args::Conditions>,
) -> Option<KeySpec> {
    // SAFETY: `expr` is a valid expression tree (this fn's contract), and `kinds` the
    // column kinds of `relid`'s relation, as `column_key` and `time_bucket_key` require.
    unsafe {
        match quals::as_var(expr, relid) {
            Some(var) => column_key(expr, var, eqop, kinds),
            None => time_bucket_key(expr, relid, kinds)
                .or_else(|| computed_key(expr, eqop, relid, kinds, conditions)),
        }
    }
}

/// An arithmetic expression of the relation's columns (`agg_args::translate`, without
/// CASE) as a group key, if its values are integers or numerics grouped by their type's
/// own equality (numerics by value, whatever their display scale).
///
/// # Safety
/// As `group_key`.
unsafe fn computed_key(
    expr: *mut pg_sys::Node,
    eqop: pg_sys::Oid,
    relid: u32,
    kinds: &[ColumnKind],
    mut conditions: Option<&mut agg_args::Conditions>,
) -> Option<KeySpec> {
    let before = conditions.as_ref().map(|c| c.operands.len());
    // SAFETY: `expr` is a valid expression tree whose Vars of `relid` are within `kinds`
    // and `conditions` the planner's live nodes (this fn's contract); the type cache
    // lookup runs in a transaction.
    let key = unsafe { expression_key(expr, eqop, relid, kinds, conditions.as_deref_mut()) };
    // A CASE's operands stay only with its key.
    if let (None, Some(c), Some(before)) = (&key, conditions, before) {
        c.operands.truncate(before);
    }
    key
}

/// `computed_key` before its operands are kept or dropped.
///
/// # Safety
/// As `computed_key`.
unsafe fn expression_key(
    expr: *mut pg_sys::Node,
    eqop: pg_sys::Oid,
    relid: u32,
    kinds: &[ColumnKind],
    conditions: Option<&mut agg_args::Conditions>,
) -> Option<KeySpec> {
    // SAFETY: as `computed_key`.
    unsafe {
        let e = agg_args::translate(expr, relid, kinds, conditions)?;
        let typid = match e.ty() {
            ExprType::Int2 => pg_sys::INT2OID,
            ExprType::Int4 => pg_sys::INT4OID,
            ExprType::Int8 => pg_sys::INT8OID,
            ExprType::Numeric => pg_sys::NUMERICOID,
            // float8eq groups -0 with 0 and every NaN together: left to core.
            ExprType::Float4 | ExprType::Float8 => return None,
        };
        let entry = pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_EQ_OPR as i32);
        if pg_sys::exprType(expr) != typid || (*entry).eq_opr != eqop {
            return None;
        }
        let mut atts = Vec::new();
        e.attributes(&mut atts);
        let att = *atts.first()?;
        Some(KeySpec { att, kind: KeyKind::Computed, expr: Some(e) })
    }
}

/// A column as a group key, if its stored values group exactly as `eqop` does.
///
/// # Safety
/// Backend thread, while planning: `var` is `expr`, a valid Var whose attribute number is
/// within `kinds`.
unsafe fn column_key(
    expr: *mut pg_sys::Node,
    var: *mut pg_sys::Var,
    eqop: pg_sys::Oid,
    kinds: &[ColumnKind],
) -> Option<KeySpec> {
    // SAFETY: `var` is a valid Var of a column within `kinds` (this fn's contract); the
    // catalog lookups run in a transaction.
    unsafe {
        let att = (*var).varattno as usize - 1;
        let base = pg_sys::getBaseType((*var).vartype);
        // The type's own equality: another opclass's could group differently.
        let entry = pg_sys::lookup_type_cache(base, pg_sys::TYPECACHE_EQ_OPR as i32);
        if (*entry).eq_opr != eqop {
            return None;
        }
        let ints = INT_KEY_TYPES.contains(&base) && matches!(kinds[att], ColumnKind::Int { .. });
        let collation = pg_sys::exprCollation(expr);
        let deterministic =
            collation == pg_sys::InvalidOid || pg_sys::get_collation_isdeterministic(collation);
        let stored_bytes = matches!(kinds[att], ColumnKind::Varlena | ColumnKind::Fixed { .. });
        // A char(n) column holds every value padded to n characters: equal values (without
        // trailing spaces) are equal bytes. A domain's typmod is not the Var's: only the
        // type itself counts.
        let padded = (*var).vartype == pg_sys::BPCHAROID && (*var).vartypmod >= 0;
        let kind = if ints || ((BYTE_KEY_TYPES.contains(&base) || padded) && deterministic && stored_bytes) {
            KeyKind::Value
        } else if base == pg_sys::BPCHAROID && deterministic && kinds[att] == ColumnKind::Varlena {
            // bpchareq under a deterministic collation: bytes without trailing spaces.
            KeyKind::Bpchar
        } else if base == pg_sys::NUMERICOID && kinds[att] == ColumnKind::Varlena {
            KeyKind::Numeric
        } else {
            return None;
        };
        Some(KeySpec::of_column(att, kind))
    }
}

/// `date_trunc(unit, ts)` or `date_bin(stride, ts, origin)` of a timestamp column, with
/// constant unit, stride and origin, as a group key.
///
/// # Safety
/// Backend thread, while planning: `expr` is a valid expression tree whose Vars of
/// `relid` have attribute numbers within `kinds`.
unsafe fn time_bucket_key(expr: *mut pg_sys::Node, relid: u32, kinds: &[ColumnKind]) -> Option<KeySpec> {
    // SAFETY: `expr` is a valid expression tree (this fn's contract): its Vars of `relid` have
    // attribute numbers within `kinds`; a T_FuncExpr tag means a FuncExpr and a T_Const a
    // Const whose value is of its type (text for date_trunc's unit, an Interval for
    // date_bin's stride, by their function signatures).
    unsafe {
        if (*expr).type_ != pg_sys::NodeTag::T_FuncExpr {
            return None;
        }
        let f = expr as *mut pg_sys::FuncExpr;
        let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*f).args).collect();
        let constant = |n: *mut pg_sys::Node| {
            ((*n).type_ == pg_sys::NodeTag::T_Const && !(*(n as *mut pg_sys::Const)).constisnull)
                .then(|| (*(n as *mut pg_sys::Const)).constvalue)
        };
        let column = |n: *mut pg_sys::Node| {
            let var = quals::as_var(n, relid)?;
            let att = (*var).varattno as usize - 1;
            matches!(kinds[att], ColumnKind::Int { len: 8 }).then_some(att)
        };
        match ((*f).funcid.to_u32(), &args[..]) {
            (
                id @ (pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMP | pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMPTZ),
                &[unit, ts],
            ) => {
                let name = String::from_datum(constant(unit)?, false)?;
                let unit = TruncUnit::parse(&name)?;
                let att = column(ts)?;
                let kind = if id == pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMP {
                    KeyKind::Trunc(unit)
                } else {
                    KeyKind::TruncTz(unit)
                };
                Some(KeySpec::of_column(att, kind))
            }
            (
                id @ (pg_sys::F_EXTRACT_TEXT_DATE
                | pg_sys::F_EXTRACT_TEXT_TIMESTAMP
                | pg_sys::F_DATE_PART_TEXT_TIMESTAMP),
                &[field, value],
            ) => {
                let name = String::from_datum(constant(field)?, false)?;
                let field = ExtractField::parse(&name)?;
                let var = quals::as_var(value, relid)?;
                let att = (*var).varattno as usize - 1;
                let (of, len) = match id {
                    pg_sys::F_EXTRACT_TEXT_DATE => (ExtractOf::Date, 4),
                    pg_sys::F_EXTRACT_TEXT_TIMESTAMP => (ExtractOf::Timestamp, 8),
                    _ => (ExtractOf::TimestampPart, 8),
                };
                if kinds[att] != (ColumnKind::Int { len }) || (of == ExtractOf::Date && !field.of_dates()) {
                    return None;
                }
                Some(KeySpec::of_column(att, KeyKind::Extract { field, of }))
            }
            (
                pg_sys::F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP
                | pg_sys::F_DATE_BIN_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ,
                &[stride, ts, origin],
            ) => {
                let interval = constant(stride)?.cast_mut_ptr::<pg_sys::Interval>();
                if (*interval).month != 0 {
                    return None;
                }
                let stride =
                    ((*interval).day as i64).checked_mul(86_400_000_000)?.checked_add((*interval).time)?;
                let origin = constant(origin)?.value() as i64;
                Some(KeySpec::of_column(column(ts)?, KeyKind::Bin { stride, origin }))
            }
            _ => None,
        }
    }
}

/// The aggregate the fold computes for `aggref`, or None.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes,
/// `aggref` a valid Aggref over `rel`, `kinds` the column kinds of `rel`'s relation.
pub unsafe fn aggregate(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    aggref: *mut pg_sys::Aggref,
    kinds: &[ColumnKind],
    operands: &mut Vec<*mut pg_sys::Node>,
) -> Option<AggSpec> {
    // SAFETY: `aggref` is a valid Aggref of the query being planned (this fn's contract),
    // live for the rest of planning.
    let a = unsafe { &*aggref };
    if !a.aggdistinct.is_null() {
        // SAFETY: as above; `rel` is the planner's live base relation.
        return unsafe { count_distinct(root, rel, a, kinds, operands) };
    }
    if !a.aggorder.is_null()
        || !a.aggdirectargs.is_null()
        || a.aggkind as u8 != b'n'
        || a.agglevelsup != 0
        || a.aggvariadic
    {
        return None;
    }
    let (func, input) = folded_function(a.aggfnoid.to_u32())?;
    // SAFETY: an Aggref's args are a list of TargetEntries.
    let args: Vec<*mut pg_sys::TargetEntry> = unsafe { pg_list::ptrs(a.args).collect() };
    let (att, expr) = match (func, &args[..]) {
        (AggFunc::CountStar, []) => (None, None),
        (_, &[tle]) => {
            // SAFETY: `tle` is a live TargetEntry of the Aggref, its expr a valid node, and
            // `rel` the planner's live base relation (this fn's contract); `as_var` returns a
            // Var of that expression, one of `rel`'s columns (so within `kinds`), and
            // `argument` is given the same valid node.
            unsafe {
                let node = (*tle).expr as *mut pg_sys::Node;
                match quals::as_var(node, (*rel).relid) {
                    Some(var) => {
                        let att = (*var).varattno as usize - 1;
                        if !input_fits(input, kinds[att]) {
                            return None;
                        }
                        (Some(att), None)
                    }
                    None => {
                        let mut conditions = agg_args::Conditions {
                            root,
                            rel,
                            operands: &mut *operands,
                            filter: quals::translate_filter,
                        };
                        (None, Some(argument(node, func, input, (*rel).relid, kinds, &mut conditions)?))
                    }
                }
            }
        }
        _ => return None,
    };
    let filter = if a.aggfilter.is_null() {
        None
    } else {
        // SAFETY: `root` and `rel` are the planner's live nodes and the FILTER a valid
        // expression over `rel` (this fn's contract), as translate_filter requires.
        Some(unsafe { quals::translate_filter(root, rel, a.aggfilter as *mut pg_sys::Node, operands) }?)
    };
    Some(AggSpec { func, input, att, filter, expr })
}

/// count(DISTINCT col) of a column whose stored values are equal exactly when the
/// type's equality (the one DISTINCT uses) says so, or None.
///
/// # Safety
/// As `aggregate`; `a.aggdistinct` is not NULL.
unsafe fn count_distinct(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    a: &pg_sys::Aggref,
    kinds: &[ColumnKind],
    operands: &mut Vec<*mut pg_sys::Node>,
) -> Option<AggSpec> {
    // SAFETY: `a` is a valid Aggref over `rel` (this fn's contract): its args are
    // TargetEntries and its aggdistinct SortGroupClauses; catalog lookups run in a
    // transaction.
    unsafe {
        if a.aggfnoid.to_u32() != pg_sys::F_COUNT_ANY
            || !a.aggorder.is_null()
            || a.aggkind as u8 != b'n'
            || a.agglevelsup != 0
            || a.aggvariadic
        {
            return None;
        }
        let args: Vec<*mut pg_sys::TargetEntry> = pg_list::ptrs(a.args).collect();
        let distinct: Vec<*mut pg_sys::SortGroupClause> = pg_list::ptrs(a.aggdistinct).collect();
        let (&[tle], &[clause]) = (&args[..], &distinct[..]) else { return None };
        let node = (*tle).expr as *mut pg_sys::Node;
        let var = quals::as_var(node, (*rel).relid)?;
        let att = (*var).varattno as usize - 1;
        let base = pg_sys::getBaseType((*var).vartype);
        let entry = pg_sys::lookup_type_cache(base, pg_sys::TYPECACHE_EQ_OPR as i32);
        if (*entry).eq_opr != (*clause).eqop {
            return None;
        }
        let collation = pg_sys::exprCollation(node);
        let deterministic =
            collation == pg_sys::InvalidOid || pg_sys::get_collation_isdeterministic(collation);
        let input = match (base, kinds[att]) {
            (t, ColumnKind::Int { .. }) if INT_KEY_TYPES.contains(&t) => InputType::OrderedInt,
            (pg_sys::FLOAT4OID, ColumnKind::Float4) => InputType::Float4,
            (pg_sys::FLOAT8OID, ColumnKind::Float8) => InputType::Float8,
            (t, ColumnKind::Varlena | ColumnKind::Fixed { .. })
                if BYTE_KEY_TYPES.contains(&t) && deterministic =>
            {
                InputType::Text
            }
            (pg_sys::BPCHAROID, ColumnKind::Varlena) if deterministic => InputType::Bpchar,
            _ => return None,
        };
        let filter = if a.aggfilter.is_null() {
            None
        } else {
            Some(quals::translate_filter(root, rel, a.aggfilter as *mut pg_sys::Node, operands)?)
        };
        Some(AggSpec { func: AggFunc::CountDistinct, input, att: Some(att), filter, expr: None })
    }
}

/// An aggregate's argument that is no plain column, as a vector expression of the
/// aggregate's input type reading at least one column; None leaves it to core.
///
/// # Safety
/// As `agg_args::translate`.
unsafe fn argument(
    node: *mut pg_sys::Node,
    func: AggFunc,
    input: InputType,
    relid: u32,
    kinds: &[ColumnKind],
    conditions: &mut agg_args::Conditions,
) -> Option<Expr> {
    // count(expr) counts the rows whose value is not NULL, of whichever type.
    let ty = match input {
        InputType::Int2 => Some(ExprType::Int2),
        InputType::Int4 => Some(ExprType::Int4),
        InputType::Int8 => Some(ExprType::Int8),
        InputType::Float4 => Some(ExprType::Float4),
        InputType::Float8 => Some(ExprType::Float8),
        InputType::Numeric => Some(ExprType::Numeric),
        InputType::None if func == AggFunc::Count => None,
        _ => return None,
    };
    // SAFETY: as this fn's contract says.
    let e = unsafe { agg_args::translate(node, relid, kinds, Some(conditions)) }?;
    let mut atts = Vec::new();
    e.attributes(&mut atts);
    (ty.is_none_or(|t| e.ty() == t) && !atts.is_empty()).then_some(e)
}

/// The fold's function and input type for the built-in aggregate `aggfnoid`, or None.
fn folded_function(aggfnoid: u32) -> Option<(AggFunc, InputType)> {
    use pg_sys::*;
    Some(match aggfnoid {
        F_COUNT_ => (AggFunc::CountStar, InputType::None),
        F_COUNT_ANY => (AggFunc::Count, InputType::None),
        F_SUM_INT2 => (AggFunc::Sum, InputType::Int2),
        F_SUM_INT4 => (AggFunc::Sum, InputType::Int4),
        F_SUM_INT8 => (AggFunc::Sum, InputType::Int8),
        F_SUM_FLOAT4 => (AggFunc::Sum, InputType::Float4),
        F_SUM_FLOAT8 => (AggFunc::Sum, InputType::Float8),
        F_SUM_NUMERIC => (AggFunc::Sum, InputType::Numeric),
        F_AVG_NUMERIC => (AggFunc::Avg, InputType::Numeric),
        F_AVG_INT2 => (AggFunc::Avg, InputType::Int2),
        F_AVG_INT4 => (AggFunc::Avg, InputType::Int4),
        F_AVG_INT8 => (AggFunc::Avg, InputType::Int8),
        F_AVG_FLOAT4 => (AggFunc::Avg, InputType::Float4),
        F_AVG_FLOAT8 => (AggFunc::Avg, InputType::Float8),
        F_MIN_INT2 => (AggFunc::Min, InputType::Int2),
        F_MIN_INT4 => (AggFunc::Min, InputType::Int4),
        F_MIN_INT8 => (AggFunc::Min, InputType::Int8),
        F_MIN_FLOAT4 => (AggFunc::Min, InputType::Float4),
        F_MIN_FLOAT8 => (AggFunc::Min, InputType::Float8),
        F_MIN_DATE | F_MIN_TIME | F_MIN_TIMESTAMP | F_MIN_TIMESTAMPTZ => {
            (AggFunc::Min, InputType::OrderedInt)
        }
        F_MIN_TEXT => (AggFunc::Min, InputType::Text),
        F_MIN_BPCHAR => (AggFunc::Min, InputType::Bpchar),
        F_MIN_NUMERIC => (AggFunc::Min, InputType::Numeric),
        F_MAX_INT2 => (AggFunc::Max, InputType::Int2),
        F_MAX_INT4 => (AggFunc::Max, InputType::Int4),
        F_MAX_INT8 => (AggFunc::Max, InputType::Int8),
        F_MAX_FLOAT4 => (AggFunc::Max, InputType::Float4),
        F_MAX_FLOAT8 => (AggFunc::Max, InputType::Float8),
        F_MAX_DATE | F_MAX_TIME | F_MAX_TIMESTAMP | F_MAX_TIMESTAMPTZ => {
            (AggFunc::Max, InputType::OrderedInt)
        }
        F_MAX_TEXT => (AggFunc::Max, InputType::Text),
        F_MAX_BPCHAR => (AggFunc::Max, InputType::Bpchar),
        F_MAX_NUMERIC => (AggFunc::Max, InputType::Numeric),
        F_VAR_POP_FLOAT4 => (AggFunc::VarPop, InputType::Float4),
        F_VAR_POP_FLOAT8 => (AggFunc::VarPop, InputType::Float8),
        F_VAR_SAMP_FLOAT4 | F_VARIANCE_FLOAT4 => (AggFunc::VarSamp, InputType::Float4),
        F_VAR_SAMP_FLOAT8 | F_VARIANCE_FLOAT8 => (AggFunc::VarSamp, InputType::Float8),
        F_STDDEV_POP_FLOAT4 => (AggFunc::StddevPop, InputType::Float4),
        F_STDDEV_POP_FLOAT8 => (AggFunc::StddevPop, InputType::Float8),
        F_STDDEV_SAMP_FLOAT4 | F_STDDEV_FLOAT4 => (AggFunc::StddevSamp, InputType::Float4),
        F_STDDEV_SAMP_FLOAT8 | F_STDDEV_FLOAT8 => (AggFunc::StddevSamp, InputType::Float8),
        F_VAR_POP_INT2 => (AggFunc::VarPop, InputType::Int2),
        F_VAR_POP_INT4 => (AggFunc::VarPop, InputType::Int4),
        F_VAR_POP_INT8 => (AggFunc::VarPop, InputType::Int8),
        F_VAR_POP_NUMERIC => (AggFunc::VarPop, InputType::Numeric),
        F_VAR_SAMP_INT2 | F_VARIANCE_INT2 => (AggFunc::VarSamp, InputType::Int2),
        F_VAR_SAMP_INT4 | F_VARIANCE_INT4 => (AggFunc::VarSamp, InputType::Int4),
        F_VAR_SAMP_INT8 | F_VARIANCE_INT8 => (AggFunc::VarSamp, InputType::Int8),
        F_VAR_SAMP_NUMERIC | F_VARIANCE_NUMERIC => (AggFunc::VarSamp, InputType::Numeric),
        F_STDDEV_POP_INT2 => (AggFunc::StddevPop, InputType::Int2),
        F_STDDEV_POP_INT4 => (AggFunc::StddevPop, InputType::Int4),
        F_STDDEV_POP_INT8 => (AggFunc::StddevPop, InputType::Int8),
        F_STDDEV_POP_NUMERIC => (AggFunc::StddevPop, InputType::Numeric),
        F_STDDEV_SAMP_INT2 | F_STDDEV_INT2 => (AggFunc::StddevSamp, InputType::Int2),
        F_STDDEV_SAMP_INT4 | F_STDDEV_INT4 => (AggFunc::StddevSamp, InputType::Int4),
        F_STDDEV_SAMP_INT8 | F_STDDEV_INT8 => (AggFunc::StddevSamp, InputType::Int8),
        F_STDDEV_SAMP_NUMERIC | F_STDDEV_NUMERIC => (AggFunc::StddevSamp, InputType::Numeric),
        F_BOOL_AND | F_EVERY => (AggFunc::BoolAnd, InputType::Bool),
        F_BOOL_OR => (AggFunc::BoolOr, InputType::Bool),
        _ => return None,
    })
}

/// Whether a column of kind `kind` holds what the fold reads as `input`.
fn input_fits(input: InputType, kind: ColumnKind) -> bool {
    match (input, kind) {
        (InputType::None, ColumnKind::Dropped) => false,
        (InputType::None, _) => true,
        (InputType::Int2, ColumnKind::Int { len: 2 })
        | (InputType::Int4, ColumnKind::Int { len: 4 })
        | (InputType::Int8, ColumnKind::Int { len: 8 })
        | (InputType::Float4, ColumnKind::Float4)
        | (InputType::Float8, ColumnKind::Float8)
        | (InputType::OrderedInt, ColumnKind::Int { .. })
        | (InputType::Bool, ColumnKind::Int { len: 1 })
        | (InputType::Text, ColumnKind::Varlena)
        | (InputType::Bpchar, ColumnKind::Varlena)
        | (InputType::Numeric, ColumnKind::Varlena) => true,
        _ => false,
    }
}
