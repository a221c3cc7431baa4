-- Single host, max of one metric per minute over 1 hour (TSBS single-groupby-1-1-1).
SELECT date_trunc('minute', time) m, max(usage_user) FROM cpu WHERE hostname = 'host_1' AND time >= '2024-01-01' AND time < '2024-01-01'::timestamptz + interval '1 hour' GROUP BY 1 ORDER BY 1
