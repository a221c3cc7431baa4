//! Expressions of one relation as SQL text for EXPLAIN fields: those a planner writes
//! down (a LastPoint's keys, a pushed Seq Scan's filter) and those a node deparses at
//! EXPLAIN time from its plan (ColumnarAgg's aggregates, keys and pushed filter).

use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CStr;

/// Expression `e` over range table entry `rti` (relation `relation`) as SQL text, for
/// EXPLAIN. It is deparsed in a context of this one relation, as range table entry 1:
/// the expression's Vars are renumbered to it (the relation is not entry 1 of a view's
/// query, say).
///
/// # Safety
/// Backend thread: `relation` is open, `e` is a valid expression tree whose Vars of
/// `rti` are that relation's. Allocates in the current memory context.
pub unsafe fn deparse(rti: u32, relation: pg_sys::Relation, e: *mut pg_sys::Node) -> String {
    // SAFETY: this fn's contract is `Deparser::new`'s and `Deparser::text`'s.
    unsafe { Deparser::new(relation).text(rti, e) }
}

/// The deparse context of one relation, made once for the several expressions of a
/// node's EXPLAIN fields (making it looks the relation and its columns up).
pub struct Deparser {
    context: *mut pg_sys::List,
}

impl Deparser {
    /// # Safety
    /// Backend thread: `relation` is open. Allocates in the current memory context,
    /// which must outlive the Deparser.
    pub unsafe fn new(relation: pg_sys::Relation) -> Deparser {
        // SAFETY: `relation` is open (caller's contract), so rd_id is readable and names an
        // existing relation: get_rel_name returns a palloc'd C string, not NULL.
        unsafe {
            let relid = (*relation).rd_id;
            let name = CStr::from_ptr(pg_sys::get_rel_name(relid)).to_owned();
            Deparser { context: pg_sys::deparse_context_for(name.as_ptr(), relid) }
        }
    }

    /// Expression `e` over range table entry `rti` (see `deparse`) as SQL text.
    ///
    /// # Safety
    /// As `deparse`: `e` is a valid expression tree whose Vars of `rti` are the
    /// Deparser's relation's; the memory context `new` ran in is still alive.
    pub unsafe fn text(&self, rti: u32, e: *mut pg_sys::Node) -> String {
        // SAFETY: `e` is a valid node tree (caller's contract); the copy is renumbered so
        // the caller's tree is left as it was, and `from` outlives the walk; the context
        // is alive (caller's contract). deparse_expression returns a palloc'd C string.
        unsafe {
            let e = pg_sys::copyObjectImpl(e as *const std::ffi::c_void) as *mut pg_sys::Node;
            let mut from = rti as i32;
            renumber(e, &mut from as *mut i32 as *mut std::ffi::c_void);
            CStr::from_ptr(pg_sys::deparse_expression(e, self.context, false, false))
                .to_string_lossy()
                .into_owned()
        }
    }
}

/// Renumbers, in place, the Vars of range table entry `*context` (an i32) to entry 1.
#[pg_guard]
unsafe extern "C-unwind" fn renumber(node: *mut pg_sys::Node, context: *mut std::ffi::c_void) -> bool {
    if node.is_null() {
        return false;
    }
    // SAFETY: expression_tree_walker hands us non-NULL nodes of the tree `deparse`
    // copied (checked above), so the tag is readable and a T_Var is a Var; `context` is
    // `deparse`'s live i32 throughout the walk.
    unsafe {
        if (*node).type_ == pg_sys::NodeTag::T_Var {
            let var = node as *mut pg_sys::Var;
            if (*var).varlevelsup == 0 && (*var).varno == *(context as *const i32) {
                (*var).varno = 1;
                (*var).varnosyn = 1;
            }
            return false;
        }
        pg_sys::expression_tree_walker(node, Some(renumber), context)
    }
}
