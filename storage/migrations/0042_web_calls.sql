-- Browser voice sessions (issue 36) are calls with direction 'web': the
-- dashboard's Talk control and the widget's microphone. The CHECK of
-- 0005 allowed only inbound and outbound. SQLite cannot alter a CHECK,
-- and rebuilding calls would fire the ON DELETE CASCADE of its children,
-- so the constraint is widened in place (SQLite's documented
-- writable_schema procedure for loosening a CHECK: every row already
-- satisfies the wider one). RESET reloads this connection's schema; the
-- CREATE INDEX after it bumps the schema cookie, so every other
-- connection reloads it too.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (direction IN (''inbound'', ''outbound''))',
	'CHECK (direction IN (''inbound'', ''outbound'', ''web''))') WHERE type = 'table' AND name = 'calls';
PRAGMA writable_schema = RESET;

-- The widget's daily voice minutes of an agent are summed from its web
-- calls of the day.
CREATE INDEX calls_web_agent ON calls (agent_id, started_at) WHERE direction = 'web';
