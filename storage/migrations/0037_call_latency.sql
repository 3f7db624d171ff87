-- A voice call's latency (app/voice): each answer's endpointing,
-- transcription, model first token, speech first byte and voice-to-voice
-- times, and the call's voice-to-voice percentiles, written when the call
-- ends. A table of its own: one row per voice call, read by the call read.
CREATE TABLE call_latency (
	call_id    TEXT PRIMARY KEY REFERENCES calls(id) ON DELETE CASCADE,
	turns      TEXT NOT NULL,    -- JSON array of {endpointingMs, transcribeMs, modelFirstTokenMs, speechFirstByteMs, voiceToVoiceMs}
	p50_ms     INTEGER NOT NULL, -- voice-to-voice, nearest rank
	p95_ms     INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
