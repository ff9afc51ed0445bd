package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/league/postgres"
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

// TestConnectionLost: a standby waits on through a lost connection, and
// stops on a refusal another try would meet again.
func TestConnectionLost(t *testing.T) {
	is := is.New(t)
	is.True(connectionLost(&pgconn.PgError{Code: "57P01"}))                      // terminated by an administrator
	is.True(connectionLost(&pgconn.PgError{Code: "08006"}))                      // connection failure
	is.True(connectionLost(fmt.Errorf("lead: %w", io.ErrUnexpectedEOF)))         // cut mid-answer
	is.True(!connectionLost(&pgconn.PgError{Code: "42501"}))                     // permission denied
	is.True(!connectionLost(fmt.Errorf("lead: %w", postgres.ErrClosed)))         // closed
	is.True(!connectionLost(errors.New("the store has led its league already"))) // a bug, not an outage
}
