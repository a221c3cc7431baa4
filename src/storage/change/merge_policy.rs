//! Which small row groups a VACUUM merges. Merging all of them each time would move the
//! rows of a table's one large-but-small row group (up to `SMALL_GROUP_ROWS`) again at
//! every VACUUM that found a few new rows beside it, with a new index entry for each: a
//! trickle of writes into a 20,000-row table moved all 20,000 rows every time. Instead
//! dense groups are merged by size tiers, as LSM trees compact: one larger than all the
//! smaller ones together (and the sparse ones merged with them) stays where it is. A row
//! of a dense group then moves only when its group at least doubles, so at most
//! log2(`SMALL_GROUP_ROWS`) times before its group is no longer small, and a VACUUM
//! leaves at most as many small groups plus one. A sparse group, most of whose stored
//! rows are deleted, is always rewritten: that frees the space and the decoding of its
//! dead rows, and its rows move again only after half of them are deleted.

/// A small row group's stored rows (deleted ones too) and live rows.
#[derive(Clone, Copy, Debug)]
pub struct SmallGroup {
    pub stored: u64,
    pub live: u64,
}

impl SmallGroup {
    /// Most of its stored rows are deleted (none live: it goes with no row moved).
    fn sparse(&self) -> bool {
        self.live * 2 < self.stored
    }
}

/// For a table's small row groups, which of them to merge. Dense groups with rows are
/// merged only if at least two groups with rows are, or a sparse one is.
pub fn groups_to_merge(groups: &[SmallGroup]) -> Vec<bool> {
    let mut merge: Vec<bool> = groups.iter().map(SmallGroup::sparse).collect();
    let mut dense: Vec<usize> = (0..groups.len()).filter(|&i| !merge[i]).collect();
    dense.sort_by_key(|&i| std::cmp::Reverse(groups[i].live));
    // Live rows of the groups not yet looked at that would merge: the smaller dense ones
    // and every sparse one.
    let mut smaller: u64 = groups.iter().map(|g| g.live).sum();
    for (k, &i) in dense.iter().enumerate() {
        smaller -= groups[i].live;
        if groups[i].live <= smaller {
            for &j in &dense[k..] {
                merge[j] = true;
            }
            break;
        }
    }
    let moving: Vec<usize> = (0..groups.len()).filter(|&i| merge[i] && groups[i].live > 0).collect();
    if let [only] = moving[..] {
        // One dense group moved alone gains nothing.
        merge[only] = groups[only].sparse();
    }
    merge
}

#[cfg(test)]
mod tests {
    use super::{groups_to_merge, SmallGroup};

    /// Dense groups of these live rows.
    fn dense(live: &[u64]) -> Vec<bool> {
        groups_to_merge(&live.iter().map(|&l| SmallGroup { stored: l, live: l }).collect::<Vec<_>>())
    }

    #[test]
    fn equal_groups_merge() {
        assert_eq!(dense(&[10, 10, 10]), vec![true, true, true]);
        assert_eq!(dense(&[1, 1]), vec![true, true]);
    }

    #[test]
    fn a_group_larger_than_the_rest_together_stays() {
        // 20,000 rows and three single rows: the three merge, the large group stays.
        assert_eq!(dense(&[20_000, 1, 1, 1]), vec![false, true, true, true]);
        // Once the others reach its size, it merges with them.
        assert_eq!(dense(&[3, 1, 1, 1]), vec![true, true, true, true]);
        // Tiers: each stays while larger than all smaller ones together.
        assert_eq!(dense(&[1, 1000, 10, 100, 1]), vec![true, false, false, false, true]);
        assert_eq!(dense(&[1, 1000, 2, 100, 1]), vec![true, false, true, false, true]);
    }

    #[test]
    fn one_dense_group_with_rows_does_not_move_alone() {
        assert_eq!(dense(&[20_000, 1]), vec![false, false]);
        assert_eq!(dense(&[5]), vec![false]);
        assert!(dense(&[]).is_empty());
    }

    #[test]
    fn empty_groups_always_go() {
        assert_eq!(dense(&[0]), vec![true]);
        assert_eq!(dense(&[20_000, 0, 1]), vec![false, true, false]);
        assert_eq!(dense(&[0, 4, 4]), vec![true, true, true]);
    }

    #[test]
    fn sparse_groups_are_rewritten_and_count_toward_the_tiers() {
        let g = |stored, live| SmallGroup { stored, live };
        // A group with two thirds of its rows deleted is compacted, even alone.
        assert_eq!(groups_to_merge(&[g(102_400, 34_000)]), vec![true]);
        // Deletes left a third of two groups (VACUUM's test): both merge, and the dense
        // group of 2,100 rows joins them.
        assert_eq!(groups_to_merge(&[g(102_400, 32_000), g(47_600, 15_800), g(3_200, 2_100)]), vec![true; 3]);
        // A dense group larger than the sparse groups' live rows together stays.
        assert_eq!(
            groups_to_merge(&[g(40_000, 40_000), g(9_000, 1_000), g(9_000, 1_000)]),
            vec![false, true, true]
        );
        // ... and merges once they reach it.
        assert_eq!(groups_to_merge(&[g(3_000, 3_000), g(9_000, 2_000), g(9_000, 1_000)]), vec![true; 3]);
    }

    /// A trickle of small batches, each followed by a VACUUM: every row moves a bounded
    /// number of times, and the small groups stay few.
    #[test]
    fn a_trickle_moves_each_row_a_bounded_number_of_times() {
        const ROWS: u64 = 102_400;
        const SMALL: u64 = ROWS / 2;
        // (live rows, how many times the rows of this group moved at most)
        let mut groups: Vec<(u64, u32)> = Vec::new();
        let mut max_moves = 0;
        for _ in 0..100_000 {
            groups.push((7, 0));
            let merge = dense(&groups.iter().map(|g| g.0).collect::<Vec<_>>());
            let merged: Vec<(u64, u32)> =
                groups.iter().zip(&merge).filter(|(_, m)| **m).map(|(g, _)| *g).collect();
            if !merged.is_empty() {
                let rows = merged.iter().map(|g| g.0).sum::<u64>();
                let moves = merged.iter().map(|g| g.1).max().unwrap() + 1;
                max_moves = max_moves.max(moves);
                groups = groups.into_iter().zip(&merge).filter(|(_, m)| !**m).map(|(g, _)| g).collect();
                // The moved rows fill new row groups of ROWS; the last one may be small.
                groups.push((rows % ROWS, moves));
            }
            // Groups that reached SMALL are no longer small: VACUUM does not look at them.
            groups.retain(|g| g.0 > 0 && g.0 < SMALL);
            assert!(groups.len() <= 16, "{} small groups", groups.len());
        }
        assert!(max_moves <= 16, "a row moved {max_moves} times");
    }
}
