//! What a custom scan's plan keeps for its executor, in `custom_private`: a list that
//! `copyObject` and the plan's text form (parallel workers read plans as text) carry,
//! so only integer, OID and node lists.

use crate::pg_list;
use pgrx::pg_sys;

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
