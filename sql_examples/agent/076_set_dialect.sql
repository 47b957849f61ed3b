SET hatidata.dialect = 'snowflake'
-- transpiled:
SET hatidata.dialect = 'snowflake'
