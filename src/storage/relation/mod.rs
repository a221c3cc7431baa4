//! The relation itself: `am` (is it columnar), `am_cache` (what its relcache entry
//! keeps), `tid` (row number <-> TID), `pages` (the
//! main fork: metapage and byte stream), `prefetch` (asking the operating system to read
//! blocks ahead), `recent_buffers` (the buffer a block was last read in), `datum`
//! (values in and out), `slot` (the
//! columnar slot), `options` (table options).

pub mod am;
pub mod am_cache;
pub mod datum;
pub mod options;
pub mod page_pins;
pub mod pages;
pub mod prefetch;
pub mod recent_buffers;
pub mod slot;
pub mod tid;
