package calls

import (
	"fmt"
	"testing"
)

// An unknown dialer is refused before anything is opened.
func TestCheckDialer(t *testing.T) {
	for name, want := range map[string]string{
		"":        "",
		"none":    "",
		"sim":     "",
		"sip":     "--dialer sip needs --sip-trunk (env AGENTD_SIP_TRUNK)",
		"carrier": `--dialer "carrier": use none, sim, sip or livekit`,
	} {
		err := CheckDialer(name, TelephonyConfig{})
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("CheckDialer(%q) = %v, want %q", name, err, want)
		}
	}
}
