//! What a custom scan's plan keeps for its executor, in `custom_private`: a list that
//! `copyObject` and the plan's text form (parallel workers read plans as text) carry,
//! so only integer, OID and node lists, with bytea constants for serialized values.

use crate::pg_list;
use pgrx::pg_sys;
use pgrx::{FromDatum, IntoDatum};

pub trait PlanPrivate: Sized {
    /// The private data as a list, for `CustomScan.custom_private`.
    unsafe fn to_list(&self) -> *mut pg_sys::List;
    /// The private data back from `custom_private`.
    unsafe fn from_list(list: *mut pg_sys::List) -> Self;
}

/// A list of integers (attribute numbers, flags).
impl PlanPrivate for Vec<i32> {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        pg_list::from_ints(self.iter().copied())
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        pg_list::ints(list).collect()
    }
}

/// A bytea Datum of `bytes`, palloc'd in the current memory context.
pub fn bytea_datum(bytes: &[u8]) -> pg_sys::Datum {
    bytes.into_datum().expect("a bytea datum")
}

/// A bytea constant of `bytes`: serialized private data as a plan node.
pub fn bytea_const(bytes: &[u8]) -> *mut pg_sys::Node {
    let d = bytea_datum(bytes);
    unsafe {
        pg_sys::makeConst(pg_sys::BYTEAOID, -1, pg_sys::InvalidOid, -1, d, false, false) as *mut pg_sys::Node
    }
}

/// The bytes of a bytea constant (`bytea_const`'s).
pub unsafe fn const_bytes<'a>(c: *mut pg_sys::Const) -> &'a [u8] {
    <&[u8]>::from_datum((*c).constvalue, (*c).constisnull).unwrap_or_default()
}
