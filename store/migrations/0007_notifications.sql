-- The outbox of outgoing notifications (the webhooks shardgate sends to
-- configured receivers): one row per event and receiver, kept until the
-- receiver accepted it or the sender gave up. A sender claims a row as a
-- worker claims a job: a lease (owner, lease_until), taken over once expired.
CREATE TABLE notifications (
    -- the delivery id the receiver sees (X-Shardgate-Delivery); unique, so an
    -- event is stored once per receiver whichever replica emits it
    id          text PRIMARY KEY,
    receiver    text NOT NULL,
    event       text NOT NULL,
    body        bytea NOT NULL,
    state       text NOT NULL CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
    attempts    integer NOT NULL DEFAULT 0,
    last_error  text NOT NULL DEFAULT '',
    not_before  timestamptz NOT NULL,
    owner       text NOT NULL DEFAULT '',
    lease_until timestamptz,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    CONSTRAINT notifications_lease_iff_sending CHECK ((state = 'sending') = (lease_until IS NOT NULL))
);

-- A claim walks only the unfinished rows, by when they are due.
CREATE INDEX notifications_pending ON notifications (not_before) WHERE state = 'pending';
CREATE INDEX notifications_sending ON notifications (lease_until) WHERE state = 'sending';
-- Pruning and the status page walk the finished ones by their last change.
CREATE INDEX notifications_finished ON notifications (updated_at) WHERE state IN ('sent', 'failed');
