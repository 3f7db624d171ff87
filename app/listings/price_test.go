package listings

import (
	"errors"
	"testing"
)

func TestParseCents(t *testing.T) {
	ok := map[string]int64{
		"0": 0, "-0": 0, "0.0": 0, "12.5": 1250, "12.50": 1250, "12.500": 1250, "1999999.99": 199999999,
		"1e3": 100000, "1.5E2": 15000, "125e-2": 125, "0.01": 1, "999999999999.99": maxPriceCents,
		"007": 700, "0e400": 0, "10": 1000,
	}
	for in, want := range ok {
		got, err := parseCents(in)
		if err != nil || got != want {
			t.Errorf("parseCents(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]error{
		"-1": errPriceNegative, "-0.01": errPriceNegative, "0.001": errPriceDecimals, "12.345": errPriceDecimals,
		"1e-3": errPriceDecimals, "1000000000000": errPriceTooLarge, "1e20": errPriceTooLarge,
		"abc": errPriceSyntax, "": errPriceSyntax, "1.": errPriceSyntax, ".5": errPriceSyntax, "1e": errPriceSyntax,
		"1e9999": errPriceExpTooBig, "1,5": errPriceSyntax, "99999999999999999999999": errPriceTooLarge,
	}
	for in, want := range bad {
		if _, err := parseCents(in); !errors.Is(err, want) {
			t.Errorf("parseCents(%q) error = %v, want %v", in, err, want)
		}
	}
}

func TestFormatCents(t *testing.T) {
	for c, want := range map[int64]string{0: "0.00", 1: "0.01", 1250: "12.50", 199999999: "1999999.99", maxPriceCents: "999999999999.99"} {
		if got := formatCents(c); got != want {
			t.Errorf("formatCents(%d) = %q, want %q", c, got, want)
		}
	}
}

func FuzzParseCents(f *testing.F) {
	for _, s := range []string{"12.50", "1e3", "-0", "0.001", "1e-400", "999999999999.99", "1.5E+2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCents(s)
		if err != nil {
			return
		}
		if c < 0 || c > maxPriceCents {
			t.Fatalf("parseCents(%q) = %d out of range", s, c)
		}
		// Whatever parsed must survive the round trip through its own text.
		back, err := parseCents(formatCents(c))
		if err != nil || back != c {
			t.Fatalf("round trip of %q: %d -> %q -> %d, %v", s, c, formatCents(c), back, err)
		}
	})
}
