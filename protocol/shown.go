package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// ShownToken is the token an agent of role and id puts on what it sends
// other agents (a referee to players, a player to referees), in place of
// the one its manager gave it, token. The spec wants a token on every
// message after registration, and the other implementations send their
// own; but the receiver cannot check another agent's token, and with it
// could act as that agent at the manager (a player report its own matches
// in its referee's name, a referee end a player's league). The shown
// token has the same form, tok_<role>_<id>_<32 hex digits>: HMAC-SHA256
// under token of "shown by <role> <id>", the same for every receiver and
// nothing anyone without token can make. It is "" when token is.
func ShownToken(role Role, id, token string) string {
	if token == "" {
		return ""
	}
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("shown by " + string(role) + " " + id))
	return "tok_" + string(role) + "_" + id + "_" + hex.EncodeToString(mac.Sum(nil)[:16])
}
