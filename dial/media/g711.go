package media

// G.711 μ-law (PCMU) and A-law (PCMA), the two codecs every SIP trunk
// takes. Encoding goes through 64 KiB tables built once: a call encodes
// 8000 samples a second and a table lookup is the cheapest way.

var (
	ulawEnc [65536]byte
	alawEnc [65536]byte
	ulawDec [256]int16
	alawDec [256]int16
)

func init() {
	for i := range 65536 {
		s := int16(uint16(i))
		ulawEnc[i] = ulawEncode(s)
		alawEnc[i] = alawEncode(s)
	}
	for i := range 256 {
		ulawDec[i] = ulawDecode(byte(i))
		alawDec[i] = alawDecode(byte(i))
	}
}

var (
	segUEnd = [8]int{0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF}
	segAEnd = [8]int{0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF}
)

func ulawEncode(pcm int16) byte {
	v := int(pcm) >> 2
	mask := 0xFF
	if v < 0 {
		v, mask = -v, 0x7F
	}
	v = min(v, 8159) + 0x21
	seg := 0
	for seg < 8 && v > segUEnd[seg] {
		seg++
	}
	if seg >= 8 {
		return byte(0x7F ^ mask)
	}
	return byte(((seg << 4) | ((v >> (seg + 1)) & 0xF)) ^ mask)
}

func ulawDecode(u byte) int16 {
	u = ^u
	t := (int(u&0x0F) << 3) + 0x84
	t <<= (u & 0x70) >> 4
	if u&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

func alawEncode(pcm int16) byte {
	v := int(pcm) >> 3
	mask := 0xD5
	if v < 0 {
		v, mask = -v-1, 0x55
	}
	seg := 0
	for seg < 8 && v > segAEnd[seg] {
		seg++
	}
	if seg >= 8 {
		return byte(0x7F ^ mask)
	}
	a := seg << 4
	if seg < 2 {
		a |= (v >> 1) & 0xF
	} else {
		a |= (v >> seg) & 0xF
	}
	return byte(a ^ mask)
}

func alawDecode(a byte) int16 {
	a ^= 0x55
	t := int(a&0x0F) << 4
	seg := int(a&0x70) >> 4
	switch seg {
	case 0:
		t += 8
	case 1:
		t += 0x108
	default:
		t = (t + 0x108) << (seg - 1)
	}
	if a&0x80 != 0 {
		return int16(t)
	}
	return int16(-t)
}

// encode appends the G.711 bytes of pcm (A-law when alaw, else μ-law).
func encode(dst []byte, alaw bool, pcm []int16) []byte {
	tab := &ulawEnc
	if alaw {
		tab = &alawEnc
	}
	for _, s := range pcm {
		dst = append(dst, tab[uint16(s)])
	}
	return dst
}

// decode appends the samples of a G.711 payload.
func decode(dst []int16, alaw bool, payload []byte) []int16 {
	tab := &ulawDec
	if alaw {
		tab = &alawDec
	}
	for _, b := range payload {
		dst = append(dst, tab[b])
	}
	return dst
}
