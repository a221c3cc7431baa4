//! `numeric` values in their stored form (the datum's bytes after its varlena header):
//! parsed, and compared exactly as PostgreSQL's `cmp_numerics` compares them (NaN equal
//! to itself and above everything, then +Infinity; -Infinity below every finite value;
//! 1.0 equal to 1.00), without calling PostgreSQL; a finite one as a scaled integer
//! (`scaled`), and a scaled integer as the bytes PostgreSQL's make_result writes for it
//! (`write_canonical`). Pure.

use std::cmp::Ordering;

/// A stored numeric, parsed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Parsed<'a> {
    /// Base-10000 digits, most significant first, the first at exponent `weight`;
    /// `dscale` decimal digits after the point are displayed.
    Finite {
        negative: bool,
        weight: i32,
        dscale: u16,
        digits: &'a [u8],
    },
    NaN,
    PosInf,
    NegInf,
}

const SIGN_MASK: u16 = 0xC000;
pub const NEG: u16 = 0x4000;
pub const SHORT: u16 = 0x8000;
const SPECIAL: u16 = 0xC000;

/// The numeric whose stored bytes are `b`; None for bytes no numeric has.
pub fn parse(b: &[u8]) -> Option<Parsed<'_>> {
    let header = u16::from_le_bytes(b.get(..2)?.try_into().ok()?);
    let (negative, weight, dscale, digits) = match header & SIGN_MASK {
        SHORT => {
            let weight = (header & 0x003F) as i32 | if header & 0x0040 != 0 { !0x3F } else { 0 };
            (header & 0x2000 != 0, weight, (header & 0x1F80) >> 7, &b[2..])
        }
        SPECIAL => {
            return match header {
                0xC000 => Some(Parsed::NaN),
                0xD000 => Some(Parsed::PosInf),
                0xF000 => Some(Parsed::NegInf),
                _ => None,
            }
        }
        sign => {
            let weight = i16::from_le_bytes(b.get(2..4)?.try_into().ok()?) as i32;
            (sign == NEG, weight, header & 0x3FFF, &b[4..])
        }
    };
    if digits.len() % 2 != 0 {
        return None;
    }
    Some(Parsed::Finite { negative, weight, dscale, digits })
}

/// 10^0 ..= 10^38: every power of ten an i128 holds.
const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// 10^e, if it fits.
#[inline]
pub fn pow10(e: u32) -> Option<i128> {
    POW10.get(e as usize).copied()
}

/// a * b, if it fits: two values that fit 64 bits multiply in one widening
/// multiplication (their product always fits 128 bits), others checked.
#[inline(always)]
pub fn wide_mul(a: i128, b: i128) -> Option<i128> {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(x), Ok(y)) => Some(x as i128 * y as i128),
        _ => a.checked_mul(b),
    }
}

/// A finite numeric as (m, dscale), its value m / 10^dscale; None if m does not fit
/// 128 bits (or digits past the display scale are not zeros, which PostgreSQL never
/// stores).
pub fn scaled(negative: bool, weight: i32, dscale: u16, digits: &[u8]) -> Option<(i128, u16)> {
    // The digits as one integer (Horner, base 10000), brought to the display scale:
    // the last digit stands for 10^(4 * (weight - n + 1)). Past the display scale
    // only zeros are stored, so a last digit cut by it divides exactly.
    let n = digits.len() / 2;
    if n == 0 {
        return Some((0, dscale));
    }
    let digit = |i: usize| u16::from_le_bytes([digits[2 * i], digits[2 * i + 1]]) as i64;
    let e = 4 * (weight as i64 - n as i64 + 1) + dscale as i64;
    let (last, e) = match e {
        -3..=-1 => {
            // Constant divisors: multiplications, not a division per value.
            let d = digit(n - 1);
            let (kept, dropped) = match e {
                -1 => (d / 10, d % 10),
                -2 => (d / 100, d % 100),
                _ => (d / 1000, d % 1000),
            };
            if dropped != 0 {
                return None;
            }
            // The last digit contributes `kept` at the display scale.
            (Some((kept, (4 + e) as u32)), 0)
        }
        e if e < 0 => return None,
        e => (None, e),
    };
    let full = if last.is_some() { n - 1 } else { n };
    let mut m: i128 = if full <= 4 {
        // Up to 16 decimal digits: in 64 bits.
        (0..full).fold(0i64, |m, i| m * 10_000 + digit(i)) as i128
    } else {
        let mut m: i128 = 0;
        for i in 0..full {
            m = m.checked_mul(10_000)?.checked_add(digit(i) as i128)?;
        }
        m
    };
    if let Some((d, width)) = last {
        m = wide_mul(m, POW10[width as usize])?.checked_add(d as i128)?;
    }
    if e > 0 {
        m = wide_mul(m, pow10(u32::try_from(e).ok()?)?)?;
    }
    Some((if negative { -m } else { m }, dscale))
}

/// The largest display scale a numeric has (NUMERIC_DSCALE_MAX).
pub const DSCALE_MAX: u16 = 0x3FFF;

/// Appends the bytes make_result writes for m / 10^dscale (`dscale <= DSCALE_MAX`):
/// base-10000 digits without leading or trailing zero ones, a zero with weight 0 and
/// no sign, and the short header whenever the display scale and weight fit it
/// (NUMERIC_CAN_BE_SHORT), else the long one. A numeric that numeric_in, a cast or
/// arithmetic made is stored with exactly these bytes.
pub fn write_canonical(m: i128, dscale: u16, out: &mut Vec<u8>) {
    debug_assert!(dscale <= DSCALE_MAX);
    // Base-10000 digits of |m| * 10^pad, least significant first, the point between
    // two digits: `frac` of them after it. |m| * 10^pad may not fit 128 bits, so the
    // padded low digit is made first.
    let pad = (4 - dscale as u32 % 4) % 4;
    let frac = (dscale as i32 + pad as i32) / 4;
    let mut digits = [0u16; 12];
    let mut n = 0;
    let mut mag = m.unsigned_abs();
    if pad > 0 {
        let unit = 10u128.pow(4 - pad);
        digits[0] = ((mag % unit) * 10u128.pow(pad)) as u16;
        mag /= unit;
        n = 1;
    }
    // 64-bit divisions while the rest fits (always, for mantissas of 64 bits).
    while mag > u64::MAX as u128 {
        digits[n] = (mag % 10_000) as u16;
        mag /= 10_000;
        n += 1;
    }
    let mut small = mag as u64;
    while small > 0 {
        digits[n] = (small % 10_000) as u16;
        small /= 10_000;
        n += 1;
    }
    let low = digits[..n].iter().position(|&d| d != 0).unwrap_or(n);
    let high = digits[..n].iter().rposition(|&d| d != 0).map_or(low, |i| i + 1);
    let (negative, weight) = if low == high { (false, 0) } else { (m < 0, high as i32 - 1 - frac) };
    if dscale <= 0x3F && (-64..=63).contains(&weight) {
        let header = SHORT
            | if negative { 0x2000 } else { 0 }
            | (dscale << 7)
            | if weight < 0 { 0x40 } else { 0 }
            | (weight as u16 & 0x3F);
        out.extend_from_slice(&header.to_le_bytes());
    } else {
        out.extend_from_slice(&(if negative { NEG } else { 0 } | dscale).to_le_bytes());
        out.extend_from_slice(&(weight as i16).to_le_bytes());
    }
    for &d in digits[low..high].iter().rev() {
        out.extend_from_slice(&d.to_le_bytes());
    }
}

/// Bytes of the longest value `ScaleWriter` writes: six base-10000 digits (an i64
/// mantissa, its last digit padded to a whole one) after a long header.
pub const I64_BYTES_MAX: usize = 16;

/// `write_canonical` for i64 mantissas of one display scale, with what depends on the
/// scale worked out once: a scan writes a vector of them per call, and 64-bit
/// divisions by constants (multiplications) replace the 128-bit ones.
#[derive(Debug, Clone, Copy)]
pub struct ScaleWriter {
    dscale: u16,
    /// Decimal digits that pad the last base-10000 digit (`write_canonical`'s `pad`).
    pad: u32,
    /// Base-10000 digits after the point.
    frac: i32,
    /// The short header of a positive value by its leading zero digits (of four; 4 for
    /// zero, whose weight is 0): what `trimmed` would otherwise work out per value.
    short_headers: [u16; 5],
}

impl ScaleWriter {
    /// A writer for display scale `dscale` (at most `DSCALE_MAX`).
    pub fn new(dscale: u16) -> ScaleWriter {
        debug_assert!(dscale <= DSCALE_MAX);
        let pad = (4 - dscale as u32 % 4) % 4;
        let frac = (dscale as i32 + pad as i32) / 4;
        // The weight's low 7 bits are the short header's sign-and-weight bits.
        let header = |weight: i32| SHORT | (dscale << 7) | (weight as u16 & 0x7F);
        let short_headers = [header(3 - frac), header(2 - frac), header(1 - frac), header(-frac), header(0)];
        ScaleWriter { dscale, pad, frac, short_headers }
    }

    /// |m| below which `short_bytes` applies: at most four base-10000 digits under the
    /// short header (0 when the display scale needs the long one).
    pub fn short_limit(&self) -> u64 {
        match (self.dscale > 0x3F, self.pad) {
            (true, _) => 0,
            (false, 0) => 10u64.pow(16),
            (false, pad) => 10u64.pow(12 + 4 - pad),
        }
    }

    /// `bytes` for |m| < `short_limit()`, in fewer steps: the 2-byte header, and the
    /// digits as the first `len` bytes of a little-endian u64.
    pub fn short_bytes(&self, m: i64) -> (u16, u64, usize) {
        let digits = match self.pad {
            0 => self.short_digits::<0>(m),
            1 => self.short_digits::<1>(m),
            2 => self.short_digits::<2>(m),
            _ => self.short_digits::<3>(m),
        };
        self.trimmed(signed(digits, m))
    }

    /// Whether `digits_into` takes every value of `m`: the short header, and magnitudes
    /// below 2^43 (< `short_limit()` at every scale). Tested with an OR over the
    /// vector, which vectorizes (every m + 2^43 below 2^44).
    pub fn short_applies(&self, m: &[i64]) -> bool {
        self.dscale <= 0x3F && m.iter().fold(0u64, |a, &x| a | (x as u64).wrapping_add(1 << 43)) < 1 << 44
    }

    /// Each value's four base-10000 digits and its sign (`signed`), for `trimmed`,
    /// appended to `out`: a pass over the vector per padding, in 32-bit arithmetic when
    /// every magnitude allows (most money), with nothing decided per value.
    /// `short_applies(m)` must hold.
    pub fn digits_into(&self, m: &[i64], out: &mut Vec<u64>) {
        debug_assert!(self.short_applies(m));
        let small = m.iter().fold(0u64, |a, &x| a | (x as u64).wrapping_add(1 << 31)) < 1 << 32;
        let abs = |x: i64| x.unsigned_abs() as u32;
        match (self.pad, small) {
            (0, true) => out.extend(m.iter().map(|&x| signed(small_digits::<0>(abs(x)), x))),
            (1, true) => out.extend(m.iter().map(|&x| signed(small_digits::<1>(abs(x)), x))),
            (2, true) => out.extend(m.iter().map(|&x| signed(small_digits::<2>(abs(x)), x))),
            (_, true) => out.extend(m.iter().map(|&x| signed(small_digits::<3>(abs(x)), x))),
            (0, false) => out.extend(m.iter().map(|&x| signed(self.short_digits::<0>(x), x))),
            (1, false) => out.extend(m.iter().map(|&x| signed(self.short_digits::<1>(x), x))),
            (2, false) => out.extend(m.iter().map(|&x| signed(self.short_digits::<2>(x), x))),
            (_, false) => out.extend(m.iter().map(|&x| signed(self.short_digits::<3>(x), x))),
        }
    }

    /// Each value's datum image, appended to `out` as two little-endian words: a 4-byte
    /// varlena header (SET_VARSIZE on a little-endian machine), then the bytes
    /// `write_canonical` writes under the short header. One pass over the vector per
    /// padding, digits and trimming fused, so that a scan's rows only point at them.
    /// `short_applies(m)` must hold.
    pub fn short_images_into(&self, m: &[i64], out: &mut Vec<[u64; 2]>) {
        debug_assert!(self.short_applies(m));
        let small = m.iter().fold(0u64, |a, &x| a | (x as u64).wrapping_add(1 << 31)) < 1 << 32;
        #[cfg(target_arch = "x86_64")]
        if small && std::arch::is_x86_feature_detected!("avx2") {
            let start = out.len();
            out.resize(start + m.len(), [0; 2]);
            // SAFETY: the CPU has AVX2 (just checked).
            unsafe { self.small_images_avx2(m, &mut out[start..]) };
            return;
        }
        let abs = |x: i64| x.unsigned_abs() as u32;
        out.reserve(m.len());
        match (self.pad, small) {
            (0, true) => out.extend(m.iter().map(|&x| self.image(signed(small_digits::<0>(abs(x)), x)))),
            (1, true) => out.extend(m.iter().map(|&x| self.image(signed(small_digits::<1>(abs(x)), x)))),
            (2, true) => out.extend(m.iter().map(|&x| self.image(signed(small_digits::<2>(abs(x)), x)))),
            (_, true) => out.extend(m.iter().map(|&x| self.image(signed(small_digits::<3>(abs(x)), x)))),
            (0, false) => out.extend(m.iter().map(|&x| self.image(signed(self.short_digits::<0>(x), x)))),
            (1, false) => out.extend(m.iter().map(|&x| self.image(signed(self.short_digits::<1>(x), x)))),
            (2, false) => out.extend(m.iter().map(|&x| self.image(signed(self.short_digits::<2>(x), x)))),
            (_, false) => out.extend(m.iter().map(|&x| self.image(signed(self.short_digits::<3>(x), x)))),
        }
    }

    /// `short_images_into` of magnitudes below 2^31, compiled for AVX2, where the lanes
    /// form (`small_images_lanes`) vectorizes: twice as fast as the scalar form, which
    /// looks headers up and scans bits per value.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn small_images_avx2(&self, m: &[i64], out: &mut [[u64; 2]]) {
        match self.pad {
            0 => self.small_images_lanes::<0>(m, out),
            1 => self.small_images_lanes::<1>(m, out),
            2 => self.small_images_lanes::<2>(m, out),
            _ => self.small_images_lanes::<3>(m, out),
        }
    }

    /// `image(signed(small_digits::<PAD>(|x|), x))` of every `x` of `m` (|x| < 2^31) into
    /// `out`, with no table lookup, bit scan or branch per value, so that it vectorizes:
    /// the zero digits at either end are counted by comparisons, and the header's weight
    /// is worked out from them.
    #[inline(always)]
    fn small_images_lanes<const PAD: u32>(&self, m: &[i64], out: &mut [[u64; 2]]) {
        let base = (SHORT | (self.dscale << 7)) as u64;
        // The weight of a value with no leading zero digit (wrapping: the 7 bits are kept).
        let top = (3 - self.frac) as u64;
        for (o, &x) in out.iter_mut().zip(m) {
            // The four digits, most significant in the low 16 bits.
            let digits = small_digits::<PAD>(x.unsigned_abs() as u32);
            let zero = |k: u32| ((digits >> (16 * k)) & 0xFFFF == 0) as u64;
            let (z0, z1, z2, z3) = (zero(0), zero(1), zero(2), zero(3));
            let lead = z0 + (z0 & z1) + (z0 & z1 & z2) + (z0 & z1 & z2 & z3);
            let trail = z3 + (z3 & z2) + (z3 & z2 & z1) + (z3 & z2 & z1 & z0);
            // Zero: no digit, weight 0, no sign (as `trimmed`).
            let nonzero = 1 - (lead >> 2);
            let keep = 0u64.wrapping_sub(nonzero);
            let body = (digits >> (16 * (lead & 3))) & keep;
            let negative = ((x as u64) >> 63) & nonzero;
            let header = base | (top.wrapping_sub(lead) & keep & 0x7F) | negative << 13;
            let len = 2 * (4 - lead as i64 - trail as i64).max(0) as u64;
            *o = [((6 + len) << 2) | header << 32 | body << 48, body >> 16];
        }
    }

    /// The two words of the datum image (`short_images_into`) of the value whose four
    /// digits and sign are `digits`.
    #[inline(always)]
    pub fn image(&self, digits: u64) -> [u64; 2] {
        let (header, digits, len) = self.trimmed(digits);
        // The varlena header counts itself (4 bytes) and the numeric's 2-byte header.
        let size = (4 + 2 + len) as u64;
        [(size << 2) | (header as u64) << 32 | digits << 48, digits >> 16]
    }

    /// Four base-10000 digits of |m| < `short_limit()`, most significant first (in the
    /// low bits, as the bytes go), 16 bits each, the last one standing for 10^(-4 *
    /// frac): `rest` has three below the pad digit, four without one.
    #[inline(always)]
    fn short_digits<const PAD: u32>(&self, m: i64) -> u64 {
        debug_assert!(m.unsigned_abs() < self.short_limit());
        let mag = m.unsigned_abs();
        let (pad_digit, rest) = split_pad::<PAD, _>(mag);
        let q1 = rest / 10_000;
        let q2 = rest / 100_000_000;
        if PAD > 0 {
            q2 | (q1 - q2 * 10_000) << 16 | (rest - q1 * 10_000) << 32 | pad_digit << 48
        } else {
            let q3 = rest / 1_000_000_000_000;
            q3 | (q2 - q3 * 10_000) << 16 | (q1 - q2 * 10_000) << 32 | (rest - q1 * 10_000) << 48
        }
    }

    /// The short header and the digits of a value whose four digits and sign
    /// (`digits_into`) are `digits`, without leading and trailing zero ones, as the first
    /// `len` bytes of a little-endian u64: (header, digits, len).
    #[inline(always)]
    pub fn trimmed(&self, digits: u64) -> (u16, u64, usize) {
        let negative = (digits >> 63) as u16;
        let digits = digits & !SIGN_BIT;
        // Leading zero digits sit at the low end, trailing ones at the high end; zero
        // has four of each (and no digit left, nor a sign).
        let lead = digits.trailing_zeros() / 16;
        let trail = digits.leading_zeros() / 16;
        let negative = negative & (digits != 0) as u16;
        // Shifting zero by 64 wraps to 0 bits: its digits are all zero anyway.
        let body = digits.wrapping_shr(16 * lead);
        let header = self.short_headers[lead as usize] | negative << 13;
        (header, body, 2 * (4 - lead).saturating_sub(trail) as usize)
    }

    /// The bytes `write_canonical(m, dscale)` appends, as the first `len` bytes of a
    /// little-endian u128 (built in registers: a store per byte and a wide load after
    /// them would stall on store forwarding), and `len`.
    #[inline(always)]
    pub fn bytes(&self, m: i64) -> (u128, usize) {
        match self.pad {
            0 => self.bytes_padded::<0>(m),
            1 => self.bytes_padded::<1>(m),
            2 => self.bytes_padded::<2>(m),
            _ => self.bytes_padded::<3>(m),
        }
    }

    #[inline(always)]
    fn bytes_padded<const PAD: u32>(&self, m: i64) -> (u128, usize) {
        // Base-10000 digits of |m| * 10^PAD, least significant first, 16 bits each
        // (as in `write_canonical`); |m| < 2^63 has at most 19 decimal digits, so six
        // do. Each comes from its own division by a constant (a multiplication), with no
        // branch on how many there are: digit counts vary from value to value.
        let mag = m.unsigned_abs();
        let (pad_digit, rest) = split_pad::<PAD, _>(mag);
        let q1 = rest / 10_000;
        let q2 = rest / 100_000_000;
        let q3 = rest / 1_000_000_000_000;
        let q4 = rest / 10_000_000_000_000_000;
        // q4 < 2^64 / 10^16 < 10_000: the top digit.
        let low_four = (rest - q1 * 10_000)
            | (q1 - q2 * 10_000) << 16
            | (q2 - q3 * 10_000) << 32
            | (q3 - q4 * 10_000) << 48;
        let whole = low_four as u128 | (q4 as u128) << 64;
        let digits = if PAD > 0 { whole << 16 | pad_digit as u128 } else { whole };
        // Digits without the trailing (low) and leading (high) zero ones.
        let low = digits.trailing_zeros() / 16;
        let high = (128 - digits.leading_zeros()).div_ceil(16);
        let (negative, weight) = if digits == 0 { (false, 0) } else { (m < 0, high as i32 - 1 - self.frac) };
        // Most significant first: the 16-bit units reversed (bytes reversed, then the
        // two bytes of each unit back), the top digit moved to the bottom.
        let reversed = digits.swap_bytes();
        let reversed = ((reversed >> 8) & UNIT_LOW_BYTES) | ((reversed & UNIT_LOW_BYTES) << 8);
        let body = if digits == 0 { 0 } else { reversed >> (16 * (8 - high)) };
        let count = (high - low.min(high)) as usize;
        // An i64 mantissa's weight lies within -17..=5 when the display scale fits the
        // short header, so the scale alone decides (as NUMERIC_CAN_BE_SHORT would).
        if self.dscale <= 0x3F {
            debug_assert!((-64..=63).contains(&weight));
            let header = SHORT
                | if negative { 0x2000 } else { 0 }
                | (self.dscale << 7)
                | if weight < 0 { 0x40 } else { 0 }
                | (weight as u16 & 0x3F);
            (header as u128 | body << 16, 2 + 2 * count)
        } else {
            let header = (if negative { NEG } else { 0 } | self.dscale) as u128
                | ((weight as i16 as u16 as u128) << 16);
            (header | body << 32, 4 + 2 * count)
        }
    }
}

/// The bit of four base-10000 digits (`ScaleWriter::digits_into`) that holds the
/// value's sign: the top one of the leading digit, which is below 10000 < 2^15.
const SIGN_BIT: u64 = 1 << 63;

/// Four digits of |m| with m's sign in `SIGN_BIT`.
#[inline(always)]
fn signed(digits: u64, m: i64) -> u64 {
    digits | (m as u64 & SIGN_BIT)
}

/// A magnitude whose last base-10000 digit is padded by `PAD` decimal places, split
/// into that padded digit and the magnitude above it (all of it when `PAD` is 0).
#[inline(always)]
fn split_pad<const PAD: u32, T>(mag: T) -> (T, T)
where
    T: Copy + From<u16> + std::ops::Div<Output = T> + std::ops::Rem<Output = T> + std::ops::Mul<Output = T>,
{
    if PAD == 0 {
        return (T::from(0), mag);
    }
    let unit = T::from(10u16.pow(4 - PAD));
    ((mag % unit) * T::from(10u16.pow(PAD)), mag / unit)
}

/// `short_padded`'s four digits of a magnitude below 2^32, in 32-bit arithmetic only
/// (the last digit padded by `PAD` decimal places).
#[inline(always)]
fn small_digits<const PAD: u32>(mag: u32) -> u64 {
    let (pad_digit, rest) = split_pad::<PAD, _>(mag);
    let q1 = rest / 10_000;
    let q2 = q1 / 10_000;
    let (d1, d2, d3) = ((rest - q1 * 10_000) as u64, (q1 - q2 * 10_000) as u64, q2 as u64);
    // Without a pad digit the last of the four is `rest`'s lowest, and the first zero.
    if PAD > 0 {
        d3 | d2 << 16 | d1 << 32 | (pad_digit as u64) << 48
    } else {
        d3 << 16 | d2 << 32 | d1 << 48
    }
}

/// The low byte of every 16-bit unit of a u128.
const UNIT_LOW_BYTES: u128 = 0x00FF_00FF_00FF_00FF_00FF_00FF_00FF_00FF;

/// `cmp_numerics`: the order of two parsed numerics.
pub fn cmp(a: &Parsed, b: &Parsed) -> Ordering {
    use Parsed::*;
    let rank = |p: &Parsed| match p {
        NegInf => 0,
        Finite { .. } => 1,
        PosInf => 2,
        NaN => 3,
    };
    match (a, b) {
        (
            Finite { negative: an, weight: aw, digits: ad, .. },
            Finite { negative: bn, weight: bw, digits: bd, .. },
        ) => {
            // cmp_var_common: a value without digits is zero, whatever its sign bit.
            let (a_zero, b_zero) = (is_zero(ad), is_zero(bd));
            match (a_zero, b_zero) {
                (true, true) => Ordering::Equal,
                (true, false) => {
                    if *bn {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    }
                }
                (false, true) => {
                    if *an {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                }
                (false, false) => match (an, bn) {
                    (false, true) => Ordering::Greater,
                    (true, false) => Ordering::Less,
                    (false, false) => cmp_abs(*aw, ad, *bw, bd),
                    (true, true) => cmp_abs(*bw, bd, *aw, ad),
                },
            }
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// The stored numeric bytes `a` against `b`; None if either is no numeric.
pub fn cmp_bytes(a: &[u8], b: &[u8]) -> Option<Ordering> {
    Some(cmp(&parse(a)?, &parse(b)?))
}

fn digit(d: &[u8], i: usize) -> u16 {
    d.get(2 * i..2 * i + 2).map_or(0, |x| u16::from_le_bytes([x[0], x[1]]))
}

fn is_zero(d: &[u8]) -> bool {
    d.chunks_exact(2).all(|x| x == [0, 0])
}

/// cmp_abs_common: absolute values of base-10000 digit strings, the first digit of each
/// at exponent `weight`; missing digits are zeros, so leading and trailing zeros (never
/// stored, but harmless) do not change the answer.
fn cmp_abs(aw: i32, ad: &[u8], bw: i32, bd: &[u8]) -> Ordering {
    let (an, bn) = (ad.len() as i32 / 2, bd.len() as i32 / 2);
    let top = aw.max(bw);
    let bottom = (aw - an + 1).min(bw - bn + 1);
    let at = |w: i32, d: &[u8], e: i32| {
        if e > w || e <= w - d.len() as i32 / 2 {
            0
        } else {
            digit(d, (w - e) as usize)
        }
    };
    for e in (bottom..=top).rev() {
        match at(aw, ad, e).cmp(&at(bw, bd, e)) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

/// For tests: make_result's bytes of a decimal literal ("NaN", "Infinity",
/// "-Infinity" too).
#[cfg(test)]
pub fn stored_literal(text: &str) -> Vec<u8> {
    match text {
        "NaN" => return 0xC000u16.to_le_bytes().to_vec(),
        "Infinity" => return 0xD000u16.to_le_bytes().to_vec(),
        "-Infinity" => return 0xF000u16.to_le_bytes().to_vec(),
        _ => {}
    }
    let neg = text.starts_with('-');
    let t = text.trim_start_matches('-');
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let m: i128 = format!("{int}{frac}").parse().unwrap();
    let mut out = Vec::new();
    write_canonical(if neg { -m } else { m }, frac.len() as u16, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes form of the images equals the scalar one for every padding, sign and
    /// count of zero digits at either end, word for word.
    #[test]
    fn image_lanes_equal_scalar_images() {
        let mut m = vec![0i64, 1, -1, 99, 100, 9_999, 10_000, 10_001, 100_000_000, i32::MAX as i64];
        m.extend([-(i32::MAX as i64), 1_000_000, 20_000_000, 300_000_000, 1_000_000_000]);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = ((x >> (x % 40)) % (1 << 31)) as i64;
            let round = 10i64.pow((x % 9) as u32);
            m.extend([v, -v, v / round * round]);
        }
        for dscale in 0..=12 {
            let w = ScaleWriter::new(dscale);
            let scalar: Vec<[u64; 2]> = m
                .iter()
                .map(|&x| {
                    let mag = x.unsigned_abs() as u32;
                    let d = match w.pad {
                        0 => small_digits::<0>(mag),
                        1 => small_digits::<1>(mag),
                        2 => small_digits::<2>(mag),
                        _ => small_digits::<3>(mag),
                    };
                    w.image(signed(d, x))
                })
                .collect();
            let mut lanes = vec![[0u64; 2]; m.len()];
            match w.pad {
                0 => w.small_images_lanes::<0>(&m, &mut lanes),
                1 => w.small_images_lanes::<1>(&m, &mut lanes),
                2 => w.small_images_lanes::<2>(&m, &mut lanes),
                _ => w.small_images_lanes::<3>(&m, &mut lanes),
            }
            for i in 0..m.len() {
                assert_eq!(lanes[i], scalar[i], "{} at scale {dscale}", m[i]);
            }
            // And the vector call, which takes the AVX2 form where the CPU has it.
            let mut images = Vec::new();
            w.short_images_into(&m, &mut images);
            assert_eq!(images, scalar, "scale {dscale}");
        }
    }

    /// Stored bytes of numerics as PostgreSQL writes them (long header: sign|dscale, weight).
    fn long(negative: bool, weight: i16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = ((if negative { 0x4000 } else { 0 }) | dscale).to_le_bytes().to_vec();
        b.extend_from_slice(&weight.to_le_bytes());
        digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b
    }

    /// Short header (what PostgreSQL 15 stores for small weights and scales).
    fn short(negative: bool, weight: i8, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let w = (weight as i16 as u16) & 0x7F;
        let h = 0x8000 | if negative { 0x2000 } else { 0 } | (dscale << 7) | w;
        let mut b = h.to_le_bytes().to_vec();
        digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b
    }

    fn canonical(m: i128, dscale: u16) -> Vec<u8> {
        let mut out = Vec::new();
        write_canonical(m, dscale, &mut out);
        out
    }

    #[test]
    fn canonical_bytes_are_make_results() {
        // The bytes PostgreSQL 15 stores for these literals (numeric_send's digits,
        // with the short header make_result picks).
        assert_eq!(canonical(150, 2), short(false, 0, 2, &[1, 5000])); // 1.50
        assert_eq!(canonical(-5, 2), short(true, -1, 2, &[500])); // -0.05
        assert_eq!(canonical(0, 2), short(false, 0, 2, &[])); // 0.00
        assert_eq!(canonical(0, 0), short(false, 0, 0, &[])); // 0
        assert_eq!(canonical(10000, 0), short(false, 1, 0, &[1])); // 10000
        assert_eq!(canonical(1234567, 3), short(false, 0, 3, &[1234, 5670])); // 1234.567
        assert_eq!(canonical(1, 8), short(false, -2, 8, &[1])); // 0.00000001
        assert_eq!(canonical(1, 7), short(false, -2, 7, &[10])); // 0.0000001
        assert_eq!(canonical(12, 1), short(false, 0, 1, &[1, 2000])); // 1.2
                                                                      // Display scale 64 or weight 64 need the long header.
        assert_eq!(canonical(1, 64), long(false, -16, 64, &[1]));
        assert_eq!(canonical(-1, 70), long(true, -18, 70, &[100]));
        let big = 10i128.pow(38);
        assert_eq!(canonical(big, 0), short(false, 9, 0, &[100]));
        assert_eq!(canonical(i128::MIN + 1, 0)[..2], 0xA009u16.to_le_bytes()); // short, negative, weight 9
                                                                               // scaled() reads them back.
        for (m, s) in
            [(150, 2), (-5, 2), (0, 2), (10000, 0), (1234567, 3), (1, 64), (big, 0), (i64::MIN as i128, 7)]
        {
            let b = canonical(m, s);
            let Some(Parsed::Finite { negative, weight, dscale, digits }) = parse(&b) else { panic!() };
            assert_eq!(scaled(negative, weight, dscale, digits), Some((m, s)), "{m} {s}");
        }
    }

    #[test]
    fn scale_writer_writes_make_results_bytes() {
        // Every display scale a padding and header class has, mantissas at every digit
        // count, their negatives, zero and the i64 extremes.
        let mut mantissas =
            vec![0i64, 1, -1, 9, 10, 99, 100, 9999, 10_000, 10_001, 123_456_789, i64::MAX, i64::MIN];
        // Either side of every short limit.
        for e in [9, 10, 12, 13, 14, 15, 16] {
            let p = 10i64.pow(e);
            mantissas.extend([p - 1, p, p + 1, 1 - p, -p]);
        }
        for b in [31, 32, 43, 44] {
            let p = 1i64 << b;
            mantissas.extend([p - 1, p, p + 1, 1 - p, -p, -p - 1]);
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Magnitudes of every width, and round ones (trailing zero digits).
            let m = (x >> (x % 64)) as i64;
            let round = 10i64.pow((x % 9) as u32);
            mantissas.extend([m, -m, m / round * round, -(m / round) * round]);
        }
        for dscale in (0..=70).chain([1000, DSCALE_MAX]) {
            let writer = ScaleWriter::new(dscale);
            for &m in &mantissas {
                let (bytes, n) = writer.bytes(m);
                let stored = canonical(m as i128, dscale);
                assert_eq!(&bytes.to_le_bytes()[..n], &stored[..], "{m} at scale {dscale}");
                let vector = [m];
                if writer.short_applies(&vector) {
                    let mut images = Vec::new();
                    writer.short_images_into(&vector, &mut images);
                    let bytes: Vec<u8> = images[0].iter().flat_map(|w| w.to_le_bytes()).collect();
                    let size = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize >> 2;
                    assert_eq!(size, 4 + stored.len(), "{m} at scale {dscale}");
                    assert_eq!(&bytes[4..size], &stored[..], "{m} at scale {dscale}");
                    let mut digits = Vec::new();
                    writer.digits_into(&vector, &mut digits);
                    let (header, digits, n) = writer.trimmed(digits[0]);
                    assert_eq!(&header.to_le_bytes()[..], &stored[..2], "{m} at scale {dscale}");
                    assert_eq!(&digits.to_le_bytes()[..n], &stored[2..], "{m} at scale {dscale}");
                }
                if m.unsigned_abs() < writer.short_limit() {
                    let (header, digits, n) = writer.short_bytes(m);
                    assert_eq!(&header.to_le_bytes()[..], &stored[..2], "{m} at scale {dscale}");
                    assert_eq!(&digits.to_le_bytes()[..n], &stored[2..], "{m} at scale {dscale}");
                }
            }
        }
    }

    #[test]
    fn order_follows_cmp_numerics() {
        // Ascending, with equal neighbours noted: -Infinity, -12345.6, -1, -0.5, 0, 0.00,
        // 0.0001, 1, 1.00, 1.5, 9999, 10000, 123456789.01, +Infinity, NaN.
        let nan = 0xC000u16.to_le_bytes().to_vec();
        let pinf = 0xD000u16.to_le_bytes().to_vec();
        let ninf = 0xF000u16.to_le_bytes().to_vec();
        let values: Vec<(Vec<u8>, u32)> = vec![
            (ninf, 0),
            (short(true, 1, 1, &[1, 2345, 6000]), 1),
            (short(true, 0, 0, &[1]), 2),
            (short(true, -1, 1, &[5000]), 3),
            (short(false, 0, 0, &[]), 4),
            (short(false, 0, 2, &[]), 4),
            (short(false, -1, 4, &[1]), 5),
            (short(false, 0, 0, &[1]), 6),
            (long(false, 0, 2, &[1]), 6),
            (short(false, 0, 1, &[1, 5000]), 7),
            (short(false, 0, 0, &[9999]), 8),
            (short(false, 1, 0, &[1]), 9),
            (long(false, 2, 2, &[1, 2345, 6789, 100]), 10),
            (pinf, 11),
            (nan, 12),
        ];
        for (a, ra) in &values {
            for (b, rb) in &values {
                assert_eq!(cmp_bytes(a, b), Some(ra.cmp(rb)), "{a:?} vs {b:?}");
            }
        }
        assert_eq!(cmp_bytes(&[0x01], &values[0].0), None);
    }
}
