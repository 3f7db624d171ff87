-- Browser voice sessions (issue 36) are calls with direction 'web': the
-- dashboard's Talk control and the widget's microphone.
ALTER TABLE calls DROP CONSTRAINT IF EXISTS calls_direction_check;
ALTER TABLE calls ADD CONSTRAINT calls_direction_check CHECK (direction IN ('inbound', 'outbound', 'web'));

-- The widget's daily voice minutes of an agent are summed from its web
-- calls of the day.
CREATE INDEX calls_web_agent ON calls (agent_id, started_at) WHERE direction = 'web';
