//! The EXPLAIN fields a planner decides for a node, in one format for every node:
//! (label, text) pairs, kept in the plan as one bytea constant of `label\ttext` lines
//! and written by `explain_planned`. A label starting with '+' is shown only with
//! VERBOSE (and COSTS).

use super::private::{bytea_const, const_bytes};
use pgrx::pg_sys;

/// The EXPLAIN fields a planner decided, (label, text) pairs, as a plan node: a bytea
/// constant of `label\ttext` lines.
///
/// # Safety
/// Backend thread, in the memory context the plan is built in (the constant is palloc'd).
pub unsafe fn explain_fields_node(fields: &[(String, String)]) -> *mut pg_sys::Node {
    let text: String = fields.iter().map(|(l, t)| format!("{l}\t{t}\n")).collect();
    bytea_const(text.as_bytes())
}

/// The fields `explain_fields_node` made into `node`.
///
/// # Safety
/// `node` is a live bytea `Const` (one `explain_fields_node` made, or its copy).
pub unsafe fn explain_fields_of(node: *mut pg_sys::Node) -> Vec<(String, String)> {
    // SAFETY: `node` is a live bytea Const (this fn's contract).
    let bytes = unsafe { const_bytes(node as *mut pg_sys::Const) };
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| l.split_once('\t').map(|(a, b)| (a.to_string(), b.to_string())))
        .collect()
}

/// Writes the EXPLAIN fields a planner decided, as (label, text) pairs: those whose
/// label starts with '+' only with VERBOSE (and COSTS).
///
/// # Safety
/// `es` is the live ExplainState of the EXPLAIN being written (a node's explain callback).
pub unsafe fn explain_planned(fields: &[(String, String)], es: *mut pg_sys::ExplainState) {
    // SAFETY: `es` is live (this fn's contract).
    let (verbose, costs) = unsafe { ((*es).verbose, (*es).costs) };
    for (label, value) in fields {
        let label = match label.strip_prefix('+') {
            Some(verbose_label) if verbose && costs => verbose_label,
            Some(_) => continue,
            None => label,
        };
        let l = std::ffi::CString::new(label).unwrap();
        let v = std::ffi::CString::new(value.as_str()).unwrap();
        // SAFETY: `es` is live (this fn's contract); the strings are NUL-terminated and
        // outlive the call, which copies them.
        unsafe { pg_sys::ExplainPropertyText(l.as_ptr(), v.as_ptr(), es) };
    }
}
