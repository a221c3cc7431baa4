//! An aggregate's argument (or a group key) as a vector expression (`exec::expr`): `+`,
//! `-`, `*`, `/` (not of numerics), `%` (and `mod()`) and unary minus of the built-in
//! integer, float and numeric operators, over the scanned relation's columns and
//! non-NULL constants, with the casts between those types that `plan::cast_supported`
//! lists (core's implicit ones and explicit `::int`, `::float8`, ...). Every operator is
//! recognised by its function's OID, so a user's operator of the same name is not
//! taken for the built-in; anything else leaves the aggregate to core (None). A
//! searched `CASE` whose conditions are filters the scan could push (`quals`) and whose
//! values are such expressions is computed too.

use crate::exec::agg::spec::{BinOp, Expr, ExprType};
use crate::exec::expr::plan::{cast_can_fail, cast_supported};
use crate::exec::filter::plan::FilterPlan;
use crate::pg_list;
use crate::storage::relation::datum::ColumnKind;
use pgrx::pg_sys;

/// What a CASE's conditions are translated with: the planner's nodes for the scanned
/// relation, the scan's operands, which the conditions' operands join, and the
/// translation of a condition into a pushed filter (`quals::translate_filter`, which
/// itself translates expressions here: given by the caller, so that the two modules do
/// not import each other).
pub struct Conditions<'a> {
    pub root: *mut pg_sys::PlannerInfo,
    pub rel: *mut pg_sys::RelOptInfo,
    pub operands: &'a mut Vec<*mut pg_sys::Node>,
    pub filter: TranslateFilter,
}

/// `quals::translate_filter`'s signature.
pub type TranslateFilter = unsafe fn(
    *mut pg_sys::PlannerInfo,
    *mut pg_sys::RelOptInfo,
    *mut pg_sys::Node,
    &mut Vec<*mut pg_sys::Node>,
) -> Option<FilterPlan>;

/// The expression form of `node`, an expression over range table entry `relid` whose
/// columns have `kinds`; None if the vector engine does not compute it exactly. A CASE
/// is translated only with `conditions`.
///
/// # Safety
/// Backend thread, while planning: `node` is a valid expression tree whose Vars of
/// `relid` have attribute numbers within `kinds`; `conditions`, if given, holds the
/// planner's live nodes, `rel` the base relation `relid`.
pub unsafe fn translate(
    node: *mut pg_sys::Node,
    relid: u32,
    kinds: &[ColumnKind],
    mut conditions: Option<&mut Conditions>,
) -> Option<Expr> {
    // SAFETY: `node` is a valid expression node (this fn's contract): each tag checked
    // names the node's struct, whose argument lists hold valid nodes.
    unsafe {
        let mut translate = |n: *mut pg_sys::Node| translate(n, relid, kinds, conditions.as_deref_mut());
        match (*node).type_ {
            pg_sys::NodeTag::T_RelabelType => {
                let r = node as *mut pg_sys::RelabelType;
                let e = translate((*r).arg as *mut pg_sys::Node)?;
                // Only a relabeling to a type of the same representation (a domain).
                (type_of(pg_sys::getBaseType((*r).resulttype))? == e.ty()).then_some(e)
            }
            pg_sys::NodeTag::T_Var => {
                let v = node as *mut pg_sys::Var;
                if (*v).varno as u32 != relid || (*v).varattno <= 0 || (*v).varlevelsup != 0 {
                    return None;
                }
                let att = (*v).varattno as usize - 1;
                let ty = type_of(pg_sys::getBaseType((*v).vartype))?;
                stored_as(ty, kinds[att]).then_some(Expr::Column { att, ty })
            }
            pg_sys::NodeTag::T_Const => constant(node as *mut pg_sys::Const),
            pg_sys::NodeTag::T_OpExpr => {
                let op = node as *mut pg_sys::OpExpr;
                let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*op).args).collect();
                let to = type_of((*op).opresulttype)?;
                match (operator((*op).opfuncid.to_u32())?, &args[..]) {
                    (Op::Neg, &[arg]) => {
                        let e = translate(arg)?;
                        (e.ty() == to).then(|| Expr::Neg(Box::new(e)))
                    }
                    (Op::Bin(op), &[l, r]) => {
                        let left = widen(translate(l)?, to)?;
                        let right = widen(translate(r)?, to)?;
                        Some(Expr::Binary { op, left: Box::new(left), right: Box::new(right) })
                    }
                    _ => None,
                }
            }
            pg_sys::NodeTag::T_FuncExpr => {
                let f = node as *mut pg_sys::FuncExpr;
                let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*f).args).collect();
                let funcid = (*f).funcid.to_u32();
                match args[..] {
                    // mod(a, b): the `%` operator's function under another name.
                    [l, r] if is_mod_function(funcid) => {
                        let to = type_of((*f).funcresulttype)?;
                        let left = widen(translate(l)?, to)?;
                        let right = widen(translate(r)?, to)?;
                        Some(Expr::Binary { op: BinOp::Mod, left: Box::new(left), right: Box::new(right) })
                    }
                    [arg] => {
                        let to = cast_target(funcid)?;
                        let e = translate(arg)?;
                        cast_supported(e.ty(), to).then(|| Expr::Cast { to, arg: Box::new(e) })
                    }
                    _ => None,
                }
            }
            pg_sys::NodeTag::T_CaseExpr => case(node as *mut pg_sys::CaseExpr, relid, kinds, conditions?),
            _ => None,
        }
    }
}

/// A searched CASE (`CASE WHEN cond THEN value ...`; not `CASE x WHEN ...`) whose
/// conditions translate to filters and whose values (core has already cast them to
/// the CASE's type) to expressions; the conditions' operands are left in `conditions`'
/// list only if the whole CASE translates.
///
/// # Safety
/// As `translate`, `c` a valid CaseExpr over `relid`.
unsafe fn case(
    c: *mut pg_sys::CaseExpr,
    relid: u32,
    kinds: &[ColumnKind],
    cx: &mut Conditions,
) -> Option<Expr> {
    let before = cx.operands.len();
    // SAFETY: as this fn's contract says; the CaseWhen list holds valid CaseWhen nodes.
    let e = unsafe {
        (|| {
            if !(*c).arg.is_null() {
                return None;
            }
            let ty = type_of(pg_sys::getBaseType((*c).casetype))?;
            let mut whens = Vec::new();
            for w in pg_list::ptrs::<pg_sys::CaseWhen>((*c).args) {
                let cond = (cx.filter)(cx.root, cx.rel, (*w).expr as *mut pg_sys::Node, cx.operands)?;
                let value = translate((*w).result as *mut pg_sys::Node, relid, kinds, Some(&mut *cx))?;
                if value.ty() != ty {
                    return None;
                }
                whens.push((cond, value));
            }
            let default = (*c).defresult as *mut pg_sys::Node;
            let is_null = default.is_null()
                || ((*default).type_ == pg_sys::NodeTag::T_Const
                    && (*(default as *mut pg_sys::Const)).constisnull);
            let otherwise = if is_null {
                None
            } else {
                let value = translate(default, relid, kinds, Some(&mut *cx))?;
                if value.ty() != ty {
                    return None;
                }
                Some(Box::new(value))
            };
            (!whens.is_empty()).then_some(Expr::Case { whens, otherwise })
        })()
    };
    if e.is_none() {
        cx.operands.truncate(before);
    }
    e
}

/// The expression's type for a (base) type OID.
fn type_of(typid: pg_sys::Oid) -> Option<ExprType> {
    Some(match typid {
        pg_sys::INT2OID => ExprType::Int2,
        pg_sys::INT4OID => ExprType::Int4,
        pg_sys::INT8OID => ExprType::Int8,
        pg_sys::FLOAT4OID => ExprType::Float4,
        pg_sys::FLOAT8OID => ExprType::Float8,
        pg_sys::NUMERICOID => ExprType::Numeric,
        _ => return None,
    })
}

/// Whether a column stored as `kind` decodes to values of type `ty`.
fn stored_as(ty: ExprType, kind: ColumnKind) -> bool {
    matches!(
        (ty, kind),
        (ExprType::Int2, ColumnKind::Int { len: 2 })
            | (ExprType::Int4, ColumnKind::Int { len: 4 })
            | (ExprType::Int8, ColumnKind::Int { len: 8 })
            | (ExprType::Float4, ColumnKind::Float4)
            | (ExprType::Float8, ColumnKind::Float8)
            | (ExprType::Numeric, ColumnKind::Varlena)
    )
}

/// A non-NULL constant of a supported type.
///
/// # Safety
/// `c` is a valid Const, its value of its type.
unsafe fn constant(c: *mut pg_sys::Const) -> Option<Expr> {
    // SAFETY: `c` is a valid Const (this fn's contract): a by-value integer or float of
    // its type, or a numeric varlena, detoasted in the current (planner) memory context
    // and read within its payload's length.
    unsafe {
        if (*c).constisnull {
            return None;
        }
        let raw = (*c).constvalue.value() as u64;
        let ty = type_of((*c).consttype)?;
        Some(match ty {
            ExprType::Int2 => Expr::Int { value: raw as i16 as i64, ty },
            ExprType::Int4 => Expr::Int { value: raw as i32 as i64, ty },
            ExprType::Int8 => Expr::Int { value: raw as i64, ty },
            ExprType::Float4 => Expr::Float { value: f32::from_bits(raw as u32) as f64, ty },
            ExprType::Float8 => Expr::Float { value: f64::from_bits(raw), ty },
            ExprType::Numeric => {
                let flat = pg_sys::pg_detoast_datum_packed((*c).constvalue.cast_mut_ptr::<pg_sys::varlena>());
                let len = pgrx::varlena::varsize_any_exhdr(flat);
                let bytes = std::slice::from_raw_parts(pgrx::varlena::vardata_any(flat) as *const u8, len);
                Expr::Numeric(bytes.to_vec())
            }
        })
    }
}

enum Op {
    Neg,
    Bin(BinOp),
}

/// The built-in arithmetic operator whose function is `funcid`.
fn operator(funcid: u32) -> Option<Op> {
    use pg_sys::*;
    Some(match funcid {
        F_INT2PL | F_INT4PL | F_INT8PL | F_INT24PL | F_INT42PL | F_INT28PL | F_INT82PL | F_INT48PL
        | F_INT84PL | F_FLOAT4PL | F_FLOAT8PL | F_FLOAT48PL | F_FLOAT84PL | F_NUMERIC_ADD => {
            Op::Bin(BinOp::Add)
        }
        F_INT2MI | F_INT4MI | F_INT8MI | F_INT24MI | F_INT42MI | F_INT28MI | F_INT82MI | F_INT48MI
        | F_INT84MI | F_FLOAT4MI | F_FLOAT8MI | F_FLOAT48MI | F_FLOAT84MI | F_NUMERIC_SUB => {
            Op::Bin(BinOp::Sub)
        }
        F_INT2MUL | F_INT4MUL | F_INT8MUL | F_INT24MUL | F_INT42MUL | F_INT28MUL | F_INT82MUL
        | F_INT48MUL | F_INT84MUL | F_FLOAT4MUL | F_FLOAT8MUL | F_FLOAT48MUL | F_FLOAT84MUL
        | F_NUMERIC_MUL => Op::Bin(BinOp::Mul),
        // Not numeric_div: its result scale is left to core.
        F_INT2DIV | F_INT4DIV | F_INT8DIV | F_INT24DIV | F_INT42DIV | F_INT28DIV | F_INT82DIV
        | F_INT48DIV | F_INT84DIV | F_FLOAT4DIV | F_FLOAT8DIV | F_FLOAT48DIV | F_FLOAT84DIV => {
            Op::Bin(BinOp::Div)
        }
        F_INT2MOD | F_INT4MOD | F_INT8MOD | F_NUMERIC_MOD => Op::Bin(BinOp::Mod),
        F_INT2UM | F_INT4UM | F_INT8UM | F_FLOAT4UM | F_FLOAT8UM | F_NUMERIC_UMINUS => Op::Neg,
        _ => return None,
    })
}

/// Whether `funcid` is one of the `mod(a, b)` functions of integers and numerics.
fn is_mod_function(funcid: u32) -> bool {
    use pg_sys::*;
    matches!(funcid, F_MOD_INT2_INT2 | F_MOD_INT4_INT4 | F_MOD_INT8_INT8 | F_MOD_NUMERIC_NUMERIC)
}

/// The type a cast function between the expression's types gives.
fn cast_target(funcid: u32) -> Option<ExprType> {
    use pg_sys::*;
    Some(match funcid {
        F_NUMERIC_INT2 | F_NUMERIC_INT4 | F_NUMERIC_INT8 => ExprType::Numeric,
        F_FLOAT8_INT2 | F_FLOAT8_INT4 | F_FLOAT8_INT8 | F_FLOAT8_FLOAT4 | F_FLOAT8_NUMERIC => {
            ExprType::Float8
        }
        F_FLOAT4_INT2 | F_FLOAT4_INT4 | F_FLOAT4_INT8 | F_FLOAT4_FLOAT8 => ExprType::Float4,
        F_INT2_INT4 | F_INT2_INT8 | F_INT2_FLOAT4 | F_INT2_FLOAT8 | F_INT2_NUMERIC => ExprType::Int2,
        F_INT4_INT2 | F_INT4_INT8 | F_INT4_FLOAT4 | F_INT4_FLOAT8 | F_INT4_NUMERIC => ExprType::Int4,
        F_INT8_INT2 | F_INT8_INT4 | F_INT8_FLOAT4 | F_INT8_FLOAT8 | F_INT8_NUMERIC => ExprType::Int8,
        _ => return None,
    })
}

/// Two sides of a comparison in one type: as they are, or the narrower widened as the
/// cross-type integer and float comparisons (int48lt, float48lt) widen it.
pub fn common_type(l: Expr, r: Expr) -> Option<(Expr, Expr)> {
    let rank = |t: ExprType| match t {
        ExprType::Int2 | ExprType::Float4 => 0,
        ExprType::Int4 => 1,
        _ => 2,
    };
    let (lt, rt) = (l.ty(), r.ty());
    if lt == rt {
        return Some((l, r));
    }
    if rank(lt) < rank(rt) {
        Some((widen(l, rt)?, r))
    } else {
        Some((l, widen(r, lt)?))
    }
}

/// `e` as an operand of an operator on `to`: as it is, or widened as the cross-type
/// operators widen it (int24pl computes in int4, float48pl in float8).
fn widen(e: Expr, to: ExprType) -> Option<Expr> {
    let from = e.ty();
    if from == to {
        return Some(e);
    }
    // Never narrowing: a narrowing cast can fail where the operator does not.
    let widens = (from.is_int() && to.is_int() && !cast_can_fail(from, to))
        || (from == ExprType::Float4 && to == ExprType::Float8);
    widens.then(|| Expr::Cast { to, arg: Box::new(e) })
}
