SELECT 'public.docs'::regclass, 'docs'::regclass::oid
-- transpiled:
SELECT __HATI_REGCLASS('public.docs'), CAST(__HATI_REGCLASS('docs') AS BIGINT)
