//! The generated CSV: row counts, column counts, field shapes and keys, through the
//! library and the binary, at small scale factors.

use std::collections::HashSet;
use std::process::Command;

use tpch_gen::{split_csv_line, write_table, Table};

const BIN: &str = env!("CARGO_BIN_EXE_tpch-gen");
const SF: f64 = 0.01;

fn rows(table: Table, sf: f64) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let n = write_table(table, sf, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'), "{} must end with a newline", table.name());
    let rows: Vec<Vec<String>> = text.lines().map(split_csv_line).collect();
    assert_eq!(rows.len() as u64, n, "{}: returned count vs lines", table.name());
    rows
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && s.split('-').all(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

/// Money and rates: digits, a point, exactly two decimals (numeric(15,2) takes them as is).
fn is_money(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    matches!(s.split_once('.'), Some((i, f)) if !i.is_empty() && f.len() == 2
        && i.bytes().chain(f.bytes()).all(|c| c.is_ascii_digit()))
}

fn keys(rows: &[Vec<String>], col: usize) -> HashSet<i64> {
    rows.iter().map(|r| r[col].parse::<i64>().unwrap()).collect()
}

#[test]
fn row_and_column_counts_at_sf_001() {
    let expected = [
        (Table::Region, 5),
        (Table::Nation, 25),
        (Table::Part, 2_000),
        (Table::Supplier, 100),
        (Table::PartSupp, 8_000),
        (Table::Customer, 1_500),
        (Table::Orders, 15_000),
    ];
    for (table, count) in expected {
        let rows = rows(table, SF);
        assert_eq!(rows.len(), count, "{}", table.name());
        assert_eq!(table.fixed_rows(SF), Some(count as i64), "{}", table.name());
        for r in &rows {
            assert_eq!(r.len(), table.columns(), "{}: {r:?}", table.name());
        }
    }
    // 1 to 7 lines per order.
    let lines = rows(Table::LineItem, SF).len();
    assert!((15_000..=7 * 15_000).contains(&lines), "lineitem rows {lines}");
}

#[test]
fn field_shapes_and_keys() {
    let orders = rows(Table::Orders, SF);
    let lineitem = rows(Table::LineItem, SF);
    let customer = rows(Table::Customer, SF);
    let order_keys = keys(&orders, 0);
    assert_eq!(order_keys.len(), orders.len(), "o_orderkey is unique");
    assert!(keys(&lineitem, 0).is_subset(&order_keys), "every l_orderkey is an order");
    assert!(keys(&orders, 1).is_subset(&keys(&customer, 0)), "every o_custkey is a customer");
    let mut line_keys = HashSet::new();
    for l in &lineitem {
        assert!(line_keys.insert((l[0].clone(), l[3].clone())), "(l_orderkey, l_linenumber) unique: {l:?}");
        for money in &l[5..8] {
            assert!(is_money(money), "price/discount/tax {money:?}");
        }
        assert!(l[4].parse::<u32>().is_ok_and(|q| (1..=50).contains(&q)), "l_quantity {:?}", l[4]);
        assert!(
            ["A", "N", "R"].contains(&l[8].as_str()) && ["F", "O"].contains(&l[9].as_str()),
            "flags {l:?}"
        );
        assert!(l[10..13].iter().all(|d| is_date(d)), "dates {l:?}");
    }
    for o in &orders {
        assert!(is_money(&o[3]) && is_date(&o[4]), "order {o:?}");
    }
    for c in &customer {
        // c_phone: country code 10..34, then three groups (q22 takes its first two characters).
        let cc: u32 = c[4][..2].parse().unwrap();
        assert!((10..=34).contains(&cc) && c[4].len() == 15, "c_phone {:?}", c[4]);
    }
}

#[test]
fn first_lineitem_rows_are_dbgens() {
    // dbgen's lineitem.tbl at SF 1 starts with these rows (only the format differs: CSV,
    // the comment quoted).
    let mut out = Vec::new();
    write_table(Table::LineItem, 1.0, &mut LimitedWriter { inner: &mut out, lines_left: 2 }).unwrap_err();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(
        text,
        "1,155190,7706,1,17,21168.23,0.04,0.02,N,O,1996-03-13,1996-02-12,1996-03-22,DELIVER IN PERSON,TRUCK,\"egular courts above the\"\n\
         1,67310,7311,2,36,45983.16,0.09,0.06,N,O,1996-04-12,1996-02-28,1996-04-20,TAKE BACK RETURN,MAIL,\"ly final dependencies: slyly bold \"\n"
    );
}

/// Accepts `lines_left` lines, then fails: stops a generator after its first rows.
struct LimitedWriter<'a> {
    inner: &'a mut Vec<u8>,
    lines_left: usize,
}

impl std::io::Write for LimitedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.lines_left == 0 {
            return Err(std::io::Error::other("enough"));
        }
        self.lines_left -= buf.iter().filter(|&&b| b == b'\n').count();
        self.inner.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn binary_writes_one_file_per_table() {
    let dir = std::env::temp_dir().join(format!("tpch-gen-test-{}", std::process::id()));
    let out = Command::new(BIN).args(["--sf", "0.001", "--dir"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for table in Table::ALL {
        let text = std::fs::read_to_string(dir.join(format!("{}.csv", table.name()))).unwrap();
        let mut expected = Vec::new();
        write_table(table, 0.001, &mut expected).unwrap();
        assert_eq!(text.as_bytes(), expected, "{}.csv equals the library's output", table.name());
        assert!(!dir.join(format!("{}.csv.tmp", table.name())).exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();

    let out = Command::new(BIN).args(["--sf", "0.001", "--stdout", "nation"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 25);
    let bad = Command::new(BIN).args(["--sf", "0", "--dir", "x"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}
