--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: agentx_v2_fixture; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA agentx_v2_fixture;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: agentx_schema_migrations; Type: TABLE; Schema: agentx_v2_fixture; Owner: -
--

CREATE TABLE agentx_v2_fixture.agentx_schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: messages; Type: TABLE; Schema: agentx_v2_fixture; Owner: -
--

CREATE TABLE agentx_v2_fixture.messages (
    session_id text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    seq bigint NOT NULL,
    type text NOT NULL COLLATE pg_catalog."C",
    content jsonb NOT NULL,
    "timestamp" text NOT NULL COLLATE pg_catalog."C",
    usage jsonb,
    stop_reason text COLLATE pg_catalog."C",
    incomplete boolean,
    is_tool_use boolean DEFAULT false NOT NULL,
    tool_name text COLLATE pg_catalog."C",
    tool_input jsonb,
    tool_id text COLLATE pg_catalog."C",
    tool_result jsonb,
    metadata jsonb,
    extra jsonb,
    agent_name text COLLATE pg_catalog."C",
    compaction jsonb
);


--
-- Name: sessions; Type: TABLE; Schema: agentx_v2_fixture; Owner: -
--

CREATE TABLE agentx_v2_fixture.sessions (
    id text NOT NULL COLLATE pg_catalog."C",
    id_order bytea NOT NULL,
    summary text NOT NULL,
    created_at text NOT NULL COLLATE pg_catalog."C",
    last_activity text NOT NULL COLLATE pg_catalog."C",
    cwd text,
    model text,
    system_prompt text,
    state text NOT NULL COLLATE pg_catalog."C",
    provider_session_id text,
    token_usage jsonb NOT NULL,
    user_id text COLLATE pg_catalog."C",
    app_name text COLLATE pg_catalog."C",
    metadata jsonb,
    extra jsonb,
    active_agent text,
    parent_session_id text COLLATE pg_catalog."C",
    parent_tool_use_id text,
    forked_from jsonb,
    lease_owner text COLLATE pg_catalog."C",
    lease_expires_at timestamp with time zone
);


--
-- Data for Name: agentx_schema_migrations; Type: TABLE DATA; Schema: agentx_v2_fixture; Owner: -
--

INSERT INTO agentx_v2_fixture.agentx_schema_migrations VALUES (1, 'initial schema', '2026-11-24 04:33:53.492483+00');
INSERT INTO agentx_v2_fixture.agentx_schema_migrations VALUES (2, 'storage v2: agent names, child sessions, forks, compaction, leases', '2026-11-24 04:33:53.492483+00');


--
-- Data for Name: messages; Type: TABLE DATA; Schema: agentx_v2_fixture; Owner: -
--

INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-full', 'm-full-0', 0, 'user', '[{"text": "Look: ", "type": "text"}, {"data": "iVBORw0KGgo=", "type": "image", "mediaType": "image/png"}, {"url": "https://example.com/a.jpg", "type": "image", "mediaType": "image/jpeg"}]', '2025-12-24T18:00:00.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, '{"source": "web"}', NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-full', 'm-full-1', 1, 'agent', '[{"text": "hmm", "type": "thinking", "signature": "sig==", "providerMetadata": {"claude": {"redacted": false}}}, {"id": "toolu_01", "name": "lookup", "type": "tool_use", "input": {"n": [1, 2, {"deep": null}], "q": "weather"}}]', '2025-12-24T18:00:01.000Z', '{"inputTokens": 102, "totalTokens": 124, "outputTokens": 22, "cacheReadTokens": 50}', 'tool_use', NULL, true, 'lookup', '{"n": [1, 2, {"deep": null}], "q": "weather"}', 'toolu_01', NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-full', 'm-full-2', 2, 'tool', '[{"type": "tool_result", "content": [{"text": "sunny", "type": "text"}], "isError": false, "toolUseId": "toolu_01"}]', '2025-12-24T18:00:02.000Z', NULL, NULL, NULL, false, NULL, NULL, 'toolu_01', '[{"text": "sunny", "type": "text"}]', NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-full', 'm-full-3', 3, 'agent', '[{"text": "It is sunny 🌞 — café, é, ﻿BOM, NUL\u00100end", "type": "text"}]', '2025-12-24T18:00:03.000Z', '{"inputTokens": 103, "totalTokens": 126, "outputTokens": 23, "cacheReadTokens": 50}', 'max_tokens', true, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-full', 'm-full-4', 4, 'system', '"Summary so far"', '2025-12-24T18:00:04.000Z', NULL, NULL, false, false, NULL, NULL, NULL, NULL, '{"s": "", "list": [], "empty": {}}', NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-v2-fields-in-v1', 'm-v2-0', 0, 'agent', '"as billing"', '2025-12-24T18:00:05.000Z', NULL, 'other', NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, 'billing', NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-v2-fields-in-v1', 'm-v2-1', 1, 'system', '[{"text": "compacted", "type": "text"}]', '2025-12-24T18:00:06.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{"throughSeq": 0}');
INSERT INTO agentx_v2_fixture.messages VALUES ('weird id / ? # % . $ '' " 😀', 'm-weird', 7, 'user', '"same message id elsewhere"', '2025-12-24T18:00:07.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('weird id / ? # % . $ '' " 😀', 'm-plain-0', 8, 'user', '"duplicate id, other session"', '2025-12-24T18:00:08.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-plain', 'm-plain-0', 0, 'user', '"Hello"', '2025-11-03T09:15:00.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-plain', 'm-plain-1', 1, 'agent', '[{"text": "Hi!", "type": "text"}]', '2025-11-03T09:15:00.000Z', '{"inputTokens": 101, "totalTokens": 122, "outputTokens": 21, "cacheReadTokens": 50}', 'end_turn', NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('fixture-lone-surrogate', 'm-surrogate', 0, 'user', '"lone \u0010udc00 low"', '2025-11-03T09:15:00.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('child-a', 'v2-m0', 0, 'user', '"hello child"', '2026-02-01T12:00:00.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('child-a', 'v2-m1', 1, 'agent', '[{"text": "hi", "type": "text"}]', '2026-02-01T12:00:01.000Z', NULL, 'end_turn', NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, 'researcher', NULL);
INSERT INTO agentx_v2_fixture.messages VALUES ('child-a', 'v2-m2', 2, 'system', '"summary of 0..1"', '2026-02-01T12:00:02.000Z', NULL, NULL, NULL, false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{"throughSeq": 1}');


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: agentx_v2_fixture; Owner: -
--

INSERT INTO agentx_v2_fixture.sessions VALUES ('fixture-full', '\x0066006900780074007500720065002d00660075006c006c', 'Every field: ünïcødé 🧑‍💻 and RTL שלום', '2025-10-01T00:00:00.001Z', '2025-12-24T18:30:00.999Z', '/srv/app', 'claude-sonnet-5-5', 'You are terse.
Always.', 'completed', 'resp_01HXYZ', '{"inputTokens": 107, "totalTokens": 134, "outputTokens": 27, "cacheReadTokens": 50}', 'user-42', 'support', '{"$gt": 2, "a.b": 1, "tags": ["a", "b"], "nested": {"f": 0.1, "n": 0, "t": true, "big": 9007199254740991, "neg": -1, "nil": null}}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('fixture-v2-fields-in-v1', '\x0066006900780074007500720065002d00760032002d006600690065006c00640073002d0069006e002d00760031', 'child of fixture-full', '2025-12-24T18:00:00.000Z', '2025-12-24T18:29:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, NULL, NULL, 'billing', 'fixture-full', 'toolu_01', '{"seq": 1, "sessionId": "fixture-plain"}', NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('weird id / ? # % . $ '' " 😀', '\x007700650069007200640020006900640020002f0020003f00200023002000250020002e0020002400200027002000220020d83dde00', 'SQL-looking: ''); DROP TABLE sessions; --', '2025-11-03T09:15:00.000Z', '2025-11-03T09:20:41.512Z', NULL, NULL, NULL, 'created', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('fixture-plain', '\x0066006900780074007500720065002d0070006c00610069006e', 'A plain session', '2025-11-03T09:15:00.000Z', '2025-11-03T09:20:41.512Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('fixture-lone-surrogate', '\x0066006900780074007500720065002d006c006f006e0065002d0073007500720072006f0067006100740065', 'broken ud800 text', '2025-11-03T09:15:00.000Z', '2025-11-03T09:15:00.000Z', NULL, NULL, NULL, 'error', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, 'support', '{"note": "NUL \u00100 inside"}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('fixture-interrupted', '\x0066006900780074007500720065002d0069006e007400650072007200750070007400650064', '', '1969-07-20T20:17:40.000Z', '1969-07-20T20:17:40.000Z', NULL, NULL, NULL, 'interrupted', NULL, '{"inputTokens": 1, "totalTokens": 3, "outputTokens": 2, "reasoningTokens": 1, "cacheWriteTokens": 0}', 'user-42', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-string', '\x006d0064002d0073007400720069006e0067', 'session md-string', '2026-02-01T00:00:00.000Z', '2026-02-01T10:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', 'user-1', 'app', '{"a.b": "x", "dle": "a\u0010\u0010b", "nul": "a\u00100b", "list": [1], "team": "red", "emoji": "🧑‍💻 שלום", "empty": "", "nested": {"k": 1}, "nothing": null, "say \"hi\"": "1"}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-number', '\x006d0064002d006e0075006d006200650072', 'session md-number', '2026-02-01T00:00:00.000Z', '2026-02-01T09:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', 'user-1', NULL, '{"n": 1.5, "big": 9007199254740991, "neg": -1, "team": "blue", "zero": 0, "say \"hi\"": 1}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-bool', '\x006d0064002d0062006f006f006c', 'session md-bool', '2026-02-01T00:00:00.000Z', '2026-02-01T08:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', 'user-2', NULL, '{"$gt": true, "one": 1, "flag": false}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-proto', '\x006d0064002d00700072006f0074006f', 'session md-proto', '2026-02-01T00:00:00.000Z', '2026-02-01T07:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{"team": "red", "__proto__": "plain data"}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-surrogate', '\x006d0064002d0073007500720072006f0067006100740065', 'session md-surrogate', '2026-02-01T00:00:00.000Z', '2026-02-01T06:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{"team": "red", "broken": "x \u0010ud800 y", "key \u0010udc00": "v"}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('md-empty', '\x006d0064002d0065006d007000740079', 'session md-empty', '2026-02-01T00:00:00.000Z', '2026-02-01T05:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{}', NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('top-no-metadata', '\x0074006f0070002d006e006f002d006d0065007400610064006100740061', 'session top-no-metadata', '2026-02-01T00:00:00.000Z', '2026-02-01T11:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', 'user-1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('child-a', '\x006300680069006c0064002d0061', 'session child-a', '2026-02-01T00:00:00.000Z', '2026-02-01T12:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', 'user-1', NULL, '{"team": "red"}', NULL, 'researcher', 'md-string', 'toolu_9', NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('grandchild', '\x006700720061006e0064006300680069006c0064', 'session grandchild', '2026-02-01T00:00:00.000Z', '2026-02-01T13:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{"team": "red", "depth": 2}', NULL, NULL, 'child-a', NULL, NULL, NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('fork-of-plain', '\x0066006f0072006b002d006f0066002d0070006c00610069006e', 'session fork-of-plain', '2026-02-01T00:00:00.000Z', '2026-02-01T04:00:00.000Z', NULL, NULL, NULL, 'idle', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{"team": "green"}', NULL, NULL, NULL, NULL, '{"seq": 1, "sessionId": "fixture-plain"}', NULL, NULL);
INSERT INTO agentx_v2_fixture.sessions VALUES ('leased', '\x006c00650061007300650064', 'session leased', '2026-02-01T00:00:00.000Z', '2026-02-01T03:00:00.000Z', NULL, NULL, NULL, 'active', NULL, '{"inputTokens": 0, "totalTokens": 0, "outputTokens": 0}', NULL, NULL, '{"team": "red"}', NULL, NULL, NULL, NULL, NULL, 'owner-of-fixture', '2026-11-24 05:33:53.611574+00');


--
-- Name: agentx_schema_migrations agentx_schema_migrations_pkey; Type: CONSTRAINT; Schema: agentx_v2_fixture; Owner: -
--

ALTER TABLE ONLY agentx_v2_fixture.agentx_schema_migrations
    ADD CONSTRAINT agentx_schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: messages messages_pk; Type: CONSTRAINT; Schema: agentx_v2_fixture; Owner: -
--

ALTER TABLE ONLY agentx_v2_fixture.messages
    ADD CONSTRAINT messages_pk PRIMARY KEY (session_id, id);


--
-- Name: messages messages_session_seq; Type: CONSTRAINT; Schema: agentx_v2_fixture; Owner: -
--

ALTER TABLE ONLY agentx_v2_fixture.messages
    ADD CONSTRAINT messages_session_seq UNIQUE (session_id, seq);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: agentx_v2_fixture; Owner: -
--

ALTER TABLE ONLY agentx_v2_fixture.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: messages_agent_name; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX messages_agent_name ON agentx_v2_fixture.messages USING btree (agent_name, session_id) WHERE (agent_name IS NOT NULL);


--
-- Name: messages_tool_name; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX messages_tool_name ON agentx_v2_fixture.messages USING btree (tool_name) WHERE (is_tool_use = true);


--
-- Name: sessions_active_lease; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_active_lease ON agentx_v2_fixture.sessions USING btree (lease_expires_at) WHERE (state = 'active'::text);


--
-- Name: sessions_activity; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_activity ON agentx_v2_fixture.sessions USING btree (last_activity, id_order);


--
-- Name: sessions_app_activity; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_app_activity ON agentx_v2_fixture.sessions USING btree (app_name, last_activity, id_order);


--
-- Name: sessions_parent; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_parent ON agentx_v2_fixture.sessions USING btree (parent_session_id) WHERE (parent_session_id IS NOT NULL);


--
-- Name: sessions_state_activity; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_state_activity ON agentx_v2_fixture.sessions USING btree (state, last_activity, id_order);


--
-- Name: sessions_user_activity; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_user_activity ON agentx_v2_fixture.sessions USING btree (user_id, last_activity, id_order);


--
-- Name: sessions_user_app_activity; Type: INDEX; Schema: agentx_v2_fixture; Owner: -
--

CREATE INDEX sessions_user_app_activity ON agentx_v2_fixture.sessions USING btree (user_id, app_name, last_activity, id_order);


--
-- Name: messages messages_session_fk; Type: FK CONSTRAINT; Schema: agentx_v2_fixture; Owner: -
--

ALTER TABLE ONLY agentx_v2_fixture.messages
    ADD CONSTRAINT messages_session_fk FOREIGN KEY (session_id) REFERENCES agentx_v2_fixture.sessions(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--


