-- All hosts, hourly average of one metric over 12 hours (TSBS double-groupby-1).
SELECT date_trunc('hour', time) h, hostname, avg(usage_user) FROM cpu WHERE time >= '2024-01-01' AND time < '2024-01-01'::timestamptz + interval '12 hours' GROUP BY 1, 2
