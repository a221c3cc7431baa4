//! The logical change records pgcolumnar writes to the WAL when `wal_level = logical`:
//! the rows an INSERT, UPDATE or DELETE of a columnar table changed, as logical decoding
//! needs them. Redo ignores them (the pages are WAL-logged on their own); decoding turns
//! them into the same changes heap's records become.
//!
//! A record is a header (the relation's file node, the number of new tuples, flags),
//! the transaction the rows belong to if the flags say the record names it, the old
//! tuple if the flags say there is one, then the new tuples. Each tuple is
//! `length: u32` and then heap's WAL image of a tuple: `xl_heap_header` (infomask2,
//! infomask, hoff) and the tuple's bytes after its fixed header. Integers are in the
//! machine's byte order, as everything in the WAL; nothing is aligned.
//!
//! A big record may be compressed (`RecordBuilder::compressed`): then the tuples (old
//! and new) after the header and the transaction are one zstd frame, preceded by their
//! length as `u32`; `expand` gives back the plain record, which `Record::parse` reads.

use super::encoding::compress::{self, Compression};
use std::borrow::Cow;

/// pgcolumnar's WAL resource manager: an id in the range PostgreSQL leaves to
/// extensions (128-255), which must differ from every other resource manager loaded in
/// the cluster (https://wiki.postgresql.org/wiki/CustomWALResourceManagers lists those
/// in use). Changing it makes WAL written before unreadable: it is fixed.
pub const RESOURCE_MANAGER_ID: u8 = 170;
/// Its name, as `pg_walinspect` and errors show it.
pub const RESOURCE_MANAGER_NAME: &std::ffi::CStr = c"pgcolumnar";

/// `xl_info` values (the high four bits; PostgreSQL keeps the low four).
pub const INSERT: u8 = 0x00;
pub const UPDATE: u8 = 0x10;
pub const DELETE: u8 = 0x20;
/// Not a logical change: bytes written into one page of a columnar relation's main fork
/// (its byte stream or its metapage), `page_write` below. Redo replays it; decoding
/// skips it.
pub const PAGE_WRITE: u8 = 0x30;
/// Not a logical change either: stream space a VACUUM freed is about to be written again
/// (`space_reuse`). Redo resolves the conflict with a hot standby's queries; decoding
/// skips it.
pub const SPACE_REUSE: u8 = 0x40;
/// A row group's bytes written into its pages (up to `MAX_GROUP_BLOCKS`), with what
/// logical decoding needs to read the rows it logs out of them (`row_group_record`):
/// written at `wal_level = logical` instead of the group's page writes and its rows'
/// INSERT record. Redo replays the page writes; decoding turns the rows into changes.
pub const ROW_GROUP_WRITE: u8 = 0x50;
/// The most pages a `ROW_GROUP_WRITE` record writes: one block reference each
/// (`XLR_MAX_BLOCK_ID` + 1 in PostgreSQL). A bigger row group's rows get INSERT records.
pub const MAX_GROUP_BLOCKS: usize = 33;
/// The bits of `xl_info` that say which kind a record is.
pub const OPERATION_MASK: u8 = 0x70;
/// With `PAGE_WRITE`: the page was new, and redo initializes it before writing (so the
/// record needs no image of it).
pub const PAGE_INIT: u8 = 0x80;

/// The record carries an old tuple: the replica identity's key, or the whole row.
const HAS_OLD: u8 = 0x01;
/// The record names the (sub)transaction its rows belong to (`Xids`), which can differ
/// from the one that wrote the record: inserts gathered over a statement are written
/// when it ends, maybe from inside a subtransaction it started.
const HAS_XIDS: u8 = 0x02;
/// The record's tuples are compressed (see the module's comment).
const COMPRESSED: u8 = 0x04;

const HEADER_BYTES: usize = 4 * 4 + 1;
/// `xl_heap_header`: t_infomask2 (u16), t_infomask (u16), t_hoff (u8).
pub const TUPLE_HEADER_BYTES: usize = 5;

/// A multi-row record is cut once it holds this many bytes: each record is decoded in
/// one piece, so it stays far below the WAL reader's 1 GB limit and a walsender does not
/// hold a huge COPY's rows twice.
pub const RECORD_BYTES_TARGET: usize = 1 << 20;

/// Records from this many bytes are worth compressing where they are laid out off the
/// backend thread (a COPY batch's, `batch_log`): at `logical` a COPY of TSBS-like rows
/// wrote 60 bytes of change record per row beside its compressed pages, and writing
/// them was the level's whole cost to it.
pub const COMPRESS_FROM_BYTES: usize = 64 * 1024;

/// zstd's level for compressed records: the fastest, which already finds a row's
/// repeats (host names, timestamps, the tuple headers).
const COMPRESSION_LEVEL: i32 = 1;

/// The most bytes a compressed record's tuples may expand to: a damaged length cannot
/// make decoding allocate more (PostgreSQL's own bound on one allocation).
const MAX_EXPANDED_BYTES: usize = (1 << 30) - 1;

/// The relation a record is about, as `RelFileNode` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileNode {
    pub tablespace: u32,
    pub database: u32,
    pub relation: u32,
}

/// Which operation an `xl_info` names; None for an unknown one.
pub fn operation_name(info: u8) -> Option<&'static str> {
    match info & OPERATION_MASK {
        INSERT => Some("INSERT"),
        UPDATE => Some("UPDATE"),
        DELETE => Some("DELETE"),
        PAGE_WRITE => Some("PAGE_WRITE"),
        SPACE_REUSE => Some("SPACE_REUSE"),
        ROW_GROUP_WRITE => Some("ROW_GROUP_WRITE"),
        _ => None,
    }
}

/// The header fields of a tuple image (`xl_heap_header`), as `tuple_image` lays a row out.
pub use super::tuple_image::Header as ImageHeader;

/// A tuple as heap's WAL records image it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TupleImage<'a> {
    pub infomask2: u16,
    pub infomask: u16,
    pub hoff: u8,
    /// The tuple's bytes after its fixed header (null bitmap, padding, values).
    pub data: &'a [u8],
}

impl TupleImage<'_> {
    /// Appends the image's data, returning its header fields (an `append_filled` fill).
    fn fill(&self, out: &mut Vec<u8>) -> Option<ImageHeader> {
        out.extend_from_slice(self.data);
        Some(ImageHeader { infomask2: self.infomask2, infomask: self.infomask, hoff: self.hoff })
    }
}

/// The transaction a record's rows belong to: its own xid and its top-level
/// transaction's (equal outside subtransactions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xids {
    pub top: u32,
    pub own: u32,
}

/// A record being built: `old` first (at most one), then any number of new tuples.
pub struct RecordBuilder {
    bytes: Vec<u8>,
    new_tuples: u32,
}

impl RecordBuilder {
    /// A record of the transaction that writes it.
    pub fn new(node: FileNode) -> RecordBuilder {
        let mut bytes = Vec::with_capacity(256);
        for v in [node.tablespace, node.database, node.relation, 0] {
            bytes.extend_from_slice(&v.to_ne_bytes());
        }
        bytes.push(0);
        RecordBuilder { bytes, new_tuples: 0 }
    }

    /// A record of the rows of transaction `xids`, whichever transaction writes it.
    pub fn of_transaction(node: FileNode, xids: Xids) -> RecordBuilder {
        let mut b = RecordBuilder::new(node);
        b.bytes[HEADER_BYTES - 1] |= HAS_XIDS;
        b.bytes.extend_from_slice(&xids.top.to_ne_bytes());
        b.bytes.extend_from_slice(&xids.own.to_ne_bytes());
        b
    }

    /// Adds the old tuple; only before any new tuple.
    pub fn set_old(&mut self, old: &TupleImage<'_>) {
        self.set_old_filled(|out| old.fill(out));
    }

    pub fn push_new(&mut self, tuple: &TupleImage<'_>) {
        self.push_new_filled(|out| tuple.fill(out));
    }

    /// Adds a new tuple whose image `fill` appends (the bytes after the tuple's fixed
    /// header, as `TupleImage::data`), returning its header fields; false, with nothing
    /// added, when `fill` returns None (and appends nothing).
    pub fn push_new_filled(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> Option<ImageHeader>) -> bool {
        let added = self.append_filled(fill);
        if added {
            self.new_tuples += 1;
            self.bytes[12..16].copy_from_slice(&self.new_tuples.to_ne_bytes());
        }
        added
    }

    /// `set_old` with an image `fill` appends, as `push_new_filled`.
    pub fn set_old_filled(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> Option<ImageHeader>) -> bool {
        assert!(self.new_tuples == 0 && self.bytes[HEADER_BYTES - 1] & HAS_OLD == 0);
        let added = self.append_filled(fill);
        if added {
            self.bytes[HEADER_BYTES - 1] |= HAS_OLD;
        }
        added
    }

    /// Appends a tuple's length and header, then what `fill` appends, the length and
    /// header set once it has.
    fn append_filled(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> Option<ImageHeader>) -> bool {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4 + TUPLE_HEADER_BYTES]);
        let Some(h) = fill(&mut self.bytes) else {
            self.bytes.truncate(start);
            return false;
        };
        let len = (self.bytes.len() - start - 4) as u32;
        let head = &mut self.bytes[start..start + 4 + TUPLE_HEADER_BYTES];
        head[..4].copy_from_slice(&len.to_ne_bytes());
        head[4..6].copy_from_slice(&h.infomask2.to_ne_bytes());
        head[6..8].copy_from_slice(&h.infomask.to_ne_bytes());
        head[8] = h.hoff;
        true
    }

    pub fn new_tuples(&self) -> u32 {
        self.new_tuples
    }

    /// The record's bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.new_tuples == 0 && self.bytes[HEADER_BYTES - 1] & HAS_OLD == 0
    }

    /// The record with its tuples compressed, if that makes it at least a quarter
    /// smaller. Pure: for any thread.
    pub fn compressed(&self) -> Option<Vec<u8>> {
        let head = head_bytes(self.bytes[HEADER_BYTES - 1]);
        let tuples = &self.bytes[head..];
        let mut out = Vec::with_capacity(head + 4 + tuples.len() / 2);
        out.extend_from_slice(&self.bytes[..head]);
        out[HEADER_BYTES - 1] |= COMPRESSED;
        out.extend_from_slice(&u32::try_from(tuples.len()).ok()?.to_ne_bytes());
        let pays = compress::compress_zstd(tuples, COMPRESSION_LEVEL, &mut out)
            && (out.len() - head) * 4 <= tuples.len() * 3;
        pays.then_some(out)
    }
}

/// Bytes before a record's tuples: the header, and the transaction if `flags` name it.
fn head_bytes(flags: u8) -> usize {
    HEADER_BYTES + if flags & HAS_XIDS != 0 { 8 } else { 0 }
}

/// The record in `bytes` as `Record::parse` reads it: itself, or if its tuples are
/// compressed, a copy with them expanded.
pub fn expand(bytes: &[u8]) -> Result<Cow<'_, [u8]>, Malformed> {
    let Some(&flags) = bytes.get(HEADER_BYTES - 1) else { return Err(Malformed("header")) };
    if flags & COMPRESSED == 0 {
        return Ok(Cow::Borrowed(bytes));
    }
    let head = head_bytes(flags);
    let mut c = Cursor { bytes: bytes.get(head..).ok_or(Malformed("transaction"))? };
    let len = c.u32("compressed length")? as usize;
    if len > MAX_EXPANDED_BYTES {
        return Err(Malformed("compressed tuples longer than a record can be"));
    }
    let mut tuples = Vec::new();
    compress::decompress(Compression::Zstd, c.bytes, len, &mut tuples)
        .map_err(|_| Malformed("compressed tuples damaged"))?;
    let mut plain = Vec::with_capacity(head + len);
    plain.extend_from_slice(&bytes[..head]);
    plain[HEADER_BYTES - 1] &= !COMPRESSED;
    plain.extend_from_slice(&tuples);
    Ok(Cow::Owned(plain))
}

/// What a record holds, borrowed from its bytes.
#[derive(Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub node: FileNode,
    /// The rows' transaction, if not the one that wrote the record.
    pub xids: Option<Xids>,
    pub old: Option<TupleImage<'a>>,
    pub new: Vec<TupleImage<'a>>,
}

/// Why a record could not be read: its bytes are shorter or longer than it says.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Reads a record's fields in turn (also `row_group_record`'s); each read names what it
/// reads, for the error when the bytes end first.
pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub(super) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        if self.bytes.len() < n {
            return Err(Malformed(what));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(super) fn u8(&mut self, what: &'static str) -> Result<u8, Malformed> {
        Ok(self.take(1, what)?[0])
    }

    pub(super) fn u16(&mut self, what: &'static str) -> Result<u16, Malformed> {
        Ok(u16::from_ne_bytes(self.take(2, what)?.try_into().unwrap()))
    }

    pub(super) fn u32(&mut self, what: &'static str) -> Result<u32, Malformed> {
        Ok(u32::from_ne_bytes(self.take(4, what)?.try_into().unwrap()))
    }

    /// A count of items of at least `item` bytes each, no more than the bytes left hold
    /// (a damaged count cannot make the reader allocate more than the record's size).
    pub(super) fn count(&mut self, item: usize, what: &'static str) -> Result<usize, Malformed> {
        let n = self.u32(what)? as usize;
        if n > self.bytes.len() / item {
            return Err(Malformed(what));
        }
        Ok(n)
    }

    fn tuple(&mut self) -> Result<TupleImage<'a>, Malformed> {
        let len = self.u32("tuple length")? as usize;
        if len < TUPLE_HEADER_BYTES {
            return Err(Malformed("tuple shorter than its header"));
        }
        let t = self.take(len, "tuple")?;
        Ok(TupleImage {
            infomask2: u16::from_ne_bytes([t[0], t[1]]),
            infomask: u16::from_ne_bytes([t[2], t[3]]),
            hoff: t[4],
            data: &t[TUPLE_HEADER_BYTES..],
        })
    }
}

impl<'a> Record<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Record<'a>, Malformed> {
        let mut c = Cursor { bytes };
        let node =
            FileNode { tablespace: c.u32("header")?, database: c.u32("header")?, relation: c.u32("header")? };
        let count = c.u32("header")? as usize;
        let flags = c.take(1, "header")?[0];
        if flags & COMPRESSED != 0 {
            return Err(Malformed("compressed record not expanded"));
        }
        let xids = match flags & HAS_XIDS != 0 {
            true => Some(Xids { top: c.u32("transaction")?, own: c.u32("transaction")? }),
            false => None,
        };
        let old = if flags & HAS_OLD != 0 { Some(c.tuple()?) } else { None };
        // Each tuple takes at least its length and header: a corrupt count cannot make
        // us allocate more than the record's size.
        let mut new = Vec::with_capacity(count.min(c.bytes.len() / (4 + TUPLE_HEADER_BYTES)));
        for _ in 0..count {
            new.push(c.tuple()?);
        }
        if !c.bytes.is_empty() {
            return Err(Malformed("bytes after the last tuple"));
        }
        Ok(Record { node, xids, old, new })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE: FileNode = FileNode { tablespace: 1663, database: 5, relation: 16_384 };

    fn image(data: &[u8]) -> TupleImage<'_> {
        TupleImage { infomask2: 3, infomask: 0x0802, hoff: 24, data }
    }

    #[test]
    fn insert_of_many_rows_round_trips() {
        let rows: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; i as usize]).collect();
        let mut b = RecordBuilder::new(NODE);
        for r in &rows {
            b.push_new(&image(r));
        }
        assert_eq!(b.new_tuples(), 100);
        let rec = Record::parse(b.bytes()).unwrap();
        assert_eq!(rec.node, NODE);
        assert_eq!(rec.old, None);
        assert_eq!(rec.new.len(), 100);
        for (t, r) in rec.new.iter().zip(&rows) {
            assert_eq!(*t, image(r));
        }
    }

    #[test]
    fn images_filled_in_place_equal_images_pushed() {
        let (old, rows) = (b"old key".to_vec(), [b"one".to_vec(), vec![], b"three".to_vec()]);
        let mut pushed = RecordBuilder::new(NODE);
        let mut filled = RecordBuilder::new(NODE);
        pushed.set_old(&image(&old));
        let header = ImageHeader { infomask2: 3, infomask: 0x0802, hoff: 24 };
        assert!(filled.set_old_filled(|out| {
            out.extend_from_slice(&old);
            Some(header)
        }));
        for r in &rows {
            pushed.push_new(&image(r));
            // One that gives up leaves nothing behind.
            assert!(!filled.push_new_filled(|_| None));
            assert!(filled.push_new_filled(|out| {
                out.extend_from_slice(r);
                Some(header)
            }));
        }
        assert_eq!(filled.bytes(), pushed.bytes());
        assert_eq!(filled.new_tuples(), 3);
    }

    #[test]
    fn rows_of_another_transaction_name_it() {
        let xids = Xids { top: 700, own: 712 };
        let mut b = RecordBuilder::of_transaction(NODE, xids);
        b.push_new(&image(b"row one"));
        b.push_new(&image(b"row two"));
        let rec = Record::parse(b.bytes()).unwrap();
        assert_eq!(rec.xids, Some(xids));
        assert_eq!(rec.new, vec![image(b"row one"), image(b"row two")]);
        assert_eq!(Record::parse(RecordBuilder::new(NODE).bytes()).unwrap().xids, None);
        let bytes = b.bytes();
        for cut in 0..bytes.len() {
            assert!(Record::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn update_carries_old_then_new() {
        let mut b = RecordBuilder::new(NODE);
        b.set_old(&image(b"key"));
        b.push_new(&image(b"whole new row"));
        let rec = Record::parse(b.bytes()).unwrap();
        assert_eq!(rec.old, Some(image(b"key")));
        assert_eq!(rec.new, vec![image(b"whole new row")]);
    }

    #[test]
    fn delete_without_identity_is_empty() {
        let b = RecordBuilder::new(NODE);
        assert!(b.is_empty());
        let rec = Record::parse(b.bytes()).unwrap();
        assert_eq!((rec.old, rec.new.len()), (None, 0));
    }

    #[test]
    fn damaged_records_are_refused() {
        let mut b = RecordBuilder::new(NODE);
        b.set_old(&image(b"old"));
        b.push_new(&image(b"new"));
        let bytes = b.bytes().to_vec();
        for cut in 0..bytes.len() {
            assert!(Record::parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Record::parse(&longer), Err(Malformed("bytes after the last tuple")));
        // A count far beyond the bytes fails without allocating for it.
        let mut huge = bytes;
        huge[12..16].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert!(Record::parse(&huge).is_err());
    }

    /// A record of `rows` TSBS-like rows (bigint key, short host name, two floats, a
    /// timestamp), as a COPY lays them out.
    fn copied_rows(rows: u32) -> RecordBuilder {
        let mut b = RecordBuilder::of_transaction(NODE, Xids { top: 700, own: 700 });
        for i in 0..rows {
            let mut data = Vec::new();
            data.extend_from_slice(&(100_001 + i as u64).to_ne_bytes());
            let host = format!("host_{}", i % 100);
            data.push(((host.len() as u8 + 1) << 1) | 1);
            data.extend_from_slice(host.as_bytes());
            data.resize(data.len().next_multiple_of(8), 0);
            data.extend_from_slice(&(i as f64 * 0.001).to_ne_bytes());
            data.extend_from_slice(&(i as f64 * 0.002).to_ne_bytes());
            data.extend_from_slice(&820_454_400_000_000i64.to_ne_bytes());
            b.push_new(&image(&data));
        }
        b
    }

    #[test]
    fn compressed_records_expand_to_the_same_rows() {
        let b = copied_rows(20_000);
        let packed = b.compressed().expect("rows with repeats compress");
        assert!(packed.len() * 2 < b.len(), "{} of {} bytes", packed.len(), b.len());
        let plain = expand(&packed).unwrap();
        assert!(matches!(plain, Cow::Owned(_)));
        assert_eq!(&*plain, b.bytes());
        assert_eq!(Record::parse(&plain).unwrap().new.len(), 20_000);
        // Read without expanding, it is refused rather than misread.
        assert_eq!(Record::parse(&packed), Err(Malformed("compressed record not expanded")));
        // A plain record expands to itself, borrowed.
        assert!(matches!(expand(b.bytes()).unwrap(), Cow::Borrowed(x) if x == b.bytes()));
        // An old tuple and no transaction named: the same.
        let mut u = RecordBuilder::new(NODE);
        u.set_old(&image(&[7; 300]));
        u.push_new(&image(&[7; 300]));
        assert_eq!(&*expand(&u.compressed().unwrap()).unwrap(), u.bytes());
    }

    #[test]
    fn compression_that_does_not_pay_is_skipped() {
        let mut b = RecordBuilder::new(NODE);
        // Bytes without repeats (xorshift).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let data: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        b.push_new(&image(&data));
        assert_eq!(b.compressed(), None);
    }

    #[test]
    fn damaged_compressed_records_are_refused() {
        let packed = copied_rows(100).compressed().unwrap();
        for cut in 0..packed.len() {
            assert!(
                expand(&packed[..cut]).and_then(|p| Record::parse(&p).map(|_| ())).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = packed.clone();
        longer.push(0);
        assert!(expand(&longer).is_err());
        // A length past what a record can hold is refused before anything is allocated.
        let mut huge = packed;
        huge[HEADER_BYTES + 8..HEADER_BYTES + 12].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(expand(&huge), Err(Malformed("compressed tuples longer than a record can be")));
    }

    #[test]
    fn operations_are_named() {
        assert_eq!(operation_name(INSERT | 0x0f), Some("INSERT"));
        assert_eq!(operation_name(UPDATE), Some("UPDATE"));
        assert_eq!(operation_name(DELETE), Some("DELETE"));
        assert_eq!(operation_name(PAGE_WRITE | PAGE_INIT), Some("PAGE_WRITE"));
        assert_eq!(operation_name(SPACE_REUSE), Some("SPACE_REUSE"));
        assert_eq!(operation_name(ROW_GROUP_WRITE), Some("ROW_GROUP_WRITE"));
        assert_eq!(operation_name(0x60), None);
    }
}
