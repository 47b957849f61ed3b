SELECT 'public.docs'::regclass, 'docs'::regclass::oid
-- transpiled:
SELECT __HATI_REGCLASS_NAME(__HATI_REGCLASS('public.docs')) AS regclass, CAST(__HATI_REGCLASS('docs') AS BIGINT)
