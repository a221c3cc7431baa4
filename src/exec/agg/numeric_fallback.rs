//! PostgreSQL's own numeric functions, for the values of an aggregate's expression that
//! do not fit 128 bits (`exec::expr::eval::NumericFallback`): numeric_add, numeric_sub,
//! numeric_mul, numeric_mod, numeric_uminus and numeric_float8 on stored bytes, so
//! results and errors are core's.

use crate::exec::expr::eval::NumericFallback;
use crate::exec::expr::plan::BinOp;
use pgrx::pg_sys;
use pgrx::IntoDatum;

/// Calls into PostgreSQL: on the backend thread, during the scan, in the current
/// memory context (which the node resets per output batch).
pub struct PgNumeric;

impl NumericFallback for PgNumeric {
    fn binary(&mut self, op: BinOp, a: &[u8], b: &[u8]) -> Vec<u8> {
        let f = match op {
            BinOp::Add => pg_sys::F_NUMERIC_ADD,
            BinOp::Sub => pg_sys::F_NUMERIC_SUB,
            BinOp::Mul => pg_sys::F_NUMERIC_MUL,
            BinOp::Div => pg_sys::F_NUMERIC_DIV,
            BinOp::Mod => pg_sys::F_NUMERIC_MOD,
        };
        // SAFETY: numeric Datums made from a numeric's stored bytes (a varlena with that
        // payload) passed to a numeric function of two numerics; backend thread with a
        // current memory context (this type's contract); its result is a numeric varlena.
        unsafe {
            let d = pg_sys::OidFunctionCall2Coll(
                pg_sys::Oid::from_u32(f),
                pg_sys::InvalidOid,
                datum(a),
                datum(b),
            );
            payload(d)
        }
    }

    fn neg(&mut self, a: &[u8]) -> Vec<u8> {
        // SAFETY: as `binary`, for numeric_uminus of one numeric.
        unsafe {
            let d = pg_sys::OidFunctionCall1Coll(
                pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_UMINUS),
                pg_sys::InvalidOid,
                datum(a),
            );
            payload(d)
        }
    }

    fn float8(&mut self, a: &[u8]) -> f64 {
        // SAFETY: as `binary`, for numeric_float8 of one numeric; its result is a
        // by-value float8.
        unsafe {
            let d = pg_sys::OidFunctionCall1Coll(
                pg_sys::Oid::from_u32(pg_sys::F_FLOAT8_NUMERIC),
                pg_sys::InvalidOid,
                datum(a),
            );
            f64::from_bits(d.value() as u64)
        }
    }
}

/// A varlena Datum whose payload is `bytes` (bytea's layout is any varlena's).
fn datum(bytes: &[u8]) -> pg_sys::Datum {
    bytes.into_datum().expect("a varlena datum")
}

/// The payload of a varlena Datum.
///
/// # Safety
/// `d` is a valid varlena Datum; backend thread, current memory context (detoasting).
unsafe fn payload(d: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: `d` is a valid varlena (this fn's contract), detoasted into the current
    // memory context; its payload is `len` bytes at vardata_any.
    unsafe {
        let flat = pg_sys::pg_detoast_datum_packed(d.cast_mut_ptr::<pg_sys::varlena>());
        let len = pgrx::varlena::varsize_any_exhdr(flat);
        std::slice::from_raw_parts(pgrx::varlena::vardata_any(flat) as *const u8, len).to_vec()
    }
}
