package sqldb

// Sealer encrypts secrets at rest (internal/secretbox.Box is one): Open
// also takes a value written before encryption and returns it unchanged.
// The stores that keep secrets (hookstore, convstore) take one.
type Sealer interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// PlainText keeps secrets as they are (no key configured).
type PlainText struct{}

func (PlainText) Seal(v string) (string, error) { return v, nil }
func (PlainText) Open(v string) (string, error) { return v, nil }
