//! The values of a pushed filter's operands, evaluated by the executor when a scan
//! starts (and again on a rescan): the PostgreSQL side of pushed filters, the one file
//! of `exec::filter` that calls PostgreSQL (`scripts/check_layers.py` allows it by
//! name). The planner folds constants through `operand_value` too, for plan-time
//! pruning.

use super::arith::{ExprBackend, ExprEngine};
use super::plan::{FilterPlan, OperandValue};
use super::time_cuts::{Cuts, TimeType};
use crate::exec::agg::numeric_fallback::PgNumeric;
use crate::exec::expr::eval::{EvalError, NumericFallback};
use crate::exec::expr::plan::BinOp;
use crate::storage::format::zonemap::Bound;
use crate::storage::relation::datum;
use pgrx::pg_sys;

/// The values of the operands of `plans`, filters that number their operands alike
/// (`states`: their executor state), evaluated now, each in the form its test takes:
/// cuts for cross-type datetime comparisons and `extract` (`convert_times`,
/// `extract_cuts`), a collation's comparison (`collate_operands`), a text operator's
/// function (`match_operands`).
///
/// # Safety
/// Backend thread, in the running query: `states` are the ExecInitExpr'd states of
/// `operands` (same order), and `econtext` is the node's live expression context (its
/// per-tuple memory is reset here).
pub unsafe fn operand_values(
    operands: &[*mut pg_sys::Node],
    states: &[*mut pg_sys::ExprState],
    econtext: *mut pg_sys::ExprContext,
    plans: &[&FilterPlan],
) -> Vec<OperandValue> {
    let mut values: Vec<OperandValue> = operands
        .iter()
        .zip(states)
        .map(|(&expr, &state)| {
            let mut isnull = false;
            // SAFETY: `state` is the initialized state of `expr`, evaluated in the live
            // `econtext` (this fn's contract); the value lives in its per-tuple memory
            // until the reset below, and `operand_value` copies what it keeps.
            unsafe {
                let d = pg_sys::ExecEvalExprSwitchContext(state, econtext, &mut isnull);
                operand_value(pg_sys::exprType(expr), d, isnull)
            }
        })
        .collect();
    // SAFETY: `econtext` is live (this fn's contract) and nothing evaluated in its
    // per-tuple memory is used after this: the values were copied out.
    unsafe { pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory) };
    collate_operands(&mut values, &gathered(plans, FilterPlan::collations));
    // SAFETY: on the backend thread, inside the running query (this fn's contract).
    unsafe {
        convert_times(&mut values, &gathered(plans, FilterPlan::conversions));
        extract_cuts(&mut values, &gathered(plans, FilterPlan::extractions));
        match_operands(&mut values, &gathered(plans, FilterPlan::functions));
    }
    for k in gathered(plans, FilterPlan::arithmetic) {
        let value = std::mem::replace(&mut values[k], OperandValue::Null);
        values[k] = OperandValue::Engine(ExprEngine::new(PgExpressions), Box::new(value));
    }
    values
}

/// What an expression test computes with in a running query: PostgreSQL's numeric
/// functions (`PgNumeric`) and core's errors, raised on the backend thread.
struct PgExpressions;

impl ExprBackend for PgExpressions {
    fn numeric(&self, op: Option<BinOp>, a: &[u8], b: &[u8]) -> Vec<u8> {
        match op {
            Some(op) => PgNumeric.binary(op, a, b),
            None => PgNumeric.neg(a),
        }
    }

    fn float8(&self, a: &[u8]) -> f64 {
        PgNumeric.float8(a)
    }

    fn raise(&self, e: EvalError) -> ! {
        crate::exec::agg::aggregates::raise(e)
    }
}

/// What `f` lists of each of `plans`, together.
fn gathered<T>(plans: &[&FilterPlan], f: fn(&FilterPlan) -> Vec<T>) -> Vec<T> {
    plans.iter().flat_map(|p| f(p)).collect()
}

/// The operands of `filter` estimated at plan time (`values`) in the form zone-map
/// pruning reads: the cuts of datetime and `extract` comparisons (the other
/// conversions only make tests that prune nothing).
///
/// # Safety
/// Backend thread, inside a transaction.
pub unsafe fn convert_for_pruning(values: &mut [OperandValue], filter: &FilterPlan) {
    // SAFETY: this fn's contract.
    unsafe {
        convert_times(values, &filter.conversions());
        extract_cuts(values, &filter.extractions());
    }
}

/// The operands `conversions` name (operand, column type, operand type) replaced by
/// their cuts in the column type's domain, found with core's own cross-type comparison
/// (`date_cmp_timestamptz_internal` and its kin: the session TimeZone, infinities and
/// overflow as core has them). A NULL stays NULL.
///
/// # Safety
/// Backend thread (the comparisons read the session TimeZone); none of them raises.
unsafe fn convert_times(values: &mut [OperandValue], conversions: &[(usize, TimeType, TimeType)]) {
    use TimeType::*;
    for &(k, column, operand) in conversions {
        let OperandValue::Value(Bound::Int(t)) = values[k] else { continue };
        // SAFETY: core's comparison functions on plain integers of their types, on the
        // backend thread (this fn's contract); they never raise.
        let cmp = |c: i64| unsafe {
            match (column, operand) {
                (Date, Timestamp) => pg_sys::date_cmp_timestamp_internal(c as i32, t),
                (Date, TimestampTz) => pg_sys::date_cmp_timestamptz_internal(c as i32, t),
                (Timestamp, Date) => -pg_sys::date_cmp_timestamp_internal(t as i32, c),
                (TimestampTz, Date) => -pg_sys::date_cmp_timestamptz_internal(t as i32, c),
                (TimestampTz, Timestamp) => -pg_sys::timestamp_cmp_timestamptz_internal(t, c),
                // Not monotone in the column (local times in a DST gap): never planned.
                (Timestamp, TimestampTz) => panic!("timestamp column against timestamptz is not pushed"),
                _ => c.cmp(&t) as i32,
            }
        };
        values[k] = OperandValue::Cuts(Cuts::find(column, cmp));
    }
}

/// An operand's value in the physical form of the column it is compared with (the
/// planner only pushes operands whose type converts exactly).
///
/// # Safety
/// Backend thread inside a transaction (catalog lookups); unless `isnull`, `d` is a live
/// Datum of type `typid`.
pub unsafe fn operand_value(typid: pg_sys::Oid, d: pg_sys::Datum, isnull: bool) -> OperandValue {
    if isnull {
        return OperandValue::Null;
    }
    // SAFETY: `d` is a non-null Datum of type `typid` (this fn's contract); for an array
    // type it is an array of `element`, which deconstruct_array splits into `n` Datums and
    // null flags, palloc'd and read here only below `n`. Catalog lookups run inside the
    // caller's transaction.
    unsafe {
        let element = pg_sys::get_element_type(typid);
        if element == pg_sys::InvalidOid {
            return datum::physical_value(datum::type_kind(typid), d, false)
                .map_or(OperandValue::Null, OperandValue::Value);
        }
        let array = pg_sys::pg_detoast_datum(d.cast_mut_ptr()) as *mut pg_sys::ArrayType;
        let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
        pg_sys::get_typlenbyvalalign(element, &mut len, &mut byval, &mut align);
        let (mut elems, mut nulls, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
        pg_sys::deconstruct_array(array, element, len as i32, byval, align, &mut elems, &mut nulls, &mut n);
        let kind = datum::type_kind(element);
        let items =
            (0..n as usize).map(|i| datum::physical_value(kind, *elems.add(i), *nulls.add(i))).collect();
        OperandValue::Array(items)
    }
}

/// The operands `collations` names (operand, collation: `FilterPlan::collations`) given
/// their collation's comparison, core's `varstr_cmp` (as `text_lt` and `bpcharlt`
/// compare, after their callers trimmed `char(n)` values). A NULL stays NULL.
fn collate_operands(values: &mut [OperandValue], collations: &[(usize, u32)]) {
    for &(k, collation) in collations {
        let OperandValue::Value(Bound::Bytes(b)) = &values[k] else { continue };
        let collator = super::Collator::new(collation, move |a: &[u8], b: &[u8]| {
            datum::collated_cmp(a, b, pg_sys::Oid::from(collation))
        });
        values[k] = OperandValue::Collated(b.clone(), collator);
    }
}

/// The operands `extractions` names (operand, column type, field code, `date_part`:
/// `FilterPlan::extractions`) replaced by their cuts in the column's domain: the column
/// values whose field is below, or not above, the operand, found with core's own
/// `extract` / `date_part` (the field grows with time, so each is a range). A NULL stays
/// NULL.
///
/// # Safety
/// Backend thread, inside a transaction (core's functions are called, and palloc).
unsafe fn extract_cuts(values: &mut [OperandValue], extractions: &[(usize, TimeType, u8, bool)]) {
    use crate::exec::agg::extract::ExtractField;
    use crate::storage::format::{numeric, zonemap::pg_float_cmp};
    for &(k, column, field, part) in extractions {
        let operand = match &values[k] {
            OperandValue::Value(b @ (Bound::Bytes(_) | Bound::Float(_))) => b.clone(),
            _ => continue,
        };
        let Some(field) = ExtractField::from_code(field) else { continue };
        let name = std::ffi::CString::new(field.name()).expect("field names have no NUL");
        let function = match (column, part) {
            (TimeType::Date, false) => pg_sys::F_EXTRACT_TEXT_DATE,
            (TimeType::Timestamp, false) => pg_sys::F_EXTRACT_TEXT_TIMESTAMP,
            (TimeType::Timestamp, true) => pg_sys::F_DATE_PART_TEXT_TIMESTAMP,
            // Never planned (`quals`): a timestamptz's fields move with the time zone.
            _ => continue,
        };
        // SAFETY: a text made from a NUL-terminated name, palloc'd in the current
        // context (this fn's contract: inside a transaction), used by the calls below.
        let text = unsafe { pg_sys::Datum::from(pg_sys::cstring_to_text(name.as_ptr())) };
        // SAFETY: core's extract / date_part called with their argument types (the text
        // above, a by-value date or timestamp of the column's domain, infinities included)
        // on the backend thread inside a transaction (this fn's contract); the numeric
        // result is read as a varlena of type numeric, the float8 one by value.
        let cmp = |c: i64| unsafe {
            let arg = pg_sys::Datum::from(c as isize as usize);
            let d =
                pg_sys::OidFunctionCall2Coll(pg_sys::Oid::from_u32(function), pg_sys::InvalidOid, text, arg);
            let order = match &operand {
                Bound::Float(f) => pg_float_cmp(f64::from_bits(d.value() as u64), *f),
                Bound::Bytes(b) => match datum::physical_value(datum::ColumnKind::Varlena, d, false) {
                    Some(Bound::Bytes(x)) => numeric::cmp_bytes(&x, b).expect("extract gives a numeric"),
                    _ => unreachable!("extract gives a numeric"),
                },
                Bound::Int(_) => unreachable!("matched above"),
            };
            order as i32
        };
        values[k] = OperandValue::Cuts(Cuts::find(column, cmp));
    }
}

/// The operands `functions` names (operand, function, collation: `FilterPlan::functions`)
/// bound to their function: a `Matcher` that calls it, through one FmgrInfo looked up
/// here, on a value and the operand, as the executor's qual would. A NULL stays NULL.
///
/// # Safety
/// Backend thread, inside a transaction (the function is looked up in the catalog).
unsafe fn match_operands(values: &mut [OperandValue], functions: &[(usize, u32, u32)]) {
    for &(k, function, collation) in functions {
        let OperandValue::Value(Bound::Bytes(pattern)) = &values[k] else { continue };
        let mut finfo = Box::new(std::cell::UnsafeCell::new(pg_sys::FmgrInfo::default()));
        // SAFETY: looks the function up in the catalog (this fn's contract) and fills the
        // FmgrInfo, which stays in its box (never moved) for the matcher's life.
        unsafe { pg_sys::fmgr_info(pg_sys::Oid::from(function), finfo.get_mut()) };
        let call = CoreCall { finfo, collation, pattern: text_image(pattern), value: Default::default() };
        values[k] = OperandValue::Matcher(super::Matcher::new(function, collation, move |x| call.call(x)));
    }
}

/// A text operator's function with its right operand, for `match_operands`.
struct CoreCall {
    finfo: Box<std::cell::UnsafeCell<pg_sys::FmgrInfo>>,
    collation: u32,
    /// The operand as a text Datum's image (4-byte header), in 8-byte words.
    pattern: Vec<u64>,
    /// The value's image, made again for each call.
    value: std::cell::RefCell<Vec<u64>>,
}

// SAFETY: a CoreCall is made and called on the backend thread only (the filter kernels
// run there: no PostgreSQL call is made from another thread in this crate); the bounds
// only let it live in a `Matcher`, which the pure kernels hold.
unsafe impl Send for CoreCall {}
// SAFETY: as above: never shared with another thread.
unsafe impl Sync for CoreCall {}

impl CoreCall {
    fn call(&self, x: &[u8]) -> bool {
        let mut value = self.value.borrow_mut();
        write_text_image(x, &mut value);
        // SAFETY: the function's FmgrInfo was filled by fmgr_info; both arguments are
        // valid text Datums (4-byte varlena headers, 8-byte aligned words) that live for
        // the call; the operators called (textlike, texticlike, textregexeq, ... and their
        // negators) are strict and never return NULL, and an error they raise unwinds as any
        // ereport does. On the backend thread (see the Send impl).
        unsafe {
            let d = pg_sys::FunctionCall2Coll(
                self.finfo.get(),
                pg_sys::Oid::from(self.collation),
                pg_sys::Datum::from(value.as_ptr()),
                pg_sys::Datum::from(self.pattern.as_ptr()),
            );
            d.value() & 0xFF != 0
        }
    }
}

/// `x` as a text Datum's image (SET_VARSIZE's 4-byte header, then the bytes).
fn text_image(x: &[u8]) -> Vec<u64> {
    let mut out = Vec::new();
    write_text_image(x, &mut out);
    out
}

fn write_text_image(x: &[u8], out: &mut Vec<u64>) {
    let len = 4 + x.len();
    out.clear();
    out.resize(len.div_ceil(8), 0);
    // SAFETY: `out` holds at least `len` bytes (sized above), u64-aligned; the header is
    // the little-endian 4-byte varlena length word (SET_VARSIZE), the bytes follow it.
    unsafe {
        let base = out.as_mut_ptr() as *mut u8;
        (base as *mut u32).write(((len as u32) << 2).to_le());
        std::ptr::copy_nonoverlapping(x.as_ptr(), base.add(4), x.len());
    }
}
