-- Row-level security with non-owner roles, and triggers (row/statement, transition tables).
DROP ROLE IF EXISTS regress_parity_alice;
DROP ROLE IF EXISTS regress_parity_bob;
CREATE ROLE regress_parity_alice;
CREATE ROLE regress_parity_bob;
CREATE TABLE docs (id int PRIMARY KEY, owner text, body text, secret bool DEFAULT false);
INSERT INTO docs VALUES (1, 'regress_parity_alice', 'a1', false), (2, 'regress_parity_alice', 'a2', true),
  (3, 'regress_parity_bob', 'b1', false), (4, 'regress_parity_bob', 'b2', true), (5, 'nobody', 'n1', false);
GRANT SELECT, INSERT, UPDATE, DELETE ON docs TO regress_parity_alice, regress_parity_bob;
ALTER TABLE docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON docs USING (owner = current_user);
CREATE POLICY pub ON docs FOR SELECT USING (NOT secret);
CREATE POLICY ins ON docs FOR INSERT WITH CHECK (owner = current_user AND id < 100);
SET ROLE regress_parity_alice;
SELECT * FROM docs ORDER BY id;
INSERT INTO docs VALUES (10, 'regress_parity_alice', 'a10');
INSERT INTO docs VALUES (11, 'regress_parity_bob', 'forged');
INSERT INTO docs VALUES (200, 'regress_parity_alice', 'too big');
UPDATE docs SET body = body || '!' RETURNING id, body;
UPDATE docs SET body = 'hijack' WHERE id = 3 RETURNING id;
UPDATE docs SET owner = 'regress_parity_bob' WHERE id = 10;
DELETE FROM docs WHERE id IN (3, 10) RETURNING id;
SELECT id, body FROM docs ORDER BY id;
SELECT count(*) FROM docs WHERE secret;
RESET ROLE;
SET ROLE regress_parity_bob;
SELECT * FROM docs ORDER BY id;
WITH u AS (UPDATE docs SET secret = NOT secret RETURNING id, secret) SELECT * FROM u ORDER BY id;
SELECT * FROM docs ORDER BY id;
RESET ROLE;
ALTER TABLE docs FORCE ROW LEVEL SECURITY;
SELECT count(*) FROM docs;
ALTER TABLE docs NO FORCE ROW LEVEL SECURITY;
SELECT * FROM docs ORDER BY id;
ALTER TABLE docs DISABLE ROW LEVEL SECURITY;
SET ROLE regress_parity_alice;
SELECT count(*) FROM docs;
RESET ROLE;
-- column privileges and a table owned by a role
REVOKE ALL ON docs FROM regress_parity_bob;
GRANT SELECT (id, owner) ON docs TO regress_parity_bob;
SET ROLE regress_parity_bob;
SELECT id, owner FROM docs ORDER BY id;
SELECT body FROM docs;
RESET ROLE;
GRANT CREATE ON SCHEMA public TO regress_parity_alice;
SET ROLE regress_parity_alice;
CREATE TABLE alice_t (a int, b text);
INSERT INTO alice_t VALUES (1, 'mine'), (2, 'also');
ALTER TABLE alice_t ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON alice_t USING (a = 1);
SELECT * FROM alice_t ORDER BY a;
RESET ROLE;
GRANT SELECT ON alice_t TO regress_parity_bob;
SET ROLE regress_parity_bob;
SELECT * FROM alice_t ORDER BY a;
RESET ROLE;
SELECT * FROM alice_t ORDER BY a;
-- triggers
CREATE TABLE trg (id int, v int, note text);
CREATE TABLE trg_log (seq serial, what text);
CREATE FUNCTION trg_before_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.note = 'keep' THEN RETURN NULL; END IF;
        RETURN OLD;
    END IF;
    IF NEW.v < 0 THEN RETURN NULL; END IF;
    NEW.note := coalesce(NEW.note, '') || '[b:' || TG_OP || ']';
    RETURN NEW;
END $$;
CREATE FUNCTION trg_after_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_log (what) SELECT TG_OP || ' ' || coalesce(OLD.id::text, '-') || '->' || coalesce(NEW.id::text, '-');
    RETURN NULL;
END $$;
CREATE FUNCTION trg_stmt() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_log (what) VALUES (TG_WHEN || ' stmt ' || TG_OP);
    RETURN NULL;
END $$;
CREATE FUNCTION trg_transition() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE o text; n text;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN SELECT string_agg(id || ':' || v, ',' ORDER BY id) INTO o FROM old_t; END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN SELECT string_agg(id || ':' || v, ',' ORDER BY id) INTO n FROM new_t; END IF;
    INSERT INTO trg_log (what) VALUES ('transition ' || TG_OP || ' old=' || coalesce(o, '') || ' new=' || coalesce(n, ''));
    RETURN NULL;
END $$;
CREATE TRIGGER b_row BEFORE INSERT OR UPDATE OR DELETE ON trg FOR EACH ROW EXECUTE FUNCTION trg_before_row();
CREATE TRIGGER a_row AFTER INSERT OR UPDATE OR DELETE ON trg FOR EACH ROW EXECUTE FUNCTION trg_after_row();
CREATE TRIGGER b_stmt BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON trg FOR EACH STATEMENT EXECUTE FUNCTION trg_stmt();
CREATE TRIGGER a_stmt AFTER INSERT OR UPDATE OR DELETE ON trg FOR EACH STATEMENT EXECUTE FUNCTION trg_stmt();
CREATE TRIGGER t_ins AFTER INSERT ON trg REFERENCING NEW TABLE AS new_t FOR EACH STATEMENT EXECUTE FUNCTION trg_transition();
CREATE TRIGGER t_upd AFTER UPDATE ON trg REFERENCING OLD TABLE AS old_t NEW TABLE AS new_t FOR EACH STATEMENT EXECUTE FUNCTION trg_transition();
CREATE TRIGGER t_del AFTER DELETE ON trg REFERENCING OLD TABLE AS old_t FOR EACH STATEMENT EXECUTE FUNCTION trg_transition();
INSERT INTO trg VALUES (1, 10, NULL) RETURNING *;
INSERT INTO trg VALUES (2, 20, 'keep'), (3, -1, 'skipped'), (4, 40, NULL);
UPDATE trg SET v = v + 1 WHERE id = 1 RETURNING *;
UPDATE trg SET v = -5 WHERE id = 4;
UPDATE trg SET v = v * 2;
DELETE FROM trg WHERE id IN (1, 2);
SELECT * FROM trg ORDER BY id;
SELECT seq, what FROM trg_log ORDER BY seq;
CREATE TRIGGER upd_cond BEFORE UPDATE OF v ON trg FOR EACH ROW WHEN (OLD.v IS DISTINCT FROM NEW.v)
  EXECUTE FUNCTION trg_before_row();
UPDATE trg SET note = 'n' WHERE id = 4 RETURNING *;
UPDATE trg SET v = 1 WHERE id = 4 RETURNING *;
TRUNCATE trg_log;
ALTER TABLE trg DISABLE TRIGGER a_row;
INSERT INTO trg SELECT g, g, NULL FROM generate_series(10, 14) g;
ALTER TABLE trg ENABLE TRIGGER a_row;
SELECT seq, what FROM trg_log ORDER BY seq;
TRUNCATE trg;
SELECT what FROM trg_log ORDER BY seq DESC LIMIT 1;
-- constraint trigger, deferred
CREATE FUNCTION trg_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT count(*) FROM trg) > 2 THEN RAISE EXCEPTION 'too many rows in trg: %', (SELECT count(*) FROM trg); END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER c_check AFTER INSERT ON trg DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trg_check();
BEGIN;
INSERT INTO trg VALUES (100, 1, NULL), (101, 2, NULL), (102, 3, NULL);
DELETE FROM trg WHERE id = 102;
COMMIT;
BEGIN;
INSERT INTO trg VALUES (103, 1, NULL);
COMMIT;
SELECT id, v FROM trg ORDER BY id;
-- INSTEAD OF trigger on a view over the table
CREATE VIEW trg_v AS SELECT id, v FROM trg;
CREATE FUNCTION trg_instead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg VALUES (NEW.id, NEW.v * 100, 'via view');
    RETURN NEW;
END $$;
CREATE TRIGGER inst INSTEAD OF INSERT ON trg_v FOR EACH ROW EXECUTE FUNCTION trg_instead();
ALTER TABLE trg DISABLE TRIGGER c_check;
INSERT INTO trg_v VALUES (7, 7);
SELECT * FROM trg WHERE id = 7;
DROP VIEW trg_v;
DROP TABLE trg, trg_log, docs, alice_t;
DROP FUNCTION trg_before_row(), trg_after_row(), trg_stmt(), trg_transition(), trg_check(), trg_instead();
REVOKE CREATE ON SCHEMA public FROM regress_parity_alice;
DROP OWNED BY regress_parity_alice, regress_parity_bob;
DROP ROLE regress_parity_alice;
DROP ROLE regress_parity_bob;
