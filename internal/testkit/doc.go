// Package testkit groups what only tests use: the real binary as a child
// (testbin), SIPp and LiveKit stand-ins (sipptest, livekittest), a fake
// embedding service (embedtest) and a database per test on either dialect
// (dbtest). Nothing that ships imports a package below it; what ships sits
// beside it under internal/ (metrics, safehttp).
package testkit
