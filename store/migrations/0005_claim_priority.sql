-- A job's claim priority (Job.Priority): Claim takes a due queued job of a
-- higher priority before any of a lower one, within the lane rule.
ALTER TABLE jobs ADD COLUMN priority smallint NOT NULL DEFAULT 0;

-- Claim walks each installation's queued jobs by priority, then age.
CREATE INDEX jobs_queued_priority ON jobs (installation, priority DESC, id) WHERE state = 'queued';

-- enqueue_reserved as in 0004, storing the job's priority too.
CREATE FUNCTION enqueue_reserved(p_token text, p_limited boolean, p_delivery text, p_kind text,
                                 p_event text, p_payload bytea, p_now timestamptz,
                                 p_installation bigint, p_lane text, p_coalesce_key text,
                                 p_priority smallint)
RETURNS bigint LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    new_id bigint;
BEGIN
    new_id := enqueue_reserved(p_token, p_limited, p_delivery, p_kind, p_event, p_payload, p_now,
                               p_installation, p_lane, p_coalesce_key);
    IF new_id > 0 AND p_priority <> 0 THEN
        UPDATE jobs SET priority = p_priority WHERE id = new_id;
    END IF;
    RETURN new_id;
END
$$;
