//! Vector expressions: arithmetic over the scanned relation's columns and constants,
//! as aggregate arguments (`plan`, the form a plan carries; `eval`, a vector at a time;
//! `num`, exact numerics as scaled integers). Pure: what needs PostgreSQL (numerics
//! beyond 128 bits) comes in through `eval::NumericFallback`.

pub mod eval;
pub mod num;
pub mod plan;
