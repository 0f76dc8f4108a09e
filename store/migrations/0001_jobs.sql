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

-- Claim and the queue depth walk only the queued jobs, in id order.
CREATE INDEX jobs_queued ON jobs (id) WHERE state = 'queued';
-- ReclaimExpired finds expired leases without reading live jobs.
CREATE INDEX jobs_running_lease ON jobs (lease_until) WHERE state = 'running';
-- PruneDone deletes the oldest finished jobs first.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE state IN ('done', 'failed');
