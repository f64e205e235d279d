-- dpbandit schema, version 3: a reward's value may be deleted (NULL) once
-- the policy state that includes it is durable and the experiment's
-- reward_retention has passed (docs/privacy-model.md, retention: raw rewards are kept only as long
-- as they are needed). The row stays: the event keeps its reward, and counts
-- and idempotency by event id do not change. SQLite cannot drop NOT NULL in
-- place, so the table is rebuilt.
CREATE TABLE rewards_v3 (
    experiment TEXT NOT NULL REFERENCES experiments(id),
    seq        INTEGER NOT NULL,
    event_id   TEXT NOT NULL,
    value      REAL,                    -- NULL once purged
    is_default INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (experiment, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO rewards_v3 (experiment, seq, event_id, value, is_default, created_at)
    SELECT experiment, seq, event_id, value, is_default, created_at FROM rewards;
DROP TABLE rewards;
ALTER TABLE rewards_v3 RENAME TO rewards;
CREATE UNIQUE INDEX rewards_event ON rewards (experiment, event_id);
