-- Single host, max of one metric per minute over 12 hours (TSBS single-groupby-1-1-12).
SELECT date_trunc('minute', time) m, max(usage_user) FROM cpu WHERE hostname = 'host_1' AND time >= '2024-01-01' AND time < '2024-01-01'::timestamptz + interval '12 hours' GROUP BY 1 ORDER BY 1
