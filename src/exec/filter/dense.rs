//! Tests of every row of a vector: a vector's first test (on most scans the one that
//! drops the most rows) holds all its rows in the selection, so it reads the values in
//! order, 64 at a time into a bit mask, instead of each through its row number, and then
//! writes out the rows whose bits are set. With AVX2 the masks come from vector compares
//! (4 values each); without, from one test per value.
//!
//! Pure: no PostgreSQL calls.

/// A comparison operator (`<>` is `Ne`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
    Ne,
}

/// Keeps the rows of `values` whose value passes `pass` (and is not NULL by `valid`):
/// `selection` holds every row on entry (as many as there are values).
#[inline(always)]
pub fn retain_all<T: Copy>(
    values: &[T],
    valid: Option<&[bool]>,
    selection: &mut Vec<u32>,
    pass: impl Fn(T) -> bool,
) {
    retain_all_by(values, valid, selection, |chunk| mask_of(chunk, &pass), &pass)
}

/// `retain_all` with the 64 values' mask from `mask` and the last (fewer than 64)
/// values' tests from `pass`.
#[inline(always)]
fn retain_all_by<T: Copy>(
    values: &[T],
    valid: Option<&[bool]>,
    selection: &mut Vec<u32>,
    mask: impl Fn(&[T; 64]) -> u64,
    pass: impl Fn(T) -> bool,
) {
    assert_eq!(selection.len(), values.len(), "a selection of every row");
    let mut n = 0;
    let mut chunks = values.chunks_exact(64);
    for (k, chunk) in chunks.by_ref().enumerate() {
        let base = k * 64;
        let mut m = mask(chunk.try_into().expect("64 values"));
        if let Some(valid) = valid {
            m &= mask_of::<bool>(valid[base..base + 64].try_into().expect("64 flags"), &|ok| ok);
        }
        n = write_rows(m, base, n, selection);
    }
    let base = values.len() - chunks.remainder().len();
    for (j, &x) in chunks.remainder().iter().enumerate() {
        let r = base + j;
        selection[n] = r as u32;
        n += (valid.is_none_or(|v| v[r]) & pass(x)) as usize;
    }
    selection.truncate(n);
}

/// Bit `j` set where `pass(chunk[j])`.
#[inline(always)]
fn mask_of<T: Copy>(chunk: &[T; 64], pass: &impl Fn(T) -> bool) -> u64 {
    let mut mask = 0u64;
    for (j, &x) in chunk.iter().enumerate() {
        mask |= (pass(x) as u64) << j;
    }
    mask
}

/// For each byte of a mask, the positions of its set bits (then zeros).
pub static BYTE_ROWS: [[u32; 8]; 256] = {
    let mut t = [[0u32; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut k, mut j) = (0, 0);
        while j < 8 {
            if b & (1 << j) != 0 {
                t[b][k] = j as u32;
                k += 1;
            }
            j += 1;
        }
        b += 1;
    }
    t
};

/// Writes row `base + bit` for each set bit of `mask` to `out` from `out[n]` on, eight
/// slots at a time (so `out` must hold `n + 64` slots); returns the new count.
#[inline(always)]
pub fn write_rows(mask: u64, base: usize, mut n: usize, out: &mut [u32]) -> usize {
    for i in 0..8 {
        let byte = ((mask >> (8 * i)) & 0xff) as usize;
        let at = (base + 8 * i) as u32;
        for (o, r) in out[n..n + 8].iter_mut().zip(&BYTE_ROWS[byte]) {
            *o = r + at;
        }
        n += byte.count_ones() as usize;
    }
    n
}

/// `x op c` over floats, in PostgreSQL's order, for a bound that is not NaN: IEEE
/// comparisons order every value but NaN as PostgreSQL does (and take -0 as 0, as it
/// does); NaN is above every number in PostgreSQL and fails every IEEE comparison but
/// `!=`, so `>` and `>=` are the negations of `<=` and `<`, which keep it.
pub fn floats(op: Op, values: &[f64], valid: Option<&[bool]>, selection: &mut Vec<u32>, c: f64) {
    debug_assert!(!c.is_nan());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { floats_avx2(op, values, valid, selection, c) };
        return;
    }
    match op {
        Op::Lt => retain_all(values, valid, selection, |x| x < c),
        Op::Le => retain_all(values, valid, selection, |x| x <= c),
        Op::Eq => retain_all(values, valid, selection, |x| x == c),
        Op::Ge => retain_all(values, valid, selection, |x| x >= c || x.is_nan()),
        Op::Gt => retain_all(values, valid, selection, |x| x > c || x.is_nan()),
        Op::Ne => retain_all(values, valid, selection, |x| x != c),
    }
}

/// `floats` with AVX2: the compare predicates say the same of NaN (ordered for `<`,
/// `<=`, `=`; unordered negations for `>=`, `>`, `<>`).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn floats_avx2(op: Op, values: &[f64], valid: Option<&[bool]>, selection: &mut Vec<u32>, c: f64) {
    use std::arch::x86_64::*;
    // SAFETY: AVX2 is there (this fn's contract).
    unsafe {
        match op {
            Op::Lt => by_float_mask::<_CMP_LT_OQ>(values, valid, selection, c, |x| x < c),
            Op::Le => by_float_mask::<_CMP_LE_OQ>(values, valid, selection, c, |x| x <= c),
            Op::Eq => by_float_mask::<_CMP_EQ_OQ>(values, valid, selection, c, |x| x == c),
            Op::Ge => by_float_mask::<_CMP_NLT_UQ>(values, valid, selection, c, |x| x >= c || x.is_nan()),
            Op::Gt => by_float_mask::<_CMP_NLE_UQ>(values, valid, selection, c, |x| x > c || x.is_nan()),
            Op::Ne => by_float_mask::<_CMP_NEQ_UQ>(values, valid, selection, c, |x| x != c),
        }
    }
}

/// `retain_all` by masks of predicate `P`.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn by_float_mask<const P: i32>(
    values: &[f64],
    valid: Option<&[bool]>,
    selection: &mut Vec<u32>,
    c: f64,
    pass: impl Fn(f64) -> bool,
) {
    retain_all_by(
        values,
        valid,
        selection,
        // SAFETY: AVX2 is there (this fn's contract).
        |v| unsafe { float_mask::<P>(v, c) },
        pass,
    )
}

/// The mask of 64 floats compared with predicate `P`, four at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn float_mask<const P: i32>(values: &[f64; 64], c: f64) -> u64 {
    use std::arch::x86_64::*;
    let vc = _mm256_set1_pd(c);
    let mut mask = 0u64;
    for (q, four) in values.chunks_exact(4).enumerate() {
        // SAFETY: `four` is 4 f64s (32 bytes), read unaligned; AVX2 is there (this fn's
        // contract).
        let bits = unsafe { _mm256_movemask_pd(_mm256_cmp_pd::<P>(_mm256_loadu_pd(four.as_ptr()), vc)) };
        mask |= (bits as u64 & 0xf) << (4 * q);
    }
    mask
}

/// `x op c` over integers.
pub fn ints(op: Op, values: &[i64], valid: Option<&[bool]>, selection: &mut Vec<u32>, c: i64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { ints_avx2(op, values, valid, selection, c) };
        return;
    }
    match op {
        Op::Lt => retain_all(values, valid, selection, |x| x < c),
        Op::Le => retain_all(values, valid, selection, |x| x <= c),
        Op::Eq => retain_all(values, valid, selection, |x| x == c),
        Op::Ge => retain_all(values, valid, selection, |x| x >= c),
        Op::Gt => retain_all(values, valid, selection, |x| x > c),
        Op::Ne => retain_all(values, valid, selection, |x| x != c),
    }
}

/// `ints` with AVX2, which compares 64-bit integers for `>` and `=` only: the others
/// are those with the operands swapped, or negated.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn ints_avx2(op: Op, values: &[i64], valid: Option<&[bool]>, selection: &mut Vec<u32>, c: i64) {
    // SAFETY: AVX2 is there (this fn's contract).
    unsafe {
        match op {
            Op::Lt => by_int_mask::<LESS, false>(values, valid, selection, c, |x| x < c),
            Op::Le => by_int_mask::<GREATER, true>(values, valid, selection, c, |x| x <= c),
            Op::Eq => by_int_mask::<EQUAL, false>(values, valid, selection, c, |x| x == c),
            Op::Ge => by_int_mask::<LESS, true>(values, valid, selection, c, |x| x >= c),
            Op::Gt => by_int_mask::<GREATER, false>(values, valid, selection, c, |x| x > c),
            Op::Ne => by_int_mask::<EQUAL, true>(values, valid, selection, c, |x| x != c),
        }
    }
}

/// `retain_all` by masks of relation `R`, negated with `NOT`.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn by_int_mask<const R: u8, const NOT: bool>(
    values: &[i64],
    valid: Option<&[bool]>,
    selection: &mut Vec<u32>,
    c: i64,
    pass: impl Fn(i64) -> bool,
) {
    let flip = if NOT { u64::MAX } else { 0 };
    retain_all_by(
        values,
        valid,
        selection,
        // SAFETY: AVX2 is there (this fn's contract).
        |v| unsafe { int_mask::<R>(v, c) } ^ flip,
        pass,
    )
}

const LESS: u8 = 0;
const EQUAL: u8 = 1;
const GREATER: u8 = 2;

/// The mask of 64 integers where `x < c` (`LESS`), `x = c` or `x > c`, four at a time.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn int_mask<const R: u8>(values: &[i64; 64], c: i64) -> u64 {
    use std::arch::x86_64::*;
    let vc = _mm256_set1_epi64x(c);
    let mut mask = 0u64;
    for (q, four) in values.chunks_exact(4).enumerate() {
        // SAFETY: `four` is 4 i64s (32 bytes), read unaligned; AVX2 is there (this fn's
        // contract).
        let bits = unsafe {
            let x = _mm256_loadu_si256(four.as_ptr() as *const __m256i);
            let hit = match R {
                LESS => _mm256_cmpgt_epi64(vc, x),
                EQUAL => _mm256_cmpeq_epi64(x, vc),
                _ => _mm256_cmpgt_epi64(x, vc),
            };
            _mm256_movemask_pd(_mm256_castsi256_pd(hit))
        };
        mask |= (bits as u64 & 0xf) << (4 * q);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPS: [Op; 6] = [Op::Lt, Op::Le, Op::Eq, Op::Ge, Op::Gt, Op::Ne];

    /// Rows one at a time, as the kernels' definition reads.
    fn one_by_one<T: Copy>(values: &[T], valid: Option<&[bool]>, pass: impl Fn(T) -> bool) -> Vec<u32> {
        (0..values.len())
            .filter(|&r| valid.is_none_or(|v| v[r]) && pass(values[r]))
            .map(|r| r as u32)
            .collect()
    }

    fn float_pass(op: Op, c: f64) -> impl Fn(f64) -> bool {
        move |x| match op {
            Op::Lt => x < c,
            Op::Le => x <= c,
            Op::Eq => x == c,
            Op::Ge => x >= c || x.is_nan(),
            Op::Gt => x > c || x.is_nan(),
            Op::Ne => x != c,
        }
    }

    #[test]
    fn float_masks_match_one_test_per_row_around_chunks_and_with_nulls() {
        let specials = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -1.5, 2.0, 1e300];
        for len in [0usize, 1, 63, 64, 65, 128, 200, 2048] {
            let values: Vec<f64> = (0..len).map(|i| specials[(i * 7 + i / 3) % specials.len()]).collect();
            let flags: Vec<bool> = (0..len).map(|i| i % 5 != 3).collect();
            for valid in [None, Some(flags.as_slice())] {
                for c in [0.0, -0.0, 1.5, f64::INFINITY, f64::NEG_INFINITY, -10.0] {
                    for op in OPS {
                        let mut got: Vec<u32> = (0..len as u32).collect();
                        floats(op, &values, valid, &mut got, c);
                        assert_eq!(got, one_by_one(&values, valid, float_pass(op, c)), "{len} {op:?} {c}");
                        let mut scalar: Vec<u32> = (0..len as u32).collect();
                        retain_all(&values, valid, &mut scalar, float_pass(op, c));
                        assert_eq!(scalar, got, "{len} {op:?} {c}: without AVX2");
                    }
                }
            }
        }
    }

    #[test]
    fn integer_masks_match_one_test_per_row() {
        for len in [0usize, 3, 64, 65, 300] {
            let values: Vec<i64> = (0..len as i64).map(|i| (i * 37) % 101 - 50).collect();
            let flags: Vec<bool> = (0..len).map(|i| i % 7 != 2).collect();
            for valid in [None, Some(flags.as_slice())] {
                for c in [i64::MIN, -50, 0, 13, 51, i64::MAX] {
                    for op in OPS {
                        let pass = |x: i64| match op {
                            Op::Lt => x < c,
                            Op::Le => x <= c,
                            Op::Eq => x == c,
                            Op::Ge => x >= c,
                            Op::Gt => x > c,
                            Op::Ne => x != c,
                        };
                        let mut got: Vec<u32> = (0..len as u32).collect();
                        ints(op, &values, valid, &mut got, c);
                        assert_eq!(got, one_by_one(&values, valid, pass), "{len} {op:?} {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_mask_writes_its_rows() {
        let mut out = vec![0u32; 64];
        for mask in [0u64, 1, u64::MAX, 0x8000_0000_0000_0001, 0x00ff_00ff_0f0f_f0f0] {
            let n = write_rows(mask, 128, 0, &mut out);
            let want: Vec<u32> = (0..64).filter(|b| mask >> b & 1 == 1).map(|b| 128 + b).collect();
            assert_eq!(&out[..n], want.as_slice());
        }
    }
}
