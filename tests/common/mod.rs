//! Shared helpers for the integration tests: they talk to the throwaway cluster that
//! `make test` starts (PGCOLUMNAR_TEST_HOST / PGCOLUMNAR_TEST_PORT) through `psql`.
//! The tests are `#[ignore]`d so that plain `cargo test` stays server-free; `make test`
//! runs them with `--include-ignored`.

#![allow(dead_code)]

use std::process::Command;

pub struct Cluster {
    host: String,
    port: String,
    psql: String,
    bindir: String,
}

impl Cluster {
    pub fn from_env() -> Cluster {
        let var = |name: &str| {
            std::env::var(name)
                .unwrap_or_else(|_| panic!("{name} is not set: run these tests with `make integration-test`"))
        };
        let pg_config =
            std::env::var("PG_CONFIG").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin/pg_config".to_string());
        let bindir = Command::new(&pg_config).arg("--bindir").output().expect("pg_config runs");
        let bindir = String::from_utf8(bindir.stdout).unwrap().trim().to_string();
        Cluster {
            host: var("PGCOLUMNAR_TEST_HOST"),
            port: var("PGCOLUMNAR_TEST_PORT"),
            psql: format!("{bindir}/psql"),
            bindir,
        }
    }

    /// Drops and recreates database `name` with the extension installed.
    pub fn fresh_database(&self, name: &str) -> Database<'_> {
        let db = self.empty_database(name);
        db.query("CREATE EXTENSION pgcolumnar");
        db
    }

    /// Drops and recreates database `name`, empty.
    pub fn empty_database(&self, name: &str) -> Database<'_> {
        self.run("postgres", &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        self.run("postgres", &format!("CREATE DATABASE {name}"));
        Database { cluster: self, name: name.to_string() }
    }

    /// Output of `pg_dump` of database `db`.
    pub fn pg_dump(&self, db: &str) -> Vec<u8> {
        let out = Command::new(format!("{}/pg_dump", self.bindir))
            .args(["-U", "postgres", "-h", &self.host, "-p", &self.port, db])
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "pg_dump failed:\n{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// Runs a SQL script (e.g. a dump) in database `db`.
    pub fn restore(&self, db: &str, script: &[u8]) {
        self.run_with_input(db, "\\i /dev/stdin", Some(script));
    }

    /// Runs pgbench on database `db` with the custom script `script` and `args`
    /// (e.g. client count and duration); returns its report. A failed client fails.
    pub fn pgbench(&self, db: &str, script: &str, args: &[&str]) -> String {
        let dir = std::env::temp_dir().join(format!("pgcolumnar-pgbench-{}-{db}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("script.sql");
        std::fs::write(&file, script).unwrap();
        let out = Command::new(format!("{}/pgbench", self.bindir))
            .args(["-n", "-U", "postgres", "-h", &self.host, "-p", &self.port])
            .args(args)
            .arg("-f")
            .arg(&file)
            .arg(db)
            .output()
            .expect("pgbench runs");
        let _ = std::fs::remove_dir_all(&dir);
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "pgbench failed:\n{report}\n{}", String::from_utf8_lossy(&out.stderr));
        report
    }

    fn run(&self, db: &str, sql: &str) -> String {
        self.run_with_input(db, sql, None)
    }

    fn run_with_input(&self, db: &str, sql: &str, input: Option<&[u8]>) -> String {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = Command::new(&self.psql)
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", "postgres"])
            .args(["-h", &self.host, "-p", &self.port, "-d", db, "-c", sql])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("psql runs");
        let mut stdin = child.stdin.take().unwrap();
        let data = input.unwrap_or_default().to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&data));
        let out = child.wait_with_output().expect("psql finishes");
        writer.join().unwrap().expect("psql reads its input");
        assert!(out.status.success(), "psql failed on {sql:?}:\n{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("psql prints UTF-8")
    }
}

pub struct Database<'a> {
    cluster: &'a Cluster,
    name: String,
}

impl Database<'_> {
    /// Runs `sql` (one or more statements) and returns the unaligned, tuples-only output
    /// of the last one.
    pub fn query(&self, sql: &str) -> String {
        self.cluster.run(&self.name, sql)
    }

    /// `COPY table FROM STDIN` with `data` in text format.
    pub fn copy_in(&self, table: &str, data: &[u8]) {
        self.cluster.run_with_input(&self.name, &format!("COPY {table} FROM STDIN"), Some(data));
    }

    /// EXPLAIN output of `query` with the given options, one plan line per line.
    pub fn explain(&self, options: &str, query: &str) -> String {
        self.query(&format!("EXPLAIN ({options}) {query}"))
    }
}
