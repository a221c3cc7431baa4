//! Planner integration: the `set_rel_pathlist` and `create_upper_paths` hooks, the
//! analysis of which quals can be pushed into a columnar scan, and the cost model that
//! chooses between core plans and ours. Arrives with the planner issues.
