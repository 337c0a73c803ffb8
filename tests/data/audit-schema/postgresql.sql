-- The audit schema's released steps in PostgreSQL, as streams/audit/migrations/postgres.py shipped them
-- (issue 40 moved the tables into streams/audit/tables.py). A released step is never edited: databases
-- out there ran it. tests/streams/test_audit_schema.py holds the migrations to these statements, up to
-- whitespace and the case of keywords and types; a new version is appended here with its migration.

-- version 1: audit tables and the tool_invocation view

CREATE TABLE audit_events (
    event_id         text PRIMARY KEY,
    run_id           text,
    tool_call_id     text,
    station          text NOT NULL,
    origin_topic     text,
    origin_partition bigint,
    origin_offset    bigint,
    source_topic     text NOT NULL,
    source_partition bigint NOT NULL,
    source_offset    bigint NOT NULL,
    source_timestamp bigint,
    processed_at     text NOT NULL,
    fields           jsonb NOT NULL,
    applied_at       timestamptz NOT NULL
);

CREATE INDEX audit_events_run ON audit_events (run_id);

CREATE TABLE tool_call_station (
    run_id           text NOT NULL,
    tool_call_id     text NOT NULL,
    station          text NOT NULL,
    event_id         text NOT NULL,
    origin_topic     text,
    origin_partition bigint,
    origin_offset    bigint,
    source_timestamp bigint,
    tiebreak         integer NOT NULL,
    processed_at     text NOT NULL,
    fields           jsonb NOT NULL,
    applied_at       timestamptz NOT NULL,
    PRIMARY KEY (run_id, tool_call_id, station)
);

CREATE TABLE guard_verdict (
    event_id            text PRIMARY KEY,
    run_id              text,
    draft_id            text,
    attempt             bigint,
    verdict             text,
    violation_codes     jsonb NOT NULL,
    cited_tool_call_ids jsonb NOT NULL,
    origin_topic        text,
    origin_partition    bigint,
    origin_offset       bigint,
    source_timestamp    bigint,
    processed_at        text NOT NULL,
    applied_at          timestamptz NOT NULL
);

CREATE INDEX guard_verdict_run ON guard_verdict (run_id);

CREATE VIEW tool_invocation AS
SELECT 'tool_call' AS kind, k.run_id AS run_id, k.tool_call_id AS tool_call_id, coalesce(pp.origin_partition, pj.origin_partition, lg.origin_partition, dl.origin_partition) AS origin_partition, coalesce(pp.origin_offset, pj.origin_offset, lg.origin_offset, dl.origin_offset) AS origin_offset, coalesce(pp.source_timestamp, pj.source_timestamp, lg.source_timestamp, dl.source_timestamp) AS source_timestamp, CASE WHEN pp.event_id IS NOT NULL THEN coalesce((pp.fields ->> 'status'), 'OK') END AS postprocess_status, (pp.fields ->> 'reason') AS postprocess_failure_reason, (pp.fields -> 'candidate_count') AS candidate_count, (pp.fields -> 'evidence_block_count') AS evidence_block_count, (pp.fields -> 'top_similarity') AS top_similarity, (pp.fields ->> 'relevance_level') AS relevance_level, (pp.fields -> 'low_quality') AS low_quality, (pp.fields ->> 'py_rag_relevance_level') AS py_rag_relevance_level, (pp.fields ->> 'py_rag_evidence_status') AS py_rag_evidence_status, (pp.fields ->> 'contract_anomaly') AS contract_anomaly, (pp.fields ->> 'retrieval_trace') AS retrieval_trace, (pp.fields -> 'pack_used_chars') AS pack_used_chars, (pp.fields -> 'pack_included') AS pack_included, (pp.fields -> 'pack_omitted') AS pack_omitted, CASE WHEN (pj.fields ->> 'projection_sha256') IS NOT NULL THEN 'OK' ELSE (pj.fields ->> 'status') END AS project_status, (pj.fields ->> 'failure_reason') AS project_failure_reason, (pj.fields ->> 'evidence_status') AS evidence_status, (pj.fields -> 'returned_count') AS returned_count, (pj.fields ->> 'relevance_level') AS projected_relevance_level, (pj.fields -> 'truncated') AS truncated, (pj.fields -> 'projection_bytes') AS projection_bytes, (pj.fields ->> 'projection_sha256') AS projection_sha256, (lg.fields ->> 'status') AS ledger_status, (lg.fields ->> 'outcome') AS ledger_outcome, (lg.fields ->> 'key') AS ledger_key, (dl.fields ->> 'reason') AS dead_letter_reason, (dl.fields ->> 'error') AS dead_letter_error, (dl.fields ->> 'station') AS dead_letter_station, dl.event_id AS dead_letter_event_id, NULL AS event_id, NULL AS draft_id, NULL AS attempt, NULL AS verdict, NULL AS violation_codes, NULL AS cited_tool_call_ids, GREATEST(pp.applied_at, pj.applied_at, lg.applied_at, dl.applied_at) AS updated_at
FROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station) AS k
LEFT JOIN tool_call_station pp ON pp.run_id = k.run_id AND pp.tool_call_id = k.tool_call_id AND pp.station = 'postprocess'
LEFT JOIN tool_call_station pj ON pj.run_id = k.run_id AND pj.tool_call_id = k.tool_call_id AND pj.station = 'project'
LEFT JOIN tool_call_station lg ON lg.run_id = k.run_id AND lg.tool_call_id = k.tool_call_id AND lg.station = 'ledger'
LEFT JOIN tool_call_station dl ON dl.run_id = k.run_id AND dl.tool_call_id = k.tool_call_id AND dl.station = 'dead-letter'
UNION ALL
SELECT 'verdict' AS kind, v.run_id AS run_id, NULL AS tool_call_id, v.origin_partition AS origin_partition, v.origin_offset AS origin_offset, v.source_timestamp AS source_timestamp, NULL AS postprocess_status, NULL AS postprocess_failure_reason, NULL AS candidate_count, NULL AS evidence_block_count, NULL AS top_similarity, NULL AS relevance_level, NULL AS low_quality, NULL AS py_rag_relevance_level, NULL AS py_rag_evidence_status, NULL AS contract_anomaly, NULL AS retrieval_trace, NULL AS pack_used_chars, NULL AS pack_included, NULL AS pack_omitted, NULL AS project_status, NULL AS project_failure_reason, NULL AS evidence_status, NULL AS returned_count, NULL AS projected_relevance_level, NULL AS truncated, NULL AS projection_bytes, NULL AS projection_sha256, NULL AS ledger_status, NULL AS ledger_outcome, NULL AS ledger_key, NULL AS dead_letter_reason, NULL AS dead_letter_error, NULL AS dead_letter_station, NULL AS dead_letter_event_id, v.event_id AS event_id, v.draft_id AS draft_id, v.attempt AS attempt, v.verdict AS verdict, v.violation_codes AS violation_codes, v.cited_tool_call_ids AS cited_tool_call_ids, v.applied_at AS updated_at
FROM guard_verdict AS v;

-- version 2: run_summary view

CREATE VIEW run_summary AS
SELECT r.run_id,
    r.events,
    (SELECT count(DISTINCT t.tool_call_id) FROM tool_call_station AS t WHERE t.run_id = r.run_id)
        AS tool_calls,
    (SELECT count(*) FROM audit_events AS d WHERE d.run_id = r.run_id AND d.station = 'dead-letter')
        AS dead_letters,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id) AS verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'PASS')
        AS pass_verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'REJECT')
        AS reject_verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'FALLBACK')
        AS fallback_verdicts,
    r.first_source_timestamp,
    r.last_source_timestamp,
    r.last_applied_at
FROM (
    SELECT run_id, count(*) AS events, min(source_timestamp) AS first_source_timestamp,
        max(source_timestamp) AS last_source_timestamp, max(applied_at) AS last_applied_at
    FROM audit_events
    WHERE run_id IS NOT NULL
    GROUP BY run_id
) AS r;

-- version 3: ledger entries, verdicts and drafts as the topics carried them

CREATE TABLE ledger_entry (
    run_id            TEXT NOT NULL,
    tool_call_id      TEXT NOT NULL,
    status            TEXT,
    projection_sha256 TEXT,
    key_id            TEXT,
    event_id          TEXT,
    origin_topic      TEXT,
    origin_partition  bigint,
    origin_offset     bigint,
    source_timestamp  bigint,
    ledger_topic      TEXT NOT NULL,
    ledger_partition  bigint NOT NULL,
    ledger_offset     bigint NOT NULL,
    entry             TEXT NOT NULL,
    later_differs     bigint NOT NULL DEFAULT 0,
    applied_at        timestamptz NOT NULL,
    PRIMARY KEY (run_id, tool_call_id)
);

CREATE TABLE verdict_record (
    event_id          TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    attempt           bigint,
    verdict           TEXT,
    draft_sha256      TEXT,
    origin_topic      TEXT,
    origin_partition  bigint,
    origin_offset     bigint,
    source_timestamp  bigint,
    document          TEXT NOT NULL,
    applied_at        timestamptz NOT NULL
);

CREATE INDEX verdict_record_run ON verdict_record (run_id, draft_id);

CREATE TABLE draft_record (
    draft_sha256      TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    origin_topic      TEXT NOT NULL,
    origin_partition  bigint NOT NULL,
    origin_offset     bigint NOT NULL,
    value             bytea NOT NULL,
    applied_at        timestamptz NOT NULL
);

CREATE INDEX draft_record_run ON draft_record (run_id);

-- version 4: published reports as the reports topic carried them

CREATE TABLE report_record (
    event_id          TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    attempt           bigint,
    verdict           TEXT,
    verdict_event_id  TEXT,
    draft_sha256      TEXT,
    origin_topic      TEXT,
    origin_partition  bigint,
    origin_offset     bigint,
    source_timestamp  bigint,
    document          TEXT NOT NULL,
    applied_at        timestamptz NOT NULL
);

CREATE INDEX report_record_run ON report_record (run_id, draft_id);


-- version 5: the semantic review's judgements as the judgements topic carried them

CREATE TABLE judgement_record (
    event_id         text PRIMARY KEY,
    run_id           text,
    draft_id         text,
    attempt          bigint,
    verdict_event_id text,
    draft_sha256     text,
    origin_topic     text,
    origin_partition bigint,
    origin_offset    bigint,
    source_timestamp bigint,
    document         text NOT NULL,
    applied_at       timestamptz NOT NULL
);

CREATE INDEX judgement_record_run ON judgement_record (run_id, draft_id);
