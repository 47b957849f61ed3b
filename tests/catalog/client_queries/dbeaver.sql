-- Catalog queries DBeaver (PostgreSQL driver) sends when it connects and opens the
-- navigator. Not captured here (DBeaver is not installed on these machines): written
-- after the SQL DBeaver 23.x/24.x is known to send, with its bind values inlined.
-- Entry format as in psql.sql.

-- query: dbeaver #1 connect: current schema and user
SELECT current_schema(),session_user;
-- ====
-- query: dbeaver #5 connect: in recovery
SELECT pg_catalog.pg_is_in_recovery();
-- ====
-- query: dbeaver #2 connect: max_index_keys
SELECT setting FROM pg_catalog.pg_settings WHERE name='max_index_keys';
-- ====
-- query: dbeaver #3 connect: database row
SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname='hatidata';
-- ====
-- query: dbeaver #4 connect: standard_conforming_strings
select * from pg_catalog.pg_settings where name='standard_conforming_strings';
-- ====
-- query: dbeaver #6 navigator: schemas
SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass
 ORDER BY nspname;
-- ====
-- query: dbeaver #7 navigator: data types
SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description
FROM pg_catalog.pg_type t
LEFT OUTER JOIN pg_catalog.pg_type et ON et.oid=t.typelem
LEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid
WHERE t.typname IS NOT NULL
AND (c.relkind IS NULL OR c.relkind = 'c') AND (et.typcategory IS NULL OR et.typcategory <> 'C');
-- ====
-- query: dbeaver #8 navigator: tables of public
SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as partition_expr,  pg_catalog.pg_get_partkeydef(c.oid) as partition_key
FROM pg_catalog.pg_class c
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass
WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c');
-- ====
-- query: dbeaver #9 navigator: columns of items
SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description,dep.objid
FROM pg_catalog.pg_attribute a
INNER JOIN pg_catalog.pg_class c ON (a.attrelid=c.oid)
LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum)
LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid)
LEFT OUTER JOIN pg_depend dep on dep.refobjid = a.attrelid AND dep.deptype = 'i' and dep.refobjsubid = a.attnum and dep.classid = dep.refclassid
WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.oid='{{oid:items}}'
ORDER BY a.attnum;
-- ====
-- query: dbeaver #10 navigator: constraints of public
SELECT c.oid,c.*,t.relname as tabrelname,rt.relnamespace as refnamespace,d.description, case when c.contype='c' then "substring"(pg_get_constraintdef(c.oid), 7) end consrc_copy
FROM pg_catalog.pg_constraint c
INNER JOIN pg_catalog.pg_class t ON t.oid=c.conrelid
LEFT OUTER JOIN pg_catalog.pg_class rt ON rt.oid=c.confrelid
LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_constraint'::regclass
WHERE t.relnamespace=2200
ORDER BY c.oid;
-- ====
-- query: dbeaver #11 navigator: indexes of public
SELECT i.*,i.indkey as keys,c.relname,c.relnamespace,c.relam,c.reltablespace,tc.relname as tabrelname,dsc.description,pg_catalog.pg_get_expr(i.indpred, i.indrelid) as pred_expr,pg_catalog.pg_get_expr(i.indexprs, i.indrelid, true) as expr,pg_catalog.pg_relation_size(i.indexrelid) as index_rel_size,pg_catalog.pg_stat_get_numscans(i.indexrelid) as index_num_scans
FROM pg_catalog.pg_index i
INNER JOIN pg_catalog.pg_class c ON c.oid=i.indexrelid
INNER JOIN pg_catalog.pg_class tc ON tc.oid=i.indrelid
LEFT OUTER JOIN pg_catalog.pg_description dsc ON i.indexrelid=dsc.objoid
WHERE  c.relnamespace=2200
ORDER BY tabrelname, c.relname;
-- ====
-- query: dbeaver #12 navigator: roles
SELECT a.oid,a.* FROM pg_catalog.pg_roles a ORDER BY a.rolname;
-- ====
-- query: dbeaver #13 navigator: extensions
SELECT e.oid,e.*,n.nspname FROM pg_catalog.pg_extension e LEFT OUTER JOIN pg_catalog.pg_namespace n ON n.oid=e.extnamespace ORDER BY e.extname;
-- ====
-- query: dbeaver #14 keywords (pgJDBC getSQLKeywords)
select string_agg(word, ',') from pg_catalog.pg_get_keywords() where word <> ALL ('{a,abs,absolute,action,ada,add,admin,after,all,allocate,alter,always,and,any,are,array,as,asc,between,bigint,binary,both,by,case,cast,char,check,column,create,cross,current,default,delete,desc,distinct,drop,else,end,exists,false,from,full,grant,group,having,in,inner,insert,into,is,join,left,like,not,null,on,or,order,outer,primary,references,right,select,set,table,then,to,true,union,unique,update,user,using,values,when,where,with}'::text[]);
-- ====
