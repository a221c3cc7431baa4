-- Whole-table filter on one metric, aggregate another (after TSBS high-cpu-all).
SELECT count(*), avg(usage_system) FROM cpu WHERE usage_user > 90.0
