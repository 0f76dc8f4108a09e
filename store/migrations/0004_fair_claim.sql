-- Fair scheduling and coalescing (Store.Claim). A job carries the identity
-- intake read from its delivery: the installation, the lane (the pull
-- request, "owner/repo#N") and the coalesce key; zero values mean none.
-- coalesced_into names the job a duplicate was finished into.
ALTER TABLE jobs
    ADD COLUMN installation   bigint NOT NULL DEFAULT 0,
    ADD COLUMN lane           text   NOT NULL DEFAULT '',
    ADD COLUMN coalesce_key   text   NOT NULL DEFAULT '',
    ADD COLUMN coalesced_into bigint;

-- Claim walks the queued jobs one installation at a time, oldest first
-- (a loose scan of this index finds the installations).
CREATE INDEX jobs_queued_installation ON jobs (installation, id) WHERE state = 'queued';
-- Whether a lane has an older queued job or a running one is one probe.
CREATE INDEX jobs_lane ON jobs (lane, id) WHERE state IN ('queued', 'running') AND lane <> '';
-- The duplicates of a coalesce key, and those coalesced into a job.
CREATE INDEX jobs_queued_coalesce ON jobs (coalesce_key, id) WHERE state = 'queued' AND coalesce_key <> '';
CREATE INDEX jobs_coalesced_into ON jobs (coalesced_into) WHERE coalesced_into IS NOT NULL;

-- enqueue_reserved as in 0003, storing the job's identity too.
CREATE FUNCTION enqueue_reserved(p_token text, p_limited boolean, p_delivery text, p_kind text,
                                 p_event text, p_payload bytea, p_now timestamptz,
                                 p_installation bigint, p_lane text, p_coalesce_key text)
RETURNS bigint LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    new_id bigint;
BEGIN
    IF p_delivery IS NOT NULL AND EXISTS (SELECT 1 FROM jobs WHERE delivery_id = p_delivery) THEN
        RETURN -1;
    END IF;
    IF p_limited THEN
        DELETE FROM queue_reservations
            WHERE id = (SELECT id FROM queue_reservations WHERE token = p_token LIMIT 1);
        IF NOT FOUND THEN
            RETURN -2;
        END IF;
    END IF;
    INSERT INTO jobs (delivery_id, kind, event, payload, state, created_at, updated_at,
                      installation, lane, coalesce_key)
    VALUES (p_delivery, p_kind, p_event, p_payload, 'queued', p_now, p_now,
            p_installation, p_lane, p_coalesce_key)
    ON CONFLICT (delivery_id) DO NOTHING
    RETURNING id INTO new_id;
    RETURN coalesce(new_id, -1);
END
$$;
