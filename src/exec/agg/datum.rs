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
pub unsafe fn key_datum(key: &KeyValue, out: &OutputType, images: &mut ImageArena) -> (pg_sys::Datum, bool) {
    let v = match key {
        KeyValue::Null => PointValue::Null,
        KeyValue::Int(x) => PointValue::Int(*x),
        KeyValue::Bytes(b) => PointValue::Bytes(b),
    };
    datum::point_datum(out.kind, v, images)
}

/// An aggregate's output as a Datum of its output column.
pub unsafe fn output_datum(
    output: Output,
    out: &OutputType,
    images: &mut ImageArena,
) -> (pg_sys::Datum, bool) {
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
        Output::Int8Array(words) => (array(&words.map(|w| w as u64), pg_sys::INT8OID), false),
        Output::Float8Array(words) => (array(&words.map(f64::to_bits), pg_sys::FLOAT8OID), false),
        Output::Bytea(bytes) => (bytea_datum(&bytes), false),
    }
}

fn int8(x: i64) -> pg_sys::Datum {
    pg_sys::Datum::from(x as isize as usize)
}

/// A numeric Datum of `x`.
unsafe fn numeric(x: i128) -> pg_sys::Datum {
    match i64::try_from(x) {
        Ok(small) => pg_sys::OidFunctionCall1Coll(
            pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_INT8),
            pg_sys::InvalidOid,
            int8(small),
        ),
        Err(_) => numeric_text(&x.to_string()),
    }
}

/// numeric_div(a, b).
unsafe fn numeric_div(a: pg_sys::Datum, b: pg_sys::Datum) -> pg_sys::Datum {
    pg_sys::OidFunctionCall2Coll(pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_DIV), pg_sys::InvalidOid, a, b)
}

/// The numeric `text` reads as (numeric_in, no typmod).
unsafe fn numeric_text(text: &str) -> pg_sys::Datum {
    let text = CString::new(text).unwrap();
    pg_sys::OidFunctionCall3Coll(
        pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_IN),
        pg_sys::InvalidOid,
        pg_sys::Datum::from(text.as_ptr()),
        pg_sys::Datum::from(pg_sys::InvalidOid),
        pg_sys::Datum::from(-1i32 as isize as usize),
    )
}

/// A one-dimensional array of 8-byte by-value elements.
unsafe fn array(words: &[u64], elem: pg_sys::Oid) -> pg_sys::Datum {
    let mut elems: Vec<pg_sys::Datum> = words.iter().map(|&w| pg_sys::Datum::from(w as usize)).collect();
    let a = pg_sys::construct_array(
        elems.as_mut_ptr(),
        elems.len() as i32,
        elem,
        8,
        true,
        b'd' as std::ffi::c_char,
    );
    pg_sys::Datum::from(a)
}
