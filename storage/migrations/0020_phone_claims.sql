-- A phone number belongs to one organization at a time (issue 27): the
-- first organization whose active agent lists it holds it until none of
-- its active agents does. Inbound calls to a number go only to that
-- organization's agents. Existing rows: the oldest active agent's
-- organization keeps a number listed by several.
CREATE TABLE phone_claims (
	number TEXT PRIMARY KEY,
	org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE
);
CREATE INDEX phone_claims_org ON phone_claims (org_id);
INSERT OR IGNORE INTO phone_claims (number, org_id)
	SELECT j.value, a.org_id FROM agents a, json_each(a.phone_numbers) j
	WHERE a.status != 'inactive' ORDER BY a.created_at, a.id;
