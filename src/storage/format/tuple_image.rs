//! Heap's tuple layout (`heap_form_tuple`'s: the null bitmap, alignment padding, 1-byte
//! headers for short varlenas), written straight into a logical change record.
//!
//! Logical decoding turns each record's tuple images back into heap tuples, so they
//! must be byte for byte what `heap_form_tuple` makes of the row. Forming each row as a
//! palloc'ed heap tuple first (a copy of the slot's arrays, five calls into PostgreSQL,
//! a copy of the tuple into the record and a pfree) was 16% of a COPY's time at
//! `wal_level = logical`; this lays the row out in place, with no call. A row holding a
//! value stored out of line (a TOAST pointer or an expanded object) is left to the
//! caller, which brings the value inline first, as heap does for the tuples it logs.
//!
//! Pure: datums are machine words, by-reference ones pointers to the value's bytes.

#[cfg(target_endian = "big")]
compile_error!("the varlena headers below are read and written in little-endian form");

/// `offsetof(HeapTupleHeaderData, t_bits)`: the bytes of a tuple before its null bitmap.
pub const FIXED_HEADER: usize = 23;
/// `MAXIMUM_ALIGNOF`.
const MAX_ALIGN: usize = 8;
/// `t_infomask` bits (htup_details.h).
pub const HEAP_HASNULL: u16 = 0x0001;
pub const HEAP_HASVARWIDTH: u16 = 0x0002;
/// `HEAP_NATTS_MASK` of `t_infomask2`.
const NATTS_MASK: u16 = 0x07FF;
/// Most data bytes of a varlena with a 1-byte header (`VARATT_SHORT_MAX` less the header).
const SHORT_MAX: usize = 0x7F;

/// What laying out an attribute's values needs from its `pg_attribute` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrShape {
    /// `attlen`: bytes of a fixed-width value, -1 for a varlena, -2 for a C string.
    pub len: i16,
    /// `attalign` in bytes (1, 2, 4 or 8).
    pub align: u8,
    pub by_value: bool,
    /// `attstorage` is not `p`: a varlena short enough is stored with a 1-byte header.
    pub packable: bool,
}

/// `xl_heap_header`: what a tuple image carries of the tuple's fixed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub infomask2: u16,
    pub infomask: u16,
    pub hoff: u8,
}

fn align_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// Whether a varlena whose first header byte is `b` is a TOAST pointer or an expanded
/// object (`VARATT_IS_EXTERNAL`: a 1-byte header of value 1).
fn is_external(b: u8) -> bool {
    b == 0x01
}

/// Appends to `out` the bytes of the tuple heap forms of a row after its fixed header
/// (null bitmap, padding to `t_hoff`, values), as a tuple image holds them, and returns
/// the header fields. `values[i]` is attribute i's datum and `is_null(i)` says whether it
/// is NULL. None, with nothing appended, when a value is stored out of line.
///
/// # Safety
/// Every non-null by-reference datum must point at a valid value of its attribute: a
/// varlena (its header and the bytes it counts), a NUL-terminated C string, or `len`
/// bytes.
pub unsafe fn append(
    shapes: &[AttrShape],
    values: &[usize],
    is_null: impl Fn(usize) -> bool,
    out: &mut Vec<u8>,
) -> Option<Header> {
    let natts = shapes.len();
    let mut has_null = false;
    for (i, s) in shapes.iter().enumerate() {
        if is_null(i) {
            has_null = true;
        } else if s.len == -1 {
            // SAFETY: a non-null varlena datum points at its header (this fn's contract).
            if is_external(unsafe { *(values[i] as *const u8) }) {
                return None;
            }
        }
    }
    let start = out.len();
    let bitmap = if has_null { natts.div_ceil(8) } else { 0 };
    let hoff = align_up(FIXED_HEADER + bitmap, MAX_ALIGN);
    out.resize(start + hoff - FIXED_HEADER, 0);
    // Alignment is of offsets in the tuple, whose data starts at the MAXALIGNed `hoff`:
    // the same as of offsets from the data's start.
    let data = out.len();
    let pad = |out: &mut Vec<u8>, align: u8| {
        let at = out.len() - data;
        if align > 1 && !at.is_multiple_of(align as usize) {
            out.resize(data + align_up(at, align as usize), 0);
        }
    };
    let mut infomask = 0u16;
    for (i, s) in shapes.iter().enumerate() {
        if is_null(i) {
            infomask |= HEAP_HASNULL;
            continue;
        }
        if has_null {
            out[start + i / 8] |= 1 << (i % 8);
        }
        let v = values[i];
        if s.by_value {
            pad(out, s.align);
            // store_att_byval: the datum's low `len` bytes (each width written whole, not
            // copied by length: this runs for every value of a COPY).
            match s.len {
                8 => out.extend_from_slice(&(v as u64).to_le_bytes()),
                4 => out.extend_from_slice(&(v as u32).to_le_bytes()),
                2 => out.extend_from_slice(&(v as u16).to_le_bytes()),
                _ => out.extend_from_slice(&v.to_le_bytes()[..s.len as usize]),
            }
        } else if s.len == -1 {
            infomask |= HEAP_HASVARWIDTH;
            let p = v as *const u8;
            // SAFETY: a varlena (this fn's contract, not external: checked above): its first
            // byte says its header's form, and its header how many bytes it has.
            unsafe {
                let b = *p;
                if b & 0x01 == 0x01 {
                    // A 1-byte header: never aligned.
                    let n = (b >> 1) as usize & SHORT_MAX;
                    out.extend_from_slice(std::slice::from_raw_parts(p, n));
                } else {
                    let n = (std::ptr::read_unaligned(p as *const u32) >> 2) as usize & 0x3FFF_FFFF;
                    // An uncompressed 4-byte header whose data fits a 1-byte one is converted.
                    if s.packable && b & 0x03 == 0x00 && n < SHORT_MAX + 4 {
                        out.push((((n - 4 + 1) as u8) << 1) | 0x01);
                        out.extend_from_slice(std::slice::from_raw_parts(p.add(4), n - 4));
                    } else {
                        pad(out, s.align);
                        out.extend_from_slice(std::slice::from_raw_parts(p, n));
                    }
                }
            }
        } else if s.len == -2 {
            infomask |= HEAP_HASVARWIDTH;
            // SAFETY: a C string (this fn's contract).
            let c = unsafe { std::ffi::CStr::from_ptr(v as *const std::ffi::c_char) };
            out.extend_from_slice(c.to_bytes_with_nul());
        } else {
            pad(out, s.align);
            // SAFETY: `len` bytes of a fixed-width value (this fn's contract).
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(v as *const u8, s.len as usize) });
        }
    }
    Some(Header { infomask2: natts as u16 & NATTS_MASK, infomask, hoff: hoff as u8 })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT4: AttrShape = AttrShape { len: 4, align: 4, by_value: true, packable: false };
    const INT8: AttrShape = AttrShape { len: 8, align: 8, by_value: true, packable: false };
    const BOOL: AttrShape = AttrShape { len: 1, align: 1, by_value: true, packable: false };
    const TEXT: AttrShape = AttrShape { len: -1, align: 4, by_value: false, packable: true };
    const PLAIN_TEXT: AttrShape = AttrShape { len: -1, align: 4, by_value: false, packable: false };
    const UUID: AttrShape = AttrShape { len: 16, align: 1, by_value: false, packable: false };
    const INTERVAL: AttrShape = AttrShape { len: 16, align: 8, by_value: false, packable: false };
    const CSTRING: AttrShape = AttrShape { len: -2, align: 1, by_value: false, packable: false };

    /// A varlena with a 4-byte header holding `data`.
    fn varlena(data: &[u8]) -> Vec<u8> {
        let mut v = (((data.len() + 4) as u32) << 2).to_le_bytes().to_vec();
        v.extend_from_slice(data);
        v
    }

    fn image(shapes: &[AttrShape], values: &[usize], nulls: &[bool]) -> Option<(Header, Vec<u8>)> {
        let mut out = vec![0xEE];
        // SAFETY: the tests' by-reference datums point at live values of their kinds.
        let h = unsafe { append(shapes, values, |i| nulls[i], &mut out) }?;
        assert_eq!(out[0], 0xEE, "bytes before the image are kept");
        Some((h, out[1..].to_vec()))
    }

    #[test]
    fn fixed_width_values_are_aligned_after_a_maxaligned_header() {
        let (h, bytes) = image(&[BOOL, INT8, INT4], &[1, 0x0102_0304_0506_0708, 7], &[false; 3]).unwrap();
        assert_eq!(h, Header { infomask2: 3, infomask: 0, hoff: 24 });
        let mut want = vec![0u8]; // padding from 23 to 24
        want.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        want.extend_from_slice(&0x0102_0304_0506_0708u64.to_le_bytes());
        want.extend_from_slice(&7u32.to_le_bytes());
        assert_eq!(bytes, want);
    }

    #[test]
    fn nulls_take_a_bitmap_and_no_bytes() {
        let shapes = [INT4; 9];
        let values = [5usize; 9];
        let mut nulls = [false; 9];
        nulls[1] = true;
        nulls[8] = true;
        let (h, bytes) = image(&shapes, &values, &nulls).unwrap();
        // 23 + 2 bitmap bytes, aligned to 32.
        assert_eq!(h, Header { infomask2: 9, infomask: HEAP_HASNULL, hoff: 32 });
        assert_eq!(&bytes[..2], &[0b1111_1101, 0b0000_0000]);
        assert_eq!(&bytes[2..9], &[0; 7]);
        assert_eq!(bytes.len(), 9 + 7 * 4);
    }

    #[test]
    fn short_varlenas_take_a_one_byte_header_and_no_alignment() {
        let short = varlena(b"abc");
        let long = varlena(&[b'x'; 200]);
        let (h, bytes) =
            image(&[BOOL, TEXT, TEXT], &[1, short.as_ptr() as usize, long.as_ptr() as usize], &[false; 3])
                .unwrap();
        assert_eq!(h.infomask, HEAP_HASVARWIDTH);
        let mut want = vec![0u8, 1, (4 << 1) | 1, b'a', b'b', b'c'];
        // The long one keeps its 4-byte header, aligned to 4 (offset 5 -> 8).
        want.extend_from_slice(&[0, 0, 0]);
        want.extend_from_slice(&long);
        assert_eq!(bytes, want);
    }

    #[test]
    fn a_varlena_already_short_is_copied_as_it_is() {
        let short = [(3u8 << 1) | 1, b'h', b'i'];
        let (_, bytes) = image(&[INT4, TEXT], &[9, short.as_ptr() as usize], &[false; 2]).unwrap();
        assert_eq!(&bytes[1 + 4..], &short);
    }

    #[test]
    fn plain_storage_keeps_the_four_byte_header() {
        let v = varlena(b"ab");
        let (_, bytes) = image(&[BOOL, PLAIN_TEXT], &[0, v.as_ptr() as usize], &[false; 2]).unwrap();
        assert_eq!(&bytes[1..], &[&[0u8, 0, 0, 0][..], &v].concat());
    }

    #[test]
    fn compressed_inline_values_keep_their_header() {
        // A 4-byte header with the compressed bit (0x02) is never converted.
        let mut v = varlena(b"zz");
        v[0] |= 0x02;
        let (_, bytes) = image(&[TEXT], &[v.as_ptr() as usize], &[false]).unwrap();
        assert_eq!(&bytes[1..], &v[..]);
    }

    #[test]
    fn fixed_width_references_and_c_strings() {
        let uuid: [u8; 16] = std::array::from_fn(|i| i as u8 + 1);
        let interval = [7u8; 16];
        let s = c"name";
        let (h, bytes) = image(
            &[BOOL, UUID, INTERVAL, CSTRING],
            &[1, uuid.as_ptr() as usize, interval.as_ptr() as usize, s.as_ptr() as usize],
            &[false; 4],
        )
        .unwrap();
        assert_eq!(h.infomask, HEAP_HASVARWIDTH);
        let mut want = vec![0u8, 1];
        want.extend_from_slice(&uuid); // alignment 1: offset 1
        want.extend_from_slice(&[0; 7]); // 17 -> 24
        want.extend_from_slice(&interval);
        want.extend_from_slice(b"name\0");
        assert_eq!(bytes, want);
    }

    #[test]
    fn a_value_stored_out_of_line_is_left_to_the_caller() {
        let toast_pointer = [0x01u8, 18, 0, 0];
        let mut out = vec![1, 2];
        // SAFETY: the datum points at a (truncated) external header, which is all `append`
        // reads of it.
        let h = unsafe { append(&[INT4, TEXT], &[1, toast_pointer.as_ptr() as usize], |_| false, &mut out) };
        assert_eq!(h, None);
        assert_eq!(out, [1, 2]);
    }
}
