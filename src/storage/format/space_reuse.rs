//! The payload of a `SPACE_REUSE` WAL record (`logical_record::SPACE_REUSE`): a write is
//! about to put a new row group into stream space a VACUUM freed. On the primary that
//! space is reused only once no snapshot can still see the freed row group; a hot
//! standby's queries are not among those snapshots, so its redo cancels (or waits for)
//! every query whose snapshot the freeing transaction's removal does not cover, as
//! btree's page-reuse record does. The record's main data: the relation's file node
//! (tablespace, database, relation: u32 each) and the freeing transaction's xid (u32),
//! in machine byte order.

use super::encoding::CorruptData;
use super::logical_record::FileNode;

pub const BYTES: usize = 16;

pub fn encode(node: FileNode, freed_by: u32) -> [u8; BYTES] {
    let mut out = [0u8; BYTES];
    for (i, v) in [node.tablespace, node.database, node.relation, freed_by].into_iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
    }
    out
}

/// The file node and the freeing transaction's xid.
pub fn parse(bytes: &[u8]) -> Result<(FileNode, u32), CorruptData> {
    let bytes: &[u8; BYTES] =
        bytes.try_into().map_err(|_| CorruptData("space reuse record of the wrong length"))?;
    let word = |i: usize| u32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    Ok((FileNode { tablespace: word(0), database: word(1), relation: word(2) }, word(3)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reuse_record_reads_back_and_only_at_its_length() {
        let node = FileNode { tablespace: 1663, database: 5, relation: 16_394 };
        let bytes = encode(node, 728);
        assert_eq!(parse(&bytes).unwrap(), (node, 728));
        assert!(parse(&bytes[..BYTES - 1]).is_err());
        assert!(parse(&[0u8; BYTES + 1]).is_err());
    }
}
