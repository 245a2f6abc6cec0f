/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Never edit a
 * released step: add a new one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE jobs (
    id                   TEXT PRIMARY KEY,
    endpoint_id          TEXT NOT NULL,
    kind                 TEXT NOT NULL,
    status               TEXT NOT NULL,
    input                TEXT NOT NULL,
    output               TEXT,
    error                TEXT,
    webhook              TEXT,
    s3_config            TEXT,
    execution_timeout_ms INTEGER NOT NULL,
    ttl_ms               INTEGER NOT NULL,
    low_priority         INTEGER NOT NULL,
    created_at           INTEGER NOT NULL,
    queued_at            INTEGER NOT NULL,
    started_at           INTEGER,
    completed_at         INTEGER,
    worker_id            TEXT,
    retries              INTEGER NOT NULL,
    attempt              INTEGER NOT NULL,
    queue_seq            INTEGER NOT NULL,
    expires_at           INTEGER NOT NULL,
    timeout_at           INTEGER,
    retain_until         INTEGER,
    deadline_at          INTEGER NOT NULL,
    stream_cursor        INTEGER NOT NULL
  );
  CREATE INDEX jobs_queue ON jobs (endpoint_id, status, queue_seq);
  CREATE INDEX jobs_deadline ON jobs (deadline_at);
  CREATE TABLE stream_chunks (
    job_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    item   TEXT NOT NULL,
    PRIMARY KEY (job_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE endpoints (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL,
    handler              TEXT NOT NULL,
    workers_min          INTEGER NOT NULL,
    workers_max          INTEGER NOT NULL,
    idle_timeout         INTEGER NOT NULL,
    cold_start_ms        INTEGER NOT NULL,
    execution_timeout_ms INTEGER,
    created_at           INTEGER NOT NULL,
    extra                TEXT NOT NULL
  );
  `,
  // Network volumes (both REST versions share them) and templates of the management surface.
  `
  CREATE TABLE network_volumes (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    size_gb     INTEGER NOT NULL,
    data_center TEXT NOT NULL,
    type        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
  );
  CREATE TABLE templates (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    handler    TEXT,
    fields     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  // Pods, container registry auths, and the usage intervals billing is computed from.
  `
  CREATE TABLE pods (
    id         TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    data       TEXT NOT NULL
  );
  CREATE TABLE registry_auths (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    username   TEXT NOT NULL,
    password   TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE usage_intervals (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    attrs       TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    stopped_at  INTEGER,
    seen_at     INTEGER NOT NULL
  );
  CREATE INDEX usage_by_time ON usage_intervals (kind, started_at);
  CREATE INDEX usage_open ON usage_intervals (kind, resource_id) WHERE stopped_at IS NULL;
  `,
  // What a test looks at afterwards: job timelines, webhook deliveries, the request journal.
  `
  CREATE TABLE job_events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    at          INTEGER NOT NULL,
    from_status TEXT,
    to_status   TEXT,
    cause       TEXT NOT NULL
  );
  CREATE INDEX job_events_job ON job_events (job_id, seq);
  CREATE TABLE webhook_deliveries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    url         TEXT NOT NULL,
    attempt     INTEGER NOT NULL,
    status      INTEGER,
    error       TEXT,
    at          INTEGER NOT NULL
  );
  CREATE TABLE request_journal (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    method      TEXT NOT NULL,
    path        TEXT NOT NULL,
    endpoint_id TEXT,
    operation   TEXT,
    status      INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    body        TEXT
  );
  CREATE INDEX request_journal_filter ON request_journal (endpoint_id, operation, status);
  `,
  // The dashboard lists jobs newest first.
  `
  CREATE INDEX jobs_created ON jobs (created_at, queue_seq);
  `,
  // A job's stream chunks go with it, in the same statement (no second DELETE in a transaction).
  `
  CREATE TRIGGER jobs_delete_chunks AFTER DELETE ON jobs BEGIN
    DELETE FROM stream_chunks WHERE job_id = old.id;
  END;
  `,
  // The timeline and the journal gain a row per transition and per request. Their sequence no
  // longer uses AUTOINCREMENT (a second b-tree write per row, in sqlite_sequence): the rowid still
  // grows, since rows are only trimmed from the oldest end or all cleared. The journal loses its
  // filter index, a third write per request: a journal holds at most journal.maxEntries rows,
  // which its listing reads newest first by rowid.
  `
  CREATE TABLE job_events_v6 (
    seq         INTEGER PRIMARY KEY,
    job_id      TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    at          INTEGER NOT NULL,
    from_status TEXT,
    to_status   TEXT,
    cause       TEXT NOT NULL
  );
  INSERT INTO job_events_v6 SELECT seq, job_id, endpoint_id, at, from_status, to_status, cause FROM job_events;
  DROP TABLE job_events;
  ALTER TABLE job_events_v6 RENAME TO job_events;
  CREATE INDEX job_events_job ON job_events (job_id, seq);
  CREATE TABLE request_journal_v6 (
    seq         INTEGER PRIMARY KEY,
    method      TEXT NOT NULL,
    path        TEXT NOT NULL,
    endpoint_id TEXT,
    operation   TEXT,
    status      INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    duration_ms REAL NOT NULL,
    body        TEXT
  );
  INSERT INTO request_journal_v6 SELECT seq, method, path, endpoint_id, operation, status, at, duration_ms, body FROM request_journal;
  DROP TABLE request_journal;
  ALTER TABLE request_journal_v6 RENAME TO request_journal;
  `,
  // A job's timeline events of one turn go in one row (a job submitted, started and finished in a
  // turn made three): events is a JSON array of [at, from, to, cause].
  `
  CREATE TABLE job_timeline (
    seq         INTEGER PRIMARY KEY,
    job_id      TEXT NOT NULL,
    endpoint_id TEXT NOT NULL,
    events      TEXT NOT NULL
  );
  INSERT INTO job_timeline (seq, job_id, endpoint_id, events)
    SELECT seq, job_id, endpoint_id, json_array(json_array(at, from_status, to_status, cause)) FROM job_events;
  DROP TABLE job_events;
  CREATE INDEX job_timeline_job ON job_timeline (job_id, seq);
  `,
  // The journal keeps each request's query string, and the body of error answers.
  `
  ALTER TABLE request_journal ADD COLUMN query TEXT;
  ALTER TABLE request_journal ADD COLUMN response TEXT;
  `,
  // Resources of the v2 REST surface that only it has (clusters, ECR delegations, endpoint
  // releases, the account's SSH keys): each a JSON document of its kind, owned by another
  // resource where it belongs to one (a release to its endpoint).
  `
  CREATE TABLE documents (
    kind       TEXT NOT NULL,
    id         TEXT NOT NULL,
    owner      TEXT,
    created_at INTEGER NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (kind, id)
  );
  CREATE INDEX documents_owner ON documents (kind, owner, created_at);
  `,
  // Network volumes, templates, pods, registry auths and endpoints join the other resources in
  // documents: each row becomes the JSON its model reads, with its id and created_at, inserted in
  // the order the old table listed it (the documents list by created_at, then rowid). A merge
  // patch drops the keys it gives as NULL, so absent optional fields (a template's handler, an
  // endpoint's executionTimeoutMs) stay absent; templates of rows older than startSsh,
  // startJupyter and allowedCudaVersions get their defaults.
  `
  INSERT INTO documents (kind, id, owner, created_at, data)
    SELECT 'network-volume', id, NULL, created_at,
      json_object('id', id, 'name', name, 'size', size_gb, 'dataCenter', data_center, 'type', type, 'createdAt', created_at, 'updatedAt', updated_at)
    FROM network_volumes ORDER BY created_at, id;
  INSERT INTO documents (kind, id, owner, created_at, data)
    SELECT 'template', id, NULL, created_at,
      json_patch(
        json_patch('{"startSsh":false,"startJupyter":false,"allowedCudaVersions":[]}', fields),
        json_object('id', id, 'name', name, 'handler', handler, 'createdAt', created_at, 'updatedAt', updated_at)
      )
    FROM templates ORDER BY created_at, id;
  INSERT INTO documents (kind, id, owner, created_at, data)
    SELECT 'pod', id, NULL, created_at, json(data) FROM pods ORDER BY created_at, rowid;
  INSERT INTO documents (kind, id, owner, created_at, data)
    SELECT 'registry-auth', id, NULL, created_at,
      json_object('id', id, 'name', name, 'username', username, 'password', password, 'createdAt', created_at)
    FROM registry_auths ORDER BY created_at, rowid;
  INSERT INTO documents (kind, id, owner, created_at, data)
    SELECT 'endpoint', id, NULL, created_at,
      json_patch(
        json_object(
          'id', id, 'name', name, 'handler', json(handler), 'workersMin', workers_min, 'workersMax', workers_max,
          'idleTimeout', idle_timeout, 'coldStartMs', cold_start_ms, 'createdAt', created_at, 'extra', json(extra)
        ),
        json_object('executionTimeoutMs', execution_timeout_ms)
      )
    FROM endpoints ORDER BY created_at, id;
  DROP TABLE network_volumes;
  DROP TABLE templates;
  DROP TABLE pods;
  DROP TABLE registry_auths;
  DROP TABLE endpoints;
  `,
  // Batch requests are jobs that carry their batch's id: the batch's counters and its request
  // listing read them by batch, and each endpoint's batch requests form a queue of their own.
  `
  ALTER TABLE jobs ADD COLUMN batch_id TEXT;
  CREATE INDEX jobs_batch ON jobs (batch_id, status) WHERE batch_id IS NOT NULL;
  `,
  // Large payloads in parts beside their job's row (store/payload-parts.ts): a row holds
  // '#parts:{name}:{length}' for one. Its parts go with the row, or with the output they held when
  // another replaces it (a retry).
  `
  CREATE TABLE payload_parts (
    name TEXT NOT NULL,
    part INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (name, part)
  );
  CREATE TRIGGER jobs_delete_parts AFTER DELETE ON jobs
    WHEN old.input LIKE '#parts:%' OR old.output LIKE '#parts:%' BEGIN
    DELETE FROM payload_parts WHERE name IN (
      substr(old.input, 8, instr(substr(old.input, 8), ':') - 1),
      substr(old.output, 8, instr(substr(old.output, 8), ':') - 1));
  END;
  CREATE TRIGGER jobs_output_parts AFTER UPDATE OF output ON jobs
    WHEN old.output LIKE '#parts:%' AND old.output IS NOT new.output BEGIN
    DELETE FROM payload_parts WHERE name = substr(old.output, 8, instr(substr(old.output, 8), ':') - 1);
  END;
  `,
  // The bytes of documents (a Flash build's artifact) in pieces of their own rows beside their
  // document (store/document-pieces.ts), deleted with it.
  `
  CREATE TABLE document_pieces (
    kind  TEXT NOT NULL,
    id    TEXT NOT NULL,
    piece INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (kind, id, piece)
  );
  CREATE TRIGGER documents_delete_pieces AFTER DELETE ON documents BEGIN
    DELETE FROM document_pieces WHERE kind = old.kind AND id = old.id;
  END;
  `,
];
