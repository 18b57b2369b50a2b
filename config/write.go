package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"

	"go.yaml.in/yaml/v3"
)

// ErrOtherValue is a setting the config file already sets to another value
// than the one to be written.
var ErrOtherValue = errors.New("the config file sets another value")

// FileMode is the mode a config file is created with: it may hold API
// keys, so it is the user's alone.
const FileMode = 0o600

// AddToFile writes the settings of values (config key to text, as given
// in an environment variable or a flag) that the YAML file at path does
// not set yet, each as one `key: value` line appended to its end; every
// byte already there is kept. A missing file (and its directory) is
// created. A key the file already sets to the same value is left alone; to
// another value, nothing is written and the error is an *Error wrapping
// ErrOtherValue. It returns the keys it wrote, sorted.
//
// The file is read, checked and appended to through one descriptor.
func AddToFile(path string, values map[string]string) (added []string, err error) {
	for key, v := range values {
		if err := (&Config{}).Set(key, v); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, FileMode)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("config %s: %w", path, cerr)
		}
	}()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	missing, err := missingSettings(path, data, values)
	if err != nil || len(missing) == 0 {
		return nil, err
	}
	var add bytes.Buffer
	if len(data) > 0 && data[len(data)-1] != '\n' {
		add.WriteByte('\n')
	}
	for _, key := range missing {
		line, err := yaml.Marshal(map[string]string{key: values[key]})
		if err != nil {
			return nil, fmt.Errorf("config %s: %s: %w", path, key, err)
		}
		add.Write(line)
	}
	if _, err := f.Write(add.Bytes()); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return missing, nil
}

// Missing returns the keys of values the config file at path does not
// set yet, sorted, as AddToFile would write them, without writing; a
// missing file sets none. A key set to another value is the same error.
func Missing(path string, values map[string]string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return missingSettings(path, data, values)
}

// missingSettings checks data, the config file at path, and returns the
// keys of values it does not set, sorted; a key it sets to another value
// is an error.
func missingSettings(path string, data []byte, values map[string]string) ([]string, error) {
	var doc map[string]yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	var inFile Config
	for key, n := range doc {
		if err := inFile.setNode(key, n); err != nil {
			var se *Error
			if errors.As(err, &se) {
				se.Source = fmt.Sprintf("config %s: line %d", path, se.line)
			}
			return nil, err
		}
	}
	var missing []string
	for key, v := range values {
		n, set := doc[key]
		if !set || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			missing = append(missing, key)
			continue
		}
		want := inFile
		if err := want.Set(key, v); err != nil {
			return nil, err
		}
		if !reflect.DeepEqual(want, inFile) {
			return nil, &Error{Source: fmt.Sprintf("config %s: line %d", path, n.Line), Key: key, Err: fmt.Errorf("%w (%q, not %q)", ErrOtherValue, n.Value, v)}
		}
	}
	sort.Strings(missing)
	return missing, nil
}
