//! The EXPLAIN fields a planner decides for a node, in one format for every node:
//! (label, text) pairs, kept in the plan as one bytea constant of `label\ttext` lines
//! and written by `explain_planned`. A label starting with '+' is shown only with
//! VERBOSE (and COSTS). A field whose text is `DEPARSED_AT_EXPLAIN` is written by the
//! node at EXPLAIN time (`explain_planned_with`): deparsing expressions for every path
//! the planner weighs was a good share of a short query's planning.

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

/// The text of a field the node writes at EXPLAIN time.
pub const DEPARSED_AT_EXPLAIN: &str = "\u{1}";

/// Writes the EXPLAIN fields a planner decided, as (label, text) pairs: those whose
/// label starts with '+' only with VERBOSE (and COSTS).
///
/// # Safety
/// `es` is the live ExplainState of the EXPLAIN being written (a node's explain callback).
pub unsafe fn explain_planned(fields: &[(String, String)], es: *mut pg_sys::ExplainState) {
    // SAFETY: this fn's contract is `explain_planned_with`'s.
    unsafe { explain_planned_with(fields, es, |_| None) }
}

/// `explain_planned`, where `deparse(label)` gives the text of a field the planner left
/// `DEPARSED_AT_EXPLAIN` (None: the field is left out).
///
/// # Safety
/// As `explain_planned`.
pub unsafe fn explain_planned_with(
    fields: &[(String, String)],
    es: *mut pg_sys::ExplainState,
    mut deparse: impl FnMut(&str) -> Option<String>,
) {
    // SAFETY: `es` is live (this fn's contract).
    let (verbose, costs) = unsafe { ((*es).verbose, (*es).costs) };
    for (label, value) in fields {
        let label = match label.strip_prefix('+') {
            Some(verbose_label) if verbose && costs => verbose_label,
            Some(_) => continue,
            None => label,
        };
        let deparsed;
        let value = if value == DEPARSED_AT_EXPLAIN {
            let Some(text) = deparse(label) else { continue };
            deparsed = text;
            &deparsed
        } else {
            value
        };
        let l = std::ffi::CString::new(label).unwrap();
        let v = std::ffi::CString::new(value.as_str()).unwrap();
        // SAFETY: `es` is live (this fn's contract); the strings are NUL-terminated and
        // outlive the call, which copies them.
        unsafe { pg_sys::ExplainPropertyText(l.as_ptr(), v.as_ptr(), es) };
    }
}
