//! An unsigned 256-bit integer, as much of one as the variance fold needs
//! (`kernels::variance`): sums of squares of 128-bit mantissas, rescaled by powers of
//! ten, and their decimal digits. Pure.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct U256 {
    pub hi: u128,
    pub lo: u128,
}

const LOW64: u128 = u64::MAX as u128;

impl U256 {
    pub const ZERO: U256 = U256 { hi: 0, lo: 0 };

    pub fn from_u128(x: u128) -> U256 {
        U256 { hi: 0, lo: x }
    }

    /// a * b, exactly (the product of two 128-bit values fits 256 bits).
    pub fn mul_wide(a: u128, b: u128) -> U256 {
        let (a1, a0) = (a >> 64, a & LOW64);
        let (b1, b0) = (b >> 64, b & LOW64);
        let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
        // The middle column: below 3 * 2^64.
        let mid = (p00 >> 64) + (p01 & LOW64) + (p10 & LOW64);
        U256 { hi: p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64), lo: (p00 & LOW64) | (mid << 64) }
    }

    /// self + x; None past 256 bits.
    #[inline(always)]
    pub fn checked_add_u128(self, x: u128) -> Option<U256> {
        let (lo, carry) = self.lo.overflowing_add(x);
        Some(U256 { hi: self.hi.checked_add(carry as u128)?, lo })
    }

    /// self + o; None past 256 bits.
    pub fn checked_add(self, o: U256) -> Option<U256> {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        Some(U256 { hi: self.hi.checked_add(o.hi)?.checked_add(carry as u128)?, lo })
    }

    /// self * k; None past 256 bits.
    fn checked_mul_u64(self, k: u64) -> Option<U256> {
        let low = U256::mul_wide(self.lo, k as u128);
        Some(U256 { hi: self.hi.checked_mul(k as u128)?.checked_add(low.hi)?, lo: low.lo })
    }

    /// self * 10^e; None past 256 bits.
    pub fn checked_mul_pow10(self, mut e: u32) -> Option<U256> {
        let mut v = self;
        while e > 0 {
            let step = e.min(19);
            v = v.checked_mul_u64(10u64.pow(step))?;
            e -= step;
        }
        Some(v)
    }

    /// (self / d, self % d).
    pub fn div_rem_u64(self, d: u64) -> (U256, u64) {
        let limbs = [(self.hi >> 64) as u64, self.hi as u64, (self.lo >> 64) as u64, self.lo as u64];
        let mut q = [0u64; 4];
        let mut rem = 0u128;
        for (i, &limb) in limbs.iter().enumerate() {
            let cur = (rem << 64) | limb as u128;
            q[i] = (cur / d as u128) as u64;
            rem = cur % d as u128;
        }
        let hi = ((q[0] as u128) << 64) | q[1] as u128;
        let lo = ((q[2] as u128) << 64) | q[3] as u128;
        (U256 { hi, lo }, rem as u64)
    }

    /// The decimal digits, most significant first ("0" for zero).
    pub fn to_decimal(self) -> String {
        const CHUNK: u64 = 10_000_000_000_000_000_000; // 10^19
        let mut chunks = Vec::new();
        let mut v = self;
        while v != U256::ZERO {
            let (q, r) = v.div_rem_u64(CHUNK);
            chunks.push(r);
            v = q;
        }
        let Some((top, rest)) = chunks.split_last() else { return "0".into() };
        let mut out = top.to_string();
        for c in rest.iter().rev() {
            out.push_str(&format!("{c:019}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_sums_and_digits_are_exact() {
        let max = U256::mul_wide(u128::MAX, u128::MAX);
        // (2^128 - 1)^2 = 2^256 - 2^129 + 1
        assert_eq!(max, U256 { hi: u128::MAX - 1, lo: 1 });
        assert_eq!(
            max.to_decimal(),
            "115792089237316195423570985008687907852589419931798687112530834793049593217025"
        );
        let x = 123_456_789_012_345_678_901_234_567u128;
        assert_eq!(
            U256::mul_wide(x, x).to_decimal(),
            "15241578753238836750495351342783114345526596755677489"
        );
        assert_eq!(
            U256::from_u128(7).checked_mul_pow10(40).unwrap().to_decimal(),
            format!("7{}", "0".repeat(40))
        );
        assert_eq!(U256::from_u128(1).checked_mul_pow10(78), None);
        assert_eq!(U256::ZERO.to_decimal(), "0");
        let carried = U256::from_u128(u128::MAX).checked_add_u128(1).unwrap();
        assert_eq!(carried, U256 { hi: 1, lo: 0 });
        assert_eq!(U256 { hi: u128::MAX, lo: u128::MAX }.checked_add_u128(1), None);
        assert_eq!(carried.checked_add(carried), Some(U256 { hi: 2, lo: 0 }));
    }
}
