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
    for metadata in ["row_group", "chunk", "row_mark", "row_reservation"] {
        assert!(!text.contains(&format!("COPY pgcolumnar.{metadata} ")), "{metadata} must not be dumped");
    }

    let dst = cluster.empty_database("it_dump_dst");
    cluster.restore("it_dump_dst", &dump);
    let after = dst.query("SELECT count(*), sum(id), md5(string_agg(t || f, ',' ORDER BY id)) FROM c");
    assert_eq!(before, after);
    let am = dst.query("SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'c'");
    assert_eq!(am.trim(), "columnar");
    // The primary key came back and is enforced.
    let dup = dst
        .try_query("INSERT INTO c VALUES (1, 'dup', 0)")
        .expect_err("duplicate key accepted after restore");
    assert!(dup.starts_with("23505"), "{dup}");
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn dump_and_restore_keep_table_options() {
    let cluster = Cluster::from_env();
    let src = cluster.fresh_database("it_dump_opts_src");
    // A dropped column before the sort key (the restored table numbers its columns
    // differently) and a sort column renamed after the option was set.
    src.query(
        "CREATE TABLE o (gone int, host text, ts int, v float8) USING columnar;
         ALTER TABLE o DROP COLUMN gone;
         ALTER TABLE o SET (sort_by = 'host, ts');
         ALTER TABLE o RENAME COLUMN host TO hostname;
         INSERT INTO o SELECT 'h' || (g % 7), g, g FROM generate_series(1, 5000) g;
         CREATE TABLE plain (a int, b int) USING columnar WITH (quals_push_down = off);
         CREATE TABLE heapish (a int, b text) WITH (quals_push_down = on);
         INSERT INTO heapish SELECT g, 'b' || g FROM generate_series(1, 100) g;",
    );
    let options = "SELECT relid, sort_by, sort_attnums, quals_push_down FROM pgcolumnar.table_option \
                   ORDER BY relid::text";
    assert_eq!(src.query(options).trim(), "heapish|||t\no|hostname, ts|{2,3}|\nplain|||f");
    let dump = cluster.pg_dump("it_dump_opts_src");
    let text = String::from_utf8_lossy(&dump);
    assert!(text.contains("COPY pgcolumnar.table_option "), "table options are not in the dump");

    let dst = cluster.empty_database("it_dump_opts_dst");
    cluster.restore("it_dump_opts_dst", &dump);
    assert_eq!(dst.query(options).trim(), "heapish|||t\no|hostname, ts|{1,2}|\nplain|||f");
    // quals_push_down = off is in force: the executor evaluates the qual.
    let plan = dst.explain("COSTS OFF", "SELECT * FROM plain WHERE a = 1");
    assert!(!plan.contains("Pushed Filter"), "{plan}");
    // On the heap table it is on: heapam tests the clause.
    let plan = dst.explain("COSTS OFF", "SELECT * FROM heapish WHERE a = 1");
    assert!(plan.contains("PushedSeqScan") && plan.contains("Pushed Filter: (a = 1)"), "{plan}");
    assert_eq!(dst.query("SELECT b FROM heapish WHERE a = 7").trim(), "b7");
    let view = "SELECT relid, option, value FROM pgcolumnar.options ORDER BY relid::text, option";
    assert_eq!(
        dst.query(view).trim(),
        "heapish|quals_push_down|on\no|sort_by|hostname, ts\nplain|quals_push_down|off"
    );
    // The option is in force: VACUUM FULL stores the rows in (hostname, ts) order.
    dst.query("VACUUM FULL o");
    let sorted = "SELECT bool_and((hostname, ts) >= (ph, pt)) FROM \
                  (SELECT hostname, ts, lag(hostname) OVER () AS ph, lag(ts) OVER () AS pt FROM o) s";
    assert_eq!(dst.query(sorted).trim(), "t");
    assert_eq!(dst.query("SELECT count(*), sum(ts) FROM o").trim(), "5000|12502500");
}

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn dump_and_restore_keep_both_access_method_names() {
    let cluster = Cluster::from_env();
    let src = cluster.fresh_database("it_dump_names_src");
    src.query(
        "CREATE TABLE by_short (id int, v text) USING columnar;
         CREATE TABLE by_long (id int, v text) USING pgcolumnar;
         INSERT INTO by_short SELECT i, 's' || i FROM generate_series(1, 20000) i;
         INSERT INTO by_long SELECT i, 'l' || i FROM generate_series(1, 30000) i;",
    );
    let rows = "SELECT relname, amname, (SELECT count(*) FROM by_short), (SELECT count(*) FROM by_long), \
                (SELECT md5(string_agg(v, ',' ORDER BY id)) FROM by_long) \
                FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname IN ('by_short', 'by_long') ORDER BY 1";
    let before = src.query(rows);
    assert!(before.contains("by_long|pgcolumnar|") && before.contains("by_short|columnar|"), "{before}");
    let dump = cluster.pg_dump("it_dump_names_src");
    let text = String::from_utf8_lossy(&dump);
    assert!(text.contains("SET default_table_access_method = pgcolumnar;"), "dump lacks USING pgcolumnar");
    let dst = cluster.empty_database("it_dump_names_dst");
    cluster.restore("it_dump_names_dst", &dump);
    assert_eq!(dst.query(rows), before);
    // Both restored tables are ours: the fast path reads them.
    for table in ["by_short", "by_long"] {
        let plan = dst.explain("COSTS OFF", &format!("SELECT count(*) FROM {table} WHERE id > 10"));
        assert!(plan.contains("PgColumnarAgg"), "{plan}");
    }
}
