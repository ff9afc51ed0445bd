package protocol_test

import (
	"regexp"
	"testing"

	"github.com/matryer/is"

	"github.com/leaguectl/leaguectl/protocol"
)

// TestShownToken: the token an agent shows other agents has the spec's
// form, is fixed by the agent's own token (HMAC-SHA256 of "shown by
// <role> <id>"), differs from it and from another agent's, and is empty
// without one.
func TestShownToken(t *testing.T) {
	is := is.New(t)
	// python3: "tok_player_P01_" + hmac.new(b"tok-P01", b"shown by player P01", hashlib.sha256).hexdigest()[:32]
	is.Equal(protocol.ShownToken(protocol.RolePlayer, "P01", "tok-P01"), "tok_player_P01_3d6a580bf533b51769027f5e77da730f")
	is.Equal(protocol.ShownToken(protocol.RoleReferee, "REF02", "tok-ref-0123456789abcdef"), "tok_referee_REF02_c6ae73ab80cd14f33592ba0341e4584c")
	form := regexp.MustCompile(`^tok_(player|referee)_[A-Za-z0-9_.-]+_[0-9a-f]{32}$`)
	a := protocol.ShownToken(protocol.RolePlayer, "P01", "tok_player_P01_0011")
	is.True(form.MatchString(a))
	is.True(a != protocol.ShownToken(protocol.RolePlayer, "P01", "tok_player_P01_0012")) // another token, another shown one
	is.True(a != protocol.ShownToken(protocol.RolePlayer, "P02", "tok_player_P01_0011")) // another id too
	is.Equal(protocol.ShownToken(protocol.RoleReferee, "REF01", ""), "")
}
