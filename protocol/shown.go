package protocol

import (
	"crypto/hmac"
	"crypto/rand"
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

// InstanceProof is what an agent of this implementation shows anyone of
// the secret it drew when it started (its instance_secret, sent to its
// manager only, in its registration): SHA-256 of it, in hex, in its
// get_registration_status. A manager asked to register an agent again at
// an endpoint it knows takes the registration as that agent's, restarted,
// only if the secret it carries has the proof the endpoint shows: whoever
// sees the proof cannot make the secret. It is "" when secret is.
func InstanceProof(secret string) string {
	if secret == "" {
		return ""
	}
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// NewInstanceSecret draws an agent's instance secret (InstanceProof): 128
// bits from crypto/rand, in hex. A secret, never derived from the league
// seed.
func NewInstanceSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}
