-- Point lookup by the index key, like a primary-key lookup: one host at one instant.
SELECT * FROM cpu WHERE hostname = 'host_7' AND time = '2024-01-01 10:00:00+00'
