-- Which listing a failed request was about, when its path named one (the external reference of
-- PUT /listings/{externalReference}, the id of GET /listings/{id}): the operator's console shows it
-- with the request. Null for every other route, and for records kept before this column.
ALTER TABLE request_failures ADD COLUMN listing text;
