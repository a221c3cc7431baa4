//! `numeric` values as scaled integers: a finite value is a mantissa and a display scale
//! (value = m / 10^scale), which is exact for every numeric whose digits fit 128 bits.
//! `+`, `-`, `*` and unary minus follow numeric_add / numeric_sub / numeric_mul /
//! numeric_uminus exactly: the result's display scale is the larger of the operands'
//! (add, sub) or their sum (mul), and NaN and ±Infinity (PostgreSQL 15) combine as
//! numeric.c combines them. A value or result that does not fit is `None` here: the
//! caller then computes it with PostgreSQL's own functions (`eval::NumericFallback`).
//! Pure.

use crate::exec::agg::numeric::{parse, Parsed};
use crate::storage::format::numeric::scaled;

/// A numeric value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Num {
    Fin { m: i128, scale: u16 },
    NaN,
    PosInf,
    NegInf,
}

pub use crate::storage::format::numeric::{pow10, wide_mul, DSCALE_MAX};

impl Num {
    pub const ZERO: Num = Num::Fin { m: 0, scale: 0 };

    /// The numeric whose stored bytes (after the varlena header) are `b`; None if it
    /// does not fit 128 bits at its display scale (or the bytes are no numeric).
    pub fn from_stored(b: &[u8]) -> Option<Num> {
        let (negative, weight, dscale, digits) = match parse(b)? {
            Parsed::NaN => return Some(Num::NaN),
            Parsed::PosInf => return Some(Num::PosInf),
            Parsed::NegInf => return Some(Num::NegInf),
            Parsed::Finite { negative, weight, dscale, digits } => (negative, weight, dscale, digits),
        };
        let (m, scale) = scaled(negative, weight, dscale, digits)?;
        Some(Num::Fin { m, scale })
    }

    /// The stored bytes of this value (the long format, which every reader of a
    /// numeric reads), with its display scale.
    pub fn to_stored(self) -> Vec<u8> {
        let (m, scale) = match self {
            Num::NaN => return 0xC000u16.to_le_bytes().to_vec(),
            Num::PosInf => return 0xD000u16.to_le_bytes().to_vec(),
            Num::NegInf => return 0xF000u16.to_le_bytes().to_vec(),
            Num::Fin { m, scale } => (m, scale),
        };
        // Base-10000 digits of |m| * 10^pad, the point between digits.
        let pad = (4 - scale as u32 % 4) % 4;
        let mut mag = m.unsigned_abs();
        let mut digits: Vec<u16> = Vec::new(); // least significant first
                                               // |m| * 10^pad may not fit u128: make the padded low digit first.
        if pad > 0 {
            let unit = 10u128.pow(4 - pad);
            digits.push(((mag % unit) * 10u128.pow(pad)) as u16);
            mag /= unit;
        }
        while mag > 0 {
            digits.push((mag % 10_000) as u16);
            mag /= 10_000;
        }
        let frac_digits = (scale as i32 + pad as i32) / 4;
        // Strip zero digits at both ends (as make_result does), moving the weight.
        let mut low = 0;
        while low < digits.len() && digits[low] == 0 {
            low += 1;
        }
        let mut high = digits.len();
        while high > low && digits[high - 1] == 0 {
            high -= 1;
        }
        let (weight, sign) = if low == high {
            (0i16, 0u16)
        } else {
            ((high as i32 - 1 - frac_digits) as i16, if m < 0 { 0x4000 } else { 0 })
        };
        let mut out = (sign | scale).to_le_bytes().to_vec();
        out.extend_from_slice(&weight.to_le_bytes());
        for &d in digits[low..high].iter().rev() {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out
    }

    /// numeric_out's text of this value.
    pub fn text(self) -> String {
        match self {
            Num::NaN => "NaN".into(),
            Num::PosInf => "Infinity".into(),
            Num::NegInf => "-Infinity".into(),
            Num::Fin { m, scale } => scaled_text(m, scale),
        }
    }

    fn sign(self) -> i32 {
        match self {
            Num::Fin { m, .. } => m.signum() as i32,
            Num::PosInf => 1,
            Num::NegInf => -1,
            Num::NaN => 0,
        }
    }

    fn infinity(sign: i32) -> Num {
        if sign > 0 {
            Num::PosInf
        } else {
            Num::NegInf
        }
    }

    /// numeric_add.
    pub fn checked_add(self, other: Num) -> Option<Num> {
        use Num::*;
        Some(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf, NegInf) | (NegInf, PosInf) => NaN,
            (PosInf, _) | (_, PosInf) => PosInf,
            (NegInf, _) | (_, NegInf) => NegInf,
            (Fin { m: a, scale: s }, Fin { m: b, scale: t }) => {
                let (a, b, scale) = aligned(a, s, b, t)?;
                Fin { m: a.checked_add(b)?, scale }
            }
        })
    }

    /// numeric_sub.
    pub fn checked_sub(self, other: Num) -> Option<Num> {
        use Num::*;
        Some(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf, PosInf) | (NegInf, NegInf) => NaN,
            (PosInf, _) | (_, NegInf) => PosInf,
            (NegInf, _) | (_, PosInf) => NegInf,
            (Fin { m: a, scale: s }, Fin { m: b, scale: t }) => {
                let (a, b, scale) = aligned(a, s, b, t)?;
                Fin { m: a.checked_sub(b)?, scale }
            }
        })
    }

    /// numeric_mul: the display scale is the sum of the operands' (the product is exact).
    pub fn checked_mul(self, other: Num) -> Option<Num> {
        use Num::*;
        Some(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (Fin { m: a, scale: s }, Fin { m: b, scale: t }) => {
                let scale = s.checked_add(t).filter(|&x| x <= DSCALE_MAX)?;
                Fin { m: wide_mul(a, b)?, scale }
            }
            // An infinity times zero is NaN; otherwise the signs multiply.
            (x, y) => match x.sign() * y.sign() {
                0 => NaN,
                s => Num::infinity(s),
            },
        })
    }

    /// numeric_mod: x - trunc(x / y) * y, exactly, at the larger display scale (mod_var);
    /// NaN from NaN or an infinite dividend, the dividend itself for an infinite divisor.
    /// Err for a zero divisor (core's "division by zero", also of an infinity); None if
    /// the operands do not fit at a common scale.
    pub fn checked_rem(self, other: Num) -> Result<Option<Num>, DivisionByZero> {
        use Num::*;
        Ok(Some(match (self, other) {
            (NaN, _) | (_, NaN) => NaN,
            (PosInf | NegInf, y) if y.sign() == 0 => return Err(DivisionByZero),
            (PosInf | NegInf, _) => NaN,
            (x, PosInf | NegInf) => x,
            (Fin { .. }, Fin { m: 0, .. }) => return Err(DivisionByZero),
            (Fin { m: a, scale: s }, Fin { m: b, scale: t }) => {
                let Some((a, b, scale)) = aligned(a, s, b, t) else { return Ok(None) };
                // Truncating division: the remainder has the dividend's sign, as trunc()
                // gives (MIN % -1 is 0, and |b| >= 1 here).
                Fin { m: a.checked_rem(b).unwrap_or(0), scale }
            }
        }))
    }

    /// numeric_uminus.
    pub fn checked_neg(self) -> Option<Num> {
        Some(match self {
            Num::NaN => Num::NaN,
            Num::PosInf => Num::NegInf,
            Num::NegInf => Num::PosInf,
            Num::Fin { m, scale } => Num::Fin { m: m.checked_neg()?, scale },
        })
    }
}

/// A finite numeric rounded to an integer (half away from zero, as round_var does for
/// numeric_int4 & co.): None if it leaves 128 bits; `stored` is its stored bytes, used
/// for values whose mantissa does not fit (`n` None).
pub fn round_to_integer(n: Option<Num>, stored: &[u8]) -> Option<i128> {
    if let Some(Num::Fin { m, scale }) = n {
        let Some(p) = pow10(scale as u32) else { return Some(0) }; // |value| < 1e-1
        let (q, r) = (m / p, m % p);
        return Some(if r.unsigned_abs() * 2 >= p.unsigned_abs() { q + m.signum() } else { q });
    }
    let Some(Parsed::Finite { negative, weight, digits, .. }) = parse(stored) else { return None };
    let digit = |i: i32| -> i128 {
        if (0..digits.len() as i32 / 2).contains(&i) {
            u16::from_le_bytes([digits[2 * i as usize], digits[2 * i as usize + 1]]) as i128
        } else {
            0
        }
    };
    let mut int: i128 = 0;
    for i in 0..=weight {
        int = int.checked_mul(10_000)?.checked_add(digit(i))?;
    }
    // The first digit after the point decides (half away from zero).
    if digit(weight + 1) >= 5_000 {
        int = int.checked_add(1)?;
    }
    Some(if negative { -int } else { int })
}

/// A remainder's divisor was zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DivisionByZero;

/// Two mantissas brought to the larger of their scales, and that scale.
fn aligned(a: i128, s: u16, b: i128, t: u16) -> Option<(i128, i128, u16)> {
    let scale = s.max(t);
    let a = if s < scale { wide_mul(a, pow10((scale - s) as u32)?)? } else { a };
    let b = if t < scale { wide_mul(b, pow10((scale - t) as u32)?)? } else { b };
    Some((a, b, scale))
}

/// The decimal text of m / 10^scale with `scale` digits after the point (numeric_out's).
pub fn scaled_text(m: i128, scale: u16) -> String {
    let digits = m.unsigned_abs().to_string();
    let scale = scale as usize;
    let mut out = String::with_capacity(digits.len() + scale + 3);
    if m < 0 {
        out.push('-');
    }
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        if scale > 0 {
            out.push('.');
            out.push_str(frac);
        }
    } else {
        out.push('0');
        if scale > 0 {
            out.push('.');
            out.extend(std::iter::repeat_n('0', scale - digits.len()));
            out.push_str(&digits);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Num {
        if let Some(rest) = text.strip_prefix('-') {
            return n(rest).checked_neg().unwrap();
        }
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let m: i128 = format!("{int}{frac}").parse().unwrap();
        Num::Fin { m, scale: frac.len() as u16 }
    }

    #[test]
    fn results_and_scales_as_postgresql_gives_them() {
        // Each line: what PostgreSQL 15 printed for the same expression.
        assert_eq!(n("1.5").checked_add(n("2.25")).unwrap().text(), "3.75"); // 1.5 + 2.25
        assert_eq!(n("1").checked_sub(n("0.05")).unwrap().text(), "0.95"); // 1 - 0.05
        assert_eq!(n("1.10").checked_add(n("-1.1")).unwrap().text(), "0.00"); // 1.10 + -1.1
        assert_eq!(n("-0.05").checked_sub(n("-0.05")).unwrap().text(), "0.00");
        // 12345.67 * (1 - 0.04) * (1 + 0.02)
        let q1 = n("12345.67").checked_mul(n("1").checked_sub(n("0.04")).unwrap()).unwrap();
        assert_eq!(q1.text(), "11851.8432");
        assert_eq!(q1.checked_mul(n("1").checked_add(n("0.02")).unwrap()).unwrap().text(), "12088.880064");
        assert_eq!(n("0.10").checked_mul(n("0.10")).unwrap().text(), "0.0100"); // 0.10 * 0.10
        assert_eq!(n("-2.5").checked_mul(n("0")).unwrap().text(), "0.0"); // -2.5 * 0
        assert_eq!(n("3").checked_neg().unwrap().text(), "-3");
    }

    #[test]
    fn nan_and_infinities_combine_as_numeric_c() {
        use Num::*;
        let one = n("1");
        let zero = n("0.00");
        assert_eq!(PosInf.checked_add(NegInf), Some(NaN)); // 'Infinity' + '-Infinity'
        assert_eq!(PosInf.checked_add(one), Some(PosInf));
        assert_eq!(one.checked_sub(PosInf), Some(NegInf));
        assert_eq!(PosInf.checked_sub(PosInf), Some(NaN));
        assert_eq!(NegInf.checked_sub(PosInf), Some(NegInf));
        assert_eq!(PosInf.checked_mul(zero), Some(NaN)); // 'Infinity' * 0.00
        assert_eq!(n("-2").checked_mul(PosInf), Some(NegInf));
        assert_eq!(NegInf.checked_mul(NegInf), Some(PosInf));
        assert_eq!(NaN.checked_mul(zero), Some(NaN));
        assert_eq!(NaN.checked_add(PosInf), Some(NaN));
        assert_eq!(NegInf.checked_neg(), Some(PosInf));
    }

    #[test]
    fn overflow_is_none_for_postgresql_to_compute() {
        let big = Num::Fin { m: 10i128.pow(37), scale: 0 };
        assert_eq!(big.checked_mul(big), None);
        assert_eq!(big.checked_add(Num::Fin { m: 1, scale: 30 }), None);
        assert!(Num::Fin { m: 1, scale: 10000 }.checked_mul(Num::Fin { m: 1, scale: 10000 }).is_none());
    }

    #[test]
    fn wide_products_are_exact_or_none() {
        assert_eq!(wide_mul(i64::MAX as i128, i64::MIN as i128), Some(i64::MAX as i128 * i64::MIN as i128));
        assert_eq!(wide_mul(10i128.pow(30), 10i128.pow(8)), Some(10i128.pow(38)));
        assert_eq!(wide_mul(10i128.pow(30), 10i128.pow(9)), None);
        assert_eq!(wide_mul(-(10i128.pow(20)), 3), Some(-3 * 10i128.pow(20)));
    }

    #[test]
    fn stored_bytes_round_trip() {
        for text in
            ["0", "0.00", "1", "-1.5", "12345.6789", "0.0001", "10000", "-0.000012", "123456789012.34"]
        {
            let v = n(text);
            let stored = v.to_stored();
            assert_eq!(Num::from_stored(&stored), Some(v), "{text}");
            assert_eq!(Num::from_stored(&stored).unwrap().text(), text);
        }
        // The short format numeric_in writes: 1.50 is header 0x8100 | dscale 2 << 7,
        // weight 0, digits 1, 5000.
        let mut short = (0x8000u16 | (2 << 7)).to_le_bytes().to_vec();
        short.extend_from_slice(&1u16.to_le_bytes());
        short.extend_from_slice(&5000u16.to_le_bytes());
        assert_eq!(Num::from_stored(&short), Some(Num::Fin { m: 150, scale: 2 }));
        // 10^40 does not fit.
        let mut huge = 0u16.to_le_bytes().to_vec();
        huge.extend_from_slice(&10i16.to_le_bytes());
        huge.extend_from_slice(&1u16.to_le_bytes());
        assert_eq!(Num::from_stored(&huge), None);
        assert_eq!(Num::from_stored(&Num::NaN.to_stored()), Some(Num::NaN));
        assert_eq!(Num::from_stored(&Num::NegInf.to_stored()), Some(Num::NegInf));
    }
}
