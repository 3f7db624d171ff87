package api

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// TestMain runs the package's tests, then fails the run when a response did
// not match the OpenAPI document or (when every test ran) a route lacks a
// checked success or error response.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	full := flag.Lookup("test.run").Value.String() == "" && !testing.Short()
	if problems := schemaReport(full); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "OpenAPI schema check: %d problems\n", len(problems))
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
