package cmd

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

// TestShownDB: no password of a --db URL reaches a log or an error,
// whichever way the URL gives it.
func TestShownDB(t *testing.T) {
	for _, db := range []string{
		"postgres://league:s3cret@db.example/leagues",
		"postgres://league@db.example/leagues?password=s3cret",
		"postgresql://league@db.example/leagues?sslmode=require&sslpassword=s3cret",
		"postgres://league@db.example/leagues?PassWord=s3cret",
		"postgres://league:s3cret@db.example/%zz", // does not parse
	} {
		is := is.New(t)
		shown := shownDB(db)
		is.True(!strings.Contains(shown, "s3cret")) // shown
		is.True(strings.HasPrefix(shown, "postgres"))
	}
	is.New(t).Equal(shownDB("league.db"), "league.db") // a file is shown as it is
}
