//! Copies of a few kilobytes (a vector's bytes out of a page, a vector's row numbers)
//! that do not go through the C library's `rep movsb`.
//!
//! glibc (2.36 in Debian 12) copies blocks above a few kilobytes with `rep movsb` on
//! CPUs that announce fast string moves. On AMD Zen 3 that instruction runs about twenty
//! times slower when the destination lies a few bytes past the source modulo 4096 (the
//! two are "4k aliased"), and heap buffers make that common: two buffers of one size
//! allocated one after the other are 16 bytes apart modulo 4096 (malloc's chunk header).
//! A parallel worker, a new process whose allocations come in that order, copied each
//! vector's 2,048 row numbers in 2.8 µs instead of 0.14 µs: a quarter of its time on
//! TSBS q8 (2026-12-07). Later glibc releases avoid `rep movsb` for such distances; this
//! copy avoids it for every distance: 32-byte loads and stores (AVX2), which
//! run at the same speed as the fast `rep movsb` for data in the CPU's caches.
//!
//! Pure: no PostgreSQL calls.

/// Below this many bytes glibc copies with vector loads and stores itself.
const OWN_LOOP_FROM: usize = 1024;

/// `out.extend_from_slice(src)`, copied as this module copies. The room is taken as
/// `Vec::reserve` takes it (callers that want a refusal to be an ERROR reserve first,
/// `fallible::reserve`).
pub fn extend_from_slice<T: Copy>(out: &mut Vec<T>, src: &[T]) {
    // SAFETY: `src` holds `src.len()` initialized `T: Copy` values.
    unsafe { append(out, src.as_ptr().cast(), src.len()) }
}

/// `out` extended by the little-endian 64-bit words of `bytes` (a whole number of them),
/// copied as this module copies.
///
/// # Panics
/// If `bytes` is not a whole number of words.
pub fn extend_from_le_words(out: &mut Vec<u64>, bytes: &[u8]) {
    assert_eq!(bytes.len() % 8, 0, "a part of a word");
    // SAFETY: `bytes` holds `bytes.len() / 8` words' bytes, and any 8 bytes are a valid
    // u64, little-endian as stored on this target.
    #[cfg(target_endian = "little")]
    unsafe {
        append(out, bytes.as_ptr(), bytes.len() / 8)
    }
    #[cfg(not(target_endian = "little"))]
    out.extend(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))));
}

/// Appends `count` values of `T` whose bytes start at `src` to `out`.
///
/// # Safety
/// `src` readable for `count * size_of::<T>()` bytes that are valid `T` values, outside
/// `out`'s buffer (a borrowed slice is: `out` is borrowed mutably).
unsafe fn append<T: Copy>(out: &mut Vec<T>, src: *const u8, count: usize) {
    out.reserve(count);
    let len = out.len();
    // SAFETY: `reserve` made room for `count` more values after `len`, which `src` does
    // not overlap, and the copied bytes are valid values (this fn's contract), so setting
    // the length over them is sound.
    unsafe {
        copy_bytes(out.as_mut_ptr().add(len).cast(), src, count * std::mem::size_of::<T>());
        out.set_len(len + count);
    }
}

/// Copies `len` bytes from `src` to `dst`.
///
/// # Safety
/// `src` readable and `dst` writable for `len` bytes; the two do not overlap.
unsafe fn copy_bytes(dst: *mut u8, src: *const u8, len: usize) {
    if len < OWN_LOOP_FROM {
        // SAFETY: this fn's contract.
        return unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: this fn's contract; the CPU has AVX2 (checked above).
            return unsafe { x86::copy_avx2(dst, src, len) };
        }
    }
    // Without AVX2 (older CPUs than those whose `rep movsb` is slow so), the C library's.
    // SAFETY: this fn's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Copies `len` (at least 32) bytes in 32-byte loads and stores, four at a time; the
    /// last 32 bytes are copied again from the end (the copies do not overlap, so
    /// writing a byte twice writes the same value).
    ///
    /// # Safety
    /// As `copy_bytes`, with `len >= 32`, on a CPU with AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn copy_avx2(dst: *mut u8, src: *const u8, len: usize) {
        debug_assert!(len >= 32);
        let mut at = 0;
        // SAFETY: every load and store below is of 32 bytes starting at most `len - 32`
        // bytes in (the loops' conditions), inside both ranges (this fn's contract).
        unsafe {
            while at + 128 <= len {
                let a = _mm256_loadu_si256(src.add(at).cast());
                let b = _mm256_loadu_si256(src.add(at + 32).cast());
                let c = _mm256_loadu_si256(src.add(at + 64).cast());
                let d = _mm256_loadu_si256(src.add(at + 96).cast());
                _mm256_storeu_si256(dst.add(at).cast(), a);
                _mm256_storeu_si256(dst.add(at + 32).cast(), b);
                _mm256_storeu_si256(dst.add(at + 64).cast(), c);
                _mm256_storeu_si256(dst.add(at + 96).cast(), d);
                at += 128;
            }
            while at + 32 <= len {
                _mm256_storeu_si256(dst.add(at).cast(), _mm256_loadu_si256(src.add(at).cast()));
                at += 32;
            }
            if at < len {
                let last = len - 32;
                _mm256_storeu_si256(dst.add(last).cast(), _mm256_loadu_si256(src.add(last).cast()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that differ at every position, so a byte copied from the wrong place shows.
    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 8) as u8)).collect()
    }

    #[test]
    fn copies_every_length_around_the_loops_steps() {
        let src = pattern(5000, 7);
        for len in (0..70).chain(1000..1100).chain([2047, 2048, 2049, 4095, 4096, 4097, 4999]) {
            for offset in [0, 1, 13, 31] {
                let s = &src[offset..offset + len.min(src.len() - offset)];
                let mut out = vec![0xAAu8; 3];
                extend_from_slice(&mut out, s);
                assert_eq!(&out[..3], &[0xAA; 3], "len {len} offset {offset}: the bytes before");
                assert_eq!(&out[3..], s, "len {len} offset {offset}");
            }
        }
    }

    #[test]
    fn copies_wider_elements() {
        let rows: Vec<u32> = (0..2048).map(|r| r * 3 + 1).collect();
        let mut sel = vec![9u32];
        extend_from_slice(&mut sel, &rows);
        assert_eq!(sel[0], 9);
        assert_eq!(&sel[1..], &rows[..]);
    }

    #[test]
    fn reads_little_endian_words() {
        let bytes = pattern(8 * 300, 5);
        let mut words = vec![1u64];
        extend_from_le_words(&mut words, &bytes);
        let expected: Vec<u64> =
            bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!((words[0], &words[1..]), (1, &expected[..]));
    }

    /// The AVX2 loop on its own, at the lengths where its steps and the copied-again
    /// tail meet (below `OWN_LOOP_FROM`, which `copy_bytes` never gives it).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_loop_copies_exactly() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        let src = pattern(1000, 3);
        for len in [32, 33, 63, 64, 65, 127, 128, 129, 159, 160, 200, 999] {
            let mut dst = vec![0u8; len + 1];
            // SAFETY: `src` holds at least `len` bytes, `dst` `len + 1`, distinct vectors;
            // len >= 32, and the CPU has AVX2.
            unsafe { x86::copy_avx2(dst.as_mut_ptr(), src.as_ptr(), len) };
            assert_eq!((&dst[..len], dst[len]), (&src[..len], 0), "len {len}");
        }
    }
}
