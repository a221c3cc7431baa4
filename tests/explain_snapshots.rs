//! EXPLAIN output that users see, pinned with insta snapshots.

mod common;

use common::Cluster;

#[test]
#[ignore = "needs the cluster that `make integration-test` starts"]
fn version_is_folded_to_a_constant_at_plan_time() {
    let cluster = Cluster::from_env();
    let db = cluster.fresh_database("it_explain_version");
    // version() is immutable, so the planner replaces the call with its value.
    insta::assert_snapshot!(
        db.explain("VERBOSE, COSTS OFF", "SELECT pgcolumnar.version()"),
        @r"
    Result
      Output: '0.1.0'::text
    "
    );
}
