package embed

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
)

func newTestBuiltin(t testing.TB) *Builtin {
	t.Helper()
	b, err := NewBuiltin(DefaultBuiltinDims)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestNewBuiltinValidates(t *testing.T) {
	for _, d := range []int{0, 63, 1 << 20} {
		if _, err := NewBuiltin(d); err == nil {
			t.Errorf("NewBuiltin(%d) accepted", d)
		}
	}
	b := newTestBuiltin(t)
	if b.Name() != "builtin" || b.Model() != "fhash-v1" || b.Dimensions() != DefaultBuiltinDims {
		t.Fatalf("identity %s/%s/%d", b.Name(), b.Model(), b.Dimensions())
	}
}

func TestBuiltinVectors(t *testing.T) {
	b := newTestBuiltin(t)
	texts := []string{
		"Installing agentd on Linux with systemd",
		"How do I install agentd on a Linux server?",
		"Vacation policy: everyone gets 25 days per year",
		"",
		"知识库中的每个来源都会被切分成若干片段",
		"知识库 来源 片段",
	}
	vs, err := b.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != DefaultBuiltinDims {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		n := math.Sqrt(cosine(v, v))
		if want := 1.0; texts[i] == "" {
			want = 0
			if n != want {
				t.Errorf("empty text: norm %v", n)
			}
		} else if math.Abs(n-want) > 1e-5 {
			t.Errorf("vector %d: norm %v", i, n)
		}
	}
	// Stemming joins "Installing" and "install"; the unrelated text is far.
	if same, other := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); same < 0.4 || other > 0.1 {
		t.Errorf("cosine related %.3f, unrelated %.3f", same, other)
	}
	if c := cosine(vs[4], vs[5]); c < 0.2 {
		t.Errorf("CJK bigrams: cosine %.3f", c)
	}
	again, _ := b.Embed(context.Background(), texts[:1])
	fresh, _ := NewBuiltin(DefaultBuiltinDims)
	other, _ := fresh.Embed(context.Background(), texts[:1])
	if !slices.Equal(again[0], vs[0]) || !slices.Equal(other[0], vs[0]) {
		t.Error("builtin embedding is not deterministic")
	}
}

// TestBuiltinRarityPrior checks that a frequent word weighs less than a
// rare one: "system" dominates less than "aerodynamic".
func TestBuiltinRarityPrior(t *testing.T) {
	b := newTestBuiltin(t)
	common, rare := b.word("system"), b.word("aerodynamic")
	if !(common.weight < rare.weight) || rare.weight != 1 {
		t.Errorf("weights: system %.3f, aerodynamic %.3f", common.weight, rare.weight)
	}
	if got := b.word("installing").stem; got != "instal" {
		t.Errorf("stem(installing) = %q", got)
	}
}

func TestBuiltinCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newTestBuiltin(t).Embed(ctx, []string{"x"}); err == nil {
		t.Fatal("Embed ignored a cancelled context")
	}
}

func TestBuiltinConcurrent(t *testing.T) {
	b := newTestBuiltin(t)
	src := readFixtures(t)["install-guide.md"]
	want, _ := b.Embed(context.Background(), []string{src})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			got, err := b.Embed(context.Background(), []string{src, "other words here"})
			if err != nil || !slices.Equal(got[0], want[0]) {
				t.Error("concurrent Embed differs")
			}
		})
	}
	wg.Wait()
}
