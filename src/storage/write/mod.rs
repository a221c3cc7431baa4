//! What this backend writes before other sessions see it, and its own reads must see:
//! `write_buffer` (rows buffered and flushed as row groups; `owed_rows`: which of them
//! logical decoding is owed), `pending_marks` (a statement's
//! deletes and row locks collected per bucket), `free_space` (reuse of freed space).

pub mod free_space;
pub mod owed_rows;
pub mod pending_marks;
pub mod write_buffer;
