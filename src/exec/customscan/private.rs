//! What a custom scan's plan keeps for its executor, in `custom_private`: a list that
//! `copyObject` and the plan's text form (parallel workers read plans as text) carry,
//! so only integer, OID and node lists, with bytea constants for serialized values.

use crate::pg_list;
use pgrx::pg_sys;
use pgrx::{FromDatum, IntoDatum};

pub trait PlanPrivate: Sized {
    /// The private data as a list, for `CustomScan.custom_private`.
    ///
    /// # Safety
    /// Backend thread, in the memory context the plan is built in (the list is palloc'd).
    unsafe fn to_list(&self) -> *mut pg_sys::List;
    /// The private data back from `custom_private`.
    ///
    /// # Safety
    /// `list` is a live `custom_private` that `to_list` made (or its copy).
    unsafe fn from_list(list: *mut pg_sys::List) -> Self;
}

/// A list of integers (attribute numbers, flags).
impl PlanPrivate for Vec<i32> {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: backend thread with a current memory context (the trait's contract).
        unsafe { pg_list::from_ints(self.iter().copied()) }
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        // SAFETY: `list` is the integer list `to_list` made (the trait's contract).
        unsafe { pg_list::ints(list).collect() }
    }
}

/// A bytea Datum of `bytes`, palloc'd in the current memory context.
pub fn bytea_datum(bytes: &[u8]) -> pg_sys::Datum {
    bytes.into_datum().expect("a bytea datum")
}

/// A bytea constant of `bytes`: serialized private data as a plan node.
pub fn bytea_const(bytes: &[u8]) -> *mut pg_sys::Node {
    let d = bytea_datum(bytes);
    // SAFETY: makeConst only pallocs and stores `d`, a bytea Datum just made in the
    // current memory context; bytea's typlen is -1 (varlena), passed by reference.
    unsafe {
        pg_sys::makeConst(pg_sys::BYTEAOID, -1, pg_sys::InvalidOid, -1, d, false, false) as *mut pg_sys::Node
    }
}

/// The bytes of a bytea constant (`bytea_const`'s).
///
/// # Safety
/// `c` is a live bytea `Const` whose value outlives `'a`.
pub unsafe fn const_bytes<'a>(c: *mut pg_sys::Const) -> &'a [u8] {
    // SAFETY: `c` is a live bytea Const (this fn's contract), so constvalue is a bytea
    // varlena unless constisnull.
    unsafe { <&[u8]>::from_datum((*c).constvalue, (*c).constisnull).unwrap_or_default() }
}
