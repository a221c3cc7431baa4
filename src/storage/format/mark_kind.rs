//! The kinds of mark a transaction leaves on a columnar row (a row lock of some
//! strength, or a delete), and which marks conflict, as pure logic.
//!
//! Columnar rows are never changed in place. A DELETE, and the old version of an UPDATE,
//! is a `Delete` mark: a row in `pgcolumnar.row_mark`, visible exactly when the change
//! is. SELECT ... FOR UPDATE/SHARE (and foreign-key checks) leave lock marks, which
//! matter only while their transaction runs.

/// A mark's kind; the lock strengths are PostgreSQL's `LockTupleMode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MarkKind {
    KeyShare = 0,
    Share = 1,
    NoKeyUpdate = 2,
    Update = 3,
    Delete = 4,
}

impl MarkKind {
    pub fn from_i16(v: i16) -> Option<MarkKind> {
        Some(match v {
            0 => MarkKind::KeyShare,
            1 => MarkKind::Share,
            2 => MarkKind::NoKeyUpdate,
            3 => MarkKind::Update,
            4 => MarkKind::Delete,
            _ => return None,
        })
    }

    /// Whether a mark of kind `self` held by a running transaction makes another
    /// transaction that wants `wanted` wait (PostgreSQL's row-lock conflict table; a
    /// delete conflicts like FOR UPDATE).
    pub fn conflicts_with(self, wanted: MarkKind) -> bool {
        use MarkKind::*;
        let strength = |k: MarkKind| if k == Delete { Update } else { k };
        match (strength(self), strength(wanted)) {
            (KeyShare, w) | (w, KeyShare) => w == Update,
            (Share, w) | (w, Share) => w != Share,
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MarkKind::*;
    use super::*;

    #[test]
    fn conflicts_follow_postgres_row_lock_table() {
        let all = [KeyShare, Share, NoKeyUpdate, Update, Delete];
        // Rows: held; columns: wanted. Mirrors the table in the PostgreSQL docs
        // ("Conflicting Row-Level Locks"), with Delete acting as FOR UPDATE.
        let expected = [
            [false, false, false, true, true],
            [false, false, true, true, true],
            [false, true, true, true, true],
            [true, true, true, true, true],
            [true, true, true, true, true],
        ];
        for (i, held) in all.iter().enumerate() {
            for (j, wanted) in all.iter().enumerate() {
                assert_eq!(held.conflicts_with(*wanted), expected[i][j], "{held:?} vs {wanted:?}");
            }
        }
        for k in all {
            assert_eq!(MarkKind::from_i16(k as i16), Some(k));
        }
        assert_eq!(MarkKind::from_i16(5), None);
    }
}
