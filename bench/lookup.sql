\set id random(1, 10000000)
SELECT * FROM :table WHERE id = :id;
