//! What this backend writes before other sessions see it, and its own reads must see:
//! `write_buffer` (rows buffered and flushed as row groups), `mark_batch` (a statement's
//! deletes and row locks collected per bucket), `free_space` (reuse of freed space).

pub mod free_space;
pub mod mark_batch;
pub mod write_buffer;
