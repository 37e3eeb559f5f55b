-- The tables of OpenCode's opencode.db that panto reads, as OpenCode's
-- migrations (packages/opencode/migration, 1.2.0 to 1.16) leave them,
-- written for panto's fixtures: message and part keep their JSON in "data"
-- without their own ids, sessions carry their parent (a subagent's).
PRAGMA journal_mode = WAL;
CREATE TABLE migration (id TEXT PRIMARY KEY, time_completed INTEGER NOT NULL);
INSERT INTO migration VALUES ('20260127222353_familiar_lady_ursula', 1769550000000),
	('20260510033149_session_usage', 1778380000000);
CREATE TABLE project (
	id text PRIMARY KEY,
	worktree text NOT NULL,
	vcs text,
	name text,
	time_created integer NOT NULL,
	time_updated integer NOT NULL,
	sandboxes text NOT NULL DEFAULT '[]'
);
CREATE TABLE session (
	id text PRIMARY KEY,
	project_id text NOT NULL,
	parent_id text,
	slug text NOT NULL DEFAULT '',
	directory text NOT NULL,
	title text NOT NULL,
	version text NOT NULL,
	share_url text,
	time_created integer NOT NULL,
	time_updated integer NOT NULL,
	time_compacting integer,
	time_archived integer,
	model text,
	cost real DEFAULT 0 NOT NULL,
	tokens_input integer DEFAULT 0 NOT NULL,
	tokens_output integer DEFAULT 0 NOT NULL,
	tokens_reasoning integer DEFAULT 0 NOT NULL,
	tokens_cache_read integer DEFAULT 0 NOT NULL,
	tokens_cache_write integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (project_id) REFERENCES project(id) ON DELETE CASCADE
);
CREATE TABLE message (
	id text PRIMARY KEY,
	session_id text NOT NULL,
	time_created integer NOT NULL,
	time_updated integer NOT NULL,
	data text NOT NULL,
	FOREIGN KEY (session_id) REFERENCES session(id) ON DELETE CASCADE
);
CREATE TABLE part (
	id text PRIMARY KEY,
	message_id text NOT NULL,
	session_id text NOT NULL,
	time_created integer NOT NULL,
	time_updated integer NOT NULL,
	data text NOT NULL,
	FOREIGN KEY (message_id) REFERENCES message(id) ON DELETE CASCADE
);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
