package agenttest

import (
	"encoding/xml"
	"fmt"
	"strings"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// JUnit renders the report as JUnit XML, one testcase per scenario.
func JUnit(r Report) ([]byte, error) {
	s := junitSuite{Name: "agent " + r.AgentID, Tests: len(r.Scenarios), Failures: r.Failed}
	var total int64
	for _, sc := range r.Scenarios {
		total += sc.DurationMS
		c := junitCase{Name: sc.Name, ClassName: "agent." + r.AgentID, Time: secs(sc.DurationMS)}
		var out strings.Builder
		var fails []string
		if sc.Error != "" {
			fails = append(fails, sc.Error)
		}
		for i, t := range sc.Turns {
			fmt.Fprintf(&out, "turn %d\nuser: %s\nagent: %s\n", i+1, t.User, t.Answer)
			for _, f := range t.Failures {
				fails = append(fails, fmt.Sprintf("turn %d: %s", i+1, f))
			}
			for _, k := range t.Skipped {
				fmt.Fprintf(&out, "skipped: %s\n", k)
			}
		}
		if len(fails) > 0 {
			c.Failure = &junitFailure{Message: fails[0], Text: strings.Join(fails, "\n")}
		}
		c.SystemOut = out.String()
		s.Cases = append(s.Cases, c)
	}
	s.Time = secs(total)
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func secs(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// Text renders the report for a terminal.
func Text(r Report) string {
	var b strings.Builder
	for _, sc := range r.Scenarios {
		mark := "PASS"
		if !sc.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s  %s (%d ms)\n", mark, sc.Name, sc.DurationMS)
		if sc.Error != "" {
			fmt.Fprintf(&b, "      %s\n", sc.Error)
		}
		for i, t := range sc.Turns {
			for _, f := range t.Failures {
				fmt.Fprintf(&b, "      turn %d: %s\n", i+1, f)
			}
			for _, k := range t.Skipped {
				fmt.Fprintf(&b, "      turn %d: skipped %s\n", i+1, k)
			}
		}
	}
	fmt.Fprintf(&b, "%d passed, %d failed\n", r.Passed, r.Failed)
	return b.String()
}
