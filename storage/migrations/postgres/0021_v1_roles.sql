-- enforce_v1_roles: /v1 applies the key's role capabilities too (issue 27;
-- off by default, as the contract says /v1 checks only the key).
ALTER TABLE org_settings ADD COLUMN enforce_v1_roles INTEGER NOT NULL DEFAULT 0;
