//! The payload of a `PAGE_WRITE` WAL record (`logical_record::PAGE_WRITE`): bytes
//! written into one page of a columnar relation's main fork, at an offset in the page.
//! The record references the page as its block 0, and this is that block's data:
//! `in_page: u16` (machine byte order, as everything in the WAL) and then the bytes.
//! A stream write or a metapage update logs just the bytes it wrote (generic WAL logged
//! an image of a new page, and computed its delta by comparing whole pages).

use super::encoding::CorruptData;
use super::layout::{BLOCK_SIZE, PAGE_HEADER};

/// Bytes before the written ones.
pub const HEADER_BYTES: usize = 2;

/// The header of a write at `in_page`.
pub fn header(in_page: usize) -> [u8; HEADER_BYTES] {
    debug_assert!((PAGE_HEADER..BLOCK_SIZE).contains(&in_page));
    (in_page as u16).to_ne_bytes()
}

/// Where a payload's bytes go in the page, and the bytes.
pub fn parse(payload: &[u8]) -> Result<(usize, &[u8]), CorruptData> {
    let (head, bytes) = split(payload)?;
    inside_page(head as usize, bytes.len())?;
    Ok((head as usize, bytes))
}

fn split(payload: &[u8]) -> Result<(u16, &[u8]), CorruptData> {
    let (head, bytes) = payload
        .split_first_chunk::<HEADER_BYTES>()
        .ok_or(CorruptData("page write record shorter than its header"))?;
    Ok((u16::from_ne_bytes(*head), bytes))
}

fn inside_page(in_page: usize, len: usize) -> Result<(), CorruptData> {
    match in_page < PAGE_HEADER || in_page + len > BLOCK_SIZE {
        true => Err(CorruptData("page write record outside its page")),
        false => Ok(()),
    }
}

/// The high bit of a `ROW_GROUP_WRITE` block's `in_page`: the page was new, and redo
/// initializes it first (`PAGE_INIT` says so of a whole `PAGE_WRITE` record).
const BLOCK_INIT: u16 = 0x8000;

/// The header of one block's write in a `ROW_GROUP_WRITE` record: as `header`, with
/// whether the page is new.
pub fn block_header(in_page: usize, init: bool) -> [u8; HEADER_BYTES] {
    debug_assert!((PAGE_HEADER..BLOCK_SIZE).contains(&in_page));
    (in_page as u16 | if init { BLOCK_INIT } else { 0 }).to_ne_bytes()
}

/// Whether a `ROW_GROUP_WRITE` block's page is new, where its bytes go, and the bytes.
pub fn parse_block(payload: &[u8]) -> Result<(bool, usize, &[u8]), CorruptData> {
    let (head, bytes) = split(payload)?;
    let in_page = (head & !BLOCK_INIT) as usize;
    inside_page(in_page, bytes.len())?;
    Ok((head & BLOCK_INIT != 0, in_page, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_reads_back_and_never_leaves_its_page() {
        let mut payload = header(PAGE_HEADER + 100).to_vec();
        payload.extend_from_slice(b"abc");
        assert_eq!(parse(&payload).unwrap(), (PAGE_HEADER + 100, &b"abc"[..]));
        // The last bytes of a page, and one byte past it.
        let mut last = header(BLOCK_SIZE - 3).to_vec();
        last.extend_from_slice(b"xyz");
        assert_eq!(parse(&last).unwrap(), (BLOCK_SIZE - 3, &b"xyz"[..]));
        last.push(b'!');
        assert!(parse(&last).is_err());
        // Over the page header, or too short to say where.
        let mut header_write = (PAGE_HEADER as u16 - 1).to_ne_bytes().to_vec();
        header_write.push(0);
        assert!(parse(&header_write).is_err());
        assert!(parse(&[1]).is_err());
        assert!(parse(&[]).is_err());
    }

    #[test]
    fn a_row_group_block_says_whether_its_page_is_new() {
        for init in [false, true] {
            let mut payload = block_header(BLOCK_SIZE - 2, init).to_vec();
            payload.extend_from_slice(b"ab");
            assert_eq!(parse_block(&payload).unwrap(), (init, BLOCK_SIZE - 2, &b"ab"[..]));
            payload.push(b'!');
            assert!(parse_block(&payload).is_err());
        }
        // A page write's header is a block's of a page that is not new.
        let mut payload = header(PAGE_HEADER).to_vec();
        payload.push(7);
        assert_eq!(parse_block(&payload).unwrap(), (false, PAGE_HEADER, &[7u8][..]));
    }
}
