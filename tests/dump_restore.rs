//! pg_dump and restore of a database with columnar tables: the tables come back as
//! columnar with every row; the extension's metadata is rebuilt, not dumped.

mod common;

use common::Cluster;

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn dump_and_restore_keep_columnar_tables_and_rows() {
    let cluster = Cluster::from_env();
    let src = cluster.fresh_database("it_dump_src");
    src.query(
        "CREATE TABLE c (id int PRIMARY KEY, t text, f float8) USING columnar;
         INSERT INTO c SELECT i, 'x' || i, i / 3.0 FROM generate_series(1, 150000) i",
    );
    let before = src.query("SELECT count(*), sum(id), md5(string_agg(t || f, ',' ORDER BY id)) FROM c");
    let dump = cluster.pg_dump("it_dump_src");
    let text = String::from_utf8_lossy(&dump);
    assert!(text.contains("SET default_table_access_method = columnar;"), "dump lacks the access method");
    assert!(!text.contains("COPY pgcolumnar."), "metadata tables must not be dumped");

    let dst = cluster.empty_database("it_dump_dst");
    cluster.restore("it_dump_dst", &dump);
    let after = dst.query("SELECT count(*), sum(id), md5(string_agg(t || f, ',' ORDER BY id)) FROM c");
    assert_eq!(before, after);
    let am = dst.query("SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'c'");
    assert_eq!(am.trim(), "columnar");
    // The primary key came back and is enforced.
    let dup = std::panic::catch_unwind(|| dst.query("INSERT INTO c VALUES (1, 'dup', 0)"));
    assert!(dup.is_err(), "duplicate key accepted after restore");
}
