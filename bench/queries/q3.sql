-- Single host, max of five metrics per minute over 12 hours (TSBS single-groupby-5-1-12).
SELECT date_trunc('minute', time) m, max(usage_user), max(usage_system), max(usage_idle), max(usage_nice), max(usage_iowait) FROM cpu WHERE hostname = 'host_1' AND time >= '2024-01-01' AND time < '2024-01-01'::timestamptz + interval '12 hours' GROUP BY 1 ORDER BY 1
