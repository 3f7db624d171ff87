package access

import (
	"testing"
	"time"

	"github.com/agentd/agentd/internal/errs"
	"github.com/agentd/agentd/storage/orgstore"
)

func TestNewKeyOptions(t *testing.T) {
	bad := []KeyOptions{
		{Name: string(make([]byte, 101))},
		{RateLimit: -1},
		{RateLimit: MaxRateLimit + 1},
		{ExpiresInDays: ptr(0)},
		{ExpiresInDays: ptr(3651)},
	}
	for _, o := range bad {
		if _, _, err := o.NewKey("o", "u"); !errs.Is(err, errs.Invalid) {
			t.Errorf("%+v: err %v, want invalid", o, err)
		}
	}
	nk, secret, err := KeyOptions{}.NewKey("o", "u")
	if err != nil || !WellFormedKey(secret) || nk.Name != "default" || nk.RateLimit != DefaultRateLimit {
		t.Fatalf("defaults: %+v %q %v", nk, secret, err)
	}
	if d := time.Until(*nk.ExpiresAt); d < KeyTTL-time.Minute || d > KeyTTL {
		t.Fatalf("default expiry in %v", d)
	}
	if nk, _, _ := (KeyOptions{Never: true}).NewKey("o", "u"); nk.ExpiresAt != nil {
		t.Fatal("never-expiring key has an expiry")
	}
}

func TestKeyStatusAndRoles(t *testing.T) {
	now := time.Now()
	past := now.Add(-time.Second)
	if KeyStatus(orgstore.APIKey{}, now) != "active" || KeyStatus(orgstore.APIKey{ExpiresAt: &past}, now) != "expired" ||
		KeyStatus(orgstore.APIKey{RevokedAt: &past}, now) != "revoked" {
		t.Fatal("key status")
	}
	if !Can("admin", CapAPIKeyManage) || Can("member", CapAPIKeyManage) || Can("viewer", CapAgentWrite) || Can("nobody", CapAgentRead) {
		t.Fatal("capabilities")
	}
	if err := ValidEmail("a@b.c"); err != nil {
		t.Fatal(err)
	}
	if err := ValidEmail("Alice <a@b.c>"); !errs.Is(err, errs.Invalid) {
		t.Fatal("display-name address accepted")
	}
}

func ptr(n int) *int { return &n }
