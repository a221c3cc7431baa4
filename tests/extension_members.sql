-- Every SQL object of the pgcolumnar extension with what defines it, one line each:
-- two databases that print the same have the same objects (tests/extension_update.sh
-- compares an install updated from an earlier version with a new one).
SET search_path = pg_catalog;
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'pgcolumnar'),
member AS (
    SELECT d.classid, d.objid, d.objsubid FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'),
relation AS (
    SELECT c.* FROM member m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid)
SELECT line FROM (
    SELECT pg_describe_object(classid, objid, objsubid)
           || coalesce(' comment ' || quote_literal(obj_description(objid, classid::regclass::name)), '') AS line
      FROM member
    UNION ALL
    SELECT format('extension %s schema %s relocatable %s config %s %s', e.extname, e.extnamespace::regnamespace,
                  e.extrelocatable, e.extconfig::regclass[], e.extcondition)
      FROM pg_extension e, ext WHERE e.oid = ext.oid
    UNION ALL
    SELECT format('schema %s owner-is-extension-owner %s acl %s', n.nspname,
                  n.nspowner = (SELECT extowner FROM pg_extension WHERE oid = ext.oid), n.nspacl)
      FROM pg_namespace n, ext WHERE n.oid = (SELECT extnamespace FROM pg_extension WHERE oid = ext.oid)
    UNION ALL
    SELECT format('relation %s kind %s persistence %s acl %s options %s', r.oid::regclass, r.relkind,
                  r.relpersistence, r.relacl, r.reloptions)
      FROM relation r
    UNION ALL
    SELECT format('column %s.%s %s collation %s not null %s default %s identity "%s" generated "%s" acl %s',
                  r.oid::regclass, a.attname, format_type(a.atttypid, a.atttypmod), a.attcollation,
                  a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid), a.attidentity, a.attgenerated, a.attacl)
      FROM relation r
      JOIN pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
      LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
    UNION ALL
    SELECT format('constraint %s on %s: %s', co.conname, r.oid::regclass, pg_get_constraintdef(co.oid))
      FROM relation r JOIN pg_constraint co ON co.conrelid = r.oid
    UNION ALL
    SELECT format('index %s', pg_get_indexdef(i.indexrelid)) FROM relation r JOIN pg_index i ON i.indrelid = r.oid
    UNION ALL
    SELECT format('trigger %s', pg_get_triggerdef(t.oid)) FROM relation r
      JOIN pg_trigger t ON t.tgrelid = r.oid AND NOT t.tgisinternal
    UNION ALL
    SELECT format('view %s: %s', r.oid::regclass, pg_get_viewdef(r.oid)) FROM relation r WHERE r.relkind IN ('v', 'm')
    UNION ALL
    SELECT format('sequence %s %s start %s increment %s min %s max %s cache %s cycle %s', r.oid::regclass,
                  s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin, s.seqmax, s.seqcache, s.seqcycle)
      FROM relation r JOIN pg_sequence s ON s.seqrelid = r.oid
    UNION ALL
    SELECT format('function %s(%s) returns %s language %s strict %s volatility %s parallel %s security definer %s cost %s rows %s symbol %s file %s config %s acl %s',
                  p.oid::regproc, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), l.lanname,
                  p.proisstrict, p.provolatile, p.proparallel, p.prosecdef, p.procost, p.prorows, p.prosrc,
                  p.probin, p.proconfig, p.proacl)
      FROM member m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
      JOIN pg_language l ON l.oid = p.prolang
    UNION ALL
    SELECT format('access method %s type %s handler %s', a.amname, a.amtype, a.amhandler)
      FROM member m JOIN pg_am a ON m.classid = 'pg_am'::regclass AND a.oid = m.objid
) lines ORDER BY line;
