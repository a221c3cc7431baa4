//! `numeric` values in their stored form (the datum's bytes after its varlena header):
//! parsed, and compared exactly as PostgreSQL's `cmp_numerics` compares them (NaN equal
//! to itself and above everything, then +Infinity; -Infinity below every finite value;
//! 1.0 equal to 1.00), without calling PostgreSQL. Pure.

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

#[cfg(test)]
mod tests {
    use super::*;

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
