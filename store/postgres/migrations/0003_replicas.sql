-- dpbandit schema on PostgreSQL, version 3: replica mode (serve --replica,
-- docs/replicas.md). A server in the default one-server mode never writes
-- these tables; an experiment created in replica mode has a row in each.
--
-- replica_budget: the budget row, locked FOR UPDATE by each reservation.
-- granted is the privacy filter (JSON, exact units) of every block ever
-- granted to any replica: a block counts as spent from the moment it is
-- granted, so a crashed replica's unused block is never returned or reused.
CREATE TABLE replica_budget (
    experiment    TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    granted       BYTEA NOT NULL,
    exhausted     INTEGER NOT NULL DEFAULT 0 CHECK (exhausted IN (0, 1)),
    exhausted_at  BIGINT,                  -- unix ms, database clock
    reservations  BIGINT NOT NULL DEFAULT 0
);

-- One row per granted block, for audit: who holds what.
CREATE TABLE replica_reservations (
    experiment TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    n          BIGINT NOT NULL,           -- 1, 2, ... per experiment
    replica    TEXT NOT NULL,
    amount     DOUBLE PRECISION NOT NULL, -- μ, ρ or ε of the block
    created_at BIGINT NOT NULL,           -- unix ms, database clock
    PRIMARY KEY (experiment, n)
);

-- The event counters: locked by each append until it commits, so sequence
-- numbers are gapless and commit in increasing order.
CREATE TABLE replica_counters (
    experiment   TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    decision_seq BIGINT NOT NULL DEFAULT 0,
    reward_seq   BIGINT NOT NULL DEFAULT 0
);

-- The learner lease: one holder per experiment, a fencing token that
-- increments on each takeover, an expiry in database time.
CREATE TABLE replica_leases (
    experiment TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    holder     TEXT NOT NULL,
    token      BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
