//! The row groups a parallel scan's leader hands its workers through the scan's shared
//! memory: the list its snapshot sees (the workers run under the same snapshot), the
//! zone maps and parsed chunk metadata of the scan's columns (the chunk metadata where
//! the leader has it), and the rows its snapshot sees deleted by marks. A worker starts
//! with empty caches: reading all this from the metadata tables again cost each worker
//! of parallel q6 (10M rows) 1.3 ms, and it can claim no row group before it has the
//! list. No PostgreSQL calls: the image is bytes in, bytes out, for processes of the
//! same build.
//!
//! Layout (little-endian): the group count (u64); per group its first row, row count,
//! data offset and length (u64 each), writer xid and cid (u32 each), a byte of flags
//! (`DELETED`, `INLINE`, `ZONES`, `CHUNKS`) and what they say follows: the delete mask's
//! and the inline metadata's stored bytes (length-prefixed), the zone maps
//! (`group_zones::write`), the chunks (`write_chunks`); then the deleted rows' count
//! (u64) and the rows (u64 each).

use crate::storage::catalog::{ChunkMeta, Chunks, RowGroupMeta};
use crate::storage::format::delete_mask::DeleteMask;
use crate::storage::format::directory::{read_zone, write_zone, Directory};
use crate::storage::format::encoding::CorruptData;
use crate::storage::format::group_zones::{self, ColumnZone};
use crate::storage::format::metadata_image::{put_bytes, ImageCursor, ImageSink, ImageSize, ImageSlice};
use pgrx::pg_sys;
use std::rc::Rc;

const DELETED: u8 = 1;
const INLINE: u8 = 2;
const ZONES: u8 = 4;
const CHUNKS: u8 = 8;

/// The most a leader hands over: past it, its workers read the metadata themselves, as
/// a copy through shared memory would cost the leader, before its workers start, about
/// what reading costs each of them.
pub const MAX_BYTES: usize = 4 << 20;

/// What a worker takes from the image.
#[derive(Debug)]
pub struct Handed {
    pub groups: Vec<RowGroupMeta>,
    pub deleted_rows: Vec<u64>,
}

/// How a leader hands `groups` and `deleted_rows` over in at most `room` bytes (and at
/// most `MAX_BYTES`): the image's size, and whether it holds the chunks. None when even
/// the list does not fit.
pub fn plan(
    groups: &[RowGroupMeta],
    attnums: &[i16],
    deleted_rows: &[u64],
    room: usize,
) -> Option<(usize, bool)> {
    let room = room.min(MAX_BYTES);
    [true, false].into_iter().find_map(|with_chunks| {
        let mut size = ImageSize::default();
        write(&mut size, groups, attnums, deleted_rows, with_chunks);
        (size.0 <= room).then_some((size.0, with_chunks))
    })
}

/// Writes the image `plan` sized into `into` (its whole length).
pub fn write_into(
    into: &mut [u8],
    groups: &[RowGroupMeta],
    attnums: &[i16],
    deleted_rows: &[u64],
    with_chunks: bool,
) {
    let mut slice = ImageSlice(into);
    write(&mut slice, groups, attnums, deleted_rows, with_chunks);
    assert!(slice.0.is_empty(), "handed row groups smaller than sized");
}

/// Puts the image of `groups` with, if `with_chunks`, the chunks each has parsed of the
/// attributes numbered in `attnums` (sorted), and `deleted_rows`.
pub fn write(
    out: &mut impl ImageSink,
    groups: &[RowGroupMeta],
    attnums: &[i16],
    deleted_rows: &[u64],
    with_chunks: bool,
) {
    out.put(&(groups.len() as u64).to_le_bytes());
    for g in groups {
        for v in [g.first_row, g.row_count, g.data_offset, g.data_length] {
            out.put(&v.to_le_bytes());
        }
        out.put(&u32::from(g.writer.0).to_le_bytes());
        out.put(&g.writer.1.to_le_bytes());
        let parsed: Vec<i16> = if with_chunks {
            attnums.iter().copied().filter(|&a| g.chunks.has(a)).collect()
        } else {
            Vec::new()
        };
        let flags = [
            (g.deleted.is_some(), DELETED),
            (g.inline.is_some(), INLINE),
            (g.zones.is_some(), ZONES),
            (!parsed.is_empty(), CHUNKS),
        ]
        .iter()
        .filter(|(set, _)| *set)
        .fold(0, |f, (_, bit)| f | bit);
        out.put(&[flags]);
        if let Some(mask) = &g.deleted {
            put_bytes(out, &mask.to_bytes());
        }
        if let Some(inline) = &g.inline {
            put_bytes(out, inline);
        }
        if let Some(zones) = &g.zones {
            // The scan's columns' only: a reader asks its zone maps of no other, and
            // those of every column (21 in TSBS's table) were most of a worker's reading.
            let wanted: Vec<ColumnZone> =
                zones.iter().filter(|z| attnums.binary_search(&z.attnum).is_ok()).copied().collect();
            group_zones::write(out, &wanted);
        }
        if !parsed.is_empty() {
            write_chunks(out, &g.chunks, &parsed);
        }
    }
    out.put(&(deleted_rows.len() as u64).to_le_bytes());
    for r in deleted_rows {
        out.put(&r.to_le_bytes());
    }
}

/// A group's order column (if any), then the attributes `parsed` (whose chunk rows
/// `chunks` parsed): each one's number and whether the group stores it, and its chunk.
fn write_chunks(out: &mut impl ImageSink, chunks: &Chunks, parsed: &[i16]) {
    match &chunks.order {
        None => out.put(&[0]),
        Some(order) => {
            out.put(&[1]);
            write_chunk(out, order);
        }
    }
    out.put(&(parsed.len() as u16).to_le_bytes());
    for &a in parsed {
        out.put(&a.to_le_bytes());
        match chunks.columns.get(a as usize - 1).and_then(|c| c.as_deref()) {
            None => out.put(&[0]),
            Some(meta) => {
                out.put(&[1]);
                write_chunk(out, meta);
            }
        }
    }
}

fn write_chunk(out: &mut impl ImageSink, c: &ChunkMeta) {
    out.put(&c.attnum.to_le_bytes());
    for v in [c.offset, c.length, c.null_count, c.raw_bytes] {
        out.put(&v.to_le_bytes());
    }
    write_zone(out, &c.zone);
    c.vectors.write_image(out);
}

/// The row groups and deleted rows of an image `write` made; a group whose chunks it
/// does not hold gets `unread`.
pub fn read(bytes: &[u8], unread: &Rc<Chunks>) -> Result<Handed, CorruptData> {
    // SAFETY: copies, so nothing read refers to `bytes`.
    unsafe { read_with(bytes, unread, Directory::read_image) }
}

/// `read` whose directories refer to their bytes in the image
/// (`Directory::read_image_in_place`).
///
/// # Safety
/// `bytes` stay in place and unchanged while any chunk read from them lives.
pub unsafe fn read_in_place(bytes: &[u8], unread: &Rc<Chunks>) -> Result<Handed, CorruptData> {
    // SAFETY: this fn's contract is `read_image_in_place`'s.
    unsafe { read_with(bytes, unread, |c| Directory::read_image_in_place(c)) }
}

type ReadDirectory = fn(&mut ImageCursor<'_>) -> Result<Directory, CorruptData>;

/// # Safety
/// As `directory` requires of `bytes`.
unsafe fn read_with(
    bytes: &[u8],
    unread: &Rc<Chunks>,
    directory: ReadDirectory,
) -> Result<Handed, CorruptData> {
    let mut c = ImageCursor(bytes);
    let count = c.u64()? as usize;
    // Each group takes 41 bytes at least.
    let mut groups = Vec::with_capacity(count.min(bytes.len() / 41));
    for _ in 0..count {
        let (first_row, row_count, data_offset, data_length) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
        let writer = (pg_sys::TransactionId::from(c.u32()?), c.u32()?);
        let flags = c.u8()?;
        let deleted = if flags & DELETED != 0 {
            let mask = DeleteMask::from_bytes(c.bytes()?, row_count)
                .ok_or(CorruptData("handed delete mask does not fit its row group"))?;
            Some(Rc::new(mask))
        } else {
            None
        };
        let inline = if flags & INLINE != 0 { Some(Rc::from(c.bytes()?)) } else { None };
        let zones = if flags & ZONES != 0 { Some(Rc::from(group_zones::read(&mut c)?)) } else { None };
        let chunks =
            if flags & CHUNKS != 0 { Rc::new(read_chunks(&mut c, directory)?) } else { unread.clone() };
        groups.push(RowGroupMeta {
            first_row,
            row_count,
            data_offset,
            data_length,
            chunks,
            deleted,
            writer,
            inline,
            zones,
        });
    }
    let rows = c.u64()? as usize;
    let raw = c.take(rows.checked_mul(8).ok_or(CorruptData("handed deleted rows overflow"))?)?;
    let deleted_rows = raw.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
    if !c.0.is_empty() {
        return Err(CorruptData("handed row groups length mismatch"));
    }
    Ok(Handed { groups, deleted_rows })
}

fn read_chunks(c: &mut ImageCursor<'_>, directory: ReadDirectory) -> Result<Chunks, CorruptData> {
    let order = match c.u8()? {
        0 => None,
        _ => Some(read_chunk(c, directory)?),
    };
    let n = c.u16()? as usize;
    let mut chunks = Chunks { order, parsed: Some(Vec::with_capacity(n)), ..Chunks::default() };
    for _ in 0..n {
        let attnum = c.i16()?;
        if attnum < 1 {
            return Err(CorruptData("handed chunk of no attribute"));
        }
        chunks.parsed.as_mut().expect("made Some").push(attnum);
        if c.u8()? != 0 {
            let at = attnum as usize - 1;
            if chunks.columns.len() <= at {
                chunks.columns.resize(at + 1, None);
            }
            chunks.columns[at] = Some(Rc::new(read_chunk(c, directory)?));
        }
    }
    if !chunks.parsed.as_ref().expect("made Some").is_sorted_by(|a, b| a < b) {
        return Err(CorruptData("handed chunks out of order"));
    }
    Ok(chunks)
}

fn read_chunk(c: &mut ImageCursor<'_>, directory: ReadDirectory) -> Result<ChunkMeta, CorruptData> {
    let attnum = c.i16()?;
    let (offset, length, null_count, raw_bytes) = (c.u64()?, c.u64()?, c.u64()?, c.u64()?);
    let zone = read_zone(c)?;
    let vectors = directory(c)?;
    Ok(ChunkMeta { attnum, offset, length, null_count, raw_bytes, vectors, zone })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::directory::VectorEntry;
    use crate::storage::format::zonemap::ZoneMap;

    fn chunk(attnum: i16, offset: u64) -> ChunkMeta {
        let entry = |rows, offset, zone| VectorEntry {
            rows,
            offset,
            len: 10,
            null_count: 1,
            encoding: 3,
            compression: 0,
            zone,
        };
        let entries = vec![
            entry(1024, 0, ZoneMap::Int { min: 1, max: 5 }),
            entry(76, 10, ZoneMap::of_bytes([&b"host_1"[..], b"host_9"])),
        ];
        ChunkMeta::new(attnum, offset, 20, 1, 40, entries)
    }

    /// Three groups: one with chunks of attributes 1 and 3 parsed (3 not stored), an
    /// order column, a delete mask and zone maps; one the leader has not read; one with
    /// inline metadata.
    fn groups(unread: &Rc<Chunks>) -> Vec<RowGroupMeta> {
        let mut mask = DeleteMask::new(1100);
        mask.set(3);
        mask.set(1099);
        let parsed = Chunks {
            columns: vec![Some(Rc::new(chunk(1, 0))), Some(Rc::new(chunk(2, 20)))],
            order: Some(chunk(0, 40)),
            parsed: Some(vec![1, 2, 3]),
        };
        let zone =
            |attnum| ColumnZone { attnum, null_count: 2, length: 20, zone: ZoneMap::Int { min: 1, max: 5 } };
        let zones: Rc<[ColumnZone]> = Rc::from(vec![zone(1), zone(2)]);
        let group = |first_row, chunks: Rc<Chunks>| RowGroupMeta {
            first_row,
            row_count: 1100,
            data_offset: first_row * 3,
            data_length: 60,
            chunks,
            deleted: None,
            writer: (pg_sys::TransactionId::from(700 + first_row as u32), 4),
            inline: None,
            zones: None,
        };
        vec![
            RowGroupMeta { deleted: Some(Rc::new(mask)), zones: Some(zones), ..group(0, Rc::new(parsed)) },
            group(1100, unread.clone()),
            RowGroupMeta { inline: Some(Rc::from(&b"inline bytes"[..])), ..group(2200, unread.clone()) },
        ]
    }

    fn image(groups: &[RowGroupMeta], attnums: &[i16], deleted: &[u64], with_chunks: bool) -> Vec<u8> {
        let (mut sized, mut written) = (ImageSize::default(), Vec::new());
        write(&mut sized, groups, attnums, deleted, with_chunks);
        write(&mut written, groups, attnums, deleted, with_chunks);
        assert_eq!(sized.0, written.len(), "sizing and writing put the same bytes");
        let mut into = vec![0; sized.0];
        write_into(&mut into, groups, attnums, deleted, with_chunks);
        assert_eq!(into, written);
        written
    }

    #[test]
    fn a_worker_reads_the_leaders_row_groups() {
        let unread = Rc::new(Chunks { parsed: Some(Vec::new()), ..Chunks::default() });
        let sent = groups(&unread);
        let deleted = [5, 1101, 2250];
        // The scan reads attributes 1 and 3: the chunk of 2 stays with the leader.
        let bytes = image(&sent, &[1, 3], &deleted, true);
        let mine = Rc::new(Chunks { parsed: Some(Vec::new()), ..Chunks::default() });
        let got = read(&bytes, &mine).unwrap();
        assert_eq!(got.deleted_rows, deleted);
        assert_eq!(got.groups.len(), 3);
        for (g, s) in got.groups.iter().zip(&sent) {
            assert_eq!(
                (g.first_row, g.row_count, g.data_offset, g.data_length, g.writer),
                (s.first_row, s.row_count, s.data_offset, s.data_length, s.writer)
            );
            assert_eq!(g.deleted, s.deleted);
            assert_eq!(g.inline, s.inline);
            // The zone maps of the scan's columns only.
            let wanted =
                s.zones.as_ref().map(|z| z.iter().filter(|c| c.attnum != 2).copied().collect::<Vec<_>>());
            assert_eq!(g.zones.as_deref().map(|z| z.to_vec()), wanted);
        }
        let c = &got.groups[0].chunks;
        assert_eq!(c.parsed, Some(vec![1, 3]));
        let (sent1, got1) = (sent[0].chunks.column(1).unwrap(), c.column(1).unwrap());
        assert_eq!(format!("{got1:?}"), format!("{sent1:?}"));
        assert!(c.column(3).is_none() && !c.has(2), "3 not stored, 2 not handed");
        assert_eq!(format!("{:?}", c.order), format!("{:?}", sent[0].chunks.order));
        // Groups the leader had not read get the worker's own unread chunks.
        assert!(Rc::ptr_eq(&got.groups[1].chunks, &mine) && Rc::ptr_eq(&got.groups[2].chunks, &mine));

        // In place, the directories are the image's bytes.
        // SAFETY: `bytes` outlives `in_place`.
        let in_place = unsafe { read_in_place(&bytes, &mine) }.unwrap();
        let dir = &in_place.groups[0].chunks.column(1).unwrap().vectors;
        assert!(bytes.as_ptr_range().contains(&dir.as_bytes().as_ptr()));
        assert_eq!(dir, &sent1.vectors);

        let bare = read(&image(&sent, &[1, 3], &deleted, false), &mine).unwrap();
        assert!(bare.groups.iter().all(|g| Rc::ptr_eq(&g.chunks, &mine)), "no chunks handed");
        assert_eq!(bare.deleted_rows, deleted);
    }

    #[test]
    fn a_damaged_image_is_refused() {
        let unread = Rc::new(Chunks::default());
        let bytes = image(&groups(&unread), &[1, 2], &[7], true);
        for cut in 0..bytes.len() {
            assert!(read(&bytes[..cut], &unread).is_err(), "cut at {cut}");
        }
        let mut longer = bytes;
        longer.push(0);
        assert!(read(&longer, &unread).is_err());
    }

    #[test]
    fn past_the_limit_the_chunks_then_everything_stay_behind() {
        let unread = Rc::new(Chunks::default());
        let few = groups(&unread);
        let (size, with_chunks) = plan(&few, &[1], &[], usize::MAX).unwrap();
        assert!(with_chunks);
        assert_eq!(size, image(&few, &[1], &[], true).len());
        // Enough deleted rows to pass the limit alone.
        let many: Vec<u64> = (0..MAX_BYTES as u64 / 8).collect();
        assert_eq!(plan(&few, &[1], &many, usize::MAX), None);
        // As many as fit beside the bare list: the chunks stay behind.
        let bare = image(&few, &[1], &[], false).len();
        let some: Vec<u64> = (0..(MAX_BYTES - bare) as u64 / 8).collect();
        assert_eq!(plan(&few, &[1], &some, usize::MAX), Some((bare + some.len() * 8, false)));
        // The room the caller has left decides the same way.
        assert_eq!(plan(&few, &[1], &[], size), Some((size, true)));
        assert_eq!(plan(&few, &[1], &[], size - 1), Some((bare, false)));
        assert_eq!(plan(&few, &[1], &[], bare - 1), None);
    }
}
