package webvoice

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxAudio bounds one binary message from the browser: 200 ms of audio.
const MaxAudio = 2 * 8 * 200

// maxControl bounds one text message.
const maxControl = 1024

// Inbound is one message from the browser: audio, or one control.
type Inbound struct {
	PCM    []int16 // 8 kHz 16-bit mono samples (little-endian on the wire)
	Mute   *bool   // {"type":"mute","muted":true|false}
	Hangup bool    // {"type":"hangup"}
	Digits string  // {"type":"dtmf","digits":"12#"}
}

// Parse reads one message from the browser. Audio is an even number of
// bytes, at most MaxAudio; a control is a JSON object with a known type.
func Parse(binaryMsg bool, data []byte) (Inbound, error) {
	if binaryMsg {
		if len(data) == 0 || len(data)%2 != 0 || len(data) > MaxAudio {
			return Inbound{}, fmt.Errorf("webvoice: audio must be 2 to %d bytes of 16-bit samples, got %d bytes", MaxAudio, len(data))
		}
		pcm := make([]int16, len(data)/2)
		for i := range pcm {
			pcm[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
		}
		return Inbound{PCM: pcm}, nil
	}
	if len(data) > maxControl {
		return Inbound{}, fmt.Errorf("webvoice: control message over %d bytes", maxControl)
	}
	var m struct {
		Type   string `json:"type"`
		Muted  *bool  `json:"muted"`
		Digits string `json:"digits"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Inbound{}, errors.New("webvoice: control message is not a JSON object")
	}
	switch m.Type {
	case "mute":
		if m.Muted == nil {
			return Inbound{}, errors.New("webvoice: mute needs muted true or false")
		}
		return Inbound{Mute: m.Muted}, nil
	case "hangup":
		return Inbound{Hangup: true}, nil
	case "dtmf":
		if m.Digits == "" || len(m.Digits) > 32 || strings.Trim(m.Digits, "0123456789*#ABCD") != "" {
			return Inbound{}, errors.New("webvoice: dtmf digits must be 1 to 32 of 0-9 * # A-D")
		}
		return Inbound{Digits: m.Digits}, nil
	}
	return Inbound{}, fmt.Errorf("webvoice: unknown control type %q (mute, hangup, dtmf)", m.Type)
}
