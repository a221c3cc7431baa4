//! Datums of a ColumnarAgg's output row: a group's key values and each aggregate's
//! `Output`, made as PostgreSQL's own functions make them (numeric_in, numeric_div,
//! construct_array, numeric_deserialize and the variances' final functions), in the
//! current memory context.

use super::groups::KeyValue;
use super::keys::{EXTRACT_INFINITY, EXTRACT_MINUS_INFINITY};
use super::output::MomentsResult;
use super::output::Output;
use crate::exec::customscan::bytea_datum;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::image_arena::ImageArena;
use crate::storage::relation::datum::{self, ColumnKind};
use pgrx::pg_sys;
use std::ffi::CString;

/// How one output column of the node is made into a Datum.
pub struct OutputType {
    pub kind: ColumnKind,
    /// For a text min/max: the collation it compares in.
    pub collation: pg_sys::Oid,
}

/// A group key's Datum.
///
/// # Safety
/// Backend thread, inside the scan's transaction, with the current memory context the
/// output row's (the Datum is palloc'd there and PostgreSQL functions may raise ERRORs).
pub unsafe fn key_datum(key: &KeyValue, out: &OutputType, images: &mut ImageArena) -> (pg_sys::Datum, bool) {
    // An integer key of a numeric or float8 column is an `extract` / `date_part` field
    // (the only integer keys of those types; plain columns of them are byte keys).
    match (key, out.kind) {
        (KeyValue::Int(x), ColumnKind::Varlena) => {
            // SAFETY: backend thread with the output row's memory context (this fn's
            // contract): numeric_in and int64_to_numeric palloc there.
            let d = unsafe {
                match *x {
                    EXTRACT_INFINITY => numeric_text("Infinity"),
                    EXTRACT_MINUS_INFINITY => numeric_text("-Infinity"),
                    x => pg_sys::Datum::from(pg_sys::int64_to_numeric(x)),
                }
            };
            return (d, false);
        }
        (KeyValue::Int(x), ColumnKind::Float8) => {
            let f = match *x {
                EXTRACT_INFINITY => f64::INFINITY,
                EXTRACT_MINUS_INFINITY => f64::NEG_INFINITY,
                x => x as f64,
            };
            return (pg_sys::Datum::from(f.to_bits() as usize), false);
        }
        _ => {}
    }
    let v = match key {
        KeyValue::Null => PointValue::Null,
        KeyValue::Int(x) => PointValue::Int(*x),
        KeyValue::Bytes(b) => PointValue::Bytes(b),
    };
    // SAFETY: backend thread with the output row's memory context (this fn's contract);
    // a by-reference value is copied into `images`, which the caller keeps.
    unsafe { datum::point_datum(out.kind, v, images) }
}

/// An aggregate's output as a Datum of its output column.
///
/// # Safety
/// Backend thread, inside the scan's transaction, with the current memory context the
/// output row's (the Datum is palloc'd there and PostgreSQL functions may raise ERRORs).
pub unsafe fn output_datum(
    output: Output,
    out: &OutputType,
    images: &mut ImageArena,
) -> (pg_sys::Datum, bool) {
    // SAFETY: the arms call PostgreSQL's numeric and array functions and point_datum on
    // the backend thread with the output row's memory context (this fn's contract), on
    // Datums just made by them.
    unsafe {
        match output {
            Output::Null => (pg_sys::Datum::from(0usize), true),
            Output::Int8(x) => (int8(x), false),
            Output::Float8(x) => (pg_sys::Datum::from(x.to_bits() as usize), false),
            Output::Bool(b) => (pg_sys::Datum::from(b as usize), false),
            Output::Value(v) => datum::point_datum(out.kind, v, images),
            Output::Numeric(x) => (numeric(x), false),
            Output::NumericAvg { sum, n } => (numeric_div(numeric(sum), numeric(n as i128)), false),
            Output::NumericText { text, divide_by } => {
                let sum = numeric_text(&text);
                match divide_by {
                    None => (sum, false),
                    Some(n) => (numeric_div(sum, numeric(n as i128)), false),
                }
            }
            // A varlena with the numeric's stored bytes is the numeric's Datum.
            Output::NumericStored(bytes) => (bytea_datum(&bytes), false),
            Output::NumericStoredAvg { bytes, n } => {
                (numeric_div(bytea_datum(&bytes), numeric(n as i128)), false)
            }
            Output::Int8Array(words) => (array(&words.map(|w| w as u64), pg_sys::INT8OID), false),
            Output::Float8Array(words) => (array(&words.map(f64::to_bits), pg_sys::FLOAT8OID), false),
            Output::Bytea(bytes) => (bytea_datum(&bytes), false),
            Output::NumericVariance { state, result } => (numeric_variance(&state, result), false),
        }
    }
}

fn int8(x: i64) -> pg_sys::Datum {
    pg_sys::Datum::from(x as isize as usize)
}

/// A numeric Datum of `x`.
unsafe fn numeric(x: i128) -> pg_sys::Datum {
    match i64::try_from(x) {
        // SAFETY: int8_numeric takes one by-value int8; backend thread with a current
        // memory context (this fn's caller, `output_datum`, guarantees both).
        Ok(small) => unsafe {
            pg_sys::OidFunctionCall1Coll(
                pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_INT8),
                pg_sys::InvalidOid,
                int8(small),
            )
        },
        // SAFETY: `numeric_text` needs the backend thread and a current memory context,
        // which `output_datum`'s caller guarantees.
        Err(_) => unsafe { numeric_text(&x.to_string()) },
    }
}

/// numeric_div(a, b).
unsafe fn numeric_div(a: pg_sys::Datum, b: pg_sys::Datum) -> pg_sys::Datum {
    // SAFETY: `a` and `b` are numeric Datums made by `numeric`/`numeric_text`; backend
    // thread with a current memory context (the caller's contract).
    unsafe {
        pg_sys::OidFunctionCall2Coll(pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_DIV), pg_sys::InvalidOid, a, b)
    }
}

/// The numeric `text` reads as (numeric_in, no typmod).
unsafe fn numeric_text(text: &str) -> pg_sys::Datum {
    let text = CString::new(text).unwrap();
    // SAFETY: numeric_in gets a NUL-terminated string that outlives the call, the type OID
    // and typmod -1; backend thread with a current memory context (the caller's contract).
    unsafe {
        pg_sys::OidFunctionCall3Coll(
            pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_IN),
            pg_sys::InvalidOid,
            pg_sys::Datum::from(text.as_ptr()),
            pg_sys::Datum::from(pg_sys::InvalidOid),
            pg_sys::Datum::from(-1i32 as isize as usize),
        )
    }
}

/// var_pop, var_samp, stddev_pop or stddev_samp of a NumericAggState given as
/// numeric_serialize's bytes: numeric_deserialize makes the state and core's final
/// function (numeric_var_pop, ...; numeric_stddev_internal) the result, so its scales,
/// rounding, NaN and infinities are core's own. Never called for a NULL result.
unsafe fn numeric_variance(state: &[u8], result: MomentsResult) -> pg_sys::Datum {
    let finalfn = match result {
        MomentsResult::VarPop => pg_sys::F_NUMERIC_VAR_POP,
        MomentsResult::VarSamp => pg_sys::F_NUMERIC_VAR_SAMP,
        MomentsResult::StddevPop => pg_sys::F_NUMERIC_STDDEV_POP,
        MomentsResult::StddevSamp => pg_sys::F_NUMERIC_STDDEV_SAMP,
        MomentsResult::Avg => unreachable!("avg has no numeric variance state"),
    };
    // SAFETY: backend thread with a current memory context (the caller's contract).
    // numeric_deserialize runs through a FunctionCallInfo made here for one argument
    // (SizeForFunctionCallInfo(1) bytes, zeroed), whose context is a zeroed AggState
    // node: AggCheckCallContext, asked for no memory context, reads its tag alone. The
    // bytea Datum and the FmgrInfo outlive the call; the state it returns (palloc'd in
    // the current context) is the final function's one argument, by pointer.
    unsafe {
        let mut agg: pg_sys::AggState = std::mem::zeroed();
        agg.ss.ps.type_ = pg_sys::NodeTag::T_AggState;
        let mut flinfo: pg_sys::FmgrInfo = std::mem::zeroed();
        pg_sys::fmgr_info(pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_DESERIALIZE), &mut flinfo);
        let size = std::mem::size_of::<pg_sys::FunctionCallInfoBaseData>()
            + std::mem::size_of::<pg_sys::NullableDatum>();
        let fcinfo = pg_sys::palloc0(size) as *mut pg_sys::FunctionCallInfoBaseData;
        (*fcinfo).flinfo = &mut flinfo;
        (*fcinfo).context = &mut agg as *mut pg_sys::AggState as *mut pg_sys::Node;
        (*fcinfo).fncollation = pg_sys::InvalidOid;
        (*fcinfo).nargs = 1;
        let args = (*fcinfo).args.as_mut_slice(1);
        args[0] = pg_sys::NullableDatum { value: bytea_datum(state), isnull: false };
        let deserialize = flinfo.fn_addr.expect("numeric_deserialize has an address");
        let internal = deserialize(fcinfo);
        assert!(!(*fcinfo).isnull, "numeric_deserialize returned NULL");
        pg_sys::pfree(fcinfo as *mut std::ffi::c_void);
        pg_sys::OidFunctionCall1Coll(pg_sys::Oid::from_u32(finalfn), pg_sys::InvalidOid, internal)
    }
}

/// A one-dimensional array of 8-byte by-value elements.
unsafe fn array(words: &[u64], elem: pg_sys::Oid) -> pg_sys::Datum {
    let mut elems: Vec<pg_sys::Datum> = words.iter().map(|&w| pg_sys::Datum::from(w as usize)).collect();
    // SAFETY: `elems` holds `len` by-value 8-byte Datums for `elem` (int8 or float8,
    // typlen 8, byval, 'd' alignment); construct_array copies them into a new palloc'd
    // array (backend thread, current memory context: the caller's contract).
    let a = unsafe {
        pg_sys::construct_array(
            elems.as_mut_ptr(),
            elems.len() as i32,
            elem,
            8,
            true,
            b'd' as std::ffi::c_char,
        )
    };
    pg_sys::Datum::from(a)
}
