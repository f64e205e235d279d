-- dpbandit schema on PostgreSQL, version 2: the one-server lease that fences
-- every write (PostgreSQL only: the SQLite store's one-server lock is an OS
-- file lock on PATH.lock, and its versions 1-3 have no counterpart of it).
-- The session advisory lock keeps a second server out while the first one's
-- session lives; but a session can end (pg_terminate_backend, a network
-- cut) while its process carries on through the other connections of its
-- pool. So each server, once it holds the advisory lock, increments token
-- and keeps the value; every write transaction first reads the row FOR
-- SHARE and aborts unless token is still its own. A server that takes the
-- lock over increments token (its UPDATE waits for the old server's write
-- transactions in flight), after which none of the old server's writes can
-- land.
CREATE TABLE dpbandit_lease (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    token  BIGINT NOT NULL,
    holder TEXT NOT NULL                -- the holding process, for messages
);

INSERT INTO dpbandit_lease (id, token, holder) VALUES (1, 0, '');
