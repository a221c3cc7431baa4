-- Latest reading of every host (TSBS lastpoint).
SELECT DISTINCT ON (hostname) hostname, time, usage_user FROM cpu ORDER BY hostname, time DESC
