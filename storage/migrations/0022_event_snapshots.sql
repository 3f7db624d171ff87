-- Record on write, render on read: an event's data is now what its
-- transaction recorded (a storage-owned snapshot of the call, source,
-- listings sync or batch), and the events feature renders the public body
-- where the event leaves the process. data_version says which: 0 is a body
-- rendered at write time (events logged before this step, pings), n > 0
-- the snapshot format n of the event's type.
ALTER TABLE events ADD COLUMN data_version INTEGER NOT NULL DEFAULT 0;
