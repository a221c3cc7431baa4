-- Top 20 hosts by peak usage_user over the whole table.
SELECT hostname, max(usage_user) mx FROM cpu GROUP BY 1 ORDER BY mx DESC LIMIT 20
