//! Byte images of parsed metadata, for handing it to another process of the same build
//! (a parallel scan's leader to its workers): a sink that writes them, or counts them to
//! size shared memory first, and a cursor that reads them back with every length
//! checked. Pure.

use super::encoding::CorruptData;

/// Where an image's bytes go: a buffer, a count of them, or a slice sized by that count.
pub trait ImageSink {
    fn put(&mut self, bytes: &[u8]);
}

impl ImageSink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Counts the bytes put.
#[derive(Debug, Default)]
pub struct ImageSize(pub usize);

impl ImageSink for ImageSize {
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
}

/// Writes into a slice that `ImageSize` sized; what is put past its end panics.
pub struct ImageSlice<'a>(pub &'a mut [u8]);

impl ImageSink for ImageSlice<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let rest = std::mem::take(&mut self.0);
        let (head, tail) = rest.split_at_mut(bytes.len());
        head.copy_from_slice(bytes);
        self.0 = tail;
    }
}

const TRUNCATED: CorruptData = CorruptData("metadata image truncated");

/// Reads an image: little-endian integers and length-prefixed byte strings.
pub struct ImageCursor<'a>(pub &'a [u8]);

impl<'a> ImageCursor<'a> {
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], CorruptData> {
        if self.0.len() < n {
            return Err(TRUNCATED);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CorruptData> {
        Ok(self.take(N)?.try_into().expect("N bytes taken"))
    }

    pub fn u8(&mut self) -> Result<u8, CorruptData> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, CorruptData> {
        self.array().map(u16::from_le_bytes)
    }

    pub fn i16(&mut self) -> Result<i16, CorruptData> {
        self.array().map(i16::from_le_bytes)
    }

    pub fn u32(&mut self) -> Result<u32, CorruptData> {
        self.array().map(u32::from_le_bytes)
    }

    pub fn u64(&mut self) -> Result<u64, CorruptData> {
        self.array().map(u64::from_le_bytes)
    }

    /// A byte string `put_bytes` wrote.
    pub fn bytes(&mut self) -> Result<&'a [u8], CorruptData> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

/// Puts `bytes` with its length before it (u32), for `ImageCursor::bytes`.
pub fn put_bytes(out: &mut impl ImageSink, bytes: &[u8]) {
    out.put(&(bytes.len() as u32).to_le_bytes());
    out.put(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_writes_and_reads_back() {
        let write = |out: &mut dyn FnMut(&[u8])| {
            out(&7u32.to_le_bytes());
            out(&(-3i16).to_le_bytes());
            out(&[9]);
        };
        let mut size = ImageSize::default();
        write(&mut |b| size.put(b));
        put_bytes(&mut size, b"abc");
        let mut buf = vec![0u8; size.0];
        let mut slice = ImageSlice(&mut buf);
        write(&mut |b| slice.put(b));
        put_bytes(&mut slice, b"abc");
        assert!(slice.0.is_empty(), "the count was the size written");
        let mut c = ImageCursor(&buf);
        assert_eq!((c.u32().unwrap(), c.i16().unwrap(), c.u8().unwrap()), (7, -3, 9));
        assert_eq!(c.bytes().unwrap(), b"abc");
        assert!(c.0.is_empty());
        assert!(ImageCursor(&buf[..buf.len() - 1]).take(buf.len()).is_err());
        let mut short = ImageCursor(&buf[..9]);
        short.take(7).unwrap();
        assert!(short.bytes().is_err(), "a length past the end");
    }
}
