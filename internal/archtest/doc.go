// Package archtest holds only tests: they check with `go list` that imports
// point inward (cmd -> app -> app/<feature> -> storage/search, embed, dial
// -> storage) and that packages stay small. See the README's Architecture.
package archtest
