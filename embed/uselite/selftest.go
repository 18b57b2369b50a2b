package uselite

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// selfTestCases are a few of the TF.js reference vectors the tests check
// the model against, built into the binary so an installed model can be
// checked the same way.
//
//go:embed selftest.json
var selfTestCases []byte

// MinSelfTestCosine is how close each of the model's vectors must come to
// TF.js's for SelfTest to pass.
const MinSelfTestCosine = 0.999

// ErrSelfTest is returned (wrapped) when the model's vectors do not
// reproduce the reference ones.
var ErrSelfTest = errors.New("model does not reproduce the reference vectors")

// SelfTest embeds the built-in reference texts with m and returns the
// lowest cosine between its vectors and TF.js's. It fails with ErrSelfTest
// when any is below MinSelfTestCosine.
func SelfTest(ctx context.Context, m *Model) (float64, error) {
	cases, err := readSelfTestCases()
	if err != nil {
		return 0, err
	}
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	vecs, err := m.Embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	low := 1.0
	for i, c := range cases {
		if cos := cosine(vecs[i], c.Vector); cos < low {
			low = cos
		}
	}
	if low < MinSelfTestCosine {
		return low, fmt.Errorf("%w: cosine %.4f, want at least %v", ErrSelfTest, low, MinSelfTestCosine)
	}
	return low, nil
}

// referenceCase is a text and the vector TF.js gives it.
type referenceCase struct {
	Text   string    `json:"text"`
	Vector []float64 `json:"vector"`
}

func readSelfTestCases() ([]referenceCase, error) {
	var ref struct {
		Cases []referenceCase `json:"cases"`
	}
	if err := json.Unmarshal(selfTestCases, &ref); err != nil {
		return nil, fmt.Errorf("read reference vectors: %w", err)
	}
	return ref.Cases, nil
}

func cosine(a []float32, b []float64) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
