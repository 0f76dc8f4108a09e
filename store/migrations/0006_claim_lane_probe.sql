-- Claim at any backlog (issue 37): whether a lane has a job running is one
-- probe of this index, and whether it has an older queued one is a range
-- probe of jobs_lane (lane, id < the candidate's), so that neither walks
-- the lane's queued jobs. Before it, claimSQL filtered every queued job of
-- the candidate's lane (EXPLAIN ANALYZE at 100,000 queued jobs over 1,000
-- lanes: 5,649 buffers for the pick; with it, 623).
CREATE INDEX jobs_lane_running ON jobs (lane) WHERE state = 'running' AND lane <> '';

-- A drained job leaves dead entries at the front of the queued partial
-- indexes until the table is vacuumed, and every claim's scans step over
-- them: vacuum the queue table after 1% of it changed rather than the
-- default 20%, so a long drain does not slow its own claims.
ALTER TABLE jobs SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000);
