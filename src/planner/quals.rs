//! Finds the scan quals that zone maps can check: `column op constant` with a btree
//! comparison on a type whose order the stored integers or floats follow (integer
//! columns also against constants of another integer type), or on text
//! and bytea (byte order: equality under a deterministic collation, ranges under "C"),
//! and `column IS [NOT] NULL`. A planning decision: the plan carries the predicates to
//! the ColumnarScan. The executor still evaluates every qual on the rows the scan
//! returns; these only let the scan skip row groups and vectors that cannot match.

use crate::pg_list;
use crate::storage::datum::BYTEWISE_TYPES;
use crate::storage::format::zonemap::{Bound, CmpOp, ZonePredicate};
use pgrx::pg_sys;

/// Types whose btree order is the order of the sign-extended integers we store.
const INT_ORDERED: [pg_sys::Oid; 6] = [
    pg_sys::INT2OID,
    pg_sys::INT4OID,
    pg_sys::INT8OID,
    pg_sys::DATEOID,
    pg_sys::TIMESTAMPOID,
    pg_sys::TIMESTAMPTZOID,
];

unsafe fn strip(node: *mut pg_sys::Node) -> *mut pg_sys::Node {
    let mut n = node;
    while !n.is_null() && (*n).type_ == pg_sys::NodeTag::T_RelabelType {
        n = (*(n as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
    }
    n
}

unsafe fn as_var(node: *mut pg_sys::Node, scanrelid: u32) -> Option<*mut pg_sys::Var> {
    let n = strip(node);
    if n.is_null() || (*n).type_ != pg_sys::NodeTag::T_Var {
        return None;
    }
    let var = n as *mut pg_sys::Var;
    ((*var).varno as u32 == scanrelid && (*var).varattno > 0 && (*var).varlevelsup == 0).then_some(var)
}

unsafe fn as_const(node: *mut pg_sys::Node) -> Option<*mut pg_sys::Const> {
    let n = strip(node);
    (!n.is_null() && (*n).type_ == pg_sys::NodeTag::T_Const).then_some(n as *mut pg_sys::Const)
}

/// The type whose btree operators apply to a column of type `typid` (varchar uses text's).
fn operator_type(typid: pg_sys::Oid) -> pg_sys::Oid {
    if typid == pg_sys::VARCHAROID {
        pg_sys::TEXTOID
    } else {
        typid
    }
}

/// Integer types whose cross-type comparisons (`bigint_col >= 5`, an int4 constant) are
/// in one btree family and compare the values exactly.
const INTEGERS: [pg_sys::Oid; 3] = [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID];

unsafe fn bound_of(c: *mut pg_sys::Const, typid: pg_sys::Oid) -> Option<Bound> {
    let same_type = (*c).consttype == operator_type(typid);
    let integers = INTEGERS.contains(&typid) && INTEGERS.contains(&(*c).consttype);
    if (*c).constisnull || !(same_type || integers) {
        return None;
    }
    if BYTEWISE_TYPES.contains(&typid) {
        let original = (*c).constvalue.cast_mut_ptr::<pg_sys::varlena>();
        let flat = pg_sys::pg_detoast_datum_packed(original);
        let len = pgrx::varlena::varsize_any_exhdr(flat);
        let bytes = std::slice::from_raw_parts(pgrx::varlena::vardata_any(flat) as *const u8, len).to_vec();
        return Some(Bound::Bytes(bytes));
    }
    let raw = (*c).constvalue.value() as u64;
    if typid == pg_sys::FLOAT8OID {
        Some(Bound::Float(f64::from_bits(raw)))
    } else if typid == pg_sys::FLOAT4OID {
        Some(Bound::Float(f32::from_bits(raw as u32) as f64))
    } else if INT_ORDERED.contains(&typid) {
        Some(Bound::Int(match pg_sys::get_typlen((*c).consttype) {
            2 => raw as u16 as i16 as i64,
            4 => raw as u32 as i32 as i64,
            _ => raw as i64,
        }))
    } else {
        None
    }
}

unsafe fn btree_op(opno: pg_sys::Oid, typid: pg_sys::Oid) -> Option<CmpOp> {
    let opclass = pg_sys::GetDefaultOpClass(typid, pg_sys::BTREE_AM_OID);
    if opclass == pg_sys::InvalidOid {
        return None;
    }
    let family = pg_sys::get_opclass_family(opclass);
    match pg_sys::get_op_opfamily_strategy(opno, family) {
        1 => Some(CmpOp::Lt),
        2 => Some(CmpOp::Le),
        3 => Some(CmpOp::Eq),
        4 => Some(CmpOp::Ge),
        5 => Some(CmpOp::Gt),
        _ => None,
    }
}

/// Whether comparing byte strings in byte order gives the operator's answer under
/// `collation`: always without a collation (bytea); for equality under a deterministic
/// collation (equal means byte-equal); for ranges only under "C"/"POSIX".
unsafe fn byte_order_applies(op: CmpOp, collation: pg_sys::Oid) -> bool {
    if collation == pg_sys::InvalidOid
        || collation == pg_sys::C_COLLATION_OID
        || collation == pg_sys::POSIX_COLLATION_OID
    {
        return true;
    }
    op == CmpOp::Eq && pg_sys::get_collation_isdeterministic(collation)
}

/// The zone-map predicate a qual amounts to, as (attribute index, predicate).
unsafe fn predicate_of(qual: *mut pg_sys::Node, scanrelid: u32) -> Option<(usize, ZonePredicate)> {
    match (*qual).type_ {
        pg_sys::NodeTag::T_OpExpr => {
            let op = qual as *mut pg_sys::OpExpr;
            let args = (*op).args;
            let [left, right] = pg_list::ptrs::<pg_sys::Node>(args).collect::<Vec<_>>()[..] else {
                return None;
            };
            let (var, constant, commuted) = match (as_var(left, scanrelid), as_const(right)) {
                (Some(v), Some(c)) => (v, c, false),
                _ => match (as_const(left), as_var(right, scanrelid)) {
                    (Some(c), Some(v)) => (v, c, true),
                    _ => return None,
                },
            };
            let typid = (*var).vartype;
            let bound = bound_of(constant, typid)?;
            let cmp = btree_op((*op).opno, operator_type(typid))?;
            let cmp = if commuted { cmp.commute() } else { cmp };
            if matches!(bound, Bound::Bytes(_)) && !byte_order_applies(cmp, (*op).inputcollid) {
                return None;
            }
            Some(((*var).varattno as usize - 1, ZonePredicate::Compare { op: cmp, value: bound }))
        }
        pg_sys::NodeTag::T_NullTest => {
            let test = qual as *mut pg_sys::NullTest;
            if (*test).argisrow {
                return None;
            }
            let var = as_var((*test).arg as *mut pg_sys::Node, scanrelid)?;
            let pred = if (*test).nulltesttype == pg_sys::NullTestType::IS_NULL {
                ZonePredicate::IsNull
            } else {
                ZonePredicate::IsNotNull
            };
            Some(((*var).varattno as usize - 1, pred))
        }
        _ => None,
    }
}

/// The quals of `quals` (an implicit-AND list) that zone maps can check, with their
/// predicates.
pub unsafe fn zone_predicates(
    quals: *mut pg_sys::List,
    scanrelid: u32,
) -> Vec<(*mut pg_sys::Node, usize, ZonePredicate)> {
    pg_list::ptrs::<pg_sys::Node>(quals)
        .filter_map(|qual| predicate_of(qual, scanrelid).map(|(att, p)| (qual, att, p)))
        .collect()
}
