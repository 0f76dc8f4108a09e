-- Claim at any backlog (issue 37): whether a lane has a job running is one
-- probe of this index, and whether it has an older queued one is a range
-- probe of jobs_lane (lane, id < the candidate's), so that neither walks
-- the lane's queued jobs. Before it, claimSQL filtered every queued job of
-- the candidate's lane (EXPLAIN ANALYZE at 100,000 queued jobs over 1,000
-- lanes: 5,649 buffers for the pick; with it, 623).
CREATE INDEX jobs_lane_running ON jobs (lane) WHERE state = 'running' AND lane <> '';
