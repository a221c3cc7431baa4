//! PostgreSQL `List`s read and built in one place (instead of walking `elements` in
//! every file that meets one). NIL is the null pointer.

use pgrx::pg_sys;

/// Number of elements.
///
/// # Safety
/// `list` is NIL (null) or points to a live `List`.
pub unsafe fn len(list: *const pg_sys::List) -> usize {
    if list.is_null() {
        0
    } else {
        // SAFETY: non-null, so a live `List` by this fn's contract.
        unsafe { (*list).length as usize }
    }
}

/// The pointers of a pointer list, as `*mut T`.
///
/// # Safety
/// `list` is NIL or a live pointer `List` (`T_List`) that is neither freed nor changed
/// while the iterator is used.
pub unsafe fn ptrs<T>(list: *const pg_sys::List) -> impl Iterator<Item = *mut T> {
    // SAFETY: `list` is NIL or live (this fn's contract).
    let n = unsafe { len(list) };
    // SAFETY: `i < length`, so `elements.add(i)` is an initialized cell of the live list
    // (this fn's contract: the list outlives the iterator and is a pointer list).
    (0..n).map(move |i| unsafe { (*(*list).elements.add(i)).ptr_value as *mut T })
}

/// The integers of an integer list.
///
/// # Safety
/// `list` is NIL or a live integer `List` (`T_IntList`) that is neither freed nor
/// changed while the iterator is used.
pub unsafe fn ints(list: *const pg_sys::List) -> impl Iterator<Item = i32> {
    // SAFETY: `list` is NIL or live (this fn's contract).
    let n = unsafe { len(list) };
    // SAFETY: `i < length` of the live integer list (this fn's contract).
    (0..n).map(move |i| unsafe { (*(*list).elements.add(i)).int_value })
}

/// The OIDs of an OID list.
///
/// # Safety
/// `list` is NIL or a live OID `List` (`T_OidList`) that is neither freed nor changed
/// while the iterator is used.
pub unsafe fn oids(list: *const pg_sys::List) -> impl Iterator<Item = pg_sys::Oid> {
    // SAFETY: `list` is NIL or live (this fn's contract).
    let n = unsafe { len(list) };
    // SAFETY: `i < length` of the live OID list (this fn's contract).
    (0..n).map(move |i| unsafe { (*(*list).elements.add(i)).oid_value })
}

/// An integer list of `values` (in the current memory context).
///
/// # Safety
/// Backend thread, with a valid `CurrentMemoryContext` (lappend_int pallocs and may
/// raise an ERROR).
pub unsafe fn from_ints(values: impl IntoIterator<Item = i32>) -> *mut pg_sys::List {
    // SAFETY: each call gets NIL or the list the previous call returned; the caller
    // guarantees a backend with a current memory context (this fn's contract).
    values.into_iter().fold(std::ptr::null_mut(), |list, v| unsafe { pg_sys::lappend_int(list, v) })
}

/// A pointer list of `nodes` (in the current memory context).
///
/// # Safety
/// Backend thread, with a valid `CurrentMemoryContext` (lappend pallocs and may raise an
/// ERROR). The pointers are stored, not read.
pub unsafe fn from_ptrs<T>(nodes: impl IntoIterator<Item = *mut T>) -> *mut pg_sys::List {
    // SAFETY: each call gets NIL or the list the previous call returned; the caller
    // guarantees a backend with a current memory context (this fn's contract).
    nodes.into_iter().fold(std::ptr::null_mut(), |list, n| unsafe { pg_sys::lappend(list, n.cast()) })
}
