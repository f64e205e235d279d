-- dpbandit schema on PostgreSQL, version 1 (the same contract as the
-- SQLite store's versions 1-3, and the same column types where the shared
-- SQL reads them: times are unix milliseconds, flags integers 0/1).
CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);

CREATE TABLE api_keys (
    id          TEXT PRIMARY KEY,
    hash        BYTEA NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('admin', 'client')),
    experiments TEXT NOT NULL,          -- JSON array of experiment ids
    created_at  BIGINT NOT NULL
);

CREATE TABLE experiments (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    config     BYTEA NOT NULL,          -- the server's JSON configuration
    created_at BIGINT NOT NULL,
    ord        BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE -- creation order
);

CREATE TABLE states (
    experiment   TEXT PRIMARY KEY REFERENCES experiments(id),
    policy       BYTEA NOT NULL,
    engine       BYTEA NOT NULL,
    decision_seq BIGINT NOT NULL,
    reward_seq   BIGINT NOT NULL,
    applied_seq  BIGINT NOT NULL,
    version      BIGINT NOT NULL
);

CREATE TABLE decisions (
    experiment       TEXT NOT NULL REFERENCES experiments(id),
    seq              BIGINT NOT NULL,
    event_id         TEXT NOT NULL,
    arm              INTEGER NOT NULL,
    frozen           INTEGER NOT NULL CHECK (frozen IN (0, 1)),
    created_at       BIGINT NOT NULL,
    features         BYTEA,             -- contextual: little-endian float64s
    propensity       DOUBLE PRECISION,  -- when asked for (NULL otherwise)
    propensity_draws INTEGER,
    PRIMARY KEY (experiment, seq),
    UNIQUE (experiment, event_id)
);

CREATE TABLE rewards (
    experiment TEXT NOT NULL REFERENCES experiments(id),
    seq        BIGINT NOT NULL,
    event_id   TEXT NOT NULL,
    value      DOUBLE PRECISION,        -- NULL once purged (reward_retention)
    is_default INTEGER NOT NULL CHECK (is_default IN (0, 1)),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (experiment, seq),
    UNIQUE (experiment, event_id)
);
