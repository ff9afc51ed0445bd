package config

import (
	"path/filepath"
	"testing"

	"github.com/matryer/is"
	"github.com/spf13/viper"
)

// TestExampleFile: leaguectl.example.yaml at the repository's root holds
// every key, each at its default, and loads without a problem.
func TestExampleFile(t *testing.T) {
	is := is.New(t)
	path := filepath.Join("..", "leaguectl.example.yaml")
	v := viper.New()
	v.SetConfigFile(path)
	is.NoErr(v.ReadInConfig())
	for _, k := range Keys() {
		if !v.IsSet(k) {
			t.Errorf("leaguectl.example.yaml lacks the key %s", k)
		}
	}
	cfg, err := Load(LoadOptions{File: path, Env: envMap(nil)})
	is.NoErr(err)            // every key known, every value good
	is.Equal(cfg, Default()) // at its default
}
