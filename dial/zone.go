package dial

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nyaruka/phonenumbers"
)

// The zone and area of a phone number, from libphonenumber's data
// (github.com/nyaruka/phonenumbers embeds it: no network, no files).

// NumberZone is the IANA zone of an E.164 number when its country, or its
// area code in a country that spans several zones (the US, Canada,
// Australia...), has exactly one; "" otherwise. It is a few map lookups
// by prefix: no parsing, fast enough for every call of a batch.
func NumberZone(phone string) string {
	if len(phone) < 2 || phone[0] != '+' {
		return ""
	}
	for _, r := range phone[1:] {
		if r < '0' || r > '9' {
			return ""
		}
	}
	zs, err := phonenumbers.GetTimezonesForPrefix(phone)
	if err != nil || len(zs) == 0 || zs[0] == phonenumbers.UNKNOWN_TIMEZONE {
		return ""
	}
	if len(zs) == 1 {
		if _, err := LoadZone(zs[0]); err != nil {
			return ""
		}
		return zs[0]
	}
	key := strings.Join(zs, ",")
	if z, ok := zoneLists.Load(key); ok {
		return z.(string)
	}
	z := oneClock(zs)
	zoneLists.Store(key, z) // bounded: the data holds a few hundred distinct lists
	return z
}

var zoneLists sync.Map // "zone,zone,..." -> oneClock of it

// oneClock is the first of zones when they all keep the same clock
// (London, Jersey, Guernsey and the Isle of Man for a UK mobile count as
// one zone), else "".
func oneClock(zones []string) string {
	first, err := LoadZone(zones[0])
	if err != nil {
		return ""
	}
	for _, z := range zones[1:] {
		loc, err := LoadZone(z)
		if err != nil || !sameClock(first, loc) {
			return ""
		}
	}
	return zones[0]
}

// sameClock reports whether two zones show the same time at the middle of
// every month of last year, this year and next: same offsets, same DST.
func sameClock(a, b *time.Location) bool {
	y := time.Now().Year()
	for year := y - 1; year <= y+1; year++ {
		for m := time.January; m <= time.December; m++ {
			t := time.Date(year, m, 15, 12, 0, 0, 0, time.UTC)
			_, oa := t.In(a).Zone()
			_, ob := t.In(b).Zone()
			if oa != ob {
				return false
			}
		}
	}
	return true
}

// NumberArea is the country calling code and the area code of an E.164
// number ("1", "415" for +14155550100); area is "" for numbers without a
// geographic area code (mobiles in most countries). ok is false for a
// number libphonenumber cannot parse.
func NumberArea(phone string) (country, area string, ok bool) {
	num, err := phonenumbers.Parse(phone, "ZZ")
	if err != nil {
		return "", "", false
	}
	nsn := phonenumbers.GetNationalSignificantNumber(num)
	if n := phonenumbers.GetLengthOfGeographicalAreaCode(num); n > 0 && n <= len(nsn) {
		area = nsn[:n]
	}
	return strconv.Itoa(int(num.GetCountryCode())), area, true
}
