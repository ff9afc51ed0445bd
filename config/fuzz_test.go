package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad: any config file (YAML or JSON) and any value of a
// LEAGUECTL_* variable load as a valid Config or fail with a *Error
// naming the problem, never a panic or another kind of error.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"timeouts:\n  join: 300ms\n", "retry:\n  max_retries: 5\n", "league_id: x\nscoring: {win: 3, draw: 1, loss: 0}\n",
		`{"timeouts":{"join":"1s"},"limits":{"rate":0.5}}`, "timeouts:\n  jion: 1s\n", "timeouts: 5\n", "- a\n- b\n",
		"&a [*a, *a]\n", "{", "", "join: !!binary aGVsbG8=\n", "timeouts:\n  join: 1e400s\n",
	} {
		f.Add([]byte(s), true, "LEAGUECTL_TIMEOUTS_GENERIC", "2s")
		f.Add([]byte(s), false, "LEAGUECTL_RETRY_MULTIPLIER", "NaN")
	}
	f.Fuzz(func(t *testing.T, file []byte, yaml bool, env, value string) {
		name := "league.json"
		if yaml {
			name = "league.yaml"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(LoadOptions{File: path, Env: envMap(map[string]string{env: value})})
		if err != nil {
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Fatalf("%q: not a *config.Error: %T %v", file, err, err)
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%q with %s=%q loaded, but is not valid: %v", file, env, value, err)
		}
	})
}
