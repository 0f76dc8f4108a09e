-- Claim at any backlog (issue 37): the jobs a claim may take now, kept in a
-- small table of their own in the transaction of every change, so that a
-- claim reads one short index range per installation instead of testing each
-- installation's candidates against its lane (probes of jobs_lane and
-- jobs_lane_running per candidate, over entries that a drain leaves dead).
--
-- claim_heads holds every queued job without a lane, and of each lane the
-- oldest queued job while the lane runs nothing: the candidates of the fair
-- claim. Delayed ones are among them (the claim passes over those not yet
-- due): a lane whose oldest job waits for a retry has that job as its head,
-- so its younger jobs wait too.
CREATE TABLE claim_heads (
    id           bigint PRIMARY KEY, -- the job's
    installation bigint NOT NULL,
    priority     smallint NOT NULL,
    not_before   timestamptz
);
-- Per installation its best candidate first: highest priority, then oldest.
CREATE INDEX claim_heads_pick ON claim_heads (installation, priority DESC, id);

-- claim_lanes: one row per lane with a queued or running job, naming its
-- head (NULL while the lane runs a job). Every change to a lane's jobs locks
-- its row first, so the changes of one lane are applied one after another,
-- each seeing the ones before it (READ COMMITTED takes a fresh snapshot per
-- statement of the trigger): an enqueue and the completion of the lane's
-- running job committing side by side cannot both leave the lane headless.
-- Row locks, not advisory ones: a batch of 256 enqueues over 256 lanes holds
-- no entry of the shared lock table.
CREATE TABLE claim_lanes (
    lane text PRIMARY KEY,
    head bigint
);

-- claim_busy: how many jobs each installation runs (installation 0, no
-- identity, is not counted), kept by the same trigger, so a claim reads the
-- counts of the installations it compares from a table of a row each rather
-- than from the running jobs' index, whose entries every claim and
-- completion leaves dead until a vacuum.
CREATE TABLE claim_busy (
    installation bigint PRIMARY KEY,
    n            integer NOT NULL
) WITH (fillfactor = 20); -- room on each page for the new versions of its hot rows (HOT updates)

-- The tables hold about a row per busy pull request, and every claim and
-- completion changes them: vacuum them after a thousand changes, whatever
-- their size, so that dead index entries do not pile up in front of the
-- claim's scans.
ALTER TABLE claim_heads SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
ALTER TABLE claim_lanes SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
                             fillfactor = 70);
ALTER TABLE claim_busy SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);

-- claim_lane_refresh makes the lane's head in claim_heads match its jobs,
-- under the lane's row lock. p_claimed > 0 is a job just claimed (queued to
-- running) in this transaction: unless it was the lane's head (a concurrent
-- change of the lane, committed after the claim's snapshot, made another job
-- the head), the claim is refused with SGC01 and the caller claims again.
CREATE FUNCTION claim_lane_refresh(p_lane text, p_claimed bigint) RETURNS void LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    cur    bigint;
    h      record;
    busy   boolean;
    queued boolean;
    nxt   bigint;
BEGIN
    LOOP
        SELECT head INTO cur FROM claim_lanes WHERE lane = p_lane FOR UPDATE;
        EXIT WHEN FOUND;
        INSERT INTO claim_lanes (lane) VALUES (p_lane) ON CONFLICT (lane) DO NOTHING;
    END LOOP;
    IF p_claimed > 0 AND cur IS DISTINCT FROM p_claimed THEN
        RAISE EXCEPTION 'claimed job % is not the head of its lane', p_claimed USING ERRCODE = 'SGC01';
    END IF;
    busy := EXISTS (SELECT 1 FROM jobs WHERE lane = p_lane AND lane <> '' AND state = 'running');
    SELECT id, installation, priority, not_before INTO h FROM jobs
        WHERE lane = p_lane AND lane <> '' AND state = 'queued' ORDER BY id LIMIT 1;
    queued := FOUND;
    IF NOT busy AND NOT queued THEN
        DELETE FROM claim_heads WHERE id = cur;
        DELETE FROM claim_lanes WHERE lane = p_lane;
        RETURN;
    END IF;
    IF queued AND NOT busy THEN
        nxt := h.id;
    END IF;
    IF cur IS DISTINCT FROM nxt THEN
        DELETE FROM claim_heads WHERE id = cur;
        UPDATE claim_lanes SET head = nxt WHERE lane = p_lane;
        IF nxt IS NOT NULL THEN
            INSERT INTO claim_heads (id, installation, priority, not_before)
            VALUES (h.id, h.installation, h.priority, h.not_before)
            ON CONFLICT (id) DO UPDATE SET installation = EXCLUDED.installation,
                priority = EXCLUDED.priority, not_before = EXCLUDED.not_before;
        END IF;
    ELSIF nxt IS NOT NULL THEN
        -- The same head: its priority or due time may have changed.
        UPDATE claim_heads SET installation = h.installation, priority = h.priority, not_before = h.not_before
        WHERE id = nxt AND (installation, priority, not_before)
            IS DISTINCT FROM (h.installation, h.priority, h.not_before);
    END IF;
END
$$;

-- jobs_claim_heads keeps both tables in the transaction of every change to
-- a job that may move a head or a running count: its insert, a change of
-- its state, priority, due time, installation or lane, its deletion.
CREATE FUNCTION jobs_claim_heads() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    old_live boolean := TG_OP <> 'INSERT' AND OLD.state IN ('queued', 'running');
    new_live boolean := TG_OP <> 'DELETE' AND NEW.state IN ('queued', 'running');
    moved    boolean := TG_OP <> 'UPDATE'
        OR OLD.state IS DISTINCT FROM NEW.state OR OLD.lane IS DISTINCT FROM NEW.lane
        OR OLD.installation IS DISTINCT FROM NEW.installation OR OLD.priority IS DISTINCT FROM NEW.priority
        OR OLD.not_before IS DISTINCT FROM NEW.not_before;
BEGIN
    IF NOT moved OR NOT (old_live OR new_live) THEN
        RETURN NULL;
    END IF;
    -- The running count first, then the lane: every change takes the two
    -- row locks in this order.
    IF TG_OP <> 'INSERT' AND OLD.state = 'running' AND OLD.installation <> 0
            AND NOT (new_live AND NEW.state = 'running' AND NEW.installation = OLD.installation) THEN
        UPDATE claim_busy SET n = n - 1 WHERE installation = OLD.installation;
    END IF;
    IF new_live AND NEW.state = 'running' AND NEW.installation <> 0
            AND NOT (TG_OP <> 'INSERT' AND OLD.state = 'running' AND OLD.installation = NEW.installation) THEN
        INSERT INTO claim_busy (installation, n) VALUES (NEW.installation, 1)
        ON CONFLICT (installation) DO UPDATE SET n = claim_busy.n + 1;
    END IF;
    -- Jobs without a lane: a candidate exactly while queued.
    IF old_live AND OLD.lane = '' AND OLD.state = 'queued'
            AND NOT (new_live AND NEW.lane = '' AND NEW.state = 'queued') THEN
        DELETE FROM claim_heads WHERE id = OLD.id;
    END IF;
    IF new_live AND NEW.lane = '' AND NEW.state = 'queued' THEN
        INSERT INTO claim_heads (id, installation, priority, not_before)
        VALUES (NEW.id, NEW.installation, NEW.priority, NEW.not_before)
        ON CONFLICT (id) DO UPDATE SET installation = EXCLUDED.installation, priority = EXCLUDED.priority,
            not_before = EXCLUDED.not_before;
    END IF;
    -- Jobs of a lane: the lane's head is worked out again.
    IF old_live AND OLD.lane <> '' AND (NOT new_live OR NEW.lane IS DISTINCT FROM OLD.lane) THEN
        PERFORM claim_lane_refresh(OLD.lane, 0);
    END IF;
    IF new_live AND NEW.lane <> '' THEN
        PERFORM claim_lane_refresh(NEW.lane,
            CASE WHEN TG_OP = 'UPDATE' AND OLD.state = 'queued' AND NEW.state = 'running' THEN NEW.id ELSE 0 END);
    END IF;
    RETURN NULL;
END
$$;

-- Named to fire before jobs_count_queued (triggers fire in name order), so a
-- change takes its lane's row lock before its queue_depth slot.
CREATE TRIGGER jobs_claim_heads AFTER INSERT OR UPDATE OF state, lane, installation, priority, not_before OR DELETE
    ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_claim_heads();

-- The jobs stored before this migration: writers wait until it commits (and
-- then fire the trigger), so nothing changes between this fill and them.
LOCK TABLE jobs IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO claim_lanes (lane)
    SELECT DISTINCT lane FROM jobs WHERE state IN ('queued', 'running') AND lane <> '';
INSERT INTO claim_heads (id, installation, priority, not_before)
    SELECT DISTINCT ON (lane) id, installation, priority, not_before FROM jobs j
    WHERE state = 'queued' AND lane <> ''
        AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.lane = j.lane AND r.lane <> '' AND r.state = 'running')
    ORDER BY lane, id;
UPDATE claim_lanes l SET head = j.id FROM claim_heads h JOIN jobs j ON j.id = h.id WHERE j.lane = l.lane;
INSERT INTO claim_heads (id, installation, priority, not_before)
    SELECT id, installation, priority, not_before FROM jobs WHERE state = 'queued' AND lane = '';
INSERT INTO claim_busy (installation, n)
    SELECT installation, count(*) FROM jobs WHERE state = 'running' AND installation <> 0 GROUP BY installation;
