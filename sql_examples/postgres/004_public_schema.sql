SELECT title FROM public.docs WHERE public.docs.id = 1
-- transpiled:
SELECT title FROM main.docs WHERE main.docs.id = 1
-- rows:
["Billing FAQ"]
