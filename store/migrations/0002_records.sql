-- Keyed records in named buckets: plan results, attestations, label origins,
-- audit records, remembered metadata versions, apply jobs. bytea keys sort
-- byte by byte, as bbolt's do, whatever the database's collation.
CREATE TABLE records (
    bucket text COLLATE "C" NOT NULL CHECK (bucket <> ''),
    key    bytea NOT NULL CHECK (length(key) > 0),
    value  bytea NOT NULL,
    PRIMARY KEY (bucket, key)
);
