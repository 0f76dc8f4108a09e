-- Group commit: Postgres.Enqueue gathers the enqueues that arrive together
-- and stores them in one transaction, one commit (one WAL flush) for all.
--
-- A batch with a limit first reserves room for all its jobs at once
-- (reserve_batch), under the enqueue lock (advisory: hash of the schema, 2,
-- as reserve_enqueue), held only for that transaction's asynchronous commit;
-- its reservations carry a token of the batch's own. The batch's jobs are
-- then stored in one transaction that turns reservations into jobs
-- (enqueue_reserved) and drops those left over. Limits stay exact across
-- replicas, and no batch waits for another's disk flush.
ALTER TABLE queue_reservations ADD COLUMN token text;
CREATE INDEX queue_reservations_token ON queue_reservations (token) WHERE token IS NOT NULL;

-- reserve_batch reserves room for up to p_n jobs when p_max (> 0) allows
-- and returns how many it reserved. Reservations of dead enqueues are
-- dropped once expired; those of replicas still on reserve_enqueue count.
CREATE FUNCTION reserve_batch(p_token text, p_n integer, p_now timestamptz, p_max bigint, p_ttl interval)
RETURNS integer LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    taken bigint;
    room  integer;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtext('shardgate:' || current_schema()), 2);
    -- As in reserve_enqueue: one statement, one snapshot taken after the lock.
    SELECT (SELECT coalesce(sum(n), 0) FROM queue_depth) + (SELECT count(*) FROM queue_reservations)
        INTO taken;
    IF taken + p_n > p_max THEN
        DELETE FROM queue_reservations WHERE expires_at <= p_now;
        SELECT (SELECT coalesce(sum(n), 0) FROM queue_depth) + (SELECT count(*) FROM queue_reservations)
            INTO taken;
    END IF;
    room := greatest(0, least(p_n::bigint, p_max - taken))::integer;
    INSERT INTO queue_reservations (expires_at, token)
        SELECT p_now + p_ttl, p_token FROM generate_series(1, room);
    RETURN room;
END
$$;

-- enqueue_reserved stores one job of a batch and returns its id: -1 for a
-- delivery already stored (before the batch or earlier in it), refused as
-- such before any limit; -2 when the job needs room (p_limited) and the
-- batch's reservations are used up (or expired and dropped). Nothing is
-- raised, so a refusal leaves the rest of the batch to commit.
CREATE FUNCTION enqueue_reserved(p_token text, p_limited boolean, p_delivery text, p_kind text,
                                 p_event text, p_payload bytea, p_now timestamptz)
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
    -- A delivery another transaction stored meanwhile conflicts here: the
    -- reservation taken above is then simply freed.
    INSERT INTO jobs (delivery_id, kind, event, payload, state, created_at, updated_at)
    VALUES (p_delivery, p_kind, p_event, p_payload, 'queued', p_now, p_now)
    ON CONFLICT (delivery_id) DO NOTHING
    RETURNING id INTO new_id;
    RETURN coalesce(new_id, -1);
END
$$;
