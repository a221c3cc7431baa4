//! Datums of a ColumnarAgg's output row: a group's key values and each aggregate's
//! `Output`, made as PostgreSQL's own functions make them (numeric_in, numeric_div,
//! construct_array), in the current memory context.

use super::groups::KeyValue;
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
