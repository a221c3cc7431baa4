//! Exact sums of `numeric` values read in their stored form (the datum's bytes after its
//! varlena header), for sum(numeric) and avg(numeric). Like PostgreSQL's own
//! accumulator, the sum keeps one signed counter per base-10000 digit position and adds
//! digits without carrying; carries are settled once, when the result is made. NaN and
//! infinities are counted apart, as numeric_avg_accum does. Pure.

use crate::storage::format::numeric::NEG;
#[cfg(test)]
use crate::storage::format::numeric::SHORT;
pub use crate::storage::format::numeric::{parse, Parsed};

/// How two stored numerics compare (cmp_numerics): by value, NaN above everything and
/// equal to itself, the infinities beyond every finite value. Bytes that are no numeric
/// compare as NaN.
pub fn cmp_stored(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // (class, sign, weight, digits) where class orders -Inf < finite < +Inf < NaN.
    let key = |b: &[u8]| -> (i8, i8, i32, Vec<u16>) {
        match parse(b) {
            Some(Parsed::Finite { negative, weight, digits, .. }) => {
                let mut d: Vec<u16> =
                    digits.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
                let mut weight = weight;
                while d.first() == Some(&0) {
                    d.remove(0);
                    weight -= 1;
                }
                while d.last() == Some(&0) {
                    d.pop();
                }
                let sign = if d.is_empty() {
                    0
                } else if negative {
                    -1
                } else {
                    1
                };
                (1, sign, weight, d)
            }
            Some(Parsed::NegInf) => (0, 0, 0, Vec::new()),
            Some(Parsed::PosInf) => (2, 0, 0, Vec::new()),
            Some(Parsed::NaN) | None => (3, 0, 0, Vec::new()),
        }
    };
    let (ca, sa, wa, da) = key(a);
    let (cb, sb, wb, db) = key(b);
    if ca != cb || ca != 1 {
        return ca.cmp(&cb);
    }
    if sa != sb || sa == 0 {
        return sa.cmp(&sb);
    }
    let magnitude = wa.cmp(&wb).then_with(|| da.cmp(&db));
    if sa < 0 {
        magnitude.reverse()
    } else {
        magnitude
    }
}

/// A running sum of numerics: numeric_avg_accum's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DecimalSum {
    /// Inputs (NaN and infinities included), as its N.
    pub n: i64,
    pub nan: i64,
    pub pos_inf: i64,
    pub neg_inf: i64,
    /// Largest display scale of the finite inputs (the sum's), and how many of them had
    /// it: numeric_avg_accum's maxScale and maxScaleCount.
    pub dscale: u16,
    pub max_scale_count: i64,
    /// Per base-10000 exponent from `low` up, the sum of the digits there (signed).
    slots: Vec<i64>,
    low: i32,
    /// Digits added since carries were last settled.
    unsettled: u32,
}

impl DecimalSum {
    /// Adds a stored numeric; false for bytes no numeric has.
    pub fn add(&mut self, bytes: &[u8]) -> bool {
        self.add_n(bytes, 1)
    }

    /// Adds the sum of `inputs` finite numerics of one display scale, given as a stored
    /// numeric of that scale: the state `inputs` calls of `add` leave (NaN and the
    /// infinities are never given so); false for bytes no numeric has.
    pub fn add_n(&mut self, bytes: &[u8], inputs: i64) -> bool {
        let Some(p) = parse(bytes) else { return false };
        let (negative, weight, dscale, digits) = match p {
            Parsed::NaN => {
                self.n += inputs;
                self.nan += 1;
                return true;
            }
            Parsed::PosInf => {
                self.n += inputs;
                self.pos_inf += 1;
                return true;
            }
            Parsed::NegInf => {
                self.n += inputs;
                self.neg_inf += 1;
                return true;
            }
            Parsed::Finite { negative, weight, dscale, digits } => (negative, weight, dscale, digits),
        };
        let count = digits.len() / 2;
        let digit = |i: usize| u16::from_le_bytes([digits[2 * i], digits[2 * i + 1]]);
        self.add_finite(negative, weight, dscale, count, digit, inputs);
        true
    }

    /// Adds a finite value given as base-10000 digits (most significant first, the
    /// first at exponent `weight`) with display scale `dscale` (which may pass a stored
    /// numeric's limit: a square's is twice its root's), counted as `inputs` inputs.
    pub fn add_digits(&mut self, negative: bool, weight: i32, dscale: u16, digits: &[u16], inputs: i64) {
        self.add_finite(negative, weight, dscale, digits.len(), |i| digits[i], inputs);
    }

    /// Adds the square of the stored finite numeric `bytes` (display scale twice its
    /// own, as do_numeric_accum's mul_var(X, X, X2, X.dscale * 2) makes it, exactly);
    /// false for bytes that are no finite numeric.
    pub fn add_square(&mut self, bytes: &[u8]) -> bool {
        let Some(Parsed::Finite { weight, dscale, digits, .. }) = parse(bytes) else { return false };
        let d: Vec<u64> = digits.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as u64).collect();
        // Position p of the product holds exponent 2 * weight + 1 - p: digits i and j
        // (exponents weight - i and weight - j) meet at position i + j + 1.
        let mut r = vec![0u64; 2 * d.len()];
        for (i, &a) in d.iter().enumerate() {
            for (j, &b) in d.iter().enumerate() {
                r[i + j + 1] += a * b;
            }
        }
        let mut carry = 0;
        for v in r.iter_mut().rev() {
            let t = *v + carry;
            *v = t % 10_000;
            carry = t / 10_000;
        }
        let square: Vec<u16> = r.iter().map(|&v| v as u16).collect();
        self.add_digits(false, 2 * weight + 1, dscale.saturating_mul(2), &square, 1);
        true
    }

    /// Adds `count` digits (`digit(i)`, most significant first, the first at exponent
    /// `weight`) with display scale `dscale`, counted as `inputs` inputs.
    fn add_finite(
        &mut self,
        negative: bool,
        weight: i32,
        dscale: u16,
        count: usize,
        digit: impl Fn(usize) -> u16,
        inputs: i64,
    ) {
        self.n += inputs;
        if dscale > self.dscale {
            self.dscale = dscale;
            self.max_scale_count = inputs;
        } else if dscale == self.dscale {
            self.max_scale_count += inputs;
        }
        if count == 0 {
            return;
        }
        let count = count as i32;
        // Exponents weight down to weight - count + 1.
        self.cover(weight - count + 1, weight);
        let sign = if negative { -1 } else { 1 };
        for i in 0..count {
            self.slots[(weight - i - self.low) as usize] += sign * digit(i as usize) as i64;
        }
        self.unsettled += 1;
        // Each add moves a slot by less than 2^14: 2^26 of them stay far inside an i64.
        if self.unsettled >= 1 << 26 {
            self.settle();
        }
    }

    /// Makes slots for exponents `lo..=hi`.
    fn cover(&mut self, lo: i32, hi: i32) {
        if self.slots.is_empty() {
            self.low = lo;
            self.slots.resize((hi - lo + 1) as usize, 0);
            return;
        }
        if lo < self.low {
            let extra = (self.low - lo) as usize;
            self.slots.splice(0..0, std::iter::repeat_n(0, extra));
            self.low = lo;
        }
        let top = self.low + self.slots.len() as i32 - 1;
        if hi > top {
            self.slots.resize(self.slots.len() + (hi - top) as usize, 0);
        }
    }

    /// Carries every slot into the next: each below the top holds 0..=9999, the top one
    /// (a new one if need be) what is left, with the total's sign.
    fn settle(&mut self) {
        let (digits, carry) = carried(&self.slots);
        self.slots = digits;
        if carry != 0 {
            self.slots.push(carry);
        }
        self.unsettled = 0;
    }

    /// The sum as PostgreSQL's numeric input syntax, with `dscale` digits after the
    /// point: "NaN", "Infinity" and "-Infinity" as numeric_sum gives them. None without
    /// inputs (the sum is NULL).
    pub fn text(&self) -> Option<String> {
        if self.n == 0 {
            return None;
        }
        if self.nan > 0 || (self.pos_inf > 0 && self.neg_inf > 0) {
            return Some("NaN".into());
        }
        if self.pos_inf > 0 {
            return Some("Infinity".into());
        }
        if self.neg_inf > 0 {
            return Some("-Infinity".into());
        }
        let (negative, digits, low) = self.magnitude();
        // Decimal digits, from exponent `low` (base 10^4) up; most significant first.
        let mut int_part = String::new();
        let mut frac_part = String::new();
        for (i, d) in digits.iter().enumerate().rev() {
            let e = low + i as i32;
            let four = format!("{d:04}");
            if e >= 0 {
                int_part.push_str(&four);
            } else {
                frac_part.push_str(&four);
            }
        }
        // Fraction slots between the lowest stored one and the point, and integer
        // slots between the point and the lowest one, are zeros.
        if low > 0 {
            int_part.push_str(&"0000".repeat(low as usize));
        }
        let top = low + digits.len() as i32 - 1;
        if top < -1 {
            frac_part.insert_str(0, &"0000".repeat((-1 - top) as usize));
        }
        let int_part = int_part.trim_start_matches('0');
        let frac: String =
            frac_part.chars().chain(std::iter::repeat('0')).take(self.dscale as usize).collect();
        let zero = int_part.is_empty() && frac.chars().all(|c| c == '0');
        let mut out = String::new();
        if negative && !zero {
            out.push('-');
        }
        out.push_str(if int_part.is_empty() { "0" } else { int_part });
        if self.dscale > 0 {
            out.push('.');
            out.push_str(&frac);
        }
        Some(out)
    }

    /// The sum's sign, and its magnitude's digits (0..=9999, least significant first,
    /// from exponent `low`).
    fn magnitude(&self) -> (bool, Vec<i64>, i32) {
        let (mut digits, carry) = carried(&self.slots);
        let negative = carry < 0;
        let carry = if negative {
            // The total is below zero: carry its negation instead.
            let negated: Vec<i64> = self.slots.iter().map(|v| -v).collect();
            let (d, c) = carried(&negated);
            digits = d;
            c
        } else {
            carry
        };
        let mut c = carry;
        while c != 0 {
            digits.push(c % 10_000);
            c /= 10_000;
        }
        (negative, digits, self.low)
    }
}

impl DecimalSum {
    /// The sum as numericvar_serialize writes what accum_sum_final makes of it: the
    /// count of base-10000 digits without leading or trailing zero ones, the weight,
    /// the sign and the display scale (int32 each), then the digits (int16 each); all
    /// big-endian.
    pub fn write_var(&self, out: &mut Vec<u8>) {
        let (negative, digits, low) = self.magnitude();
        let top = digits.iter().rposition(|&d| d != 0);
        let bottom = digits.iter().position(|&d| d != 0);
        match (top, bottom) {
            (Some(top), Some(bottom)) => {
                out.extend_from_slice(&((top - bottom + 1) as i32).to_be_bytes());
                out.extend_from_slice(&(low + top as i32).to_be_bytes());
                out.extend_from_slice(&(if negative { NEG as i32 } else { 0 }).to_be_bytes());
                out.extend_from_slice(&(self.dscale as i32).to_be_bytes());
                for &d in digits[bottom..=top].iter().rev() {
                    out.extend_from_slice(&(d as i16).to_be_bytes());
                }
            }
            _ => {
                out.extend_from_slice(&0i32.to_be_bytes());
                out.extend_from_slice(&0i32.to_be_bytes());
                out.extend_from_slice(&0i32.to_be_bytes());
                out.extend_from_slice(&(self.dscale as i32).to_be_bytes());
            }
        }
    }

    /// The state as numeric_avg_serialize writes it, for a partial aggregate: the count
    /// of finite inputs, the sum as numericvar_serialize writes it (base-10000 digits
    /// without leading or trailing zero ones), the largest scale and how many inputs had
    /// it, and the NaN and infinity counts; all big-endian.
    pub fn serialized(&self) -> Vec<u8> {
        let finite = self.n - self.nan - self.pos_inf - self.neg_inf;
        let mut out = finite.to_be_bytes().to_vec();
        self.write_var(&mut out);
        out.extend_from_slice(&(self.dscale as i32).to_be_bytes());
        out.extend_from_slice(&self.max_scale_count.to_be_bytes());
        out.extend_from_slice(&self.nan.to_be_bytes());
        out.extend_from_slice(&self.pos_inf.to_be_bytes());
        out.extend_from_slice(&self.neg_inf.to_be_bytes());
        out
    }
}

/// `slots` with every carry moved up: digits in 0..=9999, and what the top one carries
/// out (negative when the total is).
fn carried(slots: &[i64]) -> (Vec<i64>, i64) {
    let mut carry = 0i64;
    let digits = slots
        .iter()
        .map(|&v| {
            let t = v + carry;
            carry = t.div_euclid(10_000);
            t.rem_euclid(10_000)
        })
        .collect();
    (digits, carry)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored (long format) bytes of a numeric given as sign, weight, dscale, digits.
    fn long(negative: bool, weight: i16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut b = ((if negative { NEG } else { 0 }) | dscale).to_le_bytes().to_vec();
        b.extend_from_slice(&weight.to_le_bytes());
        digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b
    }

    /// The short format PostgreSQL uses for most values.
    fn short(negative: bool, weight: i8, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let w = (weight as i16 as u16) & 0x7F;
        let header = SHORT | if negative { 0x2000 } else { 0 } | (dscale << 7) | w;
        let mut b = header.to_le_bytes().to_vec();
        digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
        b
    }

    fn sum(values: &[Vec<u8>]) -> String {
        let mut s = DecimalSum::default();
        for v in values {
            assert!(s.add(v));
        }
        s.text().unwrap()
    }

    #[test]
    fn parses_both_formats_and_specials() {
        assert_eq!(
            parse(&short(true, -1, 2, &[1200])),
            Some(Parsed::Finite { negative: true, weight: -1, dscale: 2, digits: &1200u16.to_le_bytes() })
        );
        assert!(matches!(parse(&long(false, 3, 0, &[1, 2])), Some(Parsed::Finite { weight: 3, .. })));
        assert_eq!(parse(&0xC000u16.to_le_bytes()), Some(Parsed::NaN));
        assert_eq!(parse(&0xD000u16.to_le_bytes()), Some(Parsed::PosInf));
        assert_eq!(parse(&0xF000u16.to_le_bytes()), Some(Parsed::NegInf));
        assert_eq!(parse(&[1]), None);
    }

    #[test]
    fn sums_keep_the_largest_scale_and_carry() {
        // 1.5 + 2.25 + 9999.99 = 10003.74
        let a = short(false, 0, 1, &[1, 5000]);
        let b = short(false, 0, 2, &[2, 2500]);
        let c = short(false, 0, 2, &[9999, 9900]);
        assert_eq!(sum(&[a.clone(), b.clone(), c]), "10003.74");
        // 1.5 - 2.25 = -0.75
        let neg_b = short(true, 0, 2, &[2, 2500]);
        assert_eq!(sum(&[a.clone(), neg_b.clone()]), "-0.75");
        // 2.25 - 2.25 = 0.00
        assert_eq!(sum(&[b, neg_b]), "0.00");
        // 10^40 + 1 - 10^40 (far beyond 128 bits) = 1
        let big = long(false, 10, 0, &[1]);
        let big_neg = long(true, 10, 0, &[1]);
        assert_eq!(sum(&[big.clone(), short(false, 0, 0, &[1]), big_neg]), "1");
        assert_eq!(sum(&[big]), format!("1{}", "0".repeat(40)));
        // 0.0001 * 3 with dscale 4, and a zero (no digits).
        let tiny = short(false, -1, 4, &[1]);
        assert_eq!(sum(&[tiny.clone(), tiny.clone(), tiny, short(false, 0, 0, &[])]), "0.0003");
        // -123456789.5 + 0.5 = -123456789.0
        let x = short(true, 2, 1, &[1, 2345, 6789, 5000]);
        assert_eq!(sum(&[x, short(false, -1, 1, &[5000])]), "-123456789.0");
    }

    #[test]
    fn states_serialize_as_numeric_avg_serialize_does() {
        let hex = |v: Vec<u8>| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let state = |values: &[Vec<u8>]| {
            let mut s = DecimalSum::default();
            values.iter().for_each(|v| assert!(s.add(v)));
            hex(s.serialized())
        };
        // The bytes numeric_avg_serialize gave on PostgreSQL 15 for these inputs.
        // 1.5 + 2.25 - 10000.5
        let (a, b, c) = (
            short(false, 0, 1, &[1, 5000]),
            short(false, 0, 2, &[2, 2500]),
            short(true, 1, 1, &[1, 0, 5000]),
        );
        assert_eq!(
            state(&[a, b.clone(), c]),
            "000000000000000300000002000000000000400000000002270c1d4c000000020000000000000001\
             000000000000000000000000000000000000000000000000"
        );
        // NaN, 2.25, Infinity, -Infinity, 3
        let (nan, pinf, ninf) = (
            0xC000u16.to_le_bytes().to_vec(),
            0xD000u16.to_le_bytes().to_vec(),
            0xF000u16.to_le_bytes().to_vec(),
        );
        assert_eq!(
            state(&[nan, b, pinf, ninf, short(false, 0, 0, &[3])]),
            "000000000000000200000002000000000000000000000002000509c4000000020000000000000001\
             000000000000000100000000000000010000000000000001"
        );
        // 0.00
        assert_eq!(
            state(&[short(false, 0, 2, &[])]),
            "0000000000000001000000000000000000000000000000020000000200000000000000010000000000000000\
             00000000000000000000000000000000"
        );
    }

    #[test]
    fn stored_numerics_compare_by_value() {
        use std::cmp::Ordering::*;
        let nan = 0xC000u16.to_le_bytes().to_vec();
        let pinf = 0xD000u16.to_le_bytes().to_vec();
        let ninf = 0xF000u16.to_le_bytes().to_vec();
        let one = short(false, 0, 0, &[1]);
        let one_00 = short(false, 0, 2, &[1]);
        let minus_two = short(true, 0, 0, &[2]);
        let tenk = short(false, 1, 0, &[1]);
        let half = short(false, -1, 1, &[5000]);
        let zero = short(false, 0, 2, &[]);
        assert_eq!(cmp_stored(&one, &one_00), Equal);
        assert_eq!(cmp_stored(&one, &tenk), Less);
        assert_eq!(cmp_stored(&half, &one), Less);
        assert_eq!(cmp_stored(&minus_two, &zero), Less);
        assert_eq!(cmp_stored(&minus_two, &short(true, 0, 0, &[1])), Less);
        assert_eq!(cmp_stored(&pinf, &tenk), Greater);
        assert_eq!(cmp_stored(&nan, &pinf), Greater);
        assert_eq!(cmp_stored(&nan, &nan), Equal);
        assert_eq!(cmp_stored(&ninf, &minus_two), Less);
        assert_eq!(cmp_stored(&long(false, 10, 0, &[1]), &tenk), Greater);
    }

    #[test]
    fn nan_and_infinities_win_as_in_numeric_sum() {
        let one = short(false, 0, 0, &[1]);
        let nan = 0xC000u16.to_le_bytes().to_vec();
        let pinf = 0xD000u16.to_le_bytes().to_vec();
        let ninf = 0xF000u16.to_le_bytes().to_vec();
        assert_eq!(sum(&[one.clone(), pinf.clone()]), "Infinity");
        assert_eq!(sum(&[ninf.clone(), one.clone()]), "-Infinity");
        assert_eq!(sum(&[pinf, ninf]), "NaN");
        assert_eq!(sum(&[nan, one]), "NaN");
        assert_eq!(DecimalSum::default().text(), None);
    }
}
