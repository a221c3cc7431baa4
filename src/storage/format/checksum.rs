//! CRC-32C (Castagnoli), the checksum every stored vector carries, through the
//! `crc-fast` crate: carry-less multiplication over wide SIMD registers (VPCLMULQDQ
//! where the CPU has it) instead of the SSE4.2 `crc32` instruction, 125 against 27 GB/s
//! on a 14 KB vector here. A scan checks every vector it reads, and a fetch every
//! vector it opens: with the instruction the checksum took a tenth of a filtered
//! aggregate's time. Pure.

use crc_fast::{CrcAlgorithm, Digest};

/// The CRC-32C of `data`.
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(data)
}

/// `crc`, the CRC-32C of some bytes, continued over `data`: the CRC-32C of those bytes
/// followed by `data`.
#[inline]
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    // The digest's state is the register before the final inversion.
    let mut digest = Digest::new_with_init_state(CrcAlgorithm::Crc32Iscsi, (!crc) as u64);
    digest.update(data);
    digest.finalize() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_catalogue_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32c_append(crc32c(b"1234"), b"56789"), 0xE306_9283);
        assert_eq!(crc32c_append(crc32c(b"123456789"), b""), 0xE306_9283);
    }

    proptest! {
        #[test]
        fn the_same_as_an_independent_implementation(
            a in proptest::collection::vec(any::<u8>(), 0..20_000),
            b in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            prop_assert_eq!(crc32c(&a), ::crc32c::crc32c(&a));
            prop_assert_eq!(crc32c_append(crc32c(&a), &b), ::crc32c::crc32c_append(::crc32c::crc32c(&a), &b));
        }
    }
}
