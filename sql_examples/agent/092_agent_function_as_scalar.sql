SELECT store_memory('a fact')
-- error: 0A000
