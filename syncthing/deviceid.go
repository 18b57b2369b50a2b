package syncthing

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
)

// DeviceID is a Syncthing device id: the SHA-256 of the device's
// certificate. Its text form is base32 in four groups of 13 characters,
// each followed by a Luhn mod 32 check character, written in groups of
// seven separated by dashes.
//
// memminer parses device ids itself instead of importing Syncthing's
// lib/protocol, whose dependencies (protobuf, lz4, Prometheus) every
// memminer command would initialise at start-up.
type DeviceID [32]byte

// ShortIDLength is the length of a short device id, as in conflict copy names.
const ShortIDLength = 7

// ErrDeviceID means a text is no valid device id.
var ErrDeviceID = errors.New("invalid device id")

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// NewDeviceID returns the id of the device with this certificate (DER).
func NewDeviceID(cert []byte) DeviceID { return sha256.Sum256(cert) }

// ParseDeviceID reads a device id in Syncthing's text form. Like
// Syncthing it ignores dashes, spaces and case, reads 0, 1 and 8 as O, I
// and B, and also takes the old form without check characters.
func ParseDeviceID(s string) (DeviceID, error) {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ':
			return -1
		case '0':
			return 'O'
		case '1':
			return 'I'
		case '8':
			return 'B'
		}
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
	var plain string
	switch len(clean) {
	case 56:
		var b strings.Builder
		for i := 0; i < 56; i += 14 {
			group, check := clean[i:i+13], clean[i+13]
			want, ok := luhn32(group)
			if !ok || want != check {
				return DeviceID{}, fmt.Errorf("%w %q: check character of group %d is wrong", ErrDeviceID, s, i/14+1)
			}
			b.WriteString(group)
		}
		plain = b.String()
	case 52:
		plain = clean
	default:
		return DeviceID{}, fmt.Errorf("%w %q: %d characters", ErrDeviceID, s, len(clean))
	}
	raw, err := base32.StdEncoding.DecodeString(plain + "====")
	if err != nil || len(raw) != len(DeviceID{}) {
		return DeviceID{}, fmt.Errorf("%w %q: not base32", ErrDeviceID, s)
	}
	var id DeviceID
	copy(id[:], raw)
	return id, nil
}

// String returns the id in Syncthing's text form.
func (d DeviceID) String() string {
	plain := strings.TrimRight(base32.StdEncoding.EncodeToString(d[:]), "=")
	var withChecks strings.Builder
	for i := 0; i < len(plain); i += 13 {
		group := plain[i : i+13]
		check, _ := luhn32(group)
		withChecks.WriteString(group)
		withChecks.WriteByte(check)
	}
	s := withChecks.String()
	var out strings.Builder
	for i := 0; i < len(s); i += 7 {
		if i > 0 {
			out.WriteByte('-')
		}
		out.WriteString(s[i : i+7])
	}
	return out.String()
}

// Short returns the id's first seven characters, the form conflict copy
// names carry.
func (d DeviceID) Short() string { return d.String()[:ShortIDLength] }

// MarshalText writes the id's text form.
func (d DeviceID) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads an id in text form (see ParseDeviceID).
func (d *DeviceID) UnmarshalText(b []byte) error {
	id, err := ParseDeviceID(string(b))
	if err != nil {
		return err
	}
	*d = id
	return nil
}

// luhn32 is the Luhn mod 32 check character of s over the base32
// alphabet, computed as Syncthing does: the factor starts at 1 on the
// leftmost character and alternates with 2.
func luhn32(s string) (byte, bool) {
	const n = 32
	factor, sum := 1, 0
	for i := 0; i < len(s); i++ {
		cp := strings.IndexByte(base32Alphabet, s[i])
		if cp < 0 {
			return 0, false
		}
		addend := factor * cp
		factor = 3 - factor
		sum += addend/n + addend%n
	}
	return base32Alphabet[(n-sum%n)%n], true
}
