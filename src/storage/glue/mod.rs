//! What PostgreSQL calls: `tableam` (the table AM routine, whose callbacks delegate to the
//! rooms below), `utility` (the ProcessUtility hook), `drop_hook` (the object access hook),
//! `invalidation` (the relcache callback), `stats` (`pgcolumnar.stats()`).

pub mod drop_hook;
pub mod invalidation;
pub mod stats;
pub mod tableam;
pub mod utility;
