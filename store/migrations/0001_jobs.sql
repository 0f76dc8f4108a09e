-- The job queue: webhook deliveries and work the bot schedules itself.
-- Claimed oldest id first with FOR UPDATE SKIP LOCKED; a running job is a
-- lease (owner, lease_until) its owner renews, taken over once it expired.
CREATE TABLE jobs (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- GitHub's X-GitHub-Delivery: unique, so a delivery sent to two replicas
    -- is stored once; NULL for jobs without one (NULLs never conflict).
    delivery_id text UNIQUE,
    kind        text NOT NULL,
    event       text NOT NULL DEFAULT '',
    payload     bytea,
    state       text NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    not_before  timestamptz,
    owner       text NOT NULL DEFAULT '',
    lease_until timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    finished_at timestamptz,
    CONSTRAINT jobs_lease_iff_running CHECK ((state = 'running') = (lease_until IS NOT NULL)),
    CONSTRAINT jobs_finished_iff_ended CHECK ((state IN ('done', 'failed')) = (finished_at IS NOT NULL))
);

-- Payloads (webhook bodies, 25 MiB at most) compress with lz4 where the
-- server has it (PostgreSQL 14+ built with lz4): pglz, the default, costs
-- the server a millisecond of CPU per typical 28 KB body, about a core at
-- 1,000 deliveries a second.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE jobs ALTER COLUMN payload SET COMPRESSION lz4;
    END IF;
END
$$;

-- Claim and the queue depth walk only the queued jobs, in id order.
CREATE INDEX jobs_queued ON jobs (id) WHERE state = 'queued';
-- ReclaimExpired finds expired leases without reading live jobs.
CREATE INDEX jobs_running_lease ON jobs (lease_until) WHERE state = 'running';
-- PruneDone deletes the oldest finished jobs first.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state IN ('done', 'failed');

-- The queue depth, kept by a trigger in the transaction of every change, so
-- that Enqueue checks its limit in O(1) however long the backlog. Spread over
-- 16 rows, one per connection (by backend pid), so that claims on different
-- connections do not queue behind one hot row; the depth is their sum.
CREATE TABLE queue_depth (
    slot integer PRIMARY KEY,
    n    bigint NOT NULL DEFAULT 0
);
INSERT INTO queue_depth (slot) SELECT generate_series(0, 15);

CREATE FUNCTION jobs_count_queued() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    d integer := 0;
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'queued' THEN
        d := d + 1;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'queued' THEN
        d := d - 1;
    END IF;
    IF d <> 0 THEN
        UPDATE queue_depth SET n = n + d WHERE slot = pg_backend_pid() % 16;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_count_queued AFTER INSERT OR UPDATE OF state OR DELETE ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_count_queued();

-- An exact maxQueued across replicas: enqueues with a limit take turns on an
-- advisory lock (hash of the schema, 2; the migration lock is 1) to reserve
-- room, then insert the job in a transaction of their own. Room is the
-- queued jobs plus the reservations not yet turned into jobs.
CREATE TABLE queue_reservations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- A reservation whose enqueue died is dropped after this; an enqueue
    -- that finds its reservation gone is refused as full (never overfills).
    expires_at timestamptz NOT NULL
);

-- reserve_enqueue holds the lock only for its own commit, and that commit is
-- asynchronous: no wait for the disk inside the lock. Nothing is lost by it:
-- the job's own (synchronous) commit comes later in the WAL and flushes this
-- one too, and a reservation lost in a crash had no job yet. Raises SGQ01
-- when full; SGQ02 when full and the delivery is already stored (a duplicate
-- is refused as such before any limit; when there is room, the job's insert
-- finds it).
CREATE FUNCTION reserve_enqueue(p_delivery text, p_now timestamptz, p_max bigint, p_ttl interval)
RETURNS bigint LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    taken bigint;
    rid   bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM pg_advisory_xact_lock(hashtext('shardgate:' || current_schema()), 2);
    -- Each statement from here reads a snapshot taken after the lock: every
    -- reservation and job committed before it is counted. Jobs and
    -- reservations are read in one statement, so in one snapshot: an
    -- enqueue_job committing between two reads would turn its reservation
    -- into a job unseen by both.
    SELECT (SELECT coalesce(sum(n), 0) FROM queue_depth) + (SELECT count(*) FROM queue_reservations)
        INTO taken;
    IF taken >= p_max THEN
        -- Only a full queue needs the abandoned reservations gone.
        DELETE FROM queue_reservations WHERE expires_at <= p_now;
        SELECT (SELECT coalesce(sum(n), 0) FROM queue_depth) + (SELECT count(*) FROM queue_reservations)
            INTO taken;
    END IF;
    IF taken >= p_max THEN
        IF p_delivery IS NOT NULL AND EXISTS (SELECT 1 FROM jobs WHERE delivery_id = p_delivery) THEN
            RAISE EXCEPTION 'delivery already enqueued' USING ERRCODE = 'SGQ02';
        END IF;
        RAISE EXCEPTION 'queue is full' USING ERRCODE = 'SGQ01';
    END IF;
    INSERT INTO queue_reservations (expires_at) VALUES (p_now + p_ttl) RETURNING id INTO rid;
    RETURN rid;
END
$$;

-- enqueue_job stores a job, turning its reservation (NULL: no limit) into
-- it in the same transaction; NULL for a duplicate delivery.
CREATE FUNCTION enqueue_job(p_delivery text, p_kind text, p_event text, p_payload bytea,
                            p_now timestamptz, p_reservation bigint)
RETURNS bigint LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    new_id bigint;
BEGIN
    IF p_reservation IS NOT NULL THEN
        DELETE FROM queue_reservations WHERE id = p_reservation;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'queue reservation expired' USING ERRCODE = 'SGQ01';
        END IF;
    END IF;
    INSERT INTO jobs (delivery_id, kind, event, payload, state, created_at, updated_at)
    VALUES (p_delivery, p_kind, p_event, p_payload, 'queued', p_now, p_now)
    ON CONFLICT (delivery_id) DO NOTHING
    RETURNING id INTO new_id;
    RETURN new_id;
END
$$;
