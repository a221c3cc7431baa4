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

/// `n` rounded up to a multiple of `align`, a power of two (every `attalign` is): a mask,
/// not a division, as this runs for every value of every row logged.
fn align_up(n: usize, align: usize) -> usize {
    debug_assert!(align.is_power_of_two());
    (n + align - 1) & !(align - 1)
}

/// Whether a varlena whose first header byte is `b` is a TOAST pointer or an expanded
/// object (`VARATT_IS_EXTERNAL`: a 1-byte header of value 1).
fn is_external(b: u8) -> bool {
    b == 0x01
}

/// One attribute's value of a row, as `lay_out` stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Null,
    /// A by-value datum: its low `len` bytes are stored (`store_att_byval`).
    Word(u64),
    /// A by-reference value's bytes as they are: a fixed-width value's `len` bytes, or a
    /// varlena with its header (a 1-byte one, stored unaligned, or a 4-byte one that is
    /// compressed, aligned and never converted).
    Stored(&'a [u8]),
    /// The data of an uncompressed varlena, without its header: stored with a 1-byte
    /// header when the attribute is packable and it fits one, else with a 4-byte header.
    VarlenaData(&'a [u8]),
    /// A C string's bytes, without its NUL.
    CString(&'a [u8]),
}

/// Appends to `out` the bytes of the tuple heap forms of a row after its fixed header
/// (null bitmap, padding to `t_hoff`, values), as a tuple image holds them, and returns
/// the header fields. `value(i)` is attribute i's value; `has_null` says whether any is
/// `Null`. Pure: a COPY's rows are laid out on rayon's threads from their parsed values.
pub fn lay_out<'a>(
    shapes: &[AttrShape],
    has_null: bool,
    value: impl Fn(usize) -> Value<'a>,
    out: &mut Vec<u8>,
) -> Header {
    let natts = shapes.len();
    let start = out.len();
    let bitmap = if has_null { natts.div_ceil(8) } else { 0 };
    let hoff = align_up(FIXED_HEADER + bitmap, MAX_ALIGN);
    out.resize(start + hoff - FIXED_HEADER, 0);
    // Alignment is of offsets in the tuple, whose data starts at the MAXALIGNed `hoff`:
    // the same as of offsets from the data's start.
    let data = out.len();
    let pad = |out: &mut Vec<u8>, align: u8| {
        let at = out.len() - data;
        let padding = align_up(at, align as usize) - at;
        if padding > 0 {
            out.extend_from_slice(&[0; MAX_ALIGN][..padding]);
        }
    };
    let mut infomask = 0u16;
    for (i, s) in shapes.iter().enumerate() {
        let v = value(i);
        if v == Value::Null {
            infomask |= HEAP_HASNULL;
            continue;
        }
        if has_null {
            out[start + i / 8] |= 1 << (i % 8);
        }
        match v {
            Value::Null => {}
            Value::Word(w) => {
                pad(out, s.align);
                // Each width written whole, not copied by length: this runs for every
                // value of a COPY.
                match s.len {
                    8 => out.extend_from_slice(&w.to_le_bytes()),
                    4 => out.extend_from_slice(&(w as u32).to_le_bytes()),
                    2 => out.extend_from_slice(&(w as u16).to_le_bytes()),
                    _ => out.extend_from_slice(&w.to_le_bytes()[..s.len.clamp(0, 8) as usize]),
                }
            }
            Value::Stored(bytes) => {
                if s.len == -1 {
                    infomask |= HEAP_HASVARWIDTH;
                    // A 1-byte header is never aligned.
                    if bytes.first().is_some_and(|b| b & 0x01 == 0) {
                        pad(out, s.align);
                    }
                } else {
                    pad(out, s.align);
                }
                out.extend_from_slice(bytes);
            }
            Value::VarlenaData(bytes) => {
                infomask |= HEAP_HASVARWIDTH;
                if s.packable && bytes.len() < SHORT_MAX {
                    out.push((((bytes.len() + 1) as u8) << 1) | 0x01);
                } else {
                    pad(out, s.align);
                    // SET_VARSIZE for a 4-byte header on a little-endian machine.
                    out.extend_from_slice(&(((bytes.len() + 4) as u32) << 2).to_le_bytes());
                }
                out.extend_from_slice(bytes);
            }
            Value::CString(bytes) => {
                infomask |= HEAP_HASVARWIDTH;
                out.extend_from_slice(bytes);
                out.push(0);
            }
        }
    }
    Header { infomask2: natts as u16 & NATTS_MASK, infomask, hoff: hoff as u8 }
}

/// `lay_out` of a row of datums: `values[i]` is attribute i's datum and `is_null(i)`
/// says whether it is NULL. None, with nothing appended, when a value is stored out of
/// line.
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
    let value = |i: usize| {
        let s = shapes[i];
        let v = values[i];
        if is_null(i) {
            Value::Null
        } else if s.by_value {
            Value::Word(v as u64)
        } else if s.len == -1 {
            let p = v as *const u8;
            // SAFETY: a varlena, not external (checked above; this fn's contract): its
            // first byte says its header's form, and its header how many bytes it has.
            unsafe {
                let b = *p;
                if b & 0x01 == 0x01 {
                    Value::Stored(std::slice::from_raw_parts(p, (b >> 1) as usize & SHORT_MAX))
                } else {
                    let n = (std::ptr::read_unaligned(p as *const u32) >> 2) as usize & 0x3FFF_FFFF;
                    if b & 0x03 == 0x00 {
                        Value::VarlenaData(std::slice::from_raw_parts(p.add(4), n - 4))
                    } else {
                        Value::Stored(std::slice::from_raw_parts(p, n))
                    }
                }
            }
        } else if s.len == -2 {
            // SAFETY: a C string (this fn's contract).
            Value::CString(unsafe { std::ffi::CStr::from_ptr(v as *const std::ffi::c_char) }.to_bytes())
        } else {
            // SAFETY: `len` bytes of a fixed-width value (this fn's contract).
            Value::Stored(unsafe { std::slice::from_raw_parts(v as *const u8, s.len as usize) })
        }
    };
    Some(lay_out(shapes, has_null, value, out))
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
    fn values_lay_out_as_their_datums_do() {
        let short = varlena(b"abc");
        let plain = varlena(b"ab");
        let long = varlena(&[b'y'; 300]);
        let edge = varlena(&[b'e'; 126]);
        let over = varlena(&[b'o'; 127]);
        let uuid: [u8; 16] = std::array::from_fn(|i| i as u8 * 3);
        let name = c"name";
        let shapes = [BOOL, TEXT, INT8, PLAIN_TEXT, UUID, TEXT, CSTRING, INT4, TEXT, TEXT, INTERVAL];
        let datums = [
            1,
            short.as_ptr() as usize,
            (-5i64) as usize,
            plain.as_ptr() as usize,
            uuid.as_ptr() as usize,
            long.as_ptr() as usize,
            name.as_ptr() as usize,
            0,
            edge.as_ptr() as usize,
            over.as_ptr() as usize,
            uuid.as_ptr() as usize,
        ];
        let values = [
            Value::Word(1),
            Value::VarlenaData(b"abc"),
            Value::Word((-5i64) as u64),
            Value::VarlenaData(b"ab"),
            Value::Stored(&uuid),
            Value::VarlenaData(&long[4..]),
            Value::CString(b"name"),
            Value::Word(0),
            Value::VarlenaData(&edge[4..]),
            Value::VarlenaData(&over[4..]),
            Value::Stored(&uuid),
        ];
        for nulls in [[false; 11], std::array::from_fn(|i| i == 7)] {
            let from_datums = image(&shapes, &datums, &nulls).unwrap();
            let mut out = vec![0xEE];
            let has_null = nulls.iter().any(|n| *n);
            let value = |i: usize| if nulls[i] { Value::Null } else { values[i] };
            let h = lay_out(&shapes, has_null, value, &mut out);
            assert_eq!((h, out[1..].to_vec()), from_datums);
        }
        // 126 bytes take a 1-byte header, 127 a 4-byte one.
        let (_, bytes) = image(&[TEXT], &[edge.as_ptr() as usize], &[false]).unwrap();
        // (After the one byte that pads the header's 23 bytes to 24.)
        assert_eq!(bytes[1], (127 << 1) | 1);
        assert_eq!(bytes.len(), 1 + 127);
        let (_, bytes) = image(&[TEXT], &[over.as_ptr() as usize], &[false]).unwrap();
        assert_eq!(&bytes[1..], &over[..]);
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
