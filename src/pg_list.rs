//! PostgreSQL `List`s read and built in one place (instead of walking `elements` in
//! every file that meets one). NIL is the null pointer.

use pgrx::pg_sys;

/// Number of elements.
pub unsafe fn len(list: *const pg_sys::List) -> usize {
    if list.is_null() {
        0
    } else {
        (*list).length as usize
    }
}

/// The pointers of a pointer list, as `*mut T`.
pub unsafe fn ptrs<T>(list: *const pg_sys::List) -> impl Iterator<Item = *mut T> {
    (0..len(list)).map(move |i| (*(*list).elements.add(i)).ptr_value as *mut T)
}

/// The integers of an integer list.
pub unsafe fn ints(list: *const pg_sys::List) -> impl Iterator<Item = i32> {
    (0..len(list)).map(move |i| (*(*list).elements.add(i)).int_value)
}

/// The OIDs of an OID list.
pub unsafe fn oids(list: *const pg_sys::List) -> impl Iterator<Item = pg_sys::Oid> {
    (0..len(list)).map(move |i| (*(*list).elements.add(i)).oid_value)
}

/// An integer list of `values` (in the current memory context).
pub unsafe fn from_ints(values: impl IntoIterator<Item = i32>) -> *mut pg_sys::List {
    values.into_iter().fold(std::ptr::null_mut(), |list, v| pg_sys::lappend_int(list, v))
}

/// A pointer list of `nodes` (in the current memory context).
pub unsafe fn from_ptrs<T>(nodes: impl IntoIterator<Item = *mut T>) -> *mut pg_sys::List {
    nodes.into_iter().fold(std::ptr::null_mut(), |list, n| pg_sys::lappend(list, n.cast()))
}
