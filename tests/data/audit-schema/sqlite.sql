-- The audit schema's released steps in SQLite, as streams/audit/migrations/sqlite.py shipped them
-- (issue 40 moved the tables into streams/audit/tables.py). A released step is never edited: databases
-- out there ran it. tests/streams/test_audit_schema.py holds the migrations to these statements, up to
-- whitespace and the case of keywords and types; a new version is appended here with its migration.

-- version 1: audit tables and the tool_invocation view

CREATE TABLE audit_events (
    event_id         TEXT PRIMARY KEY,
    run_id           TEXT,
    tool_call_id     TEXT,
    station          TEXT NOT NULL,
    origin_topic     TEXT,
    origin_partition INTEGER,
    origin_offset    INTEGER,
    source_topic     TEXT NOT NULL,
    source_partition INTEGER NOT NULL,
    source_offset    INTEGER NOT NULL,
    source_timestamp INTEGER,
    processed_at     TEXT NOT NULL,
    fields           TEXT NOT NULL,
    applied_at       TEXT NOT NULL
);

CREATE INDEX audit_events_run ON audit_events (run_id);

CREATE TABLE tool_call_station (
    run_id           TEXT NOT NULL,
    tool_call_id     TEXT NOT NULL,
    station          TEXT NOT NULL,
    event_id         TEXT NOT NULL,
    origin_topic     TEXT,
    origin_partition INTEGER,
    origin_offset    INTEGER,
    source_timestamp INTEGER,
    tiebreak         INTEGER NOT NULL,
    processed_at     TEXT NOT NULL,
    fields           TEXT NOT NULL,
    applied_at       TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id, station)
);

CREATE TABLE guard_verdict (
    event_id            TEXT PRIMARY KEY,
    run_id              TEXT,
    draft_id            TEXT,
    attempt             INTEGER,
    verdict             TEXT,
    violation_codes     TEXT NOT NULL,
    cited_tool_call_ids TEXT NOT NULL,
    origin_topic        TEXT,
    origin_partition    INTEGER,
    origin_offset       INTEGER,
    source_timestamp    INTEGER,
    processed_at        TEXT NOT NULL,
    applied_at          TEXT NOT NULL
);

CREATE INDEX guard_verdict_run ON guard_verdict (run_id);

CREATE VIEW tool_invocation AS
SELECT 'tool_call' AS kind, k.run_id AS run_id, k.tool_call_id AS tool_call_id, coalesce(pp.origin_partition, pj.origin_partition, lg.origin_partition, dl.origin_partition) AS origin_partition, coalesce(pp.origin_offset, pj.origin_offset, lg.origin_offset, dl.origin_offset) AS origin_offset, coalesce(pp.source_timestamp, pj.source_timestamp, lg.source_timestamp, dl.source_timestamp) AS source_timestamp, CASE WHEN pp.event_id IS NOT NULL THEN coalesce(json_extract(pp.fields, '$.status'), 'OK') END AS postprocess_status, json_extract(pp.fields, '$.reason') AS postprocess_failure_reason, json_extract(pp.fields, '$.candidate_count') AS candidate_count, json_extract(pp.fields, '$.evidence_block_count') AS evidence_block_count, json_extract(pp.fields, '$.top_similarity') AS top_similarity, json_extract(pp.fields, '$.relevance_level') AS relevance_level, json_extract(pp.fields, '$.low_quality') AS low_quality, json_extract(pp.fields, '$.py_rag_relevance_level') AS py_rag_relevance_level, json_extract(pp.fields, '$.py_rag_evidence_status') AS py_rag_evidence_status, json_extract(pp.fields, '$.contract_anomaly') AS contract_anomaly, json_extract(pp.fields, '$.retrieval_trace') AS retrieval_trace, json_extract(pp.fields, '$.pack_used_chars') AS pack_used_chars, json_extract(pp.fields, '$.pack_included') AS pack_included, json_extract(pp.fields, '$.pack_omitted') AS pack_omitted, CASE WHEN json_extract(pj.fields, '$.projection_sha256') IS NOT NULL THEN 'OK' ELSE json_extract(pj.fields, '$.status') END AS project_status, json_extract(pj.fields, '$.failure_reason') AS project_failure_reason, json_extract(pj.fields, '$.evidence_status') AS evidence_status, json_extract(pj.fields, '$.returned_count') AS returned_count, json_extract(pj.fields, '$.relevance_level') AS projected_relevance_level, json_extract(pj.fields, '$.truncated') AS truncated, json_extract(pj.fields, '$.projection_bytes') AS projection_bytes, json_extract(pj.fields, '$.projection_sha256') AS projection_sha256, json_extract(lg.fields, '$.status') AS ledger_status, json_extract(lg.fields, '$.outcome') AS ledger_outcome, json_extract(lg.fields, '$.key') AS ledger_key, json_extract(dl.fields, '$.reason') AS dead_letter_reason, json_extract(dl.fields, '$.error') AS dead_letter_error, json_extract(dl.fields, '$.station') AS dead_letter_station, dl.event_id AS dead_letter_event_id, NULL AS event_id, NULL AS draft_id, NULL AS attempt, NULL AS verdict, NULL AS violation_codes, NULL AS cited_tool_call_ids, max(coalesce(pp.applied_at, ''), coalesce(pj.applied_at, ''), coalesce(lg.applied_at, ''), coalesce(dl.applied_at, '')) AS updated_at
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
    origin_partition  INTEGER,
    origin_offset     INTEGER,
    source_timestamp  INTEGER,
    ledger_topic      TEXT NOT NULL,
    ledger_partition  INTEGER NOT NULL,
    ledger_offset     INTEGER NOT NULL,
    entry             TEXT NOT NULL,
    later_differs     INTEGER NOT NULL DEFAULT 0,
    applied_at        TEXT NOT NULL,
    PRIMARY KEY (run_id, tool_call_id)
);

CREATE TABLE verdict_record (
    event_id          TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    attempt           INTEGER,
    verdict           TEXT,
    draft_sha256      TEXT,
    origin_topic      TEXT,
    origin_partition  INTEGER,
    origin_offset     INTEGER,
    source_timestamp  INTEGER,
    document          TEXT NOT NULL,
    applied_at        TEXT NOT NULL
);

CREATE INDEX verdict_record_run ON verdict_record (run_id, draft_id);

CREATE TABLE draft_record (
    draft_sha256      TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    origin_topic      TEXT NOT NULL,
    origin_partition  INTEGER NOT NULL,
    origin_offset     INTEGER NOT NULL,
    value             BLOB NOT NULL,
    applied_at        TEXT NOT NULL
);

CREATE INDEX draft_record_run ON draft_record (run_id);

-- version 4: published reports as the reports topic carried them

CREATE TABLE report_record (
    event_id          TEXT PRIMARY KEY,
    run_id            TEXT,
    draft_id          TEXT,
    attempt           INTEGER,
    verdict           TEXT,
    verdict_event_id  TEXT,
    draft_sha256      TEXT,
    origin_topic      TEXT,
    origin_partition  INTEGER,
    origin_offset     INTEGER,
    source_timestamp  INTEGER,
    document          TEXT NOT NULL,
    applied_at        TEXT NOT NULL
);

CREATE INDEX report_record_run ON report_record (run_id, draft_id);


-- version 5: the semantic review's judgements as the judgements topic carried them

CREATE TABLE judgement_record (
    event_id         TEXT PRIMARY KEY,
    run_id           TEXT,
    draft_id         TEXT,
    attempt          INTEGER,
    verdict_event_id TEXT,
    draft_sha256     TEXT,
    origin_topic     TEXT,
    origin_partition INTEGER,
    origin_offset    INTEGER,
    source_timestamp INTEGER,
    document         TEXT NOT NULL,
    applied_at       TEXT NOT NULL
);

CREATE INDEX judgement_record_run ON judgement_record (run_id, draft_id);
