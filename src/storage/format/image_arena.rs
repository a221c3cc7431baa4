//! Where the by-reference values of one fetched row live: chunks of 8-byte words that
//! never move while the row is held (a Datum points into them), and are kept for the
//! next row, so a fetch allocates nothing once warmed up. Pure Rust.

use super::fallible;

/// Words in a chunk; a larger value gets a chunk of its own.
const CHUNK_WORDS: usize = 1024;

#[derive(Default)]
pub struct ImageArena {
    chunks: Vec<Box<[u64]>>,
    /// The chunk being filled, and the words of it used.
    current: usize,
    used: usize,
}

impl ImageArena {
    /// `words` zeroed words, which stay where they are until `clear`.
    pub fn alloc(&mut self, words: usize) -> &mut [u64] {
        while let Some(chunk) = self.chunks.get(self.current) {
            if chunk.len() - self.used >= words {
                break;
            }
            self.current += 1;
            self.used = 0;
        }
        if self.current == self.chunks.len() {
            // A large value's chunk has its size: its room is taken fallibly.
            let mut chunk = Vec::new();
            fallible::resize(&mut chunk, words.max(CHUNK_WORDS), 0);
            self.chunks.push(chunk.into_boxed_slice());
        }
        let start = self.used;
        self.used += words;
        let image = &mut self.chunks[self.current][start..start + words];
        image.fill(0);
        image
    }

    /// Forgets every value (nothing may point into the arena any more). Chunks of the
    /// usual size are kept for the next row; a large value's is freed.
    pub fn clear(&mut self) {
        self.chunks.retain(|c| c.len() <= CHUNK_WORDS);
        self.current = 0;
        self.used = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_addresses_and_chunks_are_reused() {
        let mut arena = ImageArena::default();
        let mut held = Vec::new();
        for (i, words) in [3usize, 1000, 50, 2000, 0, 1024, 7].into_iter().enumerate() {
            let image = arena.alloc(words);
            assert_eq!(image.len(), words);
            assert!(image.iter().all(|&w| w == 0));
            image.fill(i as u64 + 1);
            held.push((image.as_ptr(), words, i as u64 + 1));
        }
        // Every value is still where it was written, intact.
        for &(ptr, words, value) in &held {
            // SAFETY: `ptr` points at `words` u64s the arena handed out; it is not cleared
            // yet, and its chunks never move, so they are still allocated and initialized.
            let image = unsafe { std::slice::from_raw_parts(ptr, words) };
            assert!(image.iter().all(|&w| w == value));
        }
        let normal: Vec<*const u64> =
            arena.chunks.iter().filter(|c| c.len() <= CHUNK_WORDS).map(|c| c.as_ptr()).collect();
        arena.clear();
        // The next row reuses the usual-size chunks (zeroed again), not the large one.
        assert_eq!(arena.chunks.iter().map(|c| c.as_ptr()).collect::<Vec<_>>(), normal);
        let first = arena.alloc(5).as_ptr();
        assert_eq!(first, normal[0]);
        // SAFETY: `first` is the start of the 5 words just allocated, alive in `arena`.
        assert!(unsafe { std::slice::from_raw_parts(first, 5) }.iter().all(|&w| w == 0));
    }
}
