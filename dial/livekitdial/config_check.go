package livekitdial

// CheckLiveKitConfig validates cfg as NewLiveKit does (URL, key, secret,
// trunk id, agent name), without any request.
func CheckLiveKitConfig(cfg LiveKitConfig) error {
	_, err := NewLiveKit(cfg, nil)
	return err
}
