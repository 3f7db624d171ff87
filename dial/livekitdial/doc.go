// Package livekitdial is the LiveKit dialer: it places each call through a
// LiveKit SIP outbound trunk (room, agent dispatch, SIP participant over
// LiveKit's Twirp API), follows it by webhook and polling, records SIP
// participants joining on an inbound trunk as inbound calls, and probes the
// server for agentd doctor. It implements dial.Dialer, as dial/sipdial does
// for direct SIP.
package livekitdial
