//! A vector's group keys as the grouper reads them: a key column's values as they are,
//! the buckets `date_trunc` / `date_bin` put them in, the `extract` field they have
//! (`bucket`'s and `extract`'s arithmetic, and PostgreSQL's own function where it does
//! not apply), or the value of an arithmetic expression (`exec::expr`).

use super::bucket::{self, TruncUnit};
use super::extract;
use super::groups::{ByteKey, KeyInput};
use super::numeric_fallback::PgNumeric;
use super::spec::{ExtractOf, KeyKind, KeySpec};
use crate::exec::expr::eval::{self, Columns, EvalError, Evaluated, NumVec, Values};
use crate::exec::expr::num::Num;
use crate::exec::filter::Filter;
use crate::storage::format::encoding::{DecodedValues, DecodedVector, Dictionary};
use crate::storage::read::reader::Reader;
use hashbrown::HashMap;
use pgrx::pg_sys;
use std::ffi::CString;

/// Per key, its buckets for the current vector and PostgreSQL's last answer.
pub struct KeyColumns {
    /// Per key, its bucketed values (indexed by row; unused for a plain column).
    buckets: Vec<Vec<i64>>,
    /// Per key, the memo `postgres_bucket` keeps.
    memos: Vec<Option<(i64, i64, i64)>>,
    /// Per key, which rows have a value when some computed key is NULL (an `extract`
    /// field an infinite date has not, an expression of a NULL); None when the column's
    /// validity says it (or, for an expression, when no row is NULL).
    valid: Vec<Option<Vec<bool>>>,
    /// Per key, a numeric expression's values as stored numerics (grouped by value).
    numerics: Vec<Option<DecodedVector>>,
}

/// The first selected row (its index in the selection) at which a computed key fails,
/// and core's error there.
pub struct KeyFailure {
    pub at: usize,
    pub error: EvalError,
}

/// The reader's decoded columns, for a key's expression.
struct ReaderColumns<'a>(&'a Reader);

impl Columns for ReaderColumns<'_> {
    fn column(&self, att: usize) -> &DecodedVector {
        self.0.column(att)
    }
}

/// An `extract` key's value for +Infinity and -Infinity (no field reaches them).
pub const EXTRACT_INFINITY: i64 = i64::MAX;
pub const EXTRACT_MINUS_INFINITY: i64 = i64::MIN;

impl KeyColumns {
    pub fn new(keys: usize) -> KeyColumns {
        KeyColumns {
            buckets: vec![Vec::new(); keys],
            memos: vec![None; keys],
            valid: vec![None; keys],
            numerics: vec![None; keys],
        }
    }

    /// Decodes the keys' columns of the current vector and computes the buckets and
    /// expressions of its selected rows; a failing expression gives its first failing
    /// row (core computes a row's keys before the next row's) and nothing else.
    ///
    /// # Safety
    /// Backend thread, during the scan: `reader`'s relation open and its snapshot live,
    /// positioned on a vector by `next_vector` (its buffers are read and PostgreSQL's
    /// date functions may be called, in the current memory context).
    pub unsafe fn compute(
        &mut self,
        keys: &[KeySpec],
        conditions: &[Vec<Filter>],
        reader: &mut Reader,
        sel: &[u32],
        fixed_offset: Option<i64>,
    ) -> Result<(), KeyFailure> {
        for (c, key) in keys.iter().enumerate() {
            if let Some(expr) = &key.expr {
                let conds = conditions.get(c).map_or(&[][..], |v| v.as_slice());
                // SAFETY: as below.
                unsafe { self.compute_expression(c, expr, conds, reader, sel) }?;
                continue;
            }
            // SAFETY: `reader` is open and positioned on a vector (this fn's contract).
            unsafe { reader.decode(key.att) };
            let col = reader.column(key.att);
            if key.kind.bucketed() {
                // SAFETY: backend thread with a current memory context (this fn's contract).
                unsafe {
                    bucket_values(
                        key.kind,
                        col,
                        sel,
                        fixed_offset,
                        &mut self.memos[c],
                        &mut self.buckets[c],
                        &mut self.valid[c],
                    )
                };
            }
        }
        Ok(())
    }

    /// Computes key `c`'s expression for the selected rows.
    ///
    /// # Safety
    /// As `compute` (PostgreSQL's numeric functions may be called for values beyond 128
    /// bits).
    unsafe fn compute_expression(
        &mut self,
        c: usize,
        expr: &crate::exec::expr::plan::Expr,
        conds: &[Filter],
        reader: &mut Reader,
        sel: &[u32],
    ) -> Result<(), KeyFailure> {
        let mut atts = Vec::new();
        expr.attributes(&mut atts);
        for &att in &atts {
            // SAFETY: `reader` is open and positioned on a vector (this fn's contract).
            unsafe { reader.decode(att) };
        }
        let rows = reader.column(atts[0]).rows as usize;
        let cols = ReaderColumns(reader);
        match eval::eval_with(expr, &cols, rows, sel, conds, &mut PgNumeric) {
            Ok(e) => {
                self.keep_computed(c, e, rows, sel);
                Ok(())
            }
            // The row core fails at: the rows one at a time, in order.
            Err(error) => Err(sel
                .iter()
                .enumerate()
                .find_map(|(at, r)| {
                    let one = std::slice::from_ref(r);
                    eval::eval_with(expr, &cols, rows, one, conds, &mut PgNumeric)
                        .err()
                        .map(|error| KeyFailure { at, error })
                })
                .unwrap_or(KeyFailure { at: 0, error })),
        }
    }

    /// Keeps an expression key's values: integers as they are, numerics as stored
    /// numerics (a group keeps the first display scale seen of its value, as core's
    /// hash aggregate keeps its first row).
    fn keep_computed(&mut self, c: usize, e: Evaluated, rows: usize, sel: &[u32]) {
        self.numerics[c] = None;
        match e.values {
            Values::Int(v) => {
                self.buckets[c] = v;
                self.valid[c] = e.valid;
            }
            Values::Numeric(n) => {
                let valid = e.valid;
                self.numerics[c] = Some(numeric_dictionary(&n, valid, rows, sel));
            }
            Values::Float4(_) | Values::Float8(_) => unreachable!("a float key is left to core"),
        }
    }

    /// The keys of the current vector (after `compute`), one input per key.
    pub fn inputs<'a>(&'a self, keys: &[KeySpec], reader: &'a Reader) -> Vec<KeyInput<'a>> {
        keys.iter()
            .enumerate()
            .map(|(c, key)| {
                if key.kind == KeyKind::Computed {
                    return match &self.numerics[c] {
                        Some(col) => KeyInput::Bytes(col, ByteKey::Numeric),
                        None => KeyInput::Int { values: &self.buckets[c], valid: self.valid[c].as_deref() },
                    };
                }
                let col = reader.column(key.att);
                match (key.kind, &col.values) {
                    (KeyKind::Value, DecodedValues::Int(v)) => {
                        KeyInput::Int { values: v, valid: col.validity.as_deref() }
                    }
                    (KeyKind::Value, _) => KeyInput::Bytes(col, ByteKey::Exact),
                    (KeyKind::Bpchar, _) => KeyInput::Bytes(col, ByteKey::TrimSpaces),
                    (KeyKind::Numeric, _) => KeyInput::Bytes(col, ByteKey::Numeric),
                    _ => KeyInput::Int {
                        values: &self.buckets[c],
                        valid: self.valid[c].as_deref().or(col.validity.as_deref()),
                    },
                }
            })
            .collect()
    }
}

/// A numeric key's values as a dictionary vector: one stored numeric per distinct value
/// of the vector (mantissas of one scale found by a hash of the mantissa, not made and
/// normalised per row), each row its entry's code; the grouper then looks up each entry
/// once per vector.
fn numeric_dictionary(n: &NumVec, valid: Option<Vec<bool>>, rows: usize, sel: &[u32]) -> DecodedVector {
    let mut codes = vec![0u32; rows];
    let mut offsets = vec![0u32];
    let mut data = Vec::new();
    let is_valid = |r: usize| valid.as_ref().is_none_or(|v| v[r]);
    fn add(bytes: &[u8], data: &mut Vec<u8>, offsets: &mut Vec<u32>) -> u32 {
        data.extend_from_slice(bytes);
        offsets.push(data.len() as u32);
        offsets.len() as u32 - 2
    }
    match n {
        NumVec::Scaled64 { m, scale } => {
            let mut entries: HashMap<i64, u32> = HashMap::new();
            let mut last: Option<(i64, u32)> = None;
            for &r in sel {
                let r = r as usize;
                if !is_valid(r) {
                    continue;
                }
                let x = m[r];
                codes[r] = match last {
                    Some((k, code)) if k == x => code,
                    _ => {
                        let code = *entries.entry(x).or_insert_with(|| {
                            let stored = Num::Fin { m: x as i128, scale: *scale }.to_stored();
                            add(&stored, &mut data, &mut offsets)
                        });
                        last = Some((x, code));
                        code
                    }
                };
            }
        }
        n => {
            for &r in sel {
                let r = r as usize;
                if is_valid(r) {
                    codes[r] = add(&n.get(r).stored(), &mut data, &mut offsets);
                }
            }
        }
    }
    let values = DecodedValues::Bytes { offsets: vec![0; rows + 1], data: Vec::new() };
    DecodedVector::from_parts(rows as u32, valid, values, Some(Dictionary::new(codes, offsets, data)))
}

/// Computes a bucketed key (`date_trunc`, `date_bin`) for the selected rows of `col`
/// into `out` (indexed by row). Values the arithmetic does not cover (BC dates, a time
/// zone with changing offsets, errors) are computed by PostgreSQL's own function;
/// `memo` keeps its last answer (bucket start, largest value seen in it, bucket).
unsafe fn bucket_values(
    kind: KeyKind,
    col: &DecodedVector,
    sel: &[u32],
    fixed_offset: Option<i64>,
    memo: &mut Option<(i64, i64, i64)>,
    out: &mut Vec<i64>,
    valid: &mut Option<Vec<bool>>,
) {
    let DecodedValues::Int(values) = &col.values else {
        unreachable!("a bucketed key on a non-integer column")
    };
    out.clear();
    out.resize(values.len(), 0);
    *valid = None;
    if let KeyKind::Extract { field, of } = kind {
        for &r in sel {
            let r = r as usize;
            if !col.is_valid(r) {
                continue;
            }
            let v = values[r];
            let fast = match of {
                ExtractOf::Date => extract::of_date(field, v),
                ExtractOf::Timestamp | ExtractOf::TimestampPart => extract::of_timestamp(field, v),
            };
            // SAFETY: backend thread with a current memory context (this fn's contract).
            match fast.or_else(|| unsafe { postgres_extract(field, of, v) }) {
                Some(x) => out[r] = x,
                None => {
                    let flags =
                        valid.get_or_insert_with(|| (0..values.len()).map(|i| col.is_valid(i)).collect());
                    flags[r] = false;
                }
            }
        }
        return;
    }
    for &r in sel {
        let r = r as usize;
        if !col.is_valid(r) {
            continue;
        }
        let ts = values[r];
        let fast = match kind {
            KeyKind::Trunc(unit) => bucket::trunc_local(unit, ts),
            KeyKind::TruncTz(unit) => fixed_offset.and_then(|off| bucket::trunc_fixed_offset(unit, ts, off)),
            KeyKind::Bin { stride, origin } => bucket::date_bin(stride, ts, origin),
            KeyKind::Value
            | KeyKind::Bpchar
            | KeyKind::Numeric
            | KeyKind::Extract { .. }
            | KeyKind::Computed => Some(ts),
        };
        out[r] = match fast {
            Some(b) => b,
            // SAFETY: backend thread with a current memory context (this fn's contract).
            None => unsafe { postgres_bucket(kind, ts, memo) },
        };
    }
}

/// PostgreSQL's date_trunc / date_bin for one value (also raising its errors).
/// Buckets are intervals of time: a value between a bucket's start and a value seen to
/// fall in it falls in it too, so the memo answers most rows.
unsafe fn postgres_bucket(kind: KeyKind, ts: i64, memo: &mut Option<(i64, i64, i64)>) -> i64 {
    if let Some((lo, hi, b)) = *memo {
        if lo <= ts && ts <= hi {
            return b;
        }
    }
    let d = |x: i64| pg_sys::Datum::from(x as isize as usize);
    // SAFETY: PostgreSQL's own date_trunc / date_bin called with the argument types of
    // their OIDs (a text made here, a palloc'd Interval, by-value timestamps), on the
    // backend thread in the current memory context (this fn's contract); the CString
    // outlives cstring_to_text, which copies it.
    let result = unsafe {
        match kind {
            KeyKind::Trunc(unit) | KeyKind::TruncTz(unit) => {
                let name = CString::new(unit_name(unit)).unwrap();
                let text = pg_sys::cstring_to_text(name.as_ptr());
                let f = if matches!(kind, KeyKind::Trunc(_)) {
                    pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMP
                } else {
                    pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMPTZ
                };
                // The session's time zone and collation-free: as the query's own call.
                pg_sys::OidFunctionCall2Coll(
                    pg_sys::Oid::from_u32(f),
                    pg_sys::InvalidOid,
                    pg_sys::Datum::from(text),
                    d(ts),
                )
            }
            KeyKind::Bin { stride, origin } => {
                let interval =
                    pg_sys::palloc0(std::mem::size_of::<pg_sys::Interval>()) as *mut pg_sys::Interval;
                (*interval).time = stride;
                pg_sys::OidFunctionCall3Coll(
                    pg_sys::Oid::from_u32(pg_sys::F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP),
                    pg_sys::InvalidOid,
                    pg_sys::Datum::from(interval),
                    d(ts),
                    d(origin),
                )
            }
            KeyKind::Value
            | KeyKind::Bpchar
            | KeyKind::Numeric
            | KeyKind::Extract { .. }
            | KeyKind::Computed => return ts,
        }
    };
    let b = result.value() as i64;
    *memo = (b <= ts).then_some((b, ts, b));
    b
}

/// PostgreSQL's `extract` / `date_part` of one value `extract` does not compute (None:
/// NULL). The infinities are answered here, as PostgreSQL 15 answers them: a field that
/// grows with time (year, decade, century, millennium, isoyear) is ±Infinity, any other
/// NULL; a finite value is PostgreSQL's own call (also raising its errors).
unsafe fn postgres_extract(field: extract::ExtractField, of: ExtractOf, v: i64) -> Option<i64> {
    let (lo, hi) = match of {
        ExtractOf::Date => (i32::MIN as i64, i32::MAX as i64),
        ExtractOf::Timestamp | ExtractOf::TimestampPart => (i64::MIN, i64::MAX),
    };
    if v == lo || v == hi {
        let grows = field.grows_with_time();
        return grows.then_some(if v == hi { EXTRACT_INFINITY } else { EXTRACT_MINUS_INFINITY });
    }
    let name = CString::new(field.name()).unwrap();
    // SAFETY: PostgreSQL's own extract / date_part called with the argument types of
    // their OIDs (a text made here, a by-value date or timestamp) and int8(numeric) on
    // its numeric result, on the backend thread in the current memory context (this fn's
    // contract); a finite value's field is never NULL and always a whole number.
    unsafe {
        let text = pg_sys::Datum::from(pg_sys::cstring_to_text(name.as_ptr()));
        let arg = pg_sys::Datum::from(v as isize as usize);
        let call =
            |f: u32| pg_sys::OidFunctionCall2Coll(pg_sys::Oid::from_u32(f), pg_sys::InvalidOid, text, arg);
        Some(match of {
            ExtractOf::Date | ExtractOf::Timestamp => {
                let f = if of == ExtractOf::Date {
                    pg_sys::F_EXTRACT_TEXT_DATE
                } else {
                    pg_sys::F_EXTRACT_TEXT_TIMESTAMP
                };
                let n = call(f);
                pg_sys::OidFunctionCall1Coll(
                    pg_sys::Oid::from_u32(pg_sys::F_INT8_NUMERIC),
                    pg_sys::InvalidOid,
                    n,
                )
                .value() as i64
            }
            ExtractOf::TimestampPart => {
                f64::from_bits(call(pg_sys::F_DATE_PART_TEXT_TIMESTAMP).value() as u64) as i64
            }
        })
    }
}

fn unit_name(unit: TruncUnit) -> &'static str {
    match unit {
        TruncUnit::Microseconds => "microseconds",
        TruncUnit::Milliseconds => "milliseconds",
        TruncUnit::Second => "second",
        TruncUnit::Minute => "minute",
        TruncUnit::Hour => "hour",
        TruncUnit::Day => "day",
        TruncUnit::Week => "week",
        TruncUnit::Month => "month",
        TruncUnit::Quarter => "quarter",
        TruncUnit::Year => "year",
        TruncUnit::Decade => "decade",
        TruncUnit::Century => "century",
        TruncUnit::Millennium => "millennium",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_keys_become_one_entry_per_value_of_the_vector() {
        // 1.50, 0.15, 1.50, NULL (row 3), 9.99 (row 4, not selected).
        let n = NumVec::Scaled64 { m: vec![150, 15, 150, 7, 999], scale: 2 };
        let valid = Some(vec![true, true, true, false, true]);
        let v = numeric_dictionary(&n, valid, 5, &[0, 1, 2, 3]);
        let d = v.dictionary.as_ref().unwrap();
        assert_eq!(d.len(), 2);
        assert_eq!(Num::from_stored(d.entry(0)), Some(Num::Fin { m: 150, scale: 2 }));
        assert_eq!(Num::from_stored(d.entry(1)), Some(Num::Fin { m: 15, scale: 2 }));
        assert_eq!(&d.codes[..3], &[0, 1, 0]);
        assert!(!v.is_valid(3));
        // Values per row (NaN among them) each get an entry of their own.
        let rows = NumVec::Rows(vec![
            eval::NumVal::Small(Num::NaN),
            eval::NumVal::Small(Num::Fin { m: 3, scale: 0 }),
        ]);
        let v = numeric_dictionary(&rows, None, 2, &[0, 1]);
        let d = v.dictionary.as_ref().unwrap();
        assert_eq!((Num::from_stored(d.entry(d.codes[0] as usize)), d.len()), (Some(Num::NaN), 2));
    }
}
