package listings

import (
	"errors"
	"strconv"
	"strings"

	"github.com/agentd/agentd/storage/listingstore"
)

// maxPriceCents is the largest accepted price, 999,999,999,999.99.
const maxPriceCents = 99_999_999_999_999

var (
	errPriceSyntax    = errors.New("must be a number")
	errPriceNegative  = errors.New("must be >= 0")
	errPriceDecimals  = errors.New("must have at most 2 decimal places")
	errPriceTooLarge  = errors.New("must be at most 999999999999.99")
	errPriceExpTooBig = errors.New("exponent out of range")
)

// parseCents turns the text of a JSON number ("12.5", "1999999.99", "1e3",
// "12.500") into exact hundredths without a float round trip. More than two
// significant decimals is an error, not a rounding.
func parseCents(s string) (int64, error) {
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || s[i+1:] == "" {
			return 0, errPriceSyntax
		}
		if e < -400 || e > 400 {
			return 0, errPriceExpTooBig
		}
		exp = e
	}
	intPart, frac, hasDot := strings.Cut(mant, ".")
	if intPart == "" || (hasDot && frac == "") || !allDigits(intPart) || !allDigits(frac) {
		return 0, errPriceSyntax
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	// value = digits * 10^(exp - len(frac)); cents = value * 100.
	shift := exp - len(frac) + 2
	if digits == "" {
		return 0, nil // any zero, also -0
	}
	if neg {
		return 0, errPriceNegative
	}
	if shift < 0 {
		cut := len(digits) + shift
		if cut < 0 {
			cut = 0
		}
		if strings.Trim(digits[cut:], "0") != "" {
			return 0, errPriceDecimals
		}
		digits = digits[:cut]
		shift = 0
	}
	if len(digits)+shift > 14 {
		return 0, errPriceTooLarge
	}
	digits += strings.Repeat("0", shift)
	if digits == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || v > maxPriceCents {
		return 0, errPriceTooLarge
	}
	return v, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// formatCents renders hundredths as the API's price string: "12.50", "0.00".
func formatCents(c int64) string {
	return strconv.FormatInt(c/100, 10) + "." + string([]byte{byte('0' + c%100/10), byte('0' + c%10)})
}

// Price is the API form of a stored price: "12.50", or nil (JSON null)
// for a listing without one.
func Price(l listingstore.Listing) *string {
	if !l.HasPrice {
		return nil
	}
	p := formatCents(l.PriceCents)
	return &p
}
