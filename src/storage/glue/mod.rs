//! What PostgreSQL calls: `tableam` (the table AM routine, whose callbacks delegate to the
//! rooms below), `utility` (the ProcessUtility hook), `drop_hook` (the object access hook),
//! `invalidation` (the relcache callback), `stats` (`pgcolumnar.stats()`), `citus`
//! (options of Citus shards), `publication` (no logical replication of columnar tables).

pub mod citus;
pub mod drop_hook;
pub mod invalidation;
pub mod publication;
pub mod stats;
pub mod tableam;
pub mod utility;
