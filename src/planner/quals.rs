//! Which scan quals a ColumnarScan evaluates itself (`pushdown`: translated into the
//! scan's `FilterPlan`), and which of the others zone maps can still check
//! (`zone_predicates`).
//!
//! Zone maps check `column op constant` with a btree
//! comparison on a type whose order the stored integers or floats follow (integer
//! columns also against constants of another integer type), or on text
//! and bytea (byte order: equality under a deterministic collation, ranges under "C"),
//! and `column IS [NOT] NULL`. A planning decision: the plan carries the predicates to
//! the ColumnarScan. The executor still evaluates every qual on the rows the scan
//! returns; these only let the scan skip row groups and vectors that cannot match.

use crate::exec::filter::plan::{FilterPlan, PlanTest, TrimmedTest};
use crate::exec::filter::time_cuts::TimeType;
use crate::pg_list;
use crate::storage::format::zonemap::{Bound, CmpOp, ZonePredicate};
use crate::storage::relation::datum::{self, ColumnKind, BYTEWISE_TYPES};
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
    // SAFETY: `node` is NULL or a valid expression node (callers' contract), and a
    // RelabelType's `arg` is a valid node, so each dereferenced pointer is a live node.
    unsafe {
        let mut n = node;
        while !n.is_null() && (*n).type_ == pg_sys::NodeTag::T_RelabelType {
            n = (*(n as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
        }
        n
    }
}

/// # Safety
/// `node` is NULL or a valid expression node; read only.
pub unsafe fn as_var(node: *mut pg_sys::Node, scanrelid: u32) -> Option<*mut pg_sys::Var> {
    // SAFETY: `node` is NULL or a valid expression node (this fn's contract); `strip`
    // returns NULL or such a node, and a T_Var tag means a Var.
    unsafe {
        let n = strip(node);
        if n.is_null() || (*n).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let var = n as *mut pg_sys::Var;
        ((*var).varno as u32 == scanrelid && (*var).varattno > 0 && (*var).varlevelsup == 0).then_some(var)
    }
}

unsafe fn as_const(node: *mut pg_sys::Node) -> Option<*mut pg_sys::Const> {
    // SAFETY: `node` is NULL or a valid expression node (callers' contract); `strip`
    // returns NULL or such a node, and a T_Const tag means a Const.
    unsafe {
        let n = strip(node);
        (!n.is_null() && (*n).type_ == pg_sys::NodeTag::T_Const).then_some(n as *mut pg_sys::Const)
    }
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
    // SAFETY: `c` is a live Const (from `as_const`), not NULL-valued once checked; its
    // value is of its consttype, which for the bytewise types is a varlena (detoasted here,
    // in the current memory context, before its bytes are read), else a by-value datum.
    unsafe {
        let same_type = (*c).consttype == operator_type(typid);
        let integers = INTEGERS.contains(&typid) && INTEGERS.contains(&(*c).consttype);
        if (*c).constisnull || !(same_type || integers) {
            return None;
        }
        if BYTEWISE_TYPES.contains(&typid) {
            let original = (*c).constvalue.cast_mut_ptr::<pg_sys::varlena>();
            let flat = pg_sys::pg_detoast_datum_packed(original);
            let len = pgrx::varlena::varsize_any_exhdr(flat);
            let bytes =
                std::slice::from_raw_parts(pgrx::varlena::vardata_any(flat) as *const u8, len).to_vec();
            return Some(Bound::Bytes(bytes));
        }
        if typid == pg_sys::UUIDOID {
            // A by-reference pg_uuid_t: its 16 bytes, as a uuid column stores them.
            let p = (*c).constvalue.cast_mut_ptr::<u8>();
            return Some(Bound::Bytes(std::slice::from_raw_parts(p, 16).to_vec()));
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
}

/// `opno` as a btree comparison of `typid`'s family (zone maps cannot check `<>`).
///
/// # Safety
/// Backend thread, inside a transaction.
pub(super) unsafe fn btree_op(opno: pg_sys::Oid, typid: pg_sys::Oid) -> Option<CmpOp> {
    // SAFETY: catalog and type cache lookups by OID, on the backend thread inside a
    // transaction (planning).
    match unsafe { relation_of(opno, btree_family(typid)?) }? {
        Rel::Cmp(op) => Some(op),
        Rel::Ne => None,
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
    // SAFETY: a catalog lookup of a collation OID taken from a planned expression,
    // on the backend thread inside a transaction (planning).
    op == CmpOp::Eq && unsafe { pg_sys::get_collation_isdeterministic(collation) }
}

/// The zone-map predicate a qual amounts to, as (attribute index, predicate).
unsafe fn predicate_of(qual: *mut pg_sys::Node, scanrelid: u32) -> Option<(usize, ZonePredicate)> {
    // SAFETY: `qual` is a valid, non-NULL qual of an implicit-AND list (from
    // `zone_predicates`): its tag says which node it is, an OpExpr's args are a valid list of
    // nodes and a NullTest's arg a valid node; catalog lookups run inside a transaction.
    unsafe {
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
}

/// The quals of `quals` (an implicit-AND list) that zone maps can check, with their
/// predicates.
///
/// # Safety
/// Backend thread, inside a transaction: `quals` is a valid (possibly NIL) list of
/// non-NULL expression nodes.
pub unsafe fn zone_predicates(
    quals: *mut pg_sys::List,
    scanrelid: u32,
) -> Vec<(*mut pg_sys::Node, usize, ZonePredicate)> {
    // SAFETY: `quals` is a valid (possibly NIL) list of non-NULL expression nodes
    // (this fn's contract), each handed to `predicate_of`.
    unsafe {
        pg_list::ptrs::<pg_sys::Node>(quals)
            .filter_map(|qual| predicate_of(qual, scanrelid).map(|(att, p)| (qual, att, p)))
            .collect()
    }
}

/// The share of `rel`'s rows that `clauses` (of its WHERE clauses) keep.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `clauses`
/// RestrictInfos of `rel`.
pub unsafe fn selectivity(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    clauses: &[*mut pg_sys::RestrictInfo],
) -> f64 {
    // SAFETY: `root` and `rel` are the planner's live nodes and `clauses` RestrictInfos
    // of `rel` (this fn's contract); the list is palloc'd in the planner's memory context.
    unsafe {
        let list = pg_list::from_ptrs(clauses.iter().copied());
        pg_sys::clauselist_selectivity(
            root,
            list,
            (*rel).relid as i32,
            pg_sys::JoinType::JOIN_INNER,
            std::ptr::null_mut(),
        )
    }
}

/// What the scan evaluates itself.
pub struct Pushdown {
    /// The pushed quals (AND of them), in the scan's form.
    pub filter: Option<FilterPlan>,
    /// The quals pushed, and those left to the executor.
    pub pushed: Vec<*mut pg_sys::RestrictInfo>,
    pub kept: Vec<*mut pg_sys::RestrictInfo>,
    /// The operand expressions the filter's tests name, by index.
    pub operands: Vec<*mut pg_sys::Node>,
}

impl Pushdown {
    /// The pushed filter's columns and tests, and the share of `rel`'s rows its quals
    /// keep (their selectivity); (0, 0, 1) when nothing is pushed.
    ///
    /// # Safety
    /// Backend thread, while planning: `root` and `rel` are the planner's live nodes, and this
    /// pushdown was made for `rel`.
    pub unsafe fn measure(
        &self,
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
    ) -> (usize, usize, f64) {
        let Some(f) = &self.filter else { return (0, 0, 1.0) };
        // SAFETY: `root` and `rel` are the planner's live nodes and the pushed clauses are
        // `rel`'s RestrictInfos (this fn's contract).
        (f.attributes().len(), f.tests(), unsafe { selectivity(root, rel, &self.pushed) })
    }

    /// Nothing pushed: every clause stays with the executor.
    ///
    /// # Safety
    /// `clauses` is a valid (possibly NIL) list of RestrictInfos.
    pub unsafe fn none(clauses: *mut pg_sys::List) -> Pushdown {
        // SAFETY: `clauses` is a valid (possibly NIL) list (this fn's contract).
        unsafe {
            Pushdown {
                filter: None,
                pushed: Vec::new(),
                kept: pg_list::ptrs(clauses).collect(),
                operands: Vec::new(),
            }
        }
    }
}

/// How a column's values are compared when pushed: as integers, floats, bytes, numerics
/// or blank-padded characters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Int,
    Float,
    Bytes,
    /// `numeric`: stored bytes compared in numeric order (`storage::format::numeric`).
    Numeric,
    /// `char(n)`: bytes compared without their trailing spaces.
    Bpchar,
}

/// Types whose btree order the stored integers follow, beyond `INT_ORDERED`.
const MORE_INT_ORDERED: [pg_sys::Oid; 2] = [pg_sys::BOOLOID, pg_sys::TIMEOID];
const FLOATS: [pg_sys::Oid; 2] = [pg_sys::FLOAT4OID, pg_sys::FLOAT8OID];

fn value_kind(base: pg_sys::Oid) -> Option<ValueKind> {
    if INT_ORDERED.contains(&base) || MORE_INT_ORDERED.contains(&base) {
        Some(ValueKind::Int)
    } else if FLOATS.contains(&base) {
        Some(ValueKind::Float)
    } else if BYTEWISE_TYPES.contains(&base) || base == pg_sys::UUIDOID {
        // uuid's order is memcmp's over its 16 stored bytes (uuid_internal_cmp).
        Some(ValueKind::Bytes)
    } else if base == pg_sys::NUMERICOID {
        Some(ValueKind::Numeric)
    } else if base == pg_sys::BPCHAROID {
        Some(ValueKind::Bpchar)
    } else {
        None
    }
}

/// Whether values of `operand` type convert exactly into the stored form of a column of
/// base type `column`: the same type, integers of any width, floats of either width
/// (float48 operators compare the widened value), text and varchar.
unsafe fn operand_fits(column: pg_sys::Oid, operand: pg_sys::Oid) -> bool {
    // SAFETY: getBaseType looks a type OID up in the catalog, on the backend thread
    // inside a transaction (planning).
    let operand = unsafe { pg_sys::getBaseType(operand) };
    let texts = [pg_sys::TEXTOID, pg_sys::VARCHAROID];
    operand == column
        || (INTEGERS.contains(&column) && INTEGERS.contains(&operand))
        || (FLOATS.contains(&column) && FLOATS.contains(&operand))
        || (texts.contains(&column) && texts.contains(&operand))
}

/// A column of base type `column` against an operand of base type `operand`, when they
/// are different types of the datetime family whose comparison, as a function of the
/// column value, never decreases (`time_cuts`): every pair but a timestamp column
/// against a timestamptz, whose local times in a DST gap convert out of order.
fn across_types(column: pg_sys::Oid, operand: pg_sys::Oid) -> Option<(TimeType, TimeType)> {
    let time = |t| match t {
        pg_sys::DATEOID => Some(TimeType::Date),
        pg_sys::TIMESTAMPOID => Some(TimeType::Timestamp),
        pg_sys::TIMESTAMPTZOID => Some(TimeType::TimestampTz),
        _ => None,
    };
    let (c, o) = (time(column)?, time(operand)?);
    (c != o && (c, o) != (TimeType::Timestamp, TimeType::TimestampTz)).then_some((c, o))
}

/// `a op b` for two columns of the relation (attribute, base type, kind): two integer
/// columns (of any widths: integer_ops compares them exactly), two float columns
/// (float48 operators compare the widened value), two of one int-ordered type, or two
/// numeric columns.
unsafe fn columns_test(
    opno: pg_sys::Oid,
    (a, a_type, a_kind): (usize, pg_sys::Oid, ValueKind),
    (b, b_type, b_kind): (usize, pg_sys::Oid, ValueKind),
    negate: bool,
) -> Option<FilterPlan> {
    let comparable = a_type == b_type
        || (INTEGERS.contains(&a_type) && INTEGERS.contains(&b_type))
        || (FLOATS.contains(&a_type) && FLOATS.contains(&b_type));
    if !comparable
        || a_kind != b_kind
        || !matches!(a_kind, ValueKind::Int | ValueKind::Float | ValueKind::Numeric)
    {
        return None;
    }
    // SAFETY: catalog and type cache lookups by OID, on the backend thread inside a
    // transaction (planning).
    let rel = unsafe { relation_of(opno, btree_family(a_type)?)? };
    let cmp = match if negate { rel.negate() } else { rel } {
        Rel::Cmp(c) => Some(c),
        Rel::Ne => None,
    };
    Some(FilterPlan::Test { att: a, test: PlanTest::Columns { cmp, other: b } })
}

struct Translator {
    root: *mut pg_sys::PlannerInfo,
    scanrelid: u32,
    operands: Vec<*mut pg_sys::Node>,
    /// Whether comparisons of arithmetic expressions may be pushed (`PlanTest::Arith`):
    /// for the scan's own clauses, whose order `Translations::pushdown` keeps as core's;
    /// not inside a CASE or an aggregate's FILTER.
    arithmetic: bool,
    /// The relation's column kinds, read when an expression first needs them.
    kinds: Option<Vec<ColumnKind>>,
}

/// A comparison as pushed: a btree strategy, or `<>`.
#[derive(Clone, Copy, PartialEq)]
enum Rel {
    Cmp(CmpOp),
    Ne,
}

impl Rel {
    fn negate(self) -> Rel {
        match self {
            Rel::Cmp(CmpOp::Lt) => Rel::Cmp(CmpOp::Ge),
            Rel::Cmp(CmpOp::Le) => Rel::Cmp(CmpOp::Gt),
            Rel::Cmp(CmpOp::Eq) => Rel::Ne,
            Rel::Cmp(CmpOp::Ge) => Rel::Cmp(CmpOp::Lt),
            Rel::Cmp(CmpOp::Gt) => Rel::Cmp(CmpOp::Le),
            Rel::Ne => Rel::Cmp(CmpOp::Eq),
        }
    }

    /// The relation of the column to the operand, for a clause written `operand op
    /// column` (`commuted`) and under a NOT (`negate`).
    fn oriented(self, commuted: bool, negate: bool) -> Rel {
        let rel = match (self, commuted) {
            (Rel::Cmp(c), true) => Rel::Cmp(c.commute()),
            (rel, _) => rel,
        };
        if negate {
            rel.negate()
        } else {
            rel
        }
    }
}

/// The column's btree family, for its base type: its default btree operator class's,
/// from the type cache (looking the class up in pg_opclass each time cost a catalog
/// scan per qual and column, a tenth of planning a join).
unsafe fn btree_family(base: pg_sys::Oid) -> Option<pg_sys::Oid> {
    let typid = operator_type(base);
    if let Some(&(_, family)) = BUILT_IN_FAMILIES.iter().find(|(t, _)| *t == typid) {
        return Some(family);
    }
    // SAFETY: the type cache lookup runs on the backend thread inside a transaction
    // (planning) and returns a live, non-NULL TypeCacheEntry.
    unsafe {
        let entry = pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_BTREE_OPFAMILY as i32);
        let family = (*entry).btree_opf;
        (family != pg_sys::InvalidOid).then_some(family)
    }
}

/// Built-in types and the family of their default btree operator class (fixed by the
/// catalog's initial contents; a type can have one default class per access method). A
/// new connection's first lookup of a type's family in the type cache scans pg_opclass
/// and checks every btree class's input type: 0.1 ms of its first plan.
const BUILT_IN_FAMILIES: [(pg_sys::Oid, pg_sys::Oid); 23] = [
    (pg_sys::INT2OID, pg_sys::INTEGER_BTREE_FAM_OID),
    (pg_sys::INT4OID, pg_sys::INTEGER_BTREE_FAM_OID),
    (pg_sys::INT8OID, pg_sys::INTEGER_BTREE_FAM_OID),
    (pg_sys::TEXTOID, pg_sys::TEXT_BTREE_FAM_OID),
    (pg_sys::NAMEOID, pg_sys::TEXT_BTREE_FAM_OID),
    (pg_sys::BPCHAROID, pg_sys::BPCHAR_BTREE_FAM_OID),
    (pg_sys::BOOLOID, pg_sys::BOOL_BTREE_FAM_OID),
    (pg_sys::BYTEAOID, pg_sys::BYTEA_BTREE_FAM_OID),
    (pg_sys::INTERVALOID, pg_sys::INTERVAL_BTREE_FAM_OID),
    (pg_sys::OIDOID, pg_sys::OID_BTREE_FAM_OID),
    (pg_sys::INETOID, pg_sys::NETWORK_BTREE_FAM_OID),
    (pg_sys::CHAROID, CHAR_BTREE_FAM_OID),
    (pg_sys::DATEOID, DATETIME_BTREE_FAM_OID),
    (pg_sys::TIMESTAMPOID, DATETIME_BTREE_FAM_OID),
    (pg_sys::TIMESTAMPTZOID, DATETIME_BTREE_FAM_OID),
    (pg_sys::TIMEOID, TIME_BTREE_FAM_OID),
    (pg_sys::TIMETZOID, TIMETZ_BTREE_FAM_OID),
    (pg_sys::FLOAT4OID, FLOAT_BTREE_FAM_OID),
    (pg_sys::FLOAT8OID, FLOAT_BTREE_FAM_OID),
    (pg_sys::NUMERICOID, NUMERIC_BTREE_FAM_OID),
    (pg_sys::MONEYOID, MONEY_BTREE_FAM_OID),
    (pg_sys::UUIDOID, UUID_BTREE_FAM_OID),
    (pg_sys::JSONBOID, JSONB_BTREE_FAM_OID),
];

// Btree families the headers name no symbol for: their OIDs are fixed in the catalog's
// initial contents (pg_opfamily.dat) as much as the named ones; the pg-test
// `built_in_btree_families_match_the_type_cache` checks every entry above.
const CHAR_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(429);
const DATETIME_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(434);
const FLOAT_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(1970);
const NUMERIC_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(1988);
const TIME_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(1996);
const TIMETZ_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(2000);
const MONEY_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(2099);
const UUID_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(2968);
const JSONB_BTREE_FAM_OID: pg_sys::Oid = pg_sys::Oid::from_u32(4033);

/// Whether every `BUILT_IN_FAMILIES` entry is what the type cache says (pg-test).
#[cfg(feature = "pg_test")]
pub fn built_in_families_match_type_cache() -> bool {
    BUILT_IN_FAMILIES.iter().all(|&(typid, family)| {
        // SAFETY: inside the test's transaction, on the backend thread; the entry is live.
        unsafe {
            (*pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_BTREE_OPFAMILY as i32)).btree_opf == family
        }
    })
}

/// `opno` as a comparison of the column's btree family: a member, or the negator of
/// its equality (`<>`).
unsafe fn relation_of(opno: pg_sys::Oid, family: pg_sys::Oid) -> Option<Rel> {
    // SAFETY: catalog lookups of operator and family OIDs, on the backend thread inside a
    // transaction (planning).
    unsafe {
        let strategy = |op| pg_sys::get_op_opfamily_strategy(op, family);
        match strategy(opno) {
            1 => Some(Rel::Cmp(CmpOp::Lt)),
            2 => Some(Rel::Cmp(CmpOp::Le)),
            3 => Some(Rel::Cmp(CmpOp::Eq)),
            4 => Some(Rel::Cmp(CmpOp::Ge)),
            5 => Some(Rel::Cmp(CmpOp::Gt)),
            _ => {
                let negator = pg_sys::get_negator(opno);
                (negator != pg_sys::InvalidOid && strategy(negator) == 3).then_some(Rel::Ne)
            }
        }
    }
}

/// Whether byte order answers `rel` under `collation` (see `byte_order_applies`).
unsafe fn bytes_answer(rel: Rel, collation: pg_sys::Oid) -> bool {
    let op = match rel {
        Rel::Cmp(op) => op,
        Rel::Ne => CmpOp::Eq,
    };
    // SAFETY: `byte_order_applies` only looks up a collation in the catalog, on the
    // backend thread inside a transaction (planning).
    unsafe { byte_order_applies(op, collation) }
}

impl Translator {
    /// Whether `expr` can be evaluated once when the scan starts: no column of this
    /// relation, nothing volatile, no subquery.
    unsafe fn is_operand(&self, expr: *mut pg_sys::Node) -> bool {
        // SAFETY: `expr` is non-NULL (checked first) and a valid expression of the query
        // `self.root` plans (callers' contract); the planner functions only read it and
        // `root`, and pull_varnos returns a Bitmapset (or NULL) that bms_is_member accepts.
        unsafe {
            !expr.is_null()
                && !pg_sys::contain_volatile_functions(expr)
                && !pg_sys::contain_subplans(expr)
                && !pg_sys::bms_is_member(self.scanrelid as i32, pg_sys::pull_varnos(self.root, expr))
        }
    }

    fn operand(&mut self, expr: *mut pg_sys::Node) -> usize {
        self.operands.push(expr);
        self.operands.len() - 1
    }

    /// The column of this relation that `node` is, with its base type and value kind.
    unsafe fn column(&self, node: *mut pg_sys::Node) -> Option<(usize, pg_sys::Oid, ValueKind)> {
        // SAFETY: `node` is a valid expression (callers' contract) and `as_var` returns a Var
        // of it; getBaseType runs inside a transaction (planning).
        unsafe {
            let var = as_var(node, self.scanrelid)?;
            let base = pg_sys::getBaseType((*var).vartype);
            Some(((*var).varattno as usize - 1, base, value_kind(base)?))
        }
    }

    /// The filter for `node` (negated if `negate`), or None if any part cannot be pushed.
    unsafe fn translate(&mut self, node: *mut pg_sys::Node, negate: bool) -> Option<FilterPlan> {
        // SAFETY: `node` is non-NULL (checked) and a valid expression of the query being
        // planned (callers' contract): its tag says which node it is, a BoolExpr's args are a
        // list of valid nodes (NOT has one), a NullTest's arg a valid node;
        // makeBoolConst palloc's in the planner's memory context.
        unsafe {
            if node.is_null() {
                return None;
            }
            match (*node).type_ {
                pg_sys::NodeTag::T_BoolExpr => {
                    let b = node as *mut pg_sys::BoolExpr;
                    let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*b).args).collect();
                    match (*b).boolop {
                        pg_sys::BoolExprType::NOT_EXPR => self.translate(args[0], !negate),
                        op => {
                            let children = args
                                .iter()
                                .map(|&a| self.translate(a, negate))
                                .collect::<Option<Vec<_>>>()?;
                            // NOT (a AND b) = NOT a OR NOT b, in three-valued logic too.
                            let and = (op == pg_sys::BoolExprType::AND_EXPR) != negate;
                            // Core's AND goes on past a NULL, the kernels' does not: a test
                            // that may fail must not come after another (an OR's children
                            // run as core's do, each on the rows the ones before left).
                            if and && children.iter().skip(1).any(FilterPlan::may_fail) {
                                return None;
                            }
                            Some(if and { FilterPlan::And(children) } else { FilterPlan::Or(children) })
                        }
                    }
                }
                pg_sys::NodeTag::T_OpExpr => self.op_expr(node as *mut pg_sys::OpExpr, negate),
                pg_sys::NodeTag::T_ScalarArrayOpExpr => {
                    self.array_op(node as *mut pg_sys::ScalarArrayOpExpr, negate)
                }
                pg_sys::NodeTag::T_NullTest => {
                    let t = node as *mut pg_sys::NullTest;
                    if (*t).argisrow {
                        return None;
                    }
                    let (att, _, _) = self.column((*t).arg as *mut pg_sys::Node)?;
                    let is_null = ((*t).nulltesttype == pg_sys::NullTestType::IS_NULL) != negate;
                    Some(FilterPlan::Test {
                        att,
                        test: if is_null { PlanTest::IsNull } else { PlanTest::IsNotNull },
                    })
                }
                pg_sys::NodeTag::T_Var | pg_sys::NodeTag::T_RelabelType => {
                    // A boolean column: `WHERE flag` is `flag = true`, `NOT flag` is `flag = false`.
                    let (att, base, _) = self.column(node)?;
                    if base != pg_sys::BOOLOID {
                        return None;
                    }
                    let k = self.operand(pg_sys::makeBoolConst(!negate, false));
                    Some(FilterPlan::Test { att, test: PlanTest::Compare(CmpOp::Eq, k) })
                }
                _ => None,
            }
        }
    }

    unsafe fn op_expr(&mut self, op: *mut pg_sys::OpExpr, negate: bool) -> Option<FilterPlan> {
        // SAFETY: `op` is a valid OpExpr of the query being planned (from `translate`), its
        // args a list of valid nodes; the catalog lookups run inside a transaction.
        unsafe {
            let [left, right] = pg_list::ptrs::<pg_sys::Node>((*op).args).collect::<Vec<_>>()[..] else {
                return None;
            };
            if let (Some(a), Some(b)) = (self.column(left), self.column(right)) {
                return columns_test((*op).opno, a, b, negate);
            }
            if let Some(plan) = self.extract_test(op, left, right, negate) {
                return Some(plan);
            }
            if let Some(plan) = self.leading_test((*op).opno, (*op).inputcollid, left, right, negate, false) {
                return Some(plan);
            }
            let (column, operand, commuted) = match self.column(left) {
                Some(c) if self.is_operand(right) => (c, right, false),
                _ => match self.column(right) {
                    Some(c) if self.is_operand(left) => (c, left, true),
                    _ => return self.arith_test(op, left, right, negate),
                },
            };
            let (att, base, kind) = column;
            let opfunc = pg_sys::get_opcode((*op).opno);
            let like = [pg_sys::F_TEXTLIKE, pg_sys::F_BYTEALIKE].map(pg_sys::Oid::from).contains(&opfunc);
            let not_like =
                [pg_sys::F_TEXTNLIKE, pg_sys::F_BYTEANLIKE].map(pg_sys::Oid::from).contains(&opfunc);
            if like || not_like {
                if commuted || kind != ValueKind::Bytes {
                    return None;
                }
                let text = base != pg_sys::BYTEAOID;
                if let Some(plan) = self.like(att, operand, (*op).inputcollid, like != negate, text) {
                    return Some(plan);
                }
            }
            if let Some(plan) = self.function_test(op, att, base, operand, commuted, negate) {
                return Some(plan);
            }
            if like || not_like {
                return None;
            }
            let family = btree_family(base)?;
            let mut rel = relation_of((*op).opno, family)?;
            let across = if operand_fits(base, pg_sys::exprType(operand)) {
                None
            } else {
                Some(across_types(base, pg_sys::getBaseType(pg_sys::exprType(operand)))?)
            };
            // A text range under a collation whose order is not byte order is tested with
            // the collation's own comparison (deterministic ones only: equal is byte-equal
            // there, so the other tests hold as they are).
            let collated = if matches!(kind, ValueKind::Bytes | ValueKind::Bpchar)
                && !bytes_answer(rel, (*op).inputcollid)
            {
                let collation = (*op).inputcollid;
                if collation == pg_sys::InvalidOid || !pg_sys::get_collation_isdeterministic(collation) {
                    return None;
                }
                Some(u32::from(collation))
            } else {
                None
            };
            rel = rel.oriented(commuted, negate);
            let k = self.operand(operand);
            if let Some(collation) = collated {
                let Rel::Cmp(cmp) = rel else { return None };
                let test = PlanTest::Collated { cmp, k, collation, trimmed: kind == ValueKind::Bpchar };
                return Some(FilterPlan::Test { att, test });
            }
            let test = match (rel, across) {
                (Rel::Cmp(c), None) if kind == ValueKind::Numeric => PlanTest::Numeric { cmp: Some(c), k },
                (Rel::Ne, None) if kind == ValueKind::Numeric => PlanTest::Numeric { cmp: None, k },
                (Rel::Cmp(c), None) if kind == ValueKind::Bpchar => {
                    PlanTest::Trimmed { test: TrimmedTest::Compare(Some(c)), k }
                }
                (Rel::Ne, None) if kind == ValueKind::Bpchar => {
                    PlanTest::Trimmed { test: TrimmedTest::Compare(None), k }
                }
                (Rel::Cmp(c), None) => PlanTest::Compare(c, k),
                (Rel::Ne, None) => PlanTest::NotEqual(k),
                (rel, Some((column, operand))) => {
                    let cmp = match rel {
                        Rel::Cmp(c) => Some(c),
                        Rel::Ne => None,
                    };
                    PlanTest::Across { cmp, k, column, operand }
                }
            };
            Some(FilterPlan::Test { att, test })
        }
    }

    /// `left op right` where a side is arithmetic on integer, float or numeric columns
    /// and constants (`agg_args::translate`, the aggregates' argument translation): both
    /// sides of one type, widened as the cross-type integer and float operators widen
    /// them, compared by a btree operator of the type's family.
    unsafe fn arith_test(
        &mut self,
        op: *mut pg_sys::OpExpr,
        left: *mut pg_sys::Node,
        right: *mut pg_sys::Node,
        negate: bool,
    ) -> Option<FilterPlan> {
        use crate::exec::agg::spec::{Expr, ExprType};
        if !self.arithmetic {
            return None;
        }
        // SAFETY: `op`, `left` and `right` are valid nodes of the query being planned
        // (the caller's), over the relation `scanrelid`, whose column kinds `kinds`
        // reads; catalog lookups and makeBoolConst run inside the planning transaction.
        unsafe {
            let kinds = self.kinds()?.to_vec();
            let translate = |n| super::agg_args::translate(n, self.scanrelid, &kinds, None);
            // A side that is no expression of the engine's but a value known when the scan
            // starts (a parameter) is an operand, of one of the engine's types.
            let value_type = |n: *mut pg_sys::Node| {
                Some(match pg_sys::getBaseType(pg_sys::exprType(n)) {
                    pg_sys::INT2OID => Expr::Int { value: 0, ty: ExprType::Int2 },
                    pg_sys::INT4OID => Expr::Int { value: 0, ty: ExprType::Int4 },
                    pg_sys::INT8OID => Expr::Int { value: 0, ty: ExprType::Int8 },
                    pg_sys::FLOAT4OID => Expr::Float { value: 0.0, ty: ExprType::Float4 },
                    pg_sys::FLOAT8OID => Expr::Float { value: 0.0, ty: ExprType::Float8 },
                    pg_sys::NUMERICOID => Expr::Numeric(Vec::new()),
                    _ => return None,
                })
            };
            let (l, r, operand, commuted) = match (translate(left), translate(right)) {
                (Some(l), Some(r)) => (l, Some(r), None, false),
                (Some(l), None) if self.is_operand(right) => (l, None, Some(right), false),
                (None, Some(r)) if self.is_operand(left) => (r, None, Some(left), true),
                _ => return None,
            };
            let (l, r) = match (r, operand) {
                (Some(r), _) => {
                    let (l, r) = super::agg_args::common_type(l, r)?;
                    (l, Some(r))
                }
                // The value's type widens to the expression's, never the other way round
                // (the executor makes it a constant of the expression's type).
                (None, Some(o)) => {
                    let (l, _) = super::agg_args::common_type(l, value_type(o)?)?;
                    (l, None)
                }
                (None, None) => return None,
            };
            let mut atts = Vec::new();
            l.attributes(&mut atts);
            if let Some(r) = &r {
                r.attributes(&mut atts);
            }
            let att = *atts.iter().min()?;
            let typid = match l.ty() {
                ExprType::Int2 => pg_sys::INT2OID,
                ExprType::Int4 => pg_sys::INT4OID,
                ExprType::Int8 => pg_sys::INT8OID,
                ExprType::Float4 => pg_sys::FLOAT4OID,
                ExprType::Float8 => pg_sys::FLOAT8OID,
                ExprType::Numeric => pg_sys::NUMERICOID,
            };
            let cmp = match relation_of((*op).opno, btree_family(typid)?)?.oriented(commuted, negate) {
                Rel::Cmp(c) => Some(c),
                Rel::Ne => None,
            };
            // The executor puts the engine the test computes with in this operand's place
            // (with the operand's value, when it is a side).
            let k = self.operand(operand.unwrap_or_else(|| pg_sys::makeBoolConst(true, false)));
            let (left, right) = (Box::new(l), r.map(Box::new));
            Some(FilterPlan::Test { att, test: PlanTest::Arith { cmp, left, right, k } })
        }
    }

    /// The scanned relation's column kinds.
    unsafe fn kinds(&mut self) -> Option<&[ColumnKind]> {
        if self.kinds.is_none() {
            // SAFETY: `root` is the live PlannerInfo and `scanrelid` a base relation of it,
            // whose range table entry names a relation the planner holds locked; it is
            // opened without a lock and closed again here.
            unsafe {
                let rte = *(*self.root).simple_rte_array.add(self.scanrelid as usize);
                let relation = pg_sys::RelationIdGetRelation((*rte).relid);
                if relation.is_null() {
                    return None;
                }
                self.kinds = Some(datum::column_kinds((*relation).rd_att));
                pg_sys::RelationClose(relation);
            }
        }
        self.kinds.as_deref()
    }

    /// `column op operand` for a text operator of core's that the scan calls on the
    /// values (once per dictionary entry, else per value): `ILIKE`, the regular
    /// expression matches `~` and `~*`, `LIKE` that `like` does not match on bytes (`_`,
    /// an escape), and their negators; on a `text`, `varchar` or `char(n)` column, the
    /// operand a `text`. Negated, the test wants the operator false (NULL still fails it).
    unsafe fn function_test(
        &mut self,
        op: *mut pg_sys::OpExpr,
        att: usize,
        base: pg_sys::Oid,
        operand: *mut pg_sys::Node,
        commuted: bool,
        negate: bool,
    ) -> Option<FilterPlan> {
        const FUNCTIONS: [u32; 8] = [
            pg_sys::F_TEXTLIKE,
            pg_sys::F_TEXTNLIKE,
            pg_sys::F_TEXTICLIKE,
            pg_sys::F_TEXTICNLIKE,
            pg_sys::F_TEXTREGEXEQ,
            pg_sys::F_TEXTREGEXNE,
            pg_sys::F_TEXTICREGEXEQ,
            pg_sys::F_TEXTICREGEXNE,
        ];
        // char(n)'s own operators run the same C functions on the value as stored, its
        // trailing spaces included, which is what a char(n) column keeps.
        const BPCHAR_FUNCTIONS: [u32; 8] = [
            pg_sys::F_BPCHARLIKE,
            pg_sys::F_BPCHARNLIKE,
            pg_sys::F_BPCHARICLIKE,
            pg_sys::F_BPCHARICNLIKE,
            pg_sys::F_BPCHARREGEXEQ,
            pg_sys::F_BPCHARREGEXNE,
            pg_sys::F_BPCHARICREGEXEQ,
            pg_sys::F_BPCHARICREGEXNE,
        ];
        // SAFETY: `op` and `operand` are valid nodes of the query being planned (the
        // caller's); the catalog lookup runs inside the planning transaction.
        unsafe {
            let function = pg_sys::get_opcode((*op).opno).to_u32();
            let known = if base == pg_sys::BPCHAROID {
                BPCHAR_FUNCTIONS.contains(&function)
            } else {
                [pg_sys::TEXTOID, pg_sys::VARCHAROID].contains(&base) && FUNCTIONS.contains(&function)
            };
            if commuted || !known || pg_sys::exprType(operand) != pg_sys::TEXTOID {
                return None;
            }
            let k = self.operand(operand);
            let collation = u32::from((*op).inputcollid);
            Some(FilterPlan::Test {
                att,
                test: PlanTest::Function { function, k, collation, wanted: !negate },
            })
        }
    }

    /// `substring(column FROM 1 FOR n) = operand`, `substr(column, 1, n)` or
    /// `left(column, n)` (`any`: `= ANY(operand)`, a text array), not negated, of a `text`
    /// or `varchar` column or a `char(n)` one cast to text, compared by `texteq` under a
    /// deterministic collation (equal is byte-equal), in a database encoding whose
    /// characters can be counted on bytes (UTF-8 or single-byte).
    unsafe fn leading_test(
        &mut self,
        opno: pg_sys::Oid,
        collation: pg_sys::Oid,
        left: *mut pg_sys::Node,
        right: *mut pg_sys::Node,
        negate: bool,
        any: bool,
    ) -> Option<FilterPlan> {
        // SAFETY: `left` and `right` are valid nodes of the query being planned (the
        // caller's): a T_FuncExpr tag means a FuncExpr, a T_Const a Const of its type (int4
        // for the positions, by the functions' signatures); catalog lookups run inside the
        // planning transaction.
        unsafe {
            if negate || pg_sys::get_opcode(opno).to_u32() != pg_sys::F_TEXTEQ {
                return None;
            }
            if collation != pg_sys::InvalidOid && !pg_sys::get_collation_isdeterministic(collation) {
                return None;
            }
            let utf8 = pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32;
            if !utf8 && pg_sys::pg_database_encoding_max_length() != 1 {
                return None;
            }
            // `x = ANY(array)` has the array on the right; `=` either way round.
            let (call, operand) = if any || self.is_operand(right) { (left, right) } else { (right, left) };
            if !self.is_operand(operand) || (*call).type_ != pg_sys::NodeTag::T_FuncExpr {
                return None;
            }
            let wanted = if any { pg_sys::TEXTARRAYOID } else { pg_sys::TEXTOID };
            if pg_sys::exprType(operand) != wanted {
                return None;
            }
            let f = call as *mut pg_sys::FuncExpr;
            let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*f).args).collect();
            let int = |n: *mut pg_sys::Node| {
                ((*n).type_ == pg_sys::NodeTag::T_Const
                    && (*(n as *mut pg_sys::Const)).consttype == pg_sys::INT4OID
                    && !(*(n as *mut pg_sys::Const)).constisnull)
                    .then(|| (*(n as *mut pg_sys::Const)).constvalue.value() as i32)
            };
            let (value, chars) = match ((*f).funcid.to_u32(), &args[..]) {
                (pg_sys::F_SUBSTRING_TEXT_INT4_INT4 | pg_sys::F_SUBSTR_TEXT_INT4_INT4, &[v, start, len])
                    if int(start)? == 1 =>
                {
                    (v, int(len)?)
                }
                (pg_sys::F_LEFT, &[v, len]) => (v, int(len)?),
                _ => return None,
            };
            if chars <= 0 {
                return None;
            }
            // The column itself, or a char(n) column cast to text (rtrim1).
            let (att, trimmed) = match self.column(value) {
                Some((att, base, _)) if [pg_sys::TEXTOID, pg_sys::VARCHAROID].contains(&base) => (att, false),
                Some(_) => return None,
                None => {
                    if (*value).type_ != pg_sys::NodeTag::T_FuncExpr {
                        return None;
                    }
                    let cast = value as *mut pg_sys::FuncExpr;
                    let inner: Vec<*mut pg_sys::Node> = pg_list::ptrs((*cast).args).collect();
                    match ((*cast).funcid.to_u32(), &inner[..]) {
                        (pg_sys::F_TEXT_BPCHAR, &[c]) => match self.column(c) {
                            Some((att, pg_sys::BPCHAROID, _)) => (att, true),
                            _ => return None,
                        },
                        _ => return None,
                    }
                }
            };
            let k = self.operand(operand);
            let test = PlanTest::Leading { chars: chars as u32, k, utf8, trimmed, any };
            Some(FilterPlan::Test { att, test })
        }
    }

    /// `extract(field FROM column) op operand` (or `date_part(field, column)`) for a
    /// field that grows with time of a date or timestamp column, the operand of the
    /// function's result type (numeric, float8): the column values it holds for are a
    /// range, found when the scan starts (`operands::extract_cuts`). Not for timestamptz
    /// (its fields move with the session's time zone, and local time is not monotone).
    unsafe fn extract_test(
        &mut self,
        op: *mut pg_sys::OpExpr,
        left: *mut pg_sys::Node,
        right: *mut pg_sys::Node,
        negate: bool,
    ) -> Option<FilterPlan> {
        use crate::exec::agg::spec::ExtractField;
        use pgrx::FromDatum;
        // SAFETY: `op`, `left` and `right` are valid nodes of the query being planned (the
        // caller's); a T_FuncExpr tag means a FuncExpr, a T_Const a Const of its type (text
        // for extract's field, by the function's signature); catalog lookups run inside the
        // planning transaction.
        unsafe {
            let is_call = |n: *mut pg_sys::Node| (*n).type_ == pg_sys::NodeTag::T_FuncExpr;
            let (call, operand, commuted) = if is_call(left) && self.is_operand(right) {
                (left as *mut pg_sys::FuncExpr, right, false)
            } else if is_call(right) && self.is_operand(left) {
                (right as *mut pg_sys::FuncExpr, left, true)
            } else {
                return None;
            };
            let (column, part, column_type) = match (*call).funcid.to_u32() {
                pg_sys::F_EXTRACT_TEXT_DATE => (TimeType::Date, false, pg_sys::DATEOID),
                pg_sys::F_EXTRACT_TEXT_TIMESTAMP => (TimeType::Timestamp, false, pg_sys::TIMESTAMPOID),
                pg_sys::F_DATE_PART_TEXT_TIMESTAMP => (TimeType::Timestamp, true, pg_sys::TIMESTAMPOID),
                _ => return None,
            };
            let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*call).args).collect();
            let [field, value] = args[..] else { return None };
            if (*field).type_ != pg_sys::NodeTag::T_Const || (*(field as *mut pg_sys::Const)).constisnull {
                return None;
            }
            let name = String::from_datum((*(field as *mut pg_sys::Const)).constvalue, false)?;
            let field = ExtractField::parse(&name).filter(|f| f.grows_with_time())?;
            let (att, base, _) = self.column(value)?;
            let result = if part { pg_sys::FLOAT8OID } else { pg_sys::NUMERICOID };
            if base != column_type || pg_sys::exprType(operand) != result {
                return None;
            }
            let rel = relation_of((*op).opno, btree_family(result)?)?.oriented(commuted, negate);
            let cmp = match rel {
                Rel::Cmp(c) => Some(c),
                Rel::Ne => None,
            };
            let k = self.operand(operand);
            let test = PlanTest::Extract { cmp, k, column, field: field.code(), part };
            Some(FilterPlan::Test { att, test })
        }
    }

    /// `column LIKE pattern` (`matching`; else NOT LIKE): a constant pattern whose only
    /// wildcard is `%`, under a deterministic collation (LIKE then matches bytes), as a
    /// prefix test (`'prefix%'`, which zone maps check too) or a pattern. A `%` anywhere
    /// but at the end needs an encoding where a literal cannot match inside a character
    /// (`text`: UTF-8 or single-byte; bytea is bytes).
    unsafe fn like(
        &mut self,
        att: usize,
        pattern: *mut pg_sys::Node,
        collation: pg_sys::Oid,
        matching: bool,
        text: bool,
    ) -> Option<FilterPlan> {
        // SAFETY: a catalog lookup of a collation OID from the planned OpExpr, inside a
        // transaction (planning).
        if collation != pg_sys::InvalidOid && !unsafe { pg_sys::get_collation_isdeterministic(collation) } {
            return None;
        }
        // SAFETY: `pattern` is a valid expression (from `op_expr`), so `as_const` returns a
        // live Const; a non-NULL one of a LIKE over text or bytea holds a varlena,
        // detoasted here in the current memory context, whose payload is `len` bytes at
        // vardata_any (the slice lives no longer than this call, in that context).
        let bytes = unsafe {
            let c = as_const(pattern)?;
            if (*c).constisnull {
                return None;
            }
            let flat = pg_sys::pg_detoast_datum_packed((*c).constvalue.cast_mut_ptr::<pg_sys::varlena>());
            let len = pgrx::varlena::varsize_any_exhdr(flat);
            std::slice::from_raw_parts(pgrx::varlena::vardata_any(flat) as *const u8, len)
        };
        if bytes.iter().any(|b| matches!(b, b'_' | b'\\')) {
            return None;
        }
        let literal_end = bytes.iter().rposition(|&b| b != b'%').map_or(0, |i| i + 1);
        let (prefix, wildcards) = bytes.split_at(literal_end);
        if matching && !wildcards.is_empty() && !prefix.contains(&b'%') {
            return Some(FilterPlan::Test { att, test: PlanTest::Prefix(prefix.to_vec()) });
        }
        // SAFETY: reads the database encoding, on the backend thread.
        let bytewise = !text
            || unsafe {
                pg_sys::GetDatabaseEncoding() == pg_sys::pg_enc::PG_UTF8 as i32
                    || pg_sys::pg_database_encoding_max_length() == 1
            };
        bytewise.then(|| FilterPlan::Test { att, test: PlanTest::Like { pattern: bytes.to_vec(), matching } })
    }

    /// `column = ANY(array)` (IN lists) and `column <> ALL(array)` (NOT IN).
    unsafe fn array_op(&mut self, op: *mut pg_sys::ScalarArrayOpExpr, negate: bool) -> Option<FilterPlan> {
        // SAFETY: `op` is a valid ScalarArrayOpExpr of the query being planned (from
        // `translate`), its args a list of valid nodes; the catalog lookups run inside a transaction.
        unsafe {
            let [left, right] = pg_list::ptrs::<pg_sys::Node>((*op).args).collect::<Vec<_>>()[..] else {
                return None;
            };
            if (*op).useOr {
                if let Some(plan) =
                    self.leading_test((*op).opno, (*op).inputcollid, left, right, negate, true)
                {
                    return Some(plan);
                }
            }
            let (att, base, kind) = self.column(left)?;
            if !self.is_operand(right) {
                return None;
            }
            let element = pg_sys::get_element_type(pg_sys::exprType(right));
            if element == pg_sys::InvalidOid || !operand_fits(base, element) {
                return None;
            }
            let rel = relation_of((*op).opno, btree_family(base)?)?;
            if matches!(kind, ValueKind::Bytes | ValueKind::Bpchar) && !bytes_answer(rel, (*op).inputcollid) {
                return None;
            }
            // NOT (x = ANY(a)) is x <> ALL(a), and the other way round.
            let any_equal = match (rel, (*op).useOr) {
                (Rel::Cmp(CmpOp::Eq), true) => true,
                (Rel::Ne, false) => false,
                _ => return None,
            } != negate;
            let k = self.operand(right);
            let test = match (kind, any_equal) {
                (ValueKind::Numeric, any) => PlanTest::NumericIn { k, any },
                (ValueKind::Bpchar, any) => PlanTest::Trimmed { test: TrimmedTest::In(any), k },
                (_, true) => PlanTest::In(k),
                (_, false) => PlanTest::NotIn(k),
            };
            Some(FilterPlan::Test { att, test })
        }
    }
}

/// Splits the scan clauses `clauses` (RestrictInfos of relation `rel`) into those the
/// scan evaluates and those left to the executor. A clause is pushed whole or not at
/// all, and only if it may be evaluated before the others: leakproof, or not behind a
/// security barrier (RLS, security_barrier views) that an unpushed clause enforces.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `clauses`
/// a list of `rel`'s RestrictInfos.
pub unsafe fn pushdown(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    clauses: *mut pg_sys::List,
) -> Pushdown {
    // SAFETY: `root` and `rel` are the planner's live nodes and `clauses` a list of
    // `rel`'s RestrictInfos (this fn's contract), as `Translations` requires.
    unsafe {
        let mut translations = Translations::default();
        translations.add(root, rel, clauses);
        translations.pushdown(root, rel, clauses)
    }
}

/// Each scan clause translated into the scan's form (None: left to the executor), its
/// operands numbered from 0: made once, when a path is offered, and assembled into a
/// `Pushdown` in whatever order the plan lists the clauses (createplan orders them by
/// cost), with the same filter and operand numbers as translating them in that order.
#[derive(Default)]
pub struct Translations {
    clauses: Vec<(*mut pg_sys::RestrictInfo, Option<Translated>)>,
}

/// One clause in the scan's form: its filter, and the operands it names (from 0).
struct Translated {
    filter: FilterPlan,
    operands: Vec<*mut pg_sys::Node>,
}

impl Translations {
    /// Translates the clauses of `clauses` not translated yet.
    ///
    /// # Safety
    /// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `clauses`
    /// a list of `rel`'s RestrictInfos.
    pub unsafe fn add(
        &mut self,
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        clauses: *mut pg_sys::List,
    ) {
        // SAFETY: `root` and `rel` are the planner's live nodes and `clauses` a list of
        // `rel`'s RestrictInfos (this fn's contract), each handed to `translate_clause`.
        unsafe {
            for ri in pg_list::ptrs::<pg_sys::RestrictInfo>(clauses) {
                if !self.clauses.iter().any(|(c, _)| *c == ri) {
                    self.clauses.push((ri, translate_clause(root, rel, ri)));
                }
            }
        }
    }

    /// Whether a clause translated may fail when evaluated (an arithmetic test): its
    /// scan must evaluate it on every row core's filter would, not on fewer (a join
    /// filter's, a LastPoint's).
    pub fn may_fail(&self) -> bool {
        self.clauses.iter().any(|(_, t)| t.as_ref().is_some_and(|t| t.filter.may_fail()))
    }

    /// What the scan evaluates of `clauses`, in their order; a clause not translated
    /// yet (the clauses of a path that core copied for another parameterization) is
    /// translated now.
    ///
    /// # Safety
    /// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `clauses`
    /// a list of `rel`'s RestrictInfos (the RestrictInfos already translated are compared by
    /// address, so they must be the ones `add` saw, in the same planning).
    pub unsafe fn pushdown(
        &self,
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        clauses: *mut pg_sys::List,
    ) -> Pushdown {
        // SAFETY: `clauses` is a valid list of RestrictInfos (this fn's contract).
        let list: Vec<*mut pg_sys::RestrictInfo> = unsafe { pg_list::ptrs(clauses).collect() };
        let mut fresh = Vec::new();
        for &ri in &list {
            if !self.clauses.iter().any(|(c, _)| *c == ri) {
                // SAFETY: `ri` is a live RestrictInfo of `rel`, and `root`, `rel` the
                // planner's live nodes (this fn's contract).
                fresh.push((ri, unsafe { translate_clause(root, rel, ri) }));
            }
        }
        let translated = |ri: *mut pg_sys::RestrictInfo| {
            self.clauses.iter().chain(&fresh).find(|(c, _)| *c == ri).and_then(|(_, t)| t.as_ref())
        };
        // A clause that may fail runs on the rows the clauses before it in core's order
        // leave (createplan's order_qual_clauses), as core would run it: pushed only if
        // they all are, and kept in that order.
        let may_fail = list.iter().any(|&ri| translated(ri).is_some_and(|t| t.filter.may_fail()));
        // SAFETY: `root` is the live PlannerInfo and `list` `rel`'s RestrictInfos.
        let order = if may_fail { unsafe { core_order(root, &list) } } else { list };
        let mut filters = Vec::new();
        let (mut pushed, mut kept, mut operands) = (Vec::new(), Vec::new(), Vec::new());
        for ri in order {
            match translated(ri) {
                Some(t) if !t.filter.may_fail() || kept.is_empty() => {
                    filters.push(t.filter.with_operands_from(operands.len()));
                    operands.extend(t.operands.iter().copied());
                    pushed.push(ri);
                }
                _ => kept.push(ri),
            }
        }
        let filter = match filters.len() {
            0 => None,
            1 => filters.pop(),
            _ => Some(FilterPlan::And(filters)),
        };
        Pushdown { filter, pushed, kept, operands }
    }
}

/// `clauses` in the order core's createplan evaluates a scan's quals
/// (`order_qual_clauses`): by security level, a cheap leakproof clause at level 0, then
/// by cost per tuple, a stable sort.
///
/// # Safety
/// Backend thread, while planning: `root` is the live PlannerInfo, `clauses` its
/// RestrictInfos.
unsafe fn core_order(
    root: *mut pg_sys::PlannerInfo,
    clauses: &[*mut pg_sys::RestrictInfo],
) -> Vec<*mut pg_sys::RestrictInfo> {
    let mut items: Vec<(*mut pg_sys::RestrictInfo, u32, f64)> = clauses
        .iter()
        .map(|&ri| {
            let mut cost = pg_sys::QualCost::default();
            // SAFETY: `ri` is a live RestrictInfo and `root` the live PlannerInfo (this
            // fn's contract); cost_qual_eval_node only reads them (and caches the cost in
            // the RestrictInfo, as createplan does); cpu_operator_cost is a GUC read on
            // the backend thread.
            unsafe {
                pg_sys::cost_qual_eval_node(&mut cost, ri as *mut pg_sys::Node, root);
                let level = if (*ri).leakproof && cost.per_tuple < 10.0 * pg_sys::cpu_operator_cost {
                    0
                } else {
                    (*ri).security_level
                };
                (ri, level, cost.per_tuple)
            }
        })
        .collect();
    items.sort_by(|a, b| a.1.cmp(&b.1).then(a.2.partial_cmp(&b.2).unwrap_or(std::cmp::Ordering::Equal)));
    items.into_iter().map(|(ri, _, _)| ri).collect()
}

/// Clause `ri` of `rel` in the scan's form, with its operands, if the scan may
/// evaluate it.
unsafe fn translate_clause(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    ri: *mut pg_sys::RestrictInfo,
) -> Option<Translated> {
    // SAFETY: `ri` is a live RestrictInfo of `rel` and `root`, `rel` the planner's live
    // nodes (callers' contract); its clause is a valid expression `translate` may read.
    unsafe {
        if !pg_sys::restriction_is_securely_promotable(ri, rel) {
            return None;
        }
        let mut t =
            Translator { root, scanrelid: (*rel).relid, operands: Vec::new(), arithmetic: true, kinds: None };
        let filter = t.translate((*ri).clause as *mut pg_sys::Node, false)?;
        Some(Translated { filter, operands: t.operands })
    }
}

/// An aggregate's `FILTER (WHERE expr)` in the scan's form, its operands appended to
/// `operands` (the scan's, then each filter's); None if any part cannot be evaluated on
/// vectors. A FILTER is no security barrier: it only chooses rows the scan returns.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `expr` a
/// valid expression over `rel`.
pub unsafe fn translate_filter(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    expr: *mut pg_sys::Node,
    operands: &mut Vec<*mut pg_sys::Node>,
) -> Option<FilterPlan> {
    // SAFETY: `rel` is the planner's live base relation (this fn's contract).
    let scanrelid = unsafe { (*rel).relid };
    let mut t =
        Translator { root, scanrelid, operands: std::mem::take(operands), arithmetic: false, kinds: None };
    let before = t.operands.len();
    // SAFETY: `root` is the live PlannerInfo and `expr` a valid expression over `rel`
    // (this fn's contract), as `translate` requires.
    let plan = unsafe { t.translate(expr, false) };
    if plan.is_none() {
        t.operands.truncate(before);
    }
    *operands = t.operands;
    plan
}
