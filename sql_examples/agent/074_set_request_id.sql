SET hatidata_request_id = 'req-42'
-- transpiled:
SET hatidata_request_id = 'req-42'
