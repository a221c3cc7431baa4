//! A column's value distribution from its ANALYZE statistics (pg_statistic's most
//! common values and histogram), and constants as numbers, for estimates that core's
//! selectivity functions do not make (HAVING tests on aggregates).

use super::having_selectivity::ValueDistribution;
use pgrx::pg_sys;

/// The distribution of the values of column `attnum` of table `relid` (not counting
/// inheritance children), when ANALYZE has seen it and its type is a number.
///
/// # Safety
/// Backend thread, inside a transaction.
pub unsafe fn value_distribution(relid: pg_sys::Oid, attnum: i16) -> Option<ValueDistribution> {
    // SAFETY: a syscache lookup inside a transaction (this fn's contract); the tuple is
    // released after both statistics slots taken from it are freed, and each slot's arrays
    // are read within their lengths while the slot is held.
    unsafe {
        let tuple = pg_sys::SearchSysCache3(
            pg_sys::SysCacheIdentifier::STATRELATTINH as i32,
            pg_sys::Datum::from(relid),
            pg_sys::Datum::from(attnum),
            pg_sys::Datum::from(false),
        );
        if tuple.is_null() {
            return None;
        }
        let null_frac =
            (*pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_statistic>(tuple)).stanullfrac as f64;
        let mut mcv = Vec::new();
        let mut histogram = Vec::new();
        let mut usable = true;
        let mut slot = pg_sys::AttStatsSlot::default();
        if pg_sys::get_attstatsslot(
            &mut slot,
            tuple,
            pg_sys::STATISTIC_KIND_MCV as i32,
            pg_sys::InvalidOid,
            (pg_sys::ATTSTATSSLOT_VALUES | pg_sys::ATTSTATSSLOT_NUMBERS) as i32,
        ) {
            for i in 0..slot.nvalues.min(slot.nnumbers) as usize {
                match number(*slot.values.add(i), slot.valuetype) {
                    Some(v) => mcv.push((v, *slot.numbers.add(i) as f64)),
                    None => usable = false,
                }
            }
            pg_sys::free_attstatsslot(&mut slot);
        }
        let mut slot = pg_sys::AttStatsSlot::default();
        if usable
            && pg_sys::get_attstatsslot(
                &mut slot,
                tuple,
                pg_sys::STATISTIC_KIND_HISTOGRAM as i32,
                pg_sys::InvalidOid,
                pg_sys::ATTSTATSSLOT_VALUES as i32,
            )
        {
            for i in 0..slot.nvalues as usize {
                match number(*slot.values.add(i), slot.valuetype) {
                    Some(v) => histogram.push(v),
                    None => usable = false,
                }
            }
            pg_sys::free_attstatsslot(&mut slot);
        }
        pg_sys::ReleaseSysCache(tuple);
        if !usable {
            return None;
        }
        ValueDistribution::from_stats(&mcv, &histogram, null_frac)
    }
}

/// A value of an integer, float or numeric type as a float; None for other types.
///
/// # Safety
/// Backend thread; `value` is a valid, non-NULL datum of type `typid`.
pub unsafe fn number(value: pg_sys::Datum, typid: pg_sys::Oid) -> Option<f64> {
    // SAFETY: `value` is a valid datum of `typid` (this fn's contract), read as that
    // type's C representation; numeric_float8 takes a numeric and returns a float8.
    unsafe {
        Some(match typid {
            pg_sys::INT2OID => value.value() as i16 as f64,
            pg_sys::INT4OID => value.value() as i32 as f64,
            pg_sys::INT8OID => value.value() as i64 as f64,
            pg_sys::FLOAT4OID => f32::from_bits(value.value() as u32) as f64,
            pg_sys::FLOAT8OID => f64::from_bits(value.value() as u64),
            pg_sys::NUMERICOID => pgrx::direct_function_call::<f64>(pg_sys::numeric_float8, &[Some(value)])?,
            _ => return None,
        })
    }
}
