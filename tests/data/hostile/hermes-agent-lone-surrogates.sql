-- A Hermes Agent state.db of the early shape (schema 2) whose message parts and tool calls
-- are JSON with escaped lone surrogates: high, low, and a reversed pair. Run into an empty
-- file by tests/importing/test_lone_surrogates.py.
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (2);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX idx_sessions_started ON sessions(started_at DESC);
INSERT INTO sessions (id, source, model, started_at, ended_at, end_reason, message_count)
    VALUES ('20260301_090000_d80000', 'cli', 'gpt-5', 1772355600.0, 1772355700.0,
            'user_exit', 8);
INSERT INTO messages (session_id, role, content, timestamp) VALUES
    ('20260301_090000_d80000', 'user',
     '[{"type": "text", "text": "high half \ud800 of a pair"}]', 1772355601.0),
    ('20260301_090000_d80000', 'assistant', 'noted', 1772355602.0),
    ('20260301_090000_d80000', 'user',
     '[{"type": "text", "text": "low half \udc00 alone"}]', 1772355603.0),
    ('20260301_090000_d80000', 'assistant',
     '[{"type": "text", "text": "reversed \udc00\ud800 pair"}]', 1772355604.0),
    ('20260301_090000_d80000', 'user',
     '[{"type": "text", "text": "a whole emoji \ud83d\ude00 stays"}]', 1772355605.0);
INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES
    ('20260301_090000_d80000', 'assistant', '',
     '[{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{\"q\": \"\ud800\"}"}}]',
     1772355606.0);
INSERT INTO messages (session_id, role, content, tool_call_id, tool_name, timestamp) VALUES
    ('20260301_090000_d80000', 'tool', 'ok', 'call_1', 'terminal', 1772355607.0);
INSERT INTO messages (session_id, role, content, timestamp) VALUES
    ('20260301_090000_d80000', 'assistant', 'last answer', 1772355608.0);
