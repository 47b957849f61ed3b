RESET hatidata_request_id
-- transpiled:
RESET hatidata_request_id
